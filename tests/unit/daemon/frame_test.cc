// The data plane's frame header codec: what it accepts and what it refuses.
#include "daemon/transport/frame.h"

#include <gtest/gtest.h>

namespace gridcast {
namespace {

FrameHeader Header(FrameType type, uint32_t length, uint64_t chunk = 7) {
  FrameHeader h;
  h.type = type;
  h.plan_id.fill(0xab);
  h.lane = 3;
  h.length = length;
  h.chunk = chunk;
  if (type == FrameType::kData) h.sha256.fill(0x5c);
  return h;
}

TEST(FrameTest, EveryTypeRoundTrips) {
  for (FrameType type : {FrameType::kData, FrameType::kAck, FrameType::kNack, FrameType::kKeepalive}) {
    const FrameHeader in = Header(type, type == FrameType::kData ? 4096 : 0, kKeepaliveParentRepairs);
    const auto bytes = EncodeFrameHeader(in);
    Result<FrameHeader> out = DecodeFrameHeader(bytes, 1 << 20);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(out->type, in.type);
    EXPECT_EQ(out->plan_id, in.plan_id);
    EXPECT_EQ(out->lane, in.lane);
    EXPECT_EQ(out->length, in.length);
    EXPECT_EQ(out->chunk, in.chunk);
    EXPECT_EQ(out->sha256, in.sha256);
  }
}

TEST(FrameTest, RefusesWhatAHeaderAloneShowsToBeWrong) {
  auto refused = [](std::array<uint8_t, kFrameHeaderBytes> bytes, uint32_t max_length, const std::string& why) {
    Result<FrameHeader> out = DecodeFrameHeader(bytes, max_length);
    ASSERT_FALSE(out.ok()) << why;
    EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument) << why;
  };
  const auto data = EncodeFrameHeader(Header(FrameType::kData, 4096));
  refused(data, 4095, "data longer than the chunk size");
  auto bad_magic = data;
  bad_magic[0] = 'X';
  refused(bad_magic, 1 << 20, "bad magic");
  for (uint8_t type : {0, 5, 255}) {
    auto unknown = data;
    unknown[4] = type;
    refused(unknown, 1 << 20, "unknown type " + std::to_string(type));
  }
  auto reserved = data;
  reserved[6] = 1;
  refused(reserved, 1 << 20, "reserved bytes");
  for (FrameType type : {FrameType::kAck, FrameType::kNack, FrameType::kKeepalive}) {
    refused(EncodeFrameHeader(Header(type, 1)), 1 << 20, "a payload on a control frame");
  }
}

}  // namespace
}  // namespace gridcast
