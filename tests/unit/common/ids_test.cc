// The ids that cross layers: parsed from a message's bytes only at their exact width, ordered
// and printed by their bytes, fresh ones apart from each other.
#include "common/ids.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <type_traits>

namespace gridcast {
namespace {

TEST(IdsTest, FromBytesTakesExactlySixteenBytesAndNamesTheKindOtherwise) {
  const std::string bytes = "0123456789abcdef";
  Result<PlanId> id = PlanId::FromBytes(bytes);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(AsString(id->bytes()), bytes);
  EXPECT_EQ(ToHex(*id), "30313233343536373839616263646566");
  for (const std::string& wrong : {std::string(), std::string(15, 'x'), std::string(17, 'x')}) {
    Result<PlanId> refused = PlanId::FromBytes(wrong);
    ASSERT_FALSE(refused.ok()) << wrong.size();
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(refused.status().message(), "plan id must be 16 bytes");
  }
  EXPECT_EQ(ServeId::FromBytes("short").status().message(), "serve id must be 16 bytes");
}

TEST(IdsTest, EqualityAndOrderAreThoseOfTheBytes) {
  const PlanId zero;
  const PlanId low = *PlanId::FromBytes(std::string(15, '\0') + '\x01');
  const PlanId high = *PlanId::FromBytes('\x01' + std::string(15, '\0'));
  EXPECT_EQ(zero, PlanId());
  EXPECT_EQ(ToHex(zero), std::string(32, '0'));
  EXPECT_LT(zero, low);
  EXPECT_LT(low, high);
  EXPECT_NE(low, high);
  std::map<PlanId, int> by_id = {{high, 2}, {low, 1}, {zero, 0}};
  int expected = 0;
  for (const auto& [id, value] : by_id) EXPECT_EQ(value, expected++);
}

TEST(IdsTest, FreshIdsDifferAndKindsDoNotMix) {
  EXPECT_NE(PlanId::Random(), PlanId::Random());
  EXPECT_NE(ServeId::Random(), ServeId());
  static_assert(!std::is_convertible_v<PlanId, ServeId> && !std::is_convertible_v<ServeId, PlanId>);
  static_assert(sizeof(PlanId) == PlanId::kBytes);
}

}  // namespace
}  // namespace gridcast
