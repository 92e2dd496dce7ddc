// RankMemoryLease: a rank lends its receive buffer to its node's gridcastd for one in-memory
// payload (cluster/rank_memory_protocol.h), so the daemon writes the broadcast's verified chunks
// straight into it: no copy of the payload in the daemon's memory directory, no copy out of it.
// Blocking, for the MPI shim's calls; not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "include/gridcast/result.h"

namespace gridcast {

class RankMemoryLease {
 public:
  // Lends `buffer` for payload `name` to the daemon at `socket_name` (RankMemorySocketName of
  // its member). Fails (and lends nothing) when no such daemon listens in this network namespace
  // or it cannot reach this process's memory (another user, without CAP_SYS_PTRACE): the
  // caller takes the copy instead.
  static Result<std::unique_ptr<RankMemoryLease>> Lend(const std::string& socket_name, const std::string& name,
                                                       std::span<uint8_t> buffer);
  // Releases (without waiting for an answer past the socket's timeout) if Release() was not called.
  ~RankMemoryLease();
  RankMemoryLease(const RankMemoryLease&) = delete;
  RankMemoryLease& operator=(const RankMemoryLease&) = delete;

  struct Outcome {
    bool bound = false;   // a broadcast took the buffer
    bool filled = false;  // and wrote every byte of it, each chunk verified
  };
  // Ends the loan. Once it returns OK the daemon writes no more into the buffer. Unavailable
  // when the daemon did not answer (it may be gone, or stuck: the buffer is then not safe to
  // reuse until it is).
  Result<Outcome> Release();

 private:
  explicit RankMemoryLease(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace gridcast
