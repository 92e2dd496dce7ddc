// Hex text both ways, a digest's exact width, and what counts as an origin URL.
#include "common/hex.h"

#include <gtest/gtest.h>

#include <string>

#include "common/origin_url.h"

namespace gridcast {
namespace {

TEST(HexTest, BytesRoundTripInEitherCase) {
  const std::string bytes("\x00\x7f\x80\xff", 4);
  EXPECT_EQ(ToHex(AsBytes(bytes)), "007f80ff");
  EXPECT_EQ(*FromHex("007F80fF"), bytes);
  EXPECT_EQ(FromHex("abc").status().message(), "odd-length hex string");
  EXPECT_EQ(FromHex("zz").status().message(), "not a hex string");
}

TEST(HexTest, ADigestIsExactlyItsWidth) {
  const std::string digest(32, '\xab');
  EXPECT_EQ(*FromHexOfSize(ToHex(AsBytes(digest)), 32), digest);
  for (const std::string& wrong : {std::string(), std::string(62, 'a'), std::string(66, 'a'), std::string(64, 'g'),
                                   std::string(63, 'a')}) {
    Result<std::string> refused = FromHexOfSize(wrong, 32);
    ASSERT_FALSE(refused.ok()) << wrong;
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(refused.status().message(), "expected 64 hex digits");
  }
}

TEST(OriginUrlTest, HttpAndHttpsInAnyCaseWithSomethingAfter) {
  for (const char* url : {"http://host/x", "https://host/x", "HTTPS://Host/x", "hTtP://h"}) {
    EXPECT_TRUE(IsHttpUrl(url)) << url;
  }
  for (const char* other : {"", "http://", "https://", "ftp://host/x", "/srv/http://x", "http:/host", "httpx://h",
                            "file:///etc/passwd"}) {
    EXPECT_FALSE(IsHttpUrl(other)) << other;
  }
}

}  // namespace
}  // namespace gridcast
