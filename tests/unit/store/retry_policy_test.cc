#include "store/retry_policy.h"

#include <gtest/gtest.h>

#include <set>

namespace maestro {
namespace {

RetryConfig Config(double jitter) {
  RetryConfig c;
  c.base_delay_ms = 1000;
  c.max_delay_ms = 10'000;
  c.max_attempts = 4;
  c.jitter = jitter;
  return c;
}

TEST(RetryPolicyTest, BackoffDoublesAndIsCapped) {
  RetryPolicy p(Config(0));
  EXPECT_EQ(p.BackoffMs(1), 1000);
  EXPECT_EQ(p.BackoffMs(2), 2000);
  EXPECT_EQ(p.BackoffMs(3), 4000);
  EXPECT_EQ(p.BackoffMs(4), 8000);
  EXPECT_EQ(p.BackoffMs(5), 10'000);
  EXPECT_EQ(p.BackoffMs(60), 10'000);
}

TEST(RetryPolicyTest, JitterStaysWithinBoundsAndVaries) {
  RetryPolicy p(Config(0.2));
  std::set<int64_t> seen;
  for (int i = 0; i < 200; ++i) {
    int64_t d = p.BackoffMs(2);
    ASSERT_GE(d, 1600);
    ASSERT_LE(d, 2400);
    seen.insert(d);
  }
  EXPECT_GT(seen.size(), 10u);
}

TEST(RetryPolicyTest, TransientErrorsRetryUntilAttemptsRunOut) {
  RetryPolicy p(Config(0));
  Job j;
  j.max_attempts = 4;
  j.attempt = 2;
  JobOutcome o = p.OnFailure(j, Unavailable("502"), 10'000);
  EXPECT_EQ(o.kind, JobOutcome::Kind::kRetry);
  EXPECT_EQ(o.next_retry_at, 10'000 + 2000);
  j.attempt = 4;
  o = p.OnFailure(j, Unavailable("502"), 10'000);
  EXPECT_EQ(o.kind, JobOutcome::Kind::kFailed);
  EXPECT_NE(o.error_message.find("gave up after 4 attempts"), std::string::npos);
}

TEST(RetryPolicyTest, FatalErrorsFailAtOnce) {
  RetryPolicy p(Config(0));
  Job j;
  j.max_attempts = 4;
  j.attempt = 1;
  for (Status st : {InvalidArgument("bad piece"), NotFound("no piece"), Unimplemented("x")}) {
    JobOutcome o = p.OnFailure(j, st, 0);
    EXPECT_EQ(o.kind, JobOutcome::Kind::kFailed) << st.ToString();
  }
}

}  // namespace
}  // namespace maestro
