// A worker that stops heartbeating: its job is recovered and retried with the
// scheduled backoff the store decides, all on a fake clock.
#include "worker/lease_sweeper.h"

#include "support/store_fixture.h"

namespace maestro {
namespace {

using testing::StoreTest;

TEST_F(StoreTest, CrashedWorkersJobIsRecoveredAndRetriedWithScheduledBackoff) {
  RetryConfig rc;
  rc.base_delay_ms = 2'000;
  rc.max_delay_ms = 60'000;
  rc.max_attempts = 3;
  rc.jitter = 0;
  // The sweeper reports a crashed worker's job as a retryable failure; the
  // store's policy decides retry or failed with its RetryConfig.
  StoreOptions o;
  o.clock = &clock_;
  o.default_max_attempts = 3;
  o.retry = rc;
  auto s = OpenAnother(o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  store_ = std::move(s).value();
  LeaseSweeper sweeper(*store_, 1'000);

  auto c = NewTaskWith("ok");
  Job first = Claim("doomed-1");  // the worker then "crashes": no heartbeat, no finish
  clock_.Advance(29'999);
  EXPECT_EQ(*sweeper.SweepOnce(), 0) << "lease still valid";
  clock_.Advance(2);
  EXPECT_EQ(*sweeper.SweepOnce(), 1);
  auto j = store_->GetJob(first.id);
  EXPECT_EQ(j->status, JobStatus::kRetry);
  EXPECT_EQ(j->next_retry_at, clock_.NowMs() + 2'000);  // attempt 1 -> base delay
  EXPECT_NE(j->error_message.find("doomed-1 stopped heartbeating"), std::string::npos);
  EXPECT_EQ(*store_->NextRetryDue(), clock_.NowMs() + 2'000);

  clock_.Advance(1'999);
  EXPECT_TRUE(NothingToClaim()) << "not before the backoff ends";
  clock_.Advance(1);
  Job second = Claim("doomed-2");
  EXPECT_EQ(second.id, first.id);
  EXPECT_EQ(second.attempt, 2);

  // Second crash: backoff doubles.
  clock_.Advance(30'001);
  EXPECT_EQ(*sweeper.SweepOnce(), 1);
  EXPECT_EQ(store_->GetJob(first.id)->next_retry_at, clock_.NowMs() + 4'000);
  clock_.Advance(4'000);
  Job third = Claim("doomed-3");
  EXPECT_EQ(third.attempt, 3);

  // Third crash uses the last attempt: failed for good.
  clock_.Advance(30'001);
  EXPECT_EQ(*sweeper.SweepOnce(), 1);
  auto last = store_->GetJob(first.id);
  EXPECT_EQ(last->status, JobStatus::kFailed);
  EXPECT_EQ(store_->GetTask(c.task.id)->status, JobStatus::kFailed);
}

}  // namespace
}  // namespace maestro
