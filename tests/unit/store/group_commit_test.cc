// Group commit: concurrent writers share commits, yet each write stays all
// or nothing — a failing write in a batch rolls back only itself.
#include <thread>

#include "support/store_fixture.h"

namespace maestro {
namespace {

using testing::StoreConformance;

TEST_P(StoreConformance, ConcurrentWritesWithFailuresKeepEachWriteAtomic) {
  auto c = NewTaskWith("ok");
  constexpr int kThreads = 6, kPerThread = 200;
  std::atomic<int> ok{0}, not_found{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        Comment m;
        // Every third write names a task that does not exist: it must fail
        // and leave nothing behind, while its batch-mates commit.
        m.task_id = (i % 3 == 0) ? "missing-task" : c.task.id;
        m.author = "user";
        m.kind = CommentKind::kReply;
        m.body = "t" + std::to_string(t) + "-" + std::to_string(i);
        auto r = store_->AddComment(m);
        if (r.ok())
          ++ok;
        else if (r.status().code() == StatusCode::kNotFound)
          ++not_found;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok + not_found, kThreads * kPerThread);
  EXPECT_EQ(not_found.load(), kThreads * ((kPerThread + 2) / 3));
  auto comments = store_->ListComments(c.task.id);
  ASSERT_TRUE(comments.ok());
  EXPECT_EQ(static_cast<int>(comments->size()), ok.load() + 1);  // + the instruction
  // Each successful comment has exactly one comment.created event (+1 for
  // the instruction).
  auto events = store_->ListEvents(c.task.id, "", 100'000);
  int created = 0;
  for (const auto& e : *events) created += e.type == "comment.created";
  EXPECT_EQ(created, ok.load() + 1);
}

TEST_P(StoreConformance, FinishAndClaimNextMovesAWorkerToItsNextJobInOneStep) {
  auto a = NewTaskWith("ok");
  auto b = NewTaskWith("ok");
  Job first = Claim("w1");
  ClaimFilter f;
  f.worker_id = "w1";
  auto next = store_->FinishAndClaimNext(LeaseOf(first), JobOutcome::Succeeded("1"), f, 30'000);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  ASSERT_TRUE(next->has_value());
  EXPECT_EQ((*next)->id, b.job.id);
  EXPECT_EQ((*next)->status, JobStatus::kRunning);
  EXPECT_EQ(StatusOf(a.job.id), JobStatus::kSucceeded);
  // Nothing left: finishing claims nothing.
  auto none = store_->FinishAndClaimNext(LeaseOf(**next), JobOutcome::Succeeded("2"), f, 30'000);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  // A stale lease neither finishes nor claims.
  auto c = NewTaskWith("ok");
  auto stale = store_->FinishAndClaimNext(LeaseOf(first), JobOutcome::Succeeded("x"), f, 30'000);
  EXPECT_EQ(stale.status().code(), StatusCode::kLeaseLost);
  EXPECT_EQ(StatusOf(c.job.id), JobStatus::kQueued);
}

TEST_P(StoreConformance, EventIdsAreIncreasingIntegersAndBadResumeIdsAreRejected) {
  auto c = NewTaskWith("ok");
  Event e;
  e.task_id = c.task.id;
  e.type = "note";
  auto a = store_->AppendEvent(e);
  auto b = store_->AppendEvent(e);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_LT(std::stoll(a->id), std::stoll(b->id));
  auto after = store_->ListEvents(c.task.id, a->id, 10);
  ASSERT_EQ(after->size(), 1u);
  EXPECT_EQ((*after)[0].id, b->id);
  EXPECT_EQ(store_->ListEvents(c.task.id, "abc", 10).status().field(), "after_id");
}

}  // namespace
}  // namespace maestro
