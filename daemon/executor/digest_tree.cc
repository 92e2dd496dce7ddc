#include "daemon/executor/digest_tree.h"

#include <spdlog/spdlog.h>

#include <array>
#include <string>

#include "common/control_tree_shape.h"
#include "common/hex.h"
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

int DigestTree::ParentOf(int member) const {
  const int parent = ControlParent((member - source + members) % members, fanout);
  return parent < 0 ? -1 : (parent + source) % members;
}

std::vector<int> DigestTree::ChildrenOf(int member) const {
  std::vector<int> children = ControlChildren((member - source + members) % members, members, fanout);
  for (int& child : children) child = (child + source) % members;
  return children;
}

bool DigestTree::IsAncestor(int ancestor, int member) const {
  for (int above = ParentOf(member); above >= 0; above = ParentOf(above)) {
    if (above == ancestor) return true;
  }
  return false;
}

void DigestTreeFeed::Start() {
  for (int child : tree_.ChildrenOf(self_)) Feed(child);
}

void DigestTreeFeed::Feed(int member) {
  if (context_.host.Stopping() || !fed_.insert(member).second) return;
  if (context_.data_addresses[member].empty()) {
    spdlog::error("plan {}: the slice of the plan has no address for member {} of the digest tree",
                  ToHex(context_.id), member);
    return;
  }
  senders_.push_back(std::make_unique<DigestTreeSender>(context_, *this, member));
  context_.host.Spawn(senders_.back()->Run());
}

Status DigestTreeFeed::CheckParent(const Hello& hello) const {
  if (hello.parent >= static_cast<uint32_t>(tree_.members) || !tree_.IsAncestor(static_cast<int>(hello.parent), self_)) {
    return Status::PermissionDenied("member " + std::to_string(hello.parent) +
                                    " is not above this member in the digest tree");
  }
  if (hello.stream_count != 1) return Status::InvalidArgument("the digest tree has one stream per edge");
  return Status::Ok();
}

asio::awaitable<void> DigestTreeSender::Run() {
  // An attempt that fails also feeds the child's children (once): if the child is gone, its
  // subtree waits for nothing but this; if it is only late, they get the batches twice.
  co_await RunReconnecting(context_, "digest tree -> " + context_.names[child_],
                           [this]() -> asio::awaitable<Status> {
                             Status sent = co_await SendOnce();
                             if (!sent.ok()) {
                               for (int grandchild : feed_.tree().ChildrenOf(child_)) feed_.Feed(grandchild);
                             }
                             co_return sent;
                           });
}

asio::awaitable<Status> DigestTreeSender::SendOnce() {
  const ExecutionOptions& options = context_.options;
  const std::string& child_name = context_.names[child_];
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
