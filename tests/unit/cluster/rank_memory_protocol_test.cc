#include "cluster/rank_memory_protocol.h"

#include <gtest/gtest.h>

namespace gridcast {
namespace {

std::span<const uint8_t, kRankMemoryRequestHeaderBytes> Header(const std::vector<uint8_t>& bytes) {
  return std::span<const uint8_t, kRankMemoryRequestHeaderBytes>(bytes.data(), kRankMemoryRequestHeaderBytes);
}

Result<RankMemoryRequest> Decode(const std::vector<uint8_t>& bytes) {
  GRIDCAST_ASSIGN_OR_RETURN(const size_t name_bytes, RankMemoryNameBytes(Header(bytes)));
  if (bytes.size() != kRankMemoryRequestHeaderBytes + name_bytes) return Status::InvalidArgument("length");
  return DecodeRankMemoryRequest(Header(bytes), std::span(bytes).subspan(kRankMemoryRequestHeaderBytes));
}

RankMemoryRequest Lend(std::string name, uint64_t address = 0x7f0000001000, uint64_t length = 1 << 20) {
  RankMemoryRequest request;
  request.op = RankMemoryOp::kRegister;
  request.address = address;
  request.length = length;
  request.name = std::move(name);
  return request;
}

TEST(RankMemoryProtocol, RequestsRoundTrip) {
  Result<RankMemoryRequest> lend = Decode(EncodeRankMemoryRequest(Lend("mpi-bcast-0123.bin")));
  ASSERT_TRUE(lend.ok()) << lend.status().ToString();
  EXPECT_EQ(lend->op, RankMemoryOp::kRegister);
  EXPECT_EQ(lend->address, 0x7f0000001000u);
  EXPECT_EQ(lend->length, 1u << 20);
  EXPECT_EQ(lend->name, "mpi-bcast-0123.bin");

  RankMemoryRequest release;
  release.op = RankMemoryOp::kRelease;
  Result<RankMemoryRequest> decoded = Decode(EncodeRankMemoryRequest(release));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->op, RankMemoryOp::kRelease);
}

TEST(RankMemoryProtocol, MalformedRequestsAreRefusedWithTheReason) {
  std::vector<uint8_t> bytes = EncodeRankMemoryRequest(Lend("p.bin"));
  bytes[0] = 'X';
  EXPECT_NE(Decode(bytes).status().message().find("not a rank-memory request"), std::string::npos);

  bytes = EncodeRankMemoryRequest(Lend("p.bin"));
  bytes[4] = 9;
  EXPECT_NE(Decode(bytes).status().message().find("version 9, this daemon speaks version 1"), std::string::npos);

  bytes = EncodeRankMemoryRequest(Lend("p.bin"));
  bytes[5] = 7;
  EXPECT_NE(Decode(bytes).status().message().find("unknown rank-memory operation 7"), std::string::npos);

  bytes = EncodeRankMemoryRequest(Lend(std::string(300, 'a')));
  EXPECT_NE(Decode(bytes).status().message().find("at most 255"), std::string::npos);

  for (const RankMemoryRequest& request :
       {Lend("p.bin", 0x1000, 0), Lend("p.bin", 0, 4096), Lend("p.bin", ~uint64_t{0} - 10, 4096)}) {
    EXPECT_EQ(Decode(EncodeRankMemoryRequest(request)).status().code(), StatusCode::kInvalidArgument);
  }
  for (const char* name : {"../escape", "/abs", "", "a/../../b"}) {
    EXPECT_EQ(Decode(EncodeRankMemoryRequest(Lend(name))).status().code(), StatusCode::kInvalidArgument) << name;
  }

  bytes = EncodeRankMemoryRequest(Lend("p.bin"));
  EXPECT_EQ(DecodeRankMemoryRequest(Header(bytes), std::span(bytes).subspan(kRankMemoryRequestHeaderBytes + 1))
                .status()
                .code(),
            StatusCode::kInvalidArgument);
}

TEST(RankMemoryProtocol, RepliesRoundTrip) {
  for (const RankMemoryReply& reply :
       {RankMemoryReply{Status(), RankMemoryReply::kBound | RankMemoryReply::kFilled, 4242},
        RankMemoryReply{Status::PermissionDenied("cannot reach it"), 0, 17}}) {
    const std::vector<uint8_t> bytes = EncodeRankMemoryReply(reply);
    const std::span<const uint8_t, kRankMemoryReplyHeaderBytes> header(bytes.data(), kRankMemoryReplyHeaderBytes);
    Result<size_t> message_bytes = RankMemoryMessageBytes(header);
    ASSERT_TRUE(message_bytes.ok());
    ASSERT_EQ(*message_bytes, bytes.size() - kRankMemoryReplyHeaderBytes);
    const RankMemoryReply decoded =
        DecodeRankMemoryReply(header, std::span(bytes).subspan(kRankMemoryReplyHeaderBytes));
    EXPECT_EQ(decoded.status.code(), reply.status.code());
    EXPECT_EQ(decoded.status.message(), reply.status.message());
    EXPECT_EQ(decoded.flags, reply.flags);
    EXPECT_EQ(decoded.daemon_pid, reply.daemon_pid);
  }
  std::vector<uint8_t> bytes = EncodeRankMemoryReply(RankMemoryReply{});
  bytes[0] = 99;
  EXPECT_FALSE(
      RankMemoryMessageBytes(std::span<const uint8_t, kRankMemoryReplyHeaderBytes>(bytes.data(), 8)).ok());
  bytes[0] = 0;
  bytes[2] = 0xff;
  EXPECT_FALSE(
      RankMemoryMessageBytes(std::span<const uint8_t, kRankMemoryReplyHeaderBytes>(bytes.data(), 8)).ok());
}

}  // namespace
}  // namespace gridcast
