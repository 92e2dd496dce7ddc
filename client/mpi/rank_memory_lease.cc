#include "client/mpi/rank_memory_lease.h"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <vector>

#include "cluster/rank_memory_protocol.h"

namespace gridcast {
namespace {

// A loan is answered at once; a release waits for a chunk being written (microseconds), but the
// daemon's io thread may be busy with the broadcast on a loaded host.
constexpr int kAnswerWithinSeconds = 30;

Status SendAll(int fd, std::span<const uint8_t> bytes) {
  while (!bytes.empty()) {
    const ssize_t sent = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return Status::Unavailable(std::string("the daemon's rank-memory socket: ") + std::strerror(errno));
    bytes = bytes.subspan(static_cast<size_t>(sent));
  }
  return Status::Ok();
}

Status ReceiveAll(int fd, std::span<uint8_t> out) {
  while (!out.empty()) {
    const ssize_t got = recv(fd, out.data(), out.size(), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got == 0) return Status::Unavailable("the daemon closed its rank-memory socket");
    if (got < 0) return Status::Unavailable(std::string("no answer from the daemon's rank-memory socket: ") +
                                            std::strerror(errno));
    out = out.subspan(static_cast<size_t>(got));
  }
  return Status::Ok();
}

Result<RankMemoryReply> Ask(int fd, const RankMemoryRequest& request) {
  GRIDCAST_RETURN_IF_ERROR(SendAll(fd, EncodeRankMemoryRequest(request)));
  std::array<uint8_t, kRankMemoryReplyHeaderBytes> header{};
  GRIDCAST_RETURN_IF_ERROR(ReceiveAll(fd, header));
  GRIDCAST_ASSIGN_OR_RETURN(const size_t message_bytes, RankMemoryMessageBytes(header));
  std::vector<uint8_t> message(message_bytes);
  GRIDCAST_RETURN_IF_ERROR(ReceiveAll(fd, message));
  return DecodeRankMemoryReply(header, message);
}

}  // namespace

Result<std::unique_ptr<RankMemoryLease>> RankMemoryLease::Lend(const std::string& socket_name,
                                                               const std::string& name, std::span<uint8_t> buffer) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket_name.size() + 1 > sizeof(address.sun_path)) {
    return Status::InvalidArgument("rank-memory socket name too long: " + socket_name);
  }
  std::memcpy(address.sun_path + 1, socket_name.data(), socket_name.size());  // sun_path[0] = 0: abstract
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::Unavailable(std::string("socket: ") + std::strerror(errno));
  std::unique_ptr<RankMemoryLease> lease(new RankMemoryLease(fd));
  const timeval within{kAnswerWithinSeconds, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &within, sizeof within);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &within, sizeof within);
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + socket_name.size());
  if (connect(fd, reinterpret_cast<const sockaddr*>(&address), length) != 0) {
    return Status::Unavailable("no daemon takes lent memory at @" + socket_name + " on this host: " +
                               std::strerror(errno));
  }
  // Where Yama restricts ptrace to ancestors (ptrace_scope 1), the daemon may still reach this
  // process's memory once named as its tracer (same user).
  ucred daemon{};
  socklen_t daemon_bytes = sizeof daemon;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &daemon, &daemon_bytes) == 0 && daemon.pid > 0) {
    prctl(PR_SET_PTRACER, static_cast<unsigned long>(daemon.pid), 0, 0, 0);
  }
  RankMemoryRequest request;
  request.op = RankMemoryOp::kRegister;
  request.address = reinterpret_cast<uintptr_t>(buffer.data());
  request.length = buffer.size();
  request.name = name;
  GRIDCAST_ASSIGN_OR_RETURN(const RankMemoryReply reply, Ask(fd, request));
  if (!reply.status.ok()) return reply.status;
  return lease;
}

Result<RankMemoryLease::Outcome> RankMemoryLease::Release() {
  if (fd_ < 0) return Status::FailedPrecondition("released already");
  RankMemoryRequest request;
  request.op = RankMemoryOp::kRelease;
  Result<RankMemoryReply> reply = Ask(fd_, request);
  close(fd_);
  fd_ = -1;
  if (!reply.ok()) return reply.status();
  if (!reply->status.ok()) return reply->status;
  return Outcome{(reply->flags & RankMemoryReply::kBound) != 0, (reply->flags & RankMemoryReply::kFilled) != 0};
}

RankMemoryLease::~RankMemoryLease() {
  if (fd_ >= 0) (void)Release();
}

}  // namespace gridcast
