// Memory lent by local processes (the MPI shim's ranks): the region, the store that receives
// into it, and the daemon's registry with the shim's side of the protocol, over a real socket
// and, for the cross-process writes, a real second process.
#include "daemon/store/rank_memory.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <cstring>
#include <thread>

#include "client/mpi/rank_memory_lease.h"
#include "cluster/rank_memory_protocol.h"
#include "daemon/store/rank_memory_registry.h"
#include "daemon/store/payload_store.h"
#include "payload_store_fixture.h"

namespace gridcast {
namespace {

uint64_t AddressOf(const std::vector<uint8_t>& bytes) { return reinterpret_cast<uintptr_t>(bytes.data()); }

std::vector<uint8_t> Pattern(size_t bytes, uint8_t seed) {
  std::vector<uint8_t> out(bytes);
  for (size_t i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(i * 7 + seed);
  return out;
}

TEST(ProcessRegion, WritesIntoAnotherProcessAndStopsWhenClosed) {
  constexpr size_t kBytes = 3 << 20;
  // Allocated before the fork: the child's copy sits at the same address.
  std::vector<uint8_t> buffer(kBytes, 0);
  int go[2], verdict[2];
  ASSERT_EQ(pipe(go), 0);
  ASSERT_EQ(pipe(verdict), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    char byte = 0;
    if (read(go[0], &byte, 1) != 1) _exit(2);
    const std::vector<uint8_t> expected = Pattern(kBytes, 3);
    const char ok = std::memcmp(buffer.data(), expected.data(), kBytes) == 0 ? 'y' : 'n';
    if (write(verdict[1], &ok, 1) != 1) _exit(2);
    _exit(0);
  }
  ProcessRegion region(child, AddressOf(buffer), kBytes);
  ASSERT_TRUE(region.Probe().ok()) << region.Probe().ToString();
  const std::vector<uint8_t> pattern = Pattern(kBytes, 3);
  ASSERT_TRUE(region.Write(0, {pattern.data(), kBytes / 2}).ok());
  ASSERT_TRUE(region.Write(kBytes / 2, {pattern.data() + kBytes / 2, kBytes - kBytes / 2}).ok());
  EXPECT_TRUE(region.filled());
  EXPECT_EQ(region.Write(kBytes - 1, {pattern.data(), 2}).code(), StatusCode::kOutOfRange);
  std::vector<uint8_t> back(4096);
  ASSERT_TRUE(region.Read(kBytes - back.size(), back).ok());
  EXPECT_EQ(0, std::memcmp(back.data(), pattern.data() + kBytes - back.size(), back.size()));
  region.Close();
  EXPECT_EQ(region.Write(0, {pattern.data(), 1}).code(), StatusCode::kFailedPrecondition);

  ASSERT_EQ(write(go[1], "x", 1), 1);
  char ok = 0;
  ASSERT_EQ(read(verdict[0], &ok, 1), 1);
  EXPECT_EQ(ok, 'y') << "the child's buffer does not hold what was written into it";
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(buffer, std::vector<uint8_t>(kBytes, 0)) << "this process's own copy changed";
  for (int fd : {go[0], go[1], verdict[0], verdict[1]}) close(fd);

  // The process is gone: nothing to reach.
  ProcessRegion gone(child, AddressOf(buffer), kBytes);
  EXPECT_EQ(gone.Probe().code(), StatusCode::kFailedPrecondition);
}

TEST(ProcessRegion, MemoryNotMappedIsRefusedAtTheProbe) {
  ProcessRegion nowhere(getpid(), 4096, 4096);  // page zero is never mapped
  EXPECT_EQ(nowhere.Probe().code(), StatusCode::kFailedPrecondition);
}

TEST(RankMemory, SendsFromTheReceivedBufferUntilForwardedThenReadsBack) {
  constexpr size_t kChunk = 4096;
  std::vector<uint8_t> lent(3 * kChunk, 0);
  auto region = std::make_shared<ProcessRegion>(getpid(), AddressOf(lent), lent.size());
  RankMemory memory({region}, /*kept_bytes=*/2 * kChunk);
  std::vector<std::shared_ptr<const std::vector<uint8_t>>> received;
  for (uint64_t c = 0; c < 3; ++c) {
    received.push_back(std::make_shared<const std::vector<uint8_t>>(Pattern(kChunk, static_cast<uint8_t>(c))));
    ASSERT_TRUE(memory.Write(c, c * kChunk, *received[c], received[c]).ok());
  }
  EXPECT_EQ(0, std::memcmp(lent.data() + kChunk, received[1]->data(), kChunk));
  // Chunk 0 went past the bound: read back; 1 and 2 are sent from their buffers.
  for (uint64_t c : {2, 1, 0}) {
    Result<ChunkRef> at = memory.At(c, c * kChunk, kChunk);
    ASSERT_TRUE(at.ok());
    EXPECT_EQ(0, std::memcmp(at->memory.data(), received[c]->data(), kChunk));
    EXPECT_EQ(at->memory.data() == received[c]->data(), c != 0) << c;
    EXPECT_NE(at->owner, nullptr);
  }
  EXPECT_EQ(memory.sent_from_kept(), 2u);
  EXPECT_EQ(memory.sent_read_back(), 1u);
  memory.Forwarded(2);
  Result<ChunkRef> again = memory.At(2, 2 * kChunk, kChunk);
  ASSERT_TRUE(again.ok());
  EXPECT_NE(again->memory.data(), received[2]->data());
  EXPECT_EQ(memory.sent_read_back(), 2u);
}

class RankMemoryStoreTest : public PayloadStoreFixture {};

TEST_F(RankMemoryStoreTest, VerifiedChunksGoIntoTheLentMemoryAndNothingToTheDisk) {
  std::vector<uint8_t> first(payload_.size(), 0), second(payload_.size(), 0);
  auto lent = std::make_shared<RankMemory>(
      std::vector<std::shared_ptr<ProcessRegion>>{
          std::make_shared<ProcessRegion>(getpid(), AddressOf(first), first.size()),
          std::make_shared<ProcessRegion>(getpid(), AddressOf(second), second.size())},
      uint64_t{1} << 20);
  Result<std::unique_ptr<PayloadStore>> opened = PayloadStore::OpenForRankMemory("p.bin", identity_, lent);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  PayloadStore& store = **opened;

  std::vector<uint8_t> corrupt(Chunk(1).begin(), Chunk(1).end());
  corrupt[10] ^= 1;
  EXPECT_EQ(store.WriteChunk(1, corrupt).code(), StatusCode::kDataLoss);
  EXPECT_EQ(first, std::vector<uint8_t>(payload_.size(), 0)) << "an unverified chunk reached the lent memory";
  EXPECT_EQ(store.WriteBlock(0, 0, Chunk(0).subspan(0, 100)).code(), StatusCode::kFailedPrecondition);

  std::vector<PayloadStore::ReceivedChunk> received(identity_.NumChunks());
  for (uint64_t c = 0; c < received.size(); ++c) {
    received[c].chunk = c;
    auto buffer = std::make_shared<std::vector<uint8_t>>(Chunk(c).begin(), Chunk(c).end());
    received[c].data = *buffer;
    received[c].buffer = buffer;
  }
  store.StoreReceived(received);
  for (const auto& r : received) EXPECT_TRUE(r.status.ok() && r.newly_verified) << r.chunk << r.status.ToString();
  ASSERT_TRUE(store.Complete());
  EXPECT_EQ(first, payload_);
  EXPECT_EQ(second, payload_);
  for (uint64_t c = 0; c < identity_.NumChunks(); ++c) {
    Result<ChunkRef> at = store.ChunkAt(c);
    ASSERT_TRUE(at.ok());
    EXPECT_TRUE(std::equal(at->memory.begin(), at->memory.end(), Chunk(c).begin(), Chunk(c).end()));
  }
  std::vector<uint8_t> block(100);
  EXPECT_EQ(store.ReadBlock(0, 0, block).code(), StatusCode::kFailedPrecondition) << "blocks are a swarm's";
  Result<Digest> finished = store.Finalize(/*sync=*/true);
  ASSERT_TRUE(finished.ok()) << finished.status().ToString();
  EXPECT_EQ(*finished, identity_.ListDigest());
  EXPECT_TRUE(fs::is_empty(dir_));
  EXPECT_FALSE(PayloadStore::OpenForRankMemory("p.bin", identity_, nullptr).ok());
}

// A daemon's registry on a running io thread, and the shim's side of the protocol.
class RankMemoryRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    socket_ = RankMemorySocketName("registry-test", "127.0.0.1:" + std::to_string(getpid()));
    Result<std::shared_ptr<RankMemoryRegistry>> registry = RankMemoryRegistry::Listen(io_, socket_);
    ASSERT_TRUE(registry.ok()) << registry.status().ToString();
    registry_ = *registry;
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    work_.reset();
    io_.stop();
    thread_.join();
  }
  // Raw bytes to the daemon's socket; what it answers (empty when it closed without a word).
  std::vector<uint8_t> SendRaw(const std::vector<uint8_t>& bytes) {
    const std::string& name = socket_;
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path + 1, name.data(), name.size());
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    EXPECT_EQ(0, connect(fd, reinterpret_cast<const sockaddr*>(&address),
                         static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size())));
    EXPECT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    shutdown(fd, SHUT_WR);
    std::vector<uint8_t> answer(4096);
    ssize_t got = 0, total = 0;
    while ((got = read(fd, answer.data() + total, answer.size() - static_cast<size_t>(total))) > 0) total += got;
    close(fd);
    answer.resize(static_cast<size_t>(total));
    return answer;
  }
  void WaitForLoans(size_t loans) {
    for (int i = 0; i < 500 && registry_->loans() != loans; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(registry_->loans(), loans);
  }

  boost::asio::io_context io_{1};
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{io_.get_executor()};
  std::string socket_;
  std::shared_ptr<RankMemoryRegistry> registry_;
  std::thread thread_;
};

TEST_F(RankMemoryRegistryTest, ALentBufferIsBoundOnceFilledAndReleased) {
  std::vector<uint8_t> buffer(1 << 20, 0);
  Result<std::unique_ptr<RankMemoryLease>> lease = RankMemoryLease::Lend(socket_, "mpi-bcast-1.bin", buffer);
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  EXPECT_EQ(registry_->loans(), 1u);
  EXPECT_TRUE(registry_->Bind("mpi-bcast-1.bin", buffer.size() + 1).empty()) << "another size";
  EXPECT_TRUE(registry_->Bind("mpi-bcast-2.bin", buffer.size()).empty()) << "another name";
  std::vector<std::shared_ptr<ProcessRegion>> bound = registry_->Bind("mpi-bcast-1.bin", buffer.size());
  ASSERT_EQ(bound.size(), 1u);
  EXPECT_EQ(bound[0]->pid(), getpid());
  EXPECT_TRUE(registry_->Bind("mpi-bcast-1.bin", buffer.size()).empty()) << "bound once";
  const std::vector<uint8_t> payload = Pattern(buffer.size(), 9);
  ASSERT_TRUE(bound[0]->Write(0, payload).ok());
  EXPECT_EQ(buffer, payload);
  Result<RankMemoryLease::Outcome> released = (*lease)->Release();
  ASSERT_TRUE(released.ok()) << released.status().ToString();
  EXPECT_TRUE(released->bound);
  EXPECT_TRUE(released->filled);
  EXPECT_EQ(registry_->loans(), 0u);
  EXPECT_EQ(bound[0]->Write(0, payload).code(), StatusCode::kFailedPrecondition) << "written after its release";
}

TEST_F(RankMemoryRegistryTest, AnUnboundLoanEndsWithItsConnection) {
  std::vector<uint8_t> buffer(4096, 0);
  {
    Result<std::unique_ptr<RankMemoryLease>> lease = RankMemoryLease::Lend(socket_, "p.bin", buffer);
    ASSERT_TRUE(lease.ok()) << lease.status().ToString();
    Result<RankMemoryLease::Outcome> released = (*lease)->Release();
    ASSERT_TRUE(released.ok());
    EXPECT_FALSE(released->bound);
    EXPECT_FALSE(released->filled);
  }
  // A lender whose connection just closes (a rank that died) ends its loan too.
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  const std::string& name = socket_;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path + 1, name.data(), name.size());
  ASSERT_EQ(0, connect(fd, reinterpret_cast<const sockaddr*>(&address),
                       static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size())));
  RankMemoryRequest request;
  request.address = AddressOf(buffer);
  request.length = buffer.size();
  request.name = "q.bin";
  const std::vector<uint8_t> bytes = EncodeRankMemoryRequest(request);
  ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  std::vector<uint8_t> reply(kRankMemoryReplyHeaderBytes);
  ASSERT_EQ(read(fd, reply.data(), reply.size()), static_cast<ssize_t>(reply.size()));
  EXPECT_EQ(reply[0], 0);
  WaitForLoans(1);
  close(fd);
  WaitForLoans(0);
  EXPECT_TRUE(registry_->Bind("q.bin", buffer.size()).empty());
}

TEST_F(RankMemoryRegistryTest, BadRequestsGetTheirReasonAndLendNothing) {
  std::vector<uint8_t> buffer(4096, 0);
  EXPECT_EQ(RankMemoryLease::Lend(socket_, "../outside", buffer).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(RankMemoryLease::Lend(socket_ + "-absent", "p.bin", buffer).status().code(), StatusCode::kUnavailable);
  // Memory this process does not have.
  RankMemoryRequest nowhere;
  nowhere.address = 4096;
  nowhere.length = 4096;
  nowhere.name = "p.bin";
  std::vector<uint8_t> answer = SendRaw(EncodeRankMemoryRequest(nowhere));
  ASSERT_GE(answer.size(), kRankMemoryReplyHeaderBytes);
  EXPECT_EQ(answer[0], static_cast<uint8_t>(StatusCode::kFailedPrecondition));
  // Not the protocol at all; a release before any loan.
  answer = SendRaw(std::vector<uint8_t>(64, 'z'));
  ASSERT_GE(answer.size(), kRankMemoryReplyHeaderBytes);
  EXPECT_EQ(answer[0], static_cast<uint8_t>(StatusCode::kInvalidArgument));
  RankMemoryRequest release;
  release.op = RankMemoryOp::kRelease;
  answer = SendRaw(EncodeRankMemoryRequest(release));
  ASSERT_GE(answer.size(), kRankMemoryReplyHeaderBytes);
  EXPECT_EQ(answer[0], static_cast<uint8_t>(StatusCode::kInvalidArgument));
  // Cut short.
  answer = SendRaw({'G', 'C', 'R'});
  EXPECT_TRUE(answer.empty());
  EXPECT_EQ(registry_->loans(), 0u);
}

}  // namespace
}  // namespace gridcast
