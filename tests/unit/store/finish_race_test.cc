// A job's finish racing the writers that decide on the same job: a comment
// gate, a sibling's end, the parent's own parking. On PostgreSQL the finish
// runs under READ COMMITTED and these races are kept apart by row locks
// (sql::TxKind::kFinish); SQLite serializes its writers. Each test runs the
// two sides at once many times and checks what every interleaving must
// leave: nothing stranded, nothing woken twice.
#include <algorithm>
#include <atomic>
#include <functional>
#include <thread>

#include "store/policy.h"
#include "support/store_fixture.h"

namespace maestro {
namespace {

using testing::StoreConformance;

class FinishRaceTest : public StoreConformance {
 protected:
  // Runs `a` and `b` on two threads released at the same moment.
  static void AtOnce(const std::function<void()>& a, const std::function<void()>& b) {
    std::atomic<int> ready{0};
    auto start = [&](const std::function<void()>& f) {
      return std::thread([&ready, &f] {
        ++ready;
        while (ready.load() < 2) {
        }
        f();
      });
    };
    std::thread ta = start(a), tb = start(b);
    ta.join();
    tb.join();
  }

  // Claims jobs until `job_id` comes up (other tasks' jobs may be ahead).
  Job ClaimThe(const std::string& job_id, const std::string& worker) {
    for (int i = 0; i < 10; ++i) {
      Job j = Claim(worker);
      if (j.id == job_id || j.id.empty()) return j;
      EXPECT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::Succeeded("aside")).ok());
    }
    return {};
  }

  static bool Delivered(CommentKind k) {
    return std::find(std::begin(policy::kDeliveredKinds), std::end(policy::kDeliveredKinds), k) !=
           std::end(policy::kDeliveredKinds);
  }
};

// The comment lands on the running job (the finish then hands it on to a
// follow-up) or, when the finish came first, on a follow-up of its own;
// never on an ended job, where nobody would read it.
TEST_P(FinishRaceTest, ACommentRacingItsJobsFinishIsNeverStranded) {
  for (int round = 0; round < 30; ++round) {
    auto created = NewTaskWith("ok");
    Job j = Claim();
    ASSERT_EQ(j.task_id, created.task.id);
    Status posted, finished;
    AtOnce([&] { posted = store_->PostComment(j.task_id, "user", "one more thing", {}).status(); },
           [&] { finished = store_->FinishJob(LeaseOf(j), JobOutcome::Succeeded("done")); });
    ASSERT_TRUE(posted.ok()) << posted.ToString();
    ASSERT_TRUE(finished.ok()) << finished.ToString();
    auto comments = store_->ListComments(j.task_id);
    ASSERT_TRUE(comments.ok());
    int pending = 0;
    for (const Comment& c : *comments) {
      if (c.author != "user" || c.delivered_at != 0 || !Delivered(c.kind)) continue;
      ++pending;
      JobStatus s = StatusOf(c.job_id);
      EXPECT_FALSE(IsTerminal(s)) << "round " << round << ": the comment waits on a job that is "
                                  << JobStatusName(s);
    }
    EXPECT_EQ(pending, 1) << "round " << round;
    // Run the follow-up, which reads the comment, so the next round's
    // claim gets the next task.
    Job next = Claim();
    ASSERT_EQ(next.task_id, j.task_id);
    auto mine = store_->ListUndeliveredComments(next.id);
    ASSERT_TRUE(mine.ok());
    ASSERT_EQ(mine->size(), 1u) << "round " << round;
    ASSERT_TRUE(store_->AckDeliveredComments({mine->front().id}).ok());
    ASSERT_TRUE(store_->FinishJob(LeaseOf(next), JobOutcome::Succeeded("seen")).ok());
  }
}

// The parent parks on its subtasks while its last one ends: whichever
// commits second sees the other, so the parent is queued, never left
// waiting for a child that has already ended.
TEST_P(FinishRaceTest, AParentParkingWhileItsLastChildEndsIsQueued) {
  for (int round = 0; round < 30; ++round) {
    auto [parent, children] = ParentWithChildren(1);
    Job child = ClaimThe(children[0].id, "child-worker");
    ASSERT_EQ(child.id, children[0].id);
    Status parked, ended;
    AtOnce(
        [&, p = parent] {
          parked = store_->FinishJob(LeaseOf(p), JobOutcome::WaitingSubtasks("resume"));
        },
        [&, c = child] { ended = store_->FinishJob(LeaseOf(c), JobOutcome::Succeeded("x")); });
    ASSERT_TRUE(parked.ok()) << parked.ToString();
    ASSERT_TRUE(ended.ok()) << ended.ToString();
    ASSERT_EQ(StatusOf(parent.id), JobStatus::kQueued) << "round " << round;
    ASSERT_LE(QueuedEventsFromWaiting(parent.task_id), 1) << "round " << round;
    Job p = ClaimThe(parent.id, "parent-worker");
    ASSERT_EQ(p.id, parent.id);
    ASSERT_TRUE(store_->FinishJob(LeaseOf(p), JobOutcome::Succeeded("done")).ok());
  }
}

// One child's finish and a cancel of its parked sibling, at once: a
// finish (READ COMMITTED on PostgreSQL) against a cancel (SERIALIZABLE).
// The parent wakes exactly once.
TEST_P(FinishRaceTest, ASiblingCancelledAsTheOtherFinishesWakesTheParentOnce) {
  for (int round = 0; round < 30; ++round) {
    auto [parent, children] = ParentWithChildren(2);
    ASSERT_TRUE(store_->FinishJob(LeaseOf(parent), JobOutcome::WaitingSubtasks("m")).ok());
    Job a = ClaimThe(children[0].id, "wa");
    Job b = ClaimThe(children[1].id, "wb");
    ASSERT_EQ(b.id, children[1].id);
    ASSERT_TRUE(store_->FinishJob(LeaseOf(b), JobOutcome::WaitingHuman("ask", "m")).ok());
    Status finished, cancelled;
    AtOnce([&] { finished = store_->FinishJob(LeaseOf(a), JobOutcome::Succeeded("x")); },
           [&] { cancelled = store_->RequestCancel(b.id).status(); });
    ASSERT_TRUE(finished.ok()) << finished.ToString();
    ASSERT_TRUE(cancelled.ok()) << cancelled.ToString();
    ASSERT_EQ(StatusOf(b.id), JobStatus::kCancelled);
    ASSERT_EQ(StatusOf(parent.id), JobStatus::kQueued) << "round " << round;
    ASSERT_EQ(QueuedEventsFromWaiting(parent.task_id), 1) << "round " << round;
    Job p = ClaimThe(parent.id, "wp");
    ASSERT_EQ(p.id, parent.id);
    ASSERT_TRUE(store_->FinishJob(LeaseOf(p), JobOutcome::Succeeded("done")).ok());
  }
}

MAESTRO_STORE_CONFORMANCE(FinishRaceTest);

}  // namespace
}  // namespace maestro
