#include "daemon/executor/lane_sender.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <deque>
#include <map>
#include <set>

#include "common/hex.h"
#include "daemon/executor/lane_repair.h"
#include "daemon/transport/handshake.h"

namespace gridcast {

namespace asio = boost::asio;

struct LaneSender::Connection {
  Connection(asio::io_context& io, ConnectionPtr c) : connection(std::move(c)), wake(io) {}
  const ConnectionPtr connection;
  ChildHolds holds;  // what the child's handshake said
  // The child finds held chunks later (ChildHolds::finds_later): the batches it said it
  // looked through (HELD), by batch; empty otherwise. The bits of the recent ones' HELD
  // frames, by batch: the sender drops those more than kBatchesRemembered behind its own.
  std::vector<bool> looked_through;
  std::map<uint64_t, std::vector<uint8_t>> held_bits;

  bool ChildHas(uint64_t chunk, const DigestBatches* rule) const {
    if (holds.Holds(chunk)) return true;
    if (rule == nullptr || held_bits.empty()) return false;
    const uint64_t batch = rule->BatchOf(chunk);
    auto bits = held_bits.find(batch);
    if (bits == held_bits.end()) return false;
    const uint64_t i = chunk - rule->RangeOf(batch).first;
    return (bits->second[i / 8] >> (i % 8)) & 1;
  }
  std::set<uint64_t> in_flight;
  std::deque<uint64_t> resend;
  Notifier wake;
  Status error;
  std::chrono::steady_clock::time_point last_ack = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_sent = std::chrono::steady_clock::now();
  LaneSchedule::Cursor cursor;
  std::deque<uint64_t> batches_sent;  // the last kBatchesRemembered, oldest first
  uint64_t ahead = 0;  // the lane log's position up to which batches were sent ahead
};

namespace {
// A lane meets batches in increasing order (shared lanes nearly so): a few suffice, and a
// batch sent again costs one frame.
constexpr size_t kBatchesRemembered = 64;
// How many batches past the next chunk's a connection carries, as far as the sender holds
// them: a child finds the chunks it holds already (an earlier attempt's, an earlier copy's)
// once their digests are there, and says so (HELD) before those chunks would be sent. Eight
// are 128 MiB past the ramp, well inside kBatchesRemembered.
constexpr uint64_t kBatchesAhead = 8;
}  // namespace

LaneSender::LaneSender(ExecutionContext& context, int lane, int child, int stream, int stream_count)
    : context_(context),
      lane_(lane),
      child_(child),
      stream_(stream),
      stream_count_(stream_count),
      traffic_(context.PushTrafficWith(child)) {}

asio::awaitable<void> RunReconnecting(ExecutionContext& context, const std::string& what,
                                      const std::function<asio::awaitable<Status>()>& attempt,
                                      const std::function<bool()>& given_up) {
  const auto over = [&] { return context.host.Stopping() || (given_up && given_up()); };
  // The first retry comes soon, later ones the reconnect delay apart: a child refuses a new
  // parent until the plan patch that made it one reaches it, a few milliseconds after the
  // parent (the source applies its own patch first), and its whole subtree waits meanwhile.
  const std::chrono::milliseconds first_delay = std::max(context.options.reconnect_delay / 8, std::chrono::milliseconds(1));
  std::chrono::milliseconds delay_next = first_delay;
  while (!over()) {
    const auto began = std::chrono::steady_clock::now();
    Status status = co_await attempt();
    if (status.ok() || over()) break;
    // A connection that ran a while broke anew: its retry comes soon again.
    if (std::chrono::steady_clock::now() - began > context.options.reconnect_delay) delay_next = first_delay;
    // A wrong secret or certificate, or a child of another data protocol version, does not
    // heal by reconnecting: fail, naming the child.
    if (status.code() == StatusCode::kUnauthenticated || status.code() == StatusCode::kFailedPrecondition) {
      context.host.Fail(status);
      break;
    }
    spdlog::debug("plan {} {}: {}; reconnecting", ToHex(context.id), what, status.ToString());
    asio::steady_timer delay(context.io, delay_next);
    delay_next = std::min(2 * delay_next, context.options.reconnect_delay);
    boost::system::error_code ec;
    co_await delay.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

asio::awaitable<void> LaneSender::Run() {
  const std::string what = "lane " + std::to_string(lane_) + " -> " + context_.names[child_] + " stream " +
                           std::to_string(stream_);
  co_await RunReconnecting(context_, what, [this] { return SendOnce(); }, [this] { return stopped_; });
}

void LaneSender::Stop() {
  stopped_ = true;
  if (const std::shared_ptr<Connection> conn = current_.lock()) {
    conn->error = Status::Cancelled("the child moved to another parent");
    conn->connection->Close();
    conn->wake.Notify();
  }
  context_.chunk_arrived.Notify();  // a sender waiting for a chunk sees it now
}

void LaneSender::CapSendRate(double bytes_per_s) {
  send_cap_ = bytes_per_s;
  if (const std::shared_ptr<Connection> conn = current_.lock()) conn->connection->CapSendRate(bytes_per_s);
}

std::optional<uint64_t> LaneSender::AckedPosition() const {
  const std::shared_ptr<Connection> conn = current_.lock();
  if (conn == nullptr) return std::nullopt;
  const uint64_t unacknowledged = conn->in_flight.size() * static_cast<uint64_t>(stream_count_);
  return conn->cursor.next_position - std::min(conn->cursor.next_position, unacknowledged);
}

uint64_t LaneSender::AckedSinceLast() {
  const std::shared_ptr<Connection> conn = current_.lock();
  if (conn == nullptr) return 0;
  if (acked_on_.lock() != conn) {
    acked_on_ = conn;
    acked_seen_ = 0;
  }
  const std::optional<uint64_t> acked = conn->connection->KernelBytesAcked();
  if (!acked) return 0;
  const uint64_t since = *acked - std::min(*acked, acked_seen_);
  acked_seen_ = *acked;
  return since;
}

asio::awaitable<Status> LaneSender::SendOnce() {
  const ExecutionOptions& options = context_.options;
  const std::string& child_name = context_.names[child_];
  Result<ConnectionPtr> connected =
      co_await options.transport->Connect(context_.data_addresses[child_], options.connect_timeout);
  if (!connected.ok()) co_return connected.status().WithContext("child " + child_name);
  auto conn = std::make_shared<Connection>(context_.io, std::move(*connected));
  context_.host.Track(conn->connection);
  if (send_cap_ > 0) conn->connection->CapSendRate(send_cap_);
  if (stopped_) {
    conn->connection->Close();
    co_return Status::Cancelled("the child moved to another parent");
  }
  current_ = conn;
  // However it ends: what it had sent and not had acknowledged goes again on the next one.
  struct Unacknowledged {
    std::set<uint64_t>& lost;
    const Connection& conn;
    ~Unacknowledged() {
      lost.insert(conn.in_flight.begin(), conn.in_flight.end());
      lost.insert(conn.resend.begin(), conn.resend.end());
    }
  } unacknowledged{lost_in_flight_, *conn};

  const Hello hello = context_.schedule.HelloAsParent(context_.id, lane_, stream_, stream_count_);
  Result<ChildHolds> holds = co_await HandshakeAsParent(conn->connection, options.secret, hello,
                                                        context_.plan.NumChunks(), options.io_timeout);
  if (!holds.ok()) co_return holds.status().WithContext("child " + child_name);
  conn->holds = std::move(*holds);
  if (conn->holds.finds_later && context_.digests != nullptr) conn->looked_through.assign(context_.digests->rule().count(), false);

  context_.host.Spawn(ReadAcks(conn));
  LaneSchedule& schedule = context_.schedule;
  conn->cursor.stream_count = stream_count_;
  conn->cursor.child = child_;
  conn->cursor.stream = stream_;
  struct Listed {
    ExecutionContext& context;
    int lane;
    const LaneSchedule::Cursor* cursor;
    ~Listed() {
      context.schedule.RemoveCursor(lane, cursor);
      context.chunk_arrived.Notify();
    }
  } listed{context_, lane_, &conn->cursor};
  schedule.AddCursor(lane_, &conn->cursor);

  const bool shared = context_.plan.shared_chunks;
  for (uint64_t position = stream_;; position += stream_count_) {
    conn->cursor.next_position = position;
    if (shared) context_.chunk_arrived.Notify();
    // A claim may log a position of another stream of this lane (one not connected yet).
    GRIDCAST_CO_RETURN_IF_ERROR(co_await WaitUntil(*conn, [&] {
      while (position >= schedule.LogSize(lane_) && schedule.ClaimNext(lane_)) {
      }
      return position < schedule.LogSize(lane_) || schedule.EveryChunkLogged();
    }));
    if (position >= schedule.LogSize(lane_)) break;  // every chunk is logged: the lane is complete here
    const uint64_t chunk = schedule.LoggedAt(lane_, position);
    // Even for a chunk the child holds: the batch is then there for the child's own children.
    GRIDCAST_CO_RETURN_IF_ERROR(co_await SendBatchOf(*conn, position));
    if (!conn->looked_through.empty()) GRIDCAST_CO_RETURN_IF_ERROR(co_await WaitUntilLookedThrough(*conn, chunk));
    const DigestBatches* const rule = context_.digests != nullptr ? &context_.digests->rule() : nullptr;
    if (rule != nullptr) {
      const uint64_t batch = rule->BatchOf(chunk);
      while (!conn->held_bits.empty() && conn->held_bits.begin()->first + kBatchesRemembered < batch) {
        conn->held_bits.erase(conn->held_bits.begin());
      }
    }
    if (conn->ChildHas(chunk, rule)) {
      context_.host.Delivered(lane_, child_, chunk);
      if (shared) GRIDCAST_CO_RETURN_IF_ERROR(co_await SendHeader(*conn, FrameType::kAssign, chunk));
      continue;
    }
    GRIDCAST_CO_RETURN_IF_ERROR(co_await WaitUntil(*conn, [&] { return context_.store->Has(chunk); }));
    GRIDCAST_CO_RETURN_IF_ERROR(co_await WaitForWindow(*conn));
    GRIDCAST_CO_RETURN_IF_ERROR(co_await SendChunk(*conn, chunk));
  }
  // Drain: every chunk acknowledged (or resent until it is).
  while (!conn->in_flight.empty() || !conn->resend.empty()) {
    GRIDCAST_CO_RETURN_IF_ERROR(co_await WaitForWindow(*conn));
    if (!conn->in_flight.empty()) co_await conn->wake.Wait();
  }
  conn->connection->Close();
  co_return Status::Ok();
}

asio::awaitable<Status> LaneSender::SendChunk(Connection& conn, uint64_t chunk, bool again) {
  const PayloadIdentity& identity = context_.store->identity();
  FrameHeader header;
  header.type = FrameType::kData;
  header.plan_id = context_.id;
  header.lane = static_cast<uint32_t>(lane_);
  header.length = static_cast<uint32_t>(identity.ChunkSize(chunk));
  header.chunk = chunk;
  header.digest = identity.digest;
  // A held chunk's batch is held too.
  const std::optional<Digest> digest = context_.store->ExpectedDigest(chunk);
  if (!digest) co_return Status::Internal("no digest for chunk " + std::to_string(chunk) + ", which is held");
  header.hash = *digest;
  const auto header_bytes = EncodeFrameHeader(header);
  // The acknowledgement timeout counts from the oldest chunk unacknowledged, not from an ACK
  // that came before the connection idled.
  if (conn.in_flight.empty()) conn.last_ack = std::chrono::steady_clock::now();
  conn.in_flight.insert(chunk);
  conn.last_sent = std::chrono::steady_clock::now();
  context_.host.NotePayloadSent();
  if ((again || lost_in_flight_.erase(chunk) > 0) && context_.options.counters) context_.options.counters->ChunkResent();
  Result<ChunkRef> bytes = context_.store->ChunkAt(chunk);
  if (!bytes.ok()) co_return bytes.status();
  GRIDCAST_CO_RETURN_IF_ERROR(
      co_await conn.connection->SendChunk(header_bytes, std::move(*bytes), context_.options.io_timeout));
  context_.traffic.sent_bytes.fetch_add(header.length, std::memory_order_relaxed);
  if (traffic_ != nullptr) traffic_->sent_bytes.fetch_add(header.length, std::memory_order_relaxed);
  co_return Status::Ok();
}

asio::awaitable<Status> LaneSender::SendBatchOf(Connection& conn, uint64_t position) {
  DigestStream* const digests = context_.digests;
  if (digests == nullptr) co_return Status::Ok();
  const LaneSchedule& schedule = context_.schedule;
  const uint64_t batch = digests->rule().BatchOf(schedule.LoggedAt(lane_, position));
  GRIDCAST_CO_RETURN_IF_ERROR(co_await WaitUntil(conn, [&] { return digests->Available(batch); }));
  GRIDCAST_CO_RETURN_IF_ERROR(co_await SendBatch(conn, batch));
  // Ahead: the batches of this stream's next chunks, as far as this member holds them.
  conn.ahead = std::max(conn.ahead, position);
  while (conn.ahead < schedule.LogSize(lane_)) {
    const uint64_t next = digests->rule().BatchOf(schedule.LoggedAt(lane_, conn.ahead));
    if (next > batch + kBatchesAhead || !digests->Available(next)) break;
    GRIDCAST_CO_RETURN_IF_ERROR(co_await SendBatch(conn, next));
    conn.ahead += static_cast<uint64_t>(stream_count_);
  }
  co_return Status::Ok();
}

asio::awaitable<Status> LaneSender::SendBatch(Connection& conn, uint64_t batch) {
  DigestStream* const digests = context_.digests;
  if (std::find(conn.batches_sent.begin(), conn.batches_sent.end(), batch) != conn.batches_sent.end()) {
    co_return Status::Ok();
  }
  Result<std::string> body = digests->Encoded(batch);
  if (!body.ok()) co_return body.status();
  FrameHeader header;
  header.type = FrameType::kDigests;
  header.plan_id = context_.id;
  header.lane = static_cast<uint32_t>(lane_);
  header.length = static_cast<uint32_t>(body->size());
  header.chunk = digests->rule().RangeOf(batch).first;
  const auto header_bytes = EncodeFrameHeader(header);
  conn.last_sent = std::chrono::steady_clock::now();
  GRIDCAST_CO_RETURN_IF_ERROR(co_await conn.connection->Write(
      header_bytes, {reinterpret_cast<const uint8_t*>(body->data()), body->size()}, context_.options.io_timeout));
  conn.batches_sent.push_back(batch);
  if (conn.batches_sent.size() > kBatchesRemembered) conn.batches_sent.pop_front();
  co_return Status::Ok();
}

asio::awaitable<Status> LaneSender::SendHeader(Connection& conn, FrameType type, uint64_t chunk) {
  FrameHeader header;
  header.type = type;
  header.plan_id = context_.id;
  header.lane = static_cast<uint32_t>(lane_);
  header.chunk = chunk;
  const auto header_bytes = EncodeFrameHeader(header);
  conn.last_sent = std::chrono::steady_clock::now();
  co_return co_await conn.connection->Write(header_bytes, {}, context_.options.io_timeout);
}

asio::awaitable<Status> LaneSender::WaitUntil(Connection& conn, const std::function<bool()>& ready) {
  const auto keepalive_every = KeepaliveInterval(context_.options);
  while (!ready()) {
    if (context_.host.Stopping()) co_return Status::Cancelled("stopped");
    if (!conn.error.ok()) co_return conn.error;
    if (std::chrono::steady_clock::now() - conn.last_sent >= keepalive_every) {
      const uint64_t note = context_.repair.Repairing(lane_) ? kKeepaliveParentRepairs : 0;
      GRIDCAST_CO_RETURN_IF_ERROR(co_await SendHeader(conn, FrameType::kKeepalive, note));
    }
    co_await context_.chunk_arrived.Wait(keepalive_every);
  }
  co_return Status::Ok();
}

asio::awaitable<Status> LaneSender::WaitForWindow(Connection& conn) {
  for (;;) {
    if (context_.host.Stopping()) co_return Status::Cancelled("stopped");
    if (!conn.error.ok()) co_return conn.error;
    if (!conn.resend.empty()) {
      const uint64_t chunk = conn.resend.front();
      conn.resend.pop_front();
      GRIDCAST_CO_RETURN_IF_ERROR(co_await SendChunk(conn, chunk, /*again=*/true));
      continue;
    }
    if (conn.in_flight.size() < context_.window_chunks) co_return Status::Ok();
    if (std::chrono::steady_clock::now() - conn.last_ack > context_.options.io_timeout) {
      co_return Status::DeadlineExceeded("no acknowledgement within the I/O timeout");
    }
    co_await conn.wake.Wait();
  }
}

asio::awaitable<void> LaneSender::ReadAcks(std::shared_ptr<Connection> conn) {
  std::array<uint8_t, kFrameHeaderBytes> bytes{};
  for (;;) {
    Status read = co_await conn->connection->Read(bytes, std::chrono::hours(24 * 365));
    Result<FrameHeader> header = read.ok() ? DecodeFrameHeader(bytes, 0) : Result<FrameHeader>(read);
    if (header.ok() && header->type == FrameType::kHeld && header->plan_id == context_.id) {
      header = co_await ReadHeld(*conn, *header);
      if (header.ok()) continue;
    }
    const bool answer = header.ok() && (header->type == FrameType::kAck || header->type == FrameType::kNack);
    if (header.ok() && (!answer || header->plan_id != context_.id || !conn->in_flight.count(header->chunk))) {
      header = Status::InvalidArgument("unexpected frame from child");
    }
    if (!header.ok()) {
      conn->error = header.status();
      conn->connection->Close();
      conn->wake.Notify();
      co_return;
    }
    conn->in_flight.erase(header->chunk);
    conn->last_ack = std::chrono::steady_clock::now();
    if (header->type == FrameType::kAck) {
      context_.host.Delivered(lane_, child_, header->chunk);
    } else {
      spdlog::warn("plan {}: child refused chunk {} (hash mismatch); resending", ToHex(context_.id), header->chunk);
      conn->resend.push_back(header->chunk);
    }
    conn->wake.Notify();
  }
}

asio::awaitable<Result<FrameHeader>> LaneSender::ReadHeld(Connection& conn, const FrameHeader& header) {
  std::vector<uint8_t> bits(header.length);
  GRIDCAST_CO_RETURN_IF_ERROR(co_await conn.connection->Read(bits, context_.options.io_timeout));
  if (conn.looked_through.empty()) co_return Status::InvalidArgument("HELD frame from a child that said it finds nothing later");
  const DigestBatches& rule = context_.digests->rule();
  if (header.chunk >= rule.chunks() || rule.RangeOf(rule.BatchOf(header.chunk)).first != header.chunk) {
    co_return Status::InvalidArgument("HELD frame at chunk " + std::to_string(header.chunk) + ", no batch's first");
  }
  const uint64_t batch = rule.BatchOf(header.chunk);
  const uint32_t count = rule.RangeOf(batch).count;
  if (bits.size() != (count + 7) / 8) co_return Status::InvalidArgument("HELD frame of another size than its batch");
  if (std::any_of(bits.begin(), bits.end(), [](uint8_t b) { return b != 0; })) conn.held_bits[batch] = std::move(bits);
  conn.looked_through[batch] = true;
  context_.chunk_arrived.Notify();
  co_return header;
}

asio::awaitable<Status> LaneSender::WaitUntilLookedThrough(Connection& conn, uint64_t chunk) {
  const uint64_t batch = context_.digests->rule().BatchOf(chunk);
  const auto give_up = std::chrono::steady_clock::now() + context_.options.io_timeout;
  Status waited = co_await WaitUntil(conn, [&] {
    return conn.looked_through[batch] || std::chrono::steady_clock::now() >= give_up;
  });
  if (waited.ok() && !conn.looked_through[batch]) {
    waited = Status::DeadlineExceeded("no HELD frame for digest batch " + std::to_string(batch) +
                                      " within the I/O timeout");
  }
  co_return waited;
}

}  // namespace gridcast
