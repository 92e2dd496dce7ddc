// The rank-memory protocol: a process on a member's host (the MPI shim's rank) lends its
// receive buffer to that member's gridcastd for one in-memory payload, so the daemon writes
// each verified chunk straight into it (process_vm_writev) instead of into a copy in its memory
// directory that the rank then copies out (docs/mpi.md, "Into the rank's memory").
//
// Over a unix stream socket in the abstract namespace (RankMemorySocketName): only processes of
// the host (of its network namespace) reach it, and the kernel tells the daemon which process
// is at the other end (SO_PEERCRED), so a process can only ever lend its own memory.
//
//   request: "GCRM" | version u8 | op u8 | name length u16 | address u64 | length u64 | name
//   reply:   code u8 (StatusCode) | flags u8 | message length u16 | daemon pid u32 | message
//
// (integers big-endian). A connection registers once (kRegister, the buffer and the payload's
// name), then ends the loan with kRelease, whose reply comes only once the daemon will write
// no more; its flags say whether a broadcast took the buffer (kBound) and filled all of it
// (kFilled). A connection that closes ends the loan too.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "include/gridcast/result.h"

namespace gridcast {

constexpr uint8_t kRankMemoryVersion = 1;
constexpr size_t kRankMemoryRequestHeaderBytes = 24;
constexpr size_t kRankMemoryReplyHeaderBytes = 8;
constexpr size_t kRankMemoryMaxName = 255;
constexpr size_t kRankMemoryMaxMessage = 1024;

enum class RankMemoryOp : uint8_t { kRegister = 1, kRelease = 2 };

struct RankMemoryRequest {
  RankMemoryOp op = RankMemoryOp::kRegister;
  uint64_t address = 0;  // kRegister: the buffer in the sender's address space
  uint64_t length = 0;
  std::string name;  // kRegister: the payload (a valid payload name)
};

struct RankMemoryReply {
  static constexpr uint8_t kBound = 1;   // a broadcast wrote (or was to write) into the buffer
  static constexpr uint8_t kFilled = 2;  // every byte of the buffer was written, verified
  Status status;
  uint8_t flags = 0;
  uint32_t daemon_pid = 0;
};

// The abstract socket name (without the leading NUL) of the daemon of `member`, whose data
// address in the cluster file is `data_address`: no two daemons of a host share one, even of
// two clusters whose members have the same names.
std::string RankMemorySocketName(const std::string& member, const std::string& data_address);

std::vector<uint8_t> EncodeRankMemoryRequest(const RankMemoryRequest& request);
// The name's length from a request's header, after checking the header: InvalidArgument for
// another magic, version or op, a name longer than kRankMemoryMaxName, or a registration whose
// buffer is empty or wraps around the address space.
Result<size_t> RankMemoryNameBytes(std::span<const uint8_t, kRankMemoryRequestHeaderBytes> header);
// The whole request: the header and the name bytes that followed it (CheckPayloadName applies
// to a registration's name).
Result<RankMemoryRequest> DecodeRankMemoryRequest(std::span<const uint8_t, kRankMemoryRequestHeaderBytes> header,
                                                  std::span<const uint8_t> name);

std::vector<uint8_t> EncodeRankMemoryReply(const RankMemoryReply& reply);
// The message's length from a reply's header; InvalidArgument for an unknown code or an
// over-long message.
Result<size_t> RankMemoryMessageBytes(std::span<const uint8_t, kRankMemoryReplyHeaderBytes> header);
RankMemoryReply DecodeRankMemoryReply(std::span<const uint8_t, kRankMemoryReplyHeaderBytes> header,
                                      std::span<const uint8_t> message);

}  // namespace gridcast
