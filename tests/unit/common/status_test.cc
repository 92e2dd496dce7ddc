#include "include/gridcast/status.h"

#include <gtest/gtest.h>

#include "include/gridcast/result.h"

namespace gridcast {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return Status::InvalidArgument("odd");
  return x / 2;
}

Result<int> Quarter(int x) {
  GRIDCAST_ASSIGN_OR_RETURN(int half, Half(x));
  return Half(half);
}

Status CheckEven(int x) {
  GRIDCAST_RETURN_IF_ERROR(Half(x).status());
  return Status::Ok();
}

TEST(Status, OkAndErrors) {
  EXPECT_TRUE(Status().ok());
  EXPECT_EQ(Status().ToString(), "OK");
  Status s = Status::NotFound("no plan 7");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.ToString(), "NOT_FOUND: no plan 7");
  EXPECT_EQ(s.WithContext("member b").message(), "member b: no plan 7");
  EXPECT_TRUE(Status().WithContext("x").ok());
  EXPECT_EQ(static_cast<int>(StatusCode::kUnauthenticated), 16);  // google.rpc.Code
}

TEST(Result, PropagatesValuesAndErrors) {
  EXPECT_EQ(*Quarter(8), 2);
  EXPECT_FALSE(Quarter(6).ok());
  EXPECT_EQ(Quarter(6).status().message(), "odd");
  EXPECT_TRUE(CheckEven(4).ok());
  EXPECT_EQ(CheckEven(3).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gridcast
