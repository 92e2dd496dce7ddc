#include "daemon/transport/handshake.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/buffer.hpp>

#include "common/crypto.h"
#include "common/hex.h"

namespace gridcast {

namespace asio = boost::asio;

bool ChildHolds::Holds(uint64_t chunk) const {
  auto after = std::upper_bound(runs.begin(), runs.end(), chunk, [](uint64_t c, const ChunkRun& r) { return c < r.begin; });
  return after != runs.begin() && chunk < std::prev(after)->end;
}

asio::awaitable<Result<ChildHolds>> HandshakeAsParent(ConnectionPtr connection, const std::string& secret,
                                                      Hello hello, uint64_t num_chunks,
                                                      std::chrono::milliseconds timeout) {
  std::array<uint8_t, kChallengeBytes> challenge_bytes{};
  GRIDCAST_CO_RETURN_IF_ERROR(co_await connection->Read(challenge_bytes, timeout));
  Result<Challenge> challenge = DecodeChallenge(challenge_bytes);
  if (!challenge.ok()) co_return challenge.status();
  RandomBytes(hello.nonce);
  hello.mac = ParentMac(secret, challenge->nonce, hello);
  const auto hello_bytes = EncodeHello(hello);
  GRIDCAST_CO_RETURN_IF_ERROR(co_await connection->Write(hello_bytes, {}, timeout));
  std::array<uint8_t, kAcceptHeaderBytes> accept_bytes{};
  GRIDCAST_CO_RETURN_IF_ERROR(co_await connection->Read(accept_bytes, timeout));
  uint32_t extra_length = 0;
  Result<Accept> accept = DecodeAcceptHeader(accept_bytes, &extra_length);
  if (!accept.ok()) co_return accept.status();
  std::vector<uint8_t> extra(extra_length);
  GRIDCAST_CO_RETURN_IF_ERROR(co_await connection->Read(extra, timeout));
  // A refusal comes before the child proved the secret: anyone answering at its address can
  // send one. It is only reported (the parent tries again), never taken as an authentication
  // failure of ours.
  if (accept->status != 0) {
    co_return Status::Unavailable("refused (code " + std::to_string(accept->status) +
                                  "): " + std::string(extra.begin(), extra.end()));
  }
  if (!ConstantTimeEqual(accept->mac, ChildMac(secret, hello))) {
    co_return Status::Unauthenticated("failed authentication");
  }
  if (extra.empty() || extra.back() > 1) co_return Status::InvalidArgument("sent an accept without its flags");
  Result<std::vector<ChunkRun>> runs = DecodeHeldRuns(std::span(extra).first(extra.size() - 1), num_chunks);
  if (!runs.ok()) co_return runs.status();
  ChildHolds holds;
  holds.runs = std::move(*runs);
  holds.finds_later = extra.back() == 1;
  co_return holds;
}

asio::awaitable<Result<std::pair<std::shared_ptr<LaneReceiver>, Hello>>> HandshakeAsChild(
    ConnectionPtr connection, const std::string& secret, const ReceiverLookup& lookup,
    std::chrono::milliseconds timeout) {
  const std::string from = connection->PeerName();
  // Logs why, answers a parent that proved nothing with silence and one that did with the
  // reason, and closes.
  auto refuse = [&](const Status& why, const Hello* hello) -> asio::awaitable<Status> {
    spdlog::warn("data plane: refused connection from {}: {}", from, why.message());
    if (hello != nullptr) {
      Accept reject;
      reject.status = static_cast<uint32_t>(why.code());
      reject.extra.assign(why.message().begin(), why.message().end());
      const std::vector<uint8_t> bytes = EncodeAccept(reject);
      (void)co_await connection->Write(bytes, {}, timeout);
    }
    connection->Close();
    co_return why;
  };

  Challenge challenge;
  RandomBytes(challenge.nonce);
  const auto challenge_bytes = EncodeChallenge(challenge);
  GRIDCAST_CO_RETURN_IF_ERROR(co_await connection->Write(challenge_bytes, {}, timeout));
  std::array<uint8_t, kHelloBytes> hello_bytes{};
  if (Status read = co_await connection->Read(hello_bytes, timeout); !read.ok()) {
    // A parent of another data protocol version hangs up at our challenge, naming both
    // versions in its own log.
    if (read.code() == StatusCode::kUnavailable) {
      read = read.WithContext("hung up before its hello (a parent of another data protocol version than " +
                              std::to_string(kProtocolVersion) + " does, and logs why)");
    }
    co_return co_await refuse(read, nullptr);
  }
  Result<Hello> hello = DecodeHello(hello_bytes);
  if (!hello.ok()) co_return co_await refuse(hello.status(), nullptr);
  // Authenticate before revealing anything about our plans.
  if (!ConstantTimeEqual(hello->mac, ParentMac(secret, challenge.nonce, *hello))) {
    co_return co_await refuse(Status::Unauthenticated("authentication failed (wrong cluster secret?)"), &*hello);
  }
  std::shared_ptr<LaneReceiver> receiver = lookup(hello->plan_id);
  if (receiver == nullptr) co_return co_await refuse(Status::NotFound("unknown plan " + ToHex(hello->plan_id)), &*hello);
  if (Status parent_ok = receiver->CheckParent(*hello); !parent_ok.ok()) co_return co_await refuse(parent_ok, &*hello);
  if (Status certified = connection->CheckPeer(receiver->DataAddressOf(hello->parent)); !certified.ok()) {
    co_return co_await refuse(certified, &*hello);
  }
  Accept accept;
  accept.mac = ChildMac(secret, *hello);
  accept.extra = EncodeHeldRuns(receiver->HeldRuns());
  accept.extra.push_back(receiver->FindsHeldChunksLater() ? 1 : 0);
  const std::vector<uint8_t> accept_bytes = EncodeAccept(accept);
  GRIDCAST_CO_RETURN_IF_ERROR(co_await connection->Write(accept_bytes, {}, timeout));
  co_return std::make_pair(std::move(receiver), *hello);
}

}  // namespace gridcast
