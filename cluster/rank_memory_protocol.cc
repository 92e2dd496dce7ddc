#include "cluster/rank_memory_protocol.h"

#include <cstring>

#include "common/big_endian.h"
#include "common/safe_path.h"

namespace gridcast {
namespace {

constexpr char kMagic[4] = {'G', 'C', 'R', 'M'};

}  // namespace

std::string RankMemorySocketName(const std::string& member, const std::string& data_address) {
  return "gridcastd/" + member + "@" + data_address + "/rank-memory";
}

std::vector<uint8_t> EncodeRankMemoryRequest(const RankMemoryRequest& request) {
  std::vector<uint8_t> bytes(kRankMemoryRequestHeaderBytes);
  std::memcpy(bytes.data(), kMagic, sizeof kMagic);
  bytes[4] = kRankMemoryVersion;
  bytes[5] = static_cast<uint8_t>(request.op);
  StoreBigEndian(&bytes[6], request.name.size(), 2);
  StoreBigEndian(&bytes[8], request.address, 8);
  StoreBigEndian(&bytes[16], request.length, 8);
  bytes.insert(bytes.end(), request.name.begin(), request.name.end());
  return bytes;
}

Result<size_t> RankMemoryNameBytes(std::span<const uint8_t, kRankMemoryRequestHeaderBytes> header) {
  if (std::memcmp(header.data(), kMagic, sizeof kMagic) != 0) {
    return Status::InvalidArgument("not a rank-memory request");
  }
  if (header[4] != kRankMemoryVersion) {
    return Status::InvalidArgument("rank-memory protocol version " + std::to_string(header[4]) +
                                   ", this daemon speaks version " + std::to_string(kRankMemoryVersion));
  }
  const uint8_t op = header[5];
  if (op != static_cast<uint8_t>(RankMemoryOp::kRegister) && op != static_cast<uint8_t>(RankMemoryOp::kRelease)) {
    return Status::InvalidArgument("unknown rank-memory operation " + std::to_string(op));
  }
  const size_t name_bytes = LoadBigEndian(&header[6], 2);
  if (name_bytes > kRankMemoryMaxName) {
    return Status::InvalidArgument("payload name of " + std::to_string(name_bytes) + " bytes (at most " +
                                   std::to_string(kRankMemoryMaxName) + ")");
  }
  if (op == static_cast<uint8_t>(RankMemoryOp::kRegister)) {
    const uint64_t address = LoadBigEndian(&header[8], 8);
    const uint64_t length = LoadBigEndian(&header[16], 8);
    if (length == 0 || address == 0 || address + length < address) {
      return Status::InvalidArgument("a buffer of " + std::to_string(length) + " bytes at " + std::to_string(address) +
                                     " cannot be lent");
    }
  }
  return name_bytes;
}

Result<RankMemoryRequest> DecodeRankMemoryRequest(std::span<const uint8_t, kRankMemoryRequestHeaderBytes> header,
                                                  std::span<const uint8_t> name) {
  GRIDCAST_ASSIGN_OR_RETURN(const size_t name_bytes, RankMemoryNameBytes(header));
  if (name.size() != name_bytes) return Status::InvalidArgument("rank-memory request cut short");
  RankMemoryRequest request;
  request.op = static_cast<RankMemoryOp>(header[5]);
  request.address = LoadBigEndian(&header[8], 8);
  request.length = LoadBigEndian(&header[16], 8);
  request.name.assign(name.begin(), name.end());
  if (request.op == RankMemoryOp::kRegister) GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(request.name));
  return request;
}

std::vector<uint8_t> EncodeRankMemoryReply(const RankMemoryReply& reply) {
  const std::string message = reply.status.message().substr(0, kRankMemoryMaxMessage);
  std::vector<uint8_t> bytes(kRankMemoryReplyHeaderBytes);
  bytes[0] = static_cast<uint8_t>(reply.status.code());
  bytes[1] = reply.flags;
  StoreBigEndian(&bytes[2], message.size(), 2);
  StoreBigEndian(&bytes[4], reply.daemon_pid, 4);
  bytes.insert(bytes.end(), message.begin(), message.end());
  return bytes;
}

Result<size_t> RankMemoryMessageBytes(std::span<const uint8_t, kRankMemoryReplyHeaderBytes> header) {
  if (header[0] > static_cast<uint8_t>(StatusCode::kUnauthenticated)) {
    return Status::InvalidArgument("rank-memory reply with unknown code " + std::to_string(header[0]));
  }
  const size_t message_bytes = LoadBigEndian(&header[2], 2);
  if (message_bytes > kRankMemoryMaxMessage) return Status::InvalidArgument("rank-memory reply too long");
  return message_bytes;
}

RankMemoryReply DecodeRankMemoryReply(std::span<const uint8_t, kRankMemoryReplyHeaderBytes> header,
                                      std::span<const uint8_t> message) {
  RankMemoryReply reply;
  const auto code = static_cast<StatusCode>(header[0]);
  if (code != StatusCode::kOk) reply.status = Status(code, std::string(message.begin(), message.end()));
  reply.flags = header[1];
  reply.daemon_pid = static_cast<uint32_t>(LoadBigEndian(&header[4], 4));
  return reply;
}

}  // namespace gridcast
