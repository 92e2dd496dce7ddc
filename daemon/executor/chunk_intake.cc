#include "daemon/executor/chunk_intake.h"

#include <spdlog/spdlog.h>

#include <array>
#include <deque>

#include "common/hex.h"
#include "daemon/executor/lane_repair.h"
#include "daemon/executor/parent_watch.h"

namespace gridcast {

namespace asio = boost::asio;

struct ParentConnection {
  ParentConnection(asio::io_context& io, ConnectionPtr c, ParentStream s)
      : connection(std::move(c)), stream(s), changed(io) {}
  const ConnectionPtr connection;
  const ParentStream stream;
  std::chrono::steady_clock::time_point last_written = std::chrono::steady_clock::now();
  std::string where;                // for log lines
  struct Reply {
    FrameHeader header;
    std::vector<uint8_t> body;  // a HELD frame's bits
  };
  std::deque<Reply> replies;  // ACKs, NACKs and HELDs not written yet
  uint32_t verifying = 0;           // chunks with ChunkVerification
  uint64_t kernel_bytes_seen = 0;   // KernelBytesSinceLast's count so far
  int mismatches = 0;
  bool closed = false;
  Notifier changed;  // a reply was queued, a chunk was verified, or closed
  void Close() {
    closed = true;
    connection->Close();
    changed.Notify();
  }
};

Status CheckParentFrame(const FrameHeader& header, const ParentStream& from, const PlanId& id, const Plan& plan,
                        const LaneSchedule& schedule, const PayloadStore& store, const DigestStream* digests) {
  const bool assign = header.type == FrameType::kAssign;
  const bool batch = header.type == FrameType::kDigests;
  if ((header.type != FrameType::kData && header.type != FrameType::kKeepalive && !assign && !batch) ||
      header.plan_id != id || header.lane != static_cast<uint32_t>(from.lane) || (assign && !plan.shared_chunks) ||
      (batch && digests == nullptr)) {
    return Status::InvalidArgument("frame for another plan, lane or of the wrong type");
  }
  if (header.type == FrameType::kKeepalive) {
    if (header.chunk > kKeepaliveParentRepairs) return Status::InvalidArgument("malformed keepalive");
    return Status::Ok();
  }
  if (batch) return digests->CheckFirstChunk(header.chunk);
  // Built only for a refusal: this runs once per chunk received.
  const auto refused = [&header](const char* why) {
    return Status::InvalidArgument("chunk " + std::to_string(header.chunk) + why);
  };
  if (!schedule.Carries(from.lane, header.chunk, from.stream, from.stream_count)) return refused(" is not carried here");
  if (digests != nullptr && !digests->Covers(header.chunk)) return refused(" came before its batch of digests");
  if (assign) {
    return store.Has(header.chunk) ? Status::Ok() : refused(" is assigned to this member as held, and it is not");
  }
  if (header.length != plan.ChunkSize(header.chunk)) return refused(" has the wrong length");
  if (header.digest != store.identity().digest || header.hash != store.ExpectedDigest(header.chunk)) {
    return refused(" comes with another digest than the plan's");
  }
  return Status::Ok();
}

ChunkIntake::ChunkIntake(ExecutionContext& context)
    : context_(context),
      buffers_(BufferPool::Create(ChunksWithin(context.options.cache_chunks, context.plan.chunk_bytes))),
      verification_(context, [this](ReceivedFrame frame, const Status& status, bool newly) {
        OnVerified(std::move(frame), status, newly);
      }) {}

// Stays whole: one connection from a parent, from the handshake to the last chunk stored, as one
// coroutine in the order it happens.
asio::awaitable<void> ChunkIntake::Receive(ConnectionPtr connection_ptr, ParentStream from) {
  auto conn = std::make_shared<ParentConnection>(context_.io, std::move(connection_ptr), from);
  const ConnectionPtr& connection = conn->connection;
  const int lane = from.lane;
  context_.host.Track(connection);
  conn->where = "plan " + ToHex(context_.id) + " lane " + std::to_string(lane);
  context_.host.Spawn(WriteReplies(conn));
  std::erase_if(parents_, [](const std::weak_ptr<ParentConnection>& parent) { return parent.expired(); });
  parents_.push_back(conn);
  context_.watch.Opened(lane, std::chrono::steady_clock::now());
  PeerTraffic* const traffic = context_.PushTrafficWith(context_.schedule.ParentOf(lane));
  PayloadStore& store = *context_.store;
  ChunkPlacement* const placement = context_.capabilities.placement;
  std::array<uint8_t, kFrameHeaderBytes> bytes{};
  while (!conn->closed) {
    Status read = co_await connection->Read(bytes, context_.options.io_timeout);
    if (!read.ok()) {
      if (!context_.host.Stopping() && !store.Complete()) {
        spdlog::debug("{}: parent connection ended: {}", conn->where, read.ToString());
      }
      break;
    }
    Result<FrameHeader> header = DecodeFrameHeader(bytes, static_cast<uint32_t>(context_.plan.chunk_bytes));
    const Status valid = header.ok() ? CheckParentFrame(*header, from, context_.id, context_.plan, context_.schedule, store,
                                                                       context_.digests)
                                     : header.status();
    if (!valid.ok()) {
      spdlog::warn("{}: closing parent connection: {}", conn->where, valid.message());
      break;
    }
    context_.watch.Progress(lane, std::chrono::steady_clock::now());
    if (header->type == FrameType::kKeepalive) {
      if (header->chunk == kKeepaliveParentRepairs) context_.repair.ParentRepairs(lane);
      continue;
    }
    if (header->type == FrameType::kAssign) {
      if (context_.schedule.AddToLog(lane, header->chunk)) context_.chunk_arrived.Notify();
      continue;
    }
    if (header->type == FrameType::kDigests) {
      std::string body(header->length, '\0');
      Status batch = co_await connection->Read({reinterpret_cast<uint8_t*>(body.data()), body.size()},
                                               context_.options.io_timeout);
      if (batch.ok()) batch = context_.digests->Accept(body);
      if (!batch.ok()) {
        spdlog::warn("{}: closing parent connection: {}", conn->where, batch.message());
        break;
      }
      // A batch looked through before, sent again on this connection: this parent waits for
      // its HELD frame too.
      const uint64_t index = context_.digests->rule().BatchOf(header->chunk);
      if (!looked_through_.empty() && looked_through_[index]) {
        QueueHeld(*conn, index);
      }
      context_.chunk_arrived.Notify();  // senders to this member's children may pass it on
      continue;
    }
    // Straight into the payload's final pages where the store has them (in memory), else
    // into a pooled buffer that the store writes once verified.
    const std::span<uint8_t> place = placement != nullptr ? placement->Claim(header->chunk) : std::span<uint8_t>();
    std::shared_ptr<std::vector<uint8_t>> buffer;
    std::span<uint8_t> into = place;
    if (place.empty()) {
      buffer = buffers_->Acquire(header->length);
      into = *buffer;
    }
    // Progress as parts arrive: a parent sending slowly (its upload shared) is not a silent one.
    std::function<void()> progress = [this, lane] { context_.watch.Progress(lane, std::chrono::steady_clock::now()); };
    const Status received = co_await connection->ReceiveChunk(into, context_.options.io_timeout, std::move(progress));
    if (received.ok()) {
      context_.traffic.received_bytes.fetch_add(header->length, std::memory_order_relaxed);
      context_.watch.Received(lane, header->length);
      if (traffic != nullptr) traffic->received_bytes.fetch_add(header->length, std::memory_order_relaxed);
      // A parent keeps at most its window of chunks unacknowledged; one that sends more waits
      // here, so this connection never holds more than a window of buffers.
      while (conn->verifying >= context_.window_chunks && !conn->closed) co_await conn->changed.Wait();
    }
    if (!received.ok() || conn->closed) {
      if (!place.empty()) placement->Release(header->chunk);
      break;
    }
    ++conn->verifying;
    verification_.Verify({conn, *header, std::move(buffer), place});
  }
  conn->Close();
  context_.watch.Closed(lane, std::chrono::steady_clock::now());
}

void ChunkIntake::DropParent(int lane, int parent) {
  for (const std::weak_ptr<ParentConnection>& weak : parents_) {
    const std::shared_ptr<ParentConnection> conn = weak.lock();
    if (conn != nullptr && conn->stream.lane == lane && conn->stream.parent == parent) conn->Close();
  }
}

bool ChunkIntake::OwesParent(int lane) {
  std::erase_if(parents_, [](const std::weak_ptr<ParentConnection>& parent) { return parent.expired(); });
  for (const std::weak_ptr<ParentConnection>& weak : parents_) {
    const std::shared_ptr<ParentConnection> parent = weak.lock();
    if (parent != nullptr && !parent->closed && parent->stream.lane == lane &&
        (parent->verifying > 0 || !parent->replies.empty())) {
      return true;
    }
  }
  return false;
}

std::optional<uint64_t> ChunkIntake::KernelBytesSinceLast(int lane) {
  std::optional<uint64_t> arrived;
  for (const std::weak_ptr<ParentConnection>& weak : parents_) {
    const std::shared_ptr<ParentConnection> parent = weak.lock();
    if (parent == nullptr || parent->closed || parent->stream.lane != lane) continue;
    const std::optional<uint64_t> received = parent->connection->KernelBytesReceived();
    if (!received) continue;
    arrived = arrived.value_or(0) + (*received - std::min(*received, parent->kernel_bytes_seen));
    parent->kernel_bytes_seen = *received;
  }
  return arrived;
}

void ChunkIntake::OnVerified(ReceivedFrame frame, const Status& status, bool newly) {
  constexpr int kMaxMismatches = 8;
  ParentConnection& conn = *frame.from;
  const FrameHeader& header = frame.header;
  --conn.verifying;
  conn.changed.Notify();  // the waiters run after this handler, and see the reply queued below
  FrameHeader reply;
  reply.plan_id = context_.id;
  reply.lane = header.lane;
  reply.chunk = header.chunk;
  reply.type = FrameType::kAck;
  if (status.code() == StatusCode::kAborted) {
    // Another connection of this lane receives the chunk into place (a reconnect overtook
    // a connection still ending): ask again; the parent resends unless that one delivers it.
    reply.type = FrameType::kNack;
  } else if (status.code() == StatusCode::kDataLoss) {
    spdlog::warn("{}: {}; asking the parent again", conn.where, status.message());
    reply.type = FrameType::kNack;
    if (context_.options.counters) context_.options.counters->ChunkRefused(Transport::kPush);
    if (++conn.mismatches > kMaxMismatches) {
      spdlog::warn("{}: {} corrupt chunks from this parent; closing", conn.where, conn.mismatches);
      conn.Close();
      return;
    }
  } else if (!status.ok()) {
    context_.host.Fail(status.WithContext(context_.names[context_.schedule.self()]));
    return;
  } else {
    std::span<const uint8_t> data;
    if (frame.buffer) data = *frame.buffer;
    context_.host.ChunkStored(static_cast<int>(header.lane), header.chunk, data, newly);
  }
  if (conn.closed) return;
  conn.replies.push_back({reply, {}});
}

uint64_t ChunkIntake::LookedThrough(uint64_t batch) {
  if (looked_through_.empty()) looked_through_.assign(context_.digests->rule().count(), false);
  looked_through_[batch] = true;
  while (looked_through_below_ < looked_through_.size() && looked_through_[looked_through_below_]) {
    ++looked_through_below_;
  }
  std::erase_if(parents_, [](const std::weak_ptr<ParentConnection>& parent) { return parent.expired(); });
  for (const std::weak_ptr<ParentConnection>& weak : parents_) {
    if (const std::shared_ptr<ParentConnection> parent = weak.lock()) QueueHeld(*parent, batch);
  }
  return looked_through_below_;
}

void ChunkIntake::QueueHeld(ParentConnection& conn, uint64_t batch) {
  if (conn.closed) return;
  const DigestBatches::Range range = context_.digests->rule().RangeOf(batch);
  FrameHeader held;
  held.type = FrameType::kHeld;
  held.plan_id = context_.id;
  held.lane = static_cast<uint32_t>(conn.stream.lane);
  held.chunk = range.first;
  std::vector<uint8_t> bits((range.count + 7) / 8, 0);
  for (uint32_t i = 0; i < range.count; ++i) {
    if (context_.store->Has(range.first + i)) bits[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
  }
  held.length = static_cast<uint32_t>(bits.size());
  conn.replies.push_back({held, std::move(bits)});
  conn.changed.Notify();
}

asio::awaitable<void> ChunkIntake::WriteReplies(std::shared_ptr<ParentConnection> conn) {
  std::vector<uint8_t> bytes;
  while (!conn->closed) {
    if (conn->replies.empty()) {
      co_await conn->changed.Wait();
      continue;
    }
    // Shared lanes: while this member's children in the lane fall behind, the parent hears
    // nothing (its window fills, and the lag travels up to the source), up to half the time
    // after which it would give up on this connection.
    if (context_.plan.shared_chunks && context_.schedule.Lags(conn->stream.lane, context_.window_chunks) &&
        std::chrono::steady_clock::now() - conn->last_written < context_.options.io_timeout / 2) {
      co_await context_.chunk_arrived.Wait();
      continue;
    }
    bytes.clear();
    for (const ParentConnection::Reply& reply : conn->replies) {
      const auto encoded = EncodeFrameHeader(reply.header);
      bytes.insert(bytes.end(), encoded.begin(), encoded.end());
      bytes.insert(bytes.end(), reply.body.begin(), reply.body.end());
    }
    conn->replies.clear();
    conn->last_written = std::chrono::steady_clock::now();
    if (!(co_await conn->connection->Write(bytes, {}, context_.options.io_timeout)).ok()) {
      conn->Close();
    }
  }
}

}  // namespace gridcast
