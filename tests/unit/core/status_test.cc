#include "core/status.h"

#include <gtest/gtest.h>

namespace maestro {
namespace {

Result<int> Half(int x) {
  if (x % 2) return InvalidArgument("odd", "x");
  return x / 2;
}

Result<int> Quarter(int x) {
  MAESTRO_ASSIGN_OR_RETURN(int h, Half(x));
  MAESTRO_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

TEST(StatusTest, OkAndErrorCarryCodeMessageAndField) {
  EXPECT_TRUE(Status::Ok().ok());
  Status st = InvalidArgument("must not be empty", "instruction");
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.field(), "instruction");
  EXPECT_EQ(st.ToString(), "INVALID_ARGUMENT: instruction: must not be empty");
}

TEST(StatusTest, ResultPropagatesThroughAssignOrReturn) {
  auto ok = Quarter(8);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 2);
  auto bad = Quarter(6);  // 6 -> 3 -> odd
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "x");
}

}  // namespace
}  // namespace maestro
