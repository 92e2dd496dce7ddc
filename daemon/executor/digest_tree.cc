#include "daemon/executor/digest_tree.h"

#include <spdlog/spdlog.h>

#include <array>
#include <string>

#include "common/control_tree_shape.h"
#include "common/hex.h"
#include "daemon/executor/lane_repair.h"
#include "daemon/executor/lane_sender.h"
#include "daemon/transport/handshake.h"

namespace gridcast {

namespace asio = boost::asio;

namespace {

FrameHeader TreeFrame(const PlanId& id, FrameType type, uint64_t chunk) {
  FrameHeader header;
  header.type = type;
  header.plan_id = id;
  header.lane = kDigestTreeLane;
  header.chunk = chunk;
  return header;
}

}  // namespace

DigestTreePlace DigestTreePlaceOf(int self, int source, int members, int fanout) {
  const auto member_at = [&](int position) { return (position + source) % members; };
  const int position = (self - source + members) % members;
  DigestTreePlace place;
  const int parent = ControlParent(position, fanout);
  place.parent = parent < 0 ? -1 : member_at(parent);
  for (int child : ControlChildren(position, members, fanout)) place.children.push_back(member_at(child));
  return place;
}

asio::awaitable<void> DigestTreeSender::Run() {
  co_await RunReconnecting(context_, "digest tree -> " + context_.plan.members[child_], [this] { return SendOnce(); });
}

asio::awaitable<Status> DigestTreeSender::SendOnce() {
  const ExecutionOptions& options = context_.options;
  const std::string& child_name = context_.plan.members[child_];
  Result<ConnectionPtr> connected =
      co_await options.transport->Connect(context_.data_addresses[child_], options.connect_timeout);
  if (!connected.ok()) co_return connected.status().WithContext("digest tree child " + child_name);
  const ConnectionPtr connection = std::move(*connected);
  context_.host.Track(connection);
  Hello hello;
  hello.plan_id = context_.id;
  hello.lane = kDigestTreeLane;
  hello.parent = static_cast<uint32_t>(context_.schedule.self());
  const auto accepted = co_await HandshakeAsParent(connection, options.secret, hello, context_.plan.NumChunks(),
                                                   options.io_timeout);
  if (!accepted.ok()) co_return accepted.status().WithContext("digest tree child " + child_name);

  DigestStream& digests = *context_.digests;
  const auto keepalive_every = KeepaliveInterval(options);
  auto last_sent = std::chrono::steady_clock::now();
  for (uint64_t batch = 0; batch < digests.rule().count(); ++batch) {
    while (!digests.Available(batch)) {
      if (context_.host.Stopping()) co_return Status::Cancelled("stopped");
      if (std::chrono::steady_clock::now() - last_sent >= keepalive_every) {
        GRIDCAST_CO_RETURN_IF_ERROR(co_await connection->Write(
            EncodeFrameHeader(TreeFrame(context_.id, FrameType::kKeepalive, 0)), {}, options.io_timeout));
        last_sent = std::chrono::steady_clock::now();
      }
      co_await context_.chunk_arrived.Wait(keepalive_every);
    }
    Result<std::string> body = digests.Encoded(batch);
    if (!body.ok()) co_return body.status();
    FrameHeader header = TreeFrame(context_.id, FrameType::kDigests, digests.rule().RangeOf(batch).first);
    header.length = static_cast<uint32_t>(body->size());
    GRIDCAST_CO_RETURN_IF_ERROR(co_await connection->Write(
        EncodeFrameHeader(header), {reinterpret_cast<const uint8_t*>(body->data()), body->size()}, options.io_timeout));
    last_sent = std::chrono::steady_clock::now();
  }
  std::array<uint8_t, kFrameHeaderBytes> bytes{};
  GRIDCAST_CO_RETURN_IF_ERROR(co_await connection->Read(bytes, options.io_timeout));
  const Result<FrameHeader> ack = DecodeFrameHeader(bytes, 0);
  const uint64_t last_first = digests.rule().RangeOf(digests.rule().count() - 1).first;
  if (!ack.ok() || ack->type != FrameType::kAck || ack->plan_id != context_.id || ack->lane != kDigestTreeLane ||
      ack->chunk != last_first) {
    co_return Status::InvalidArgument("digest tree child " + child_name + " answered with an unexpected frame");
  }
  connection->Close();
  co_return Status::Ok();
}

asio::awaitable<void> ReceiveDigestTree(ExecutionContext& context, ConnectionPtr connection) {
  context.host.Track(connection);
  DigestStream& digests = *context.digests;
  const std::string where = "plan " + ToHex(context.id) + " digest tree";
  std::array<uint8_t, kFrameHeaderBytes> bytes{};
  bool answered = false;
  for (;;) {
    if (!(co_await connection->Read(bytes, context.options.io_timeout)).ok()) break;  // the parent dials again
    Result<FrameHeader> header = DecodeFrameHeader(bytes, static_cast<uint32_t>(context.plan.chunk_bytes));
    Status valid = header.status();
    if (header.ok()) {
      if (header->plan_id != context.id || header->lane != kDigestTreeLane ||
          (header->type != FrameType::kDigests && header->type != FrameType::kKeepalive)) {
        valid = Status::InvalidArgument("frame for another plan, lane or of the wrong type");
      } else if (header->type == FrameType::kDigests) {
        valid = digests.CheckFirstChunk(header->chunk);
        if (valid.ok()) {
          std::string body(header->length, '\0');
          valid = co_await connection->Read({reinterpret_cast<uint8_t*>(body.data()), body.size()},
                                            context.options.io_timeout);
          if (valid.ok()) valid = digests.Accept(body);
          if (valid.ok()) context.chunk_arrived.Notify();  // senders to this member's children may pass it on
        }
      }
    }
    if (!valid.ok()) {
      spdlog::warn("{}: closing the connection from the parent: {}", where, valid.message());
      break;
    }
    if (!answered && digests.HoldsEvery()) {
      const uint64_t last_first = digests.rule().RangeOf(digests.rule().count() - 1).first;
      if (!(co_await connection->Write(EncodeFrameHeader(TreeFrame(context.id, FrameType::kAck, last_first)), {},
                                       context.options.io_timeout))
               .ok()) {
        break;
      }
      answered = true;
    }
  }
  connection->Close();
}

}  // namespace gridcast
