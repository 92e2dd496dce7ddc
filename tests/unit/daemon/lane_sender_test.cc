// The lane sender against a child the test plays. One that takes the handshake and reads every
// frame but never acknowledges: the sender keeps no more than its window in flight, gives the
// connection up after the I/O timeout and reconnects, the chunks it sent before counted as
// resent; the execution itself goes on. One that says it holds chunks (HELD): they are not sent.
#include "daemon/executor/lane_sender.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <boost/asio/detached.hpp>
#include <mutex>
#include <set>

#include "plan_execution_fixture.h"

namespace gridcast {
namespace {

namespace asio = boost::asio;

// A child that takes lane 0 from member 0 and reads its frames without ever answering.
class SilentChild final : public LaneReceiver, public std::enable_shared_from_this<SilentChild> {
 public:
  explicit SilentChild(asio::io_context& io) : io_(io) {}

  Status CheckParent(const Hello& hello) const override {
    return hello.parent == 0 ? Status::Ok() : Status::PermissionDenied("not my parent");
  }
  std::string DataAddressOf(uint32_t) const override { return parent_address; }
  std::vector<ChunkRun> HeldRuns() const override { return {}; }
  void AdoptParentConnection(ConnectionPtr connection, const Hello&) override {
    const int index = connections++;
    asio::co_spawn(io_, Listen(std::move(connection), index), asio::detached);
  }

  std::string parent_address;
  uint64_t chunks = 0;
  std::atomic<int> connections{0};
  std::array<std::atomic<int>, 8> data_frames{};  // per connection, the first eight
  std::array<std::atomic<int>, 8> batches{};      // DIGESTS frames, the same way
  std::atomic<int> keepalives{0};
  std::atomic<bool> data_before_its_batch{false};

 private:
  asio::awaitable<void> Listen(ConnectionPtr connection, int index) {
    std::array<uint8_t, kFrameHeaderBytes> bytes{};
    std::vector<uint8_t> body(1 << 20);
    for (;;) {
      if (!(co_await connection->Read(bytes, std::chrono::seconds(30))).ok()) co_return;
      Result<FrameHeader> header = DecodeFrameHeader(bytes, static_cast<uint32_t>(body.size()));
      if (!header.ok()) co_return;
      if (header->type == FrameType::kKeepalive) ++keepalives;
      if (header->type == FrameType::kDigests) {
        if (!(co_await connection->Read({body.data(), header->length}, std::chrono::seconds(30))).ok()) co_return;
        if (index < static_cast<int>(batches.size())) ++batches[index];
        continue;
      }
      if (header->type != FrameType::kData) continue;
      // Only the first batch's chunks come (a window of them): its batch must come first.
      if (index < static_cast<int>(batches.size()) && batches[index] == 0) data_before_its_batch = true;
      if (!(co_await connection->ReceiveChunk({body.data(), header->length}, std::chrono::seconds(30), {})).ok()) {
        co_return;
      }
      if (index < static_cast<int>(data_frames.size())) ++data_frames[index];
    }
  }

  asio::io_context& io_;
};

// A child that takes lane 0 from member 0, says it finds held chunks later and, for each batch
// of digests as it comes, which of `held` it holds (HELD), and acknowledges every chunk sent,
// recording which came.
class HoldingChild final : public LaneReceiver {
 public:
  HoldingChild(asio::io_context& io, PlanId id) : io_(io), id_(id) {}

  Status CheckParent(const Hello& hello) const override {
    return hello.parent == 0 ? Status::Ok() : Status::PermissionDenied("not my parent");
  }
  std::string DataAddressOf(uint32_t) const override { return parent_address; }
  std::vector<ChunkRun> HeldRuns() const override { return {}; }
  bool FindsHeldChunksLater() const override { return true; }
  void AdoptParentConnection(ConnectionPtr connection, const Hello&) override {
    asio::co_spawn(io_, Listen(std::move(connection)), asio::detached);
  }

  std::string parent_address;
  uint64_t chunks = 0;
  uint64_t chunk_bytes = 0;
  std::set<uint64_t> held;
  std::mutex mutex;
  std::set<uint64_t> received;  // guarded by mutex

 private:
  asio::awaitable<void> Listen(ConnectionPtr connection) {
    const DigestBatches rule(chunk_bytes, chunks);
    std::array<uint8_t, kFrameHeaderBytes> bytes{};
    std::vector<uint8_t> body(1 << 20);
    for (;;) {
      if (!(co_await connection->Read(bytes, std::chrono::seconds(30))).ok()) co_return;
      Result<FrameHeader> header = DecodeFrameHeader(bytes, static_cast<uint32_t>(body.size()));
      if (!header.ok()) co_return;
      if (header->type == FrameType::kDigests) {
        if (!(co_await connection->Read({body.data(), header->length}, std::chrono::seconds(30))).ok()) co_return;
        const DigestBatches::Range range = rule.RangeOf(rule.BatchOf(header->chunk));
        FrameHeader announce;
        announce.type = FrameType::kHeld;
        announce.plan_id = id_;
        announce.chunk = range.first;
        std::vector<uint8_t> bits((range.count + 7) / 8, 0);
        for (uint32_t i = 0; i < range.count; ++i) {
          if (held.count(range.first + i)) bits[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
        }
        announce.length = static_cast<uint32_t>(bits.size());
        if (!(co_await connection->Write(EncodeFrameHeader(announce), bits, std::chrono::seconds(30))).ok()) co_return;
        continue;
      }
      if (header->type != FrameType::kData) continue;
      if (!(co_await connection->ReceiveChunk({body.data(), header->length}, std::chrono::seconds(30), {})).ok()) {
        co_return;
      }
      {
        std::lock_guard<std::mutex> lock(mutex);
        received.insert(header->chunk);
      }
      FrameHeader ack;
      ack.type = FrameType::kAck;
      ack.plan_id = id_;
      ack.chunk = header->chunk;
      if (!(co_await connection->Write(EncodeFrameHeader(ack), {}, std::chrono::seconds(30))).ok()) co_return;
    }
  }

  asio::io_context& io_;
  const PlanId id_;
};

class LaneSenderTest : public PlanExecutionFixture {};

// A child that finds held chunks later is sent no chunk of a batch before its HELD frame for
// the batch, and none it holds. 40 chunks: batches 0-15 and 16-39.
TEST_F(LaneSenderTest, ChunksAChildSaysItHoldsAreNotSent) {
  constexpr uint64_t kChunks = 40;
  MakePayloadAndPlan(kChunks * kChunk, "chain");  // 0 -> 1 -> 2 -> 3: the source's one child is 1
  auto child = std::make_shared<HoldingChild>(io_, id_);
  child->chunks = plan_.NumChunks();
  child->chunk_bytes = kChunk;
  child->parent_address = addresses_[0];
  for (uint64_t c = 0; c < kChunks; c += 3) child->held.insert(c);
  ASSERT_EQ(DigestBatches(kChunk, kChunks).count(), 2u);
  auto transport = std::make_shared<TcpTransport>(io_, TcpOptions{});
  DataPlane plane(io_, transport, kSecret,
                  [child](const PlanId&) -> std::shared_ptr<LaneReceiver> { return child; }, std::chrono::seconds(5));
  Result<uint16_t> port = plane.Listen("127.0.0.1:0");
  ASSERT_TRUE(port.ok()) << port.status().ToString();
  addresses_[1] = "127.0.0.1:" + std::to_string(*port);

  StartMember(0, OpenStore(0));
  const auto received = [&] {
    std::lock_guard<std::mutex> lock(child->mutex);
    return child->received.size();
  };
  ASSERT_TRUE(WaitUntil([&] { return received() == kChunks - child->held.size(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::lock_guard<std::mutex> lock(child->mutex);
  EXPECT_EQ(child->received.size(), kChunks - child->held.size());
  for (uint64_t c : child->held) EXPECT_EQ(child->received.count(c), 0u) << c;
  StopAll();
}

TEST_F(LaneSenderTest, AChildThatStopsAcknowledgingGetsAWindowThenAReconnection) {
  constexpr uint32_t kWindow = 3;
  MakePayloadAndPlan(20 * kChunk, "chain");  // 0 -> 1 -> 2 -> 3: the source's one child is 1
  auto child = std::make_shared<SilentChild>(io_);
  child->chunks = plan_.NumChunks();
  child->parent_address = addresses_[0];
  auto transport = std::make_shared<TcpTransport>(io_, TcpOptions{});
  DataPlane plane(io_, transport, kSecret,
                  [child](const PlanId&) -> std::shared_ptr<LaneReceiver> { return child; }, std::chrono::seconds(5));
  Result<uint16_t> port = plane.Listen("127.0.0.1:0");
  ASSERT_TRUE(port.ok()) << port.status().ToString();
  addresses_[1] = "127.0.0.1:" + std::to_string(*port);

  base_options_.window_chunks = kWindow;
  base_options_.io_timeout = std::chrono::milliseconds(600);
  StartMember(0, OpenStore(0));
  ASSERT_TRUE(WaitUntil([&] { return child->data_frames[0] == static_cast<int>(kWindow); }));
  // Nothing more on that connection while nothing is acknowledged; keepalives neither (the
  // sender waits for its window, not for a chunk).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(child->data_frames[0], static_cast<int>(kWindow));
  EXPECT_EQ(child->connections, 1);
  // After the I/O timeout without an acknowledgement, the sender reconnects and sends the
  // window again (the child's bitmap holds nothing): resends, counted as such.
  ASSERT_TRUE(WaitUntil([&] { return child->connections >= 2 && child->data_frames[1] == static_cast<int>(kWindow); }));
  EXPECT_GE(CountersOf(0)->Read().chunks_resent, kWindow);
  // Each connection carried each of the payload's two signed batches of digests once, before
  // the chunks: the second ahead of its chunks (kBatchesAhead).
  ASSERT_EQ(DigestBatches(kChunk, plan_.NumChunks()).count(), 2u);
  EXPECT_EQ(child->batches[0], 2);
  EXPECT_EQ(child->batches[1], 2);
  EXPECT_FALSE(child->data_before_its_batch);
  // The source holds the payload (done), and has not failed: it still forwards.
  const ExecutionSnapshot source = SnapshotOf(0);
  EXPECT_EQ(source.state, ExecutionState::kDone) << source.error;
  EXPECT_FALSE(source.forwarding_done);
  StopAll();
}

}  // namespace
}  // namespace gridcast
