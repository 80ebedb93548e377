// Parking (waiting_human / waiting_subtasks), parent/child fan-in and cancel.
#include <thread>

#include "support/store_fixture.h"

namespace maestro {
namespace {

using testing::StoreConformance;

class ParkCancelTest : public StoreConformance {};

TEST_P(ParkCancelTest, WaitingHumanKeepsReasonAndResumeMovementThenResumes) {
  auto c = NewTaskWith("park-human");
  Job j = Claim();
  JobOutcome park = JobOutcome::WaitingHuman("tool_request", "implement");
  park.ask_count = 1;
  ASSERT_TRUE(store_->FinishJob(LeaseOf(j), park).ok());
  auto parked = store_->GetJob(j.id);
  EXPECT_EQ(parked->status, JobStatus::kWaitingHuman);
  EXPECT_EQ(parked->wait_reason, "tool_request");
  EXPECT_EQ(parked->resume_movement, "implement");
  EXPECT_EQ(parked->ask_count, 1);
  EXPECT_EQ(store_->GetTask(c.task.id)->status, JobStatus::kWaitingHuman);
  EXPECT_TRUE(NothingToClaim()) << "a parked job holds no worker and is not claimable";

  int before = wakeups_;
  ASSERT_TRUE(store_->ResumeParkedJob(j.id).ok());
  EXPECT_GT(wakeups_.load(), before);
  Job resumed = Claim("w2");
  EXPECT_EQ(resumed.id, j.id);
  EXPECT_EQ(resumed.resume_movement, "implement");
  EXPECT_EQ(resumed.attempt, 2);
  // Resuming a job that is not parked is a conflict.
  EXPECT_EQ(store_->ResumeParkedJob(j.id).code(), StatusCode::kConflict);
}

TEST_P(ParkCancelTest, ParentIsRequeuedWhenItsLastChildEnds) {
  auto [parent, children] = ParentWithChildren(2);
  ASSERT_TRUE(store_->FinishJob(LeaseOf(parent), JobOutcome::WaitingSubtasks("implement")).ok());
  EXPECT_EQ(StatusOf(parent.id), JobStatus::kWaitingSubtasks);

  Job c1 = Claim("w1");
  Job c2 = Claim("w2");
  ASSERT_TRUE(store_->FinishJob(LeaseOf(c1), JobOutcome::Succeeded("a")).ok());
  EXPECT_EQ(StatusOf(parent.id), JobStatus::kWaitingSubtasks);
  ASSERT_TRUE(store_->FinishJob(LeaseOf(c2), JobOutcome::Failed("b")).ok());
  EXPECT_EQ(StatusOf(parent.id), JobStatus::kQueued);
  EXPECT_EQ(QueuedEventsFromWaiting(parent.task_id), 1);
  EXPECT_EQ(Claim("w3").id, parent.id);
}

TEST_P(ParkCancelTest, ParentParkingAfterChildrenEndedIsQueuedAtOnce) {
  auto [parent, children] = ParentWithChildren(1);
  Job c = Claim("w1");
  ASSERT_TRUE(store_->FinishJob(LeaseOf(c), JobOutcome::Succeeded("a")).ok());
  ASSERT_TRUE(store_->FinishJob(LeaseOf(parent), JobOutcome::WaitingSubtasks("implement")).ok());
  EXPECT_EQ(StatusOf(parent.id), JobStatus::kQueued);
}

TEST_P(ParkCancelTest, ConcurrentCompletionOfLastTwoChildrenRequeuesParentOnce) {
  for (int round = 0; round < 25; ++round) {
    auto [parent, children] = ParentWithChildren(2);
    ASSERT_TRUE(store_->FinishJob(LeaseOf(parent), JobOutcome::WaitingSubtasks("m")).ok());
    Job a = Claim("wa");
    Job b = Claim("wb");
    std::atomic<int> ready{0};
    auto finish = [&](const Job& j) {
      ++ready;
      while (ready < 2) {
      }
      EXPECT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::Succeeded("x")).ok());
    };
    std::thread ta(finish, a), tb(finish, b);
    ta.join();
    tb.join();
    ASSERT_EQ(StatusOf(parent.id), JobStatus::kQueued) << "round " << round;
    ASSERT_EQ(QueuedEventsFromWaiting(parent.task_id), 1) << "round " << round;
    // Consume the parent so the next round starts clean.
    Job p = Claim("wp");
    ASSERT_EQ(p.id, parent.id);
    ASSERT_TRUE(store_->FinishJob(LeaseOf(p), JobOutcome::Succeeded("done")).ok());
  }
}

TEST_P(ParkCancelTest, CancelCascadesToChildrenAndStopsRunningOnesCooperatively) {
  auto [parent, children] = ParentWithChildren(3);
  ASSERT_TRUE(store_->FinishJob(LeaseOf(parent), JobOutcome::WaitingSubtasks("m")).ok());
  Job running_child = Claim("w1");  // children[0]
  // A grandchild under children[1].
  NewTask g;
  g.instruction = "grandchild";
  g.parent_job_id = children[1].id;
  auto grand = store_->CreateTask(g);
  ASSERT_TRUE(grand.ok());

  auto report = store_->RequestCancel(parent.id);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->cancelled, 4);  // parent, 2 queued children, grandchild
  EXPECT_EQ(report->flagged, 1);    // the running child
  EXPECT_EQ(StatusOf(parent.id), JobStatus::kCancelled);
  EXPECT_EQ(StatusOf(children[1].id), JobStatus::kCancelled);
  EXPECT_EQ(StatusOf(children[2].id), JobStatus::kCancelled);
  EXPECT_EQ(StatusOf(grand->job.id), JobStatus::kCancelled);
  EXPECT_EQ(StatusOf(running_child.id), JobStatus::kRunning);

  // The running child learns it at its next heartbeat and stops.
  auto hb = store_->Heartbeat(LeaseOf(running_child), 30'000);
  ASSERT_TRUE(hb.ok());
  EXPECT_TRUE(hb->cancel_requested);
  EXPECT_TRUE(*store_->IsCancelRequested(running_child.id));
  ASSERT_TRUE(store_->FinishJob(LeaseOf(running_child), JobOutcome::Cancelled()).ok());
  EXPECT_EQ(StatusOf(running_child.id), JobStatus::kCancelled);
  // The cancelled parent is not woken by its children ending.
  EXPECT_EQ(StatusOf(parent.id), JobStatus::kCancelled);
  EXPECT_TRUE(NothingToClaim());
}

TEST_P(ParkCancelTest, CancellingQueuedRetryAndParkedJobsIsImmediate) {
  auto q = NewTaskWith("ok");
  auto r = NewTaskWith("ok");
  auto h = NewTaskWith("ok");
  Job rj = Claim();  // q's job
  ASSERT_EQ(rj.id, q.job.id);
  ASSERT_TRUE(store_->FinishJob(LeaseOf(rj), JobOutcome::Retry("x", clock_.NowMs() + 1000)).ok());
  Job hj = Claim();  // r's job
  ASSERT_TRUE(store_->FinishJob(LeaseOf(hj), JobOutcome::WaitingHuman("ask", "plan")).ok());
  for (const std::string& id : {q.job.id, r.job.id, h.job.id}) {
    auto rep = store_->RequestCancel(id);
    ASSERT_TRUE(rep.ok());
    EXPECT_EQ(rep->cancelled, 1);
    EXPECT_EQ(StatusOf(id), JobStatus::kCancelled);
  }
  EXPECT_EQ(store_->GetTask(h.task.id)->status, JobStatus::kCancelled);
  // Cancelling again changes nothing.
  auto again = store_->RequestCancel(q.job.id);
  EXPECT_EQ(again->cancelled + again->flagged, 0);
  clock_.Advance(2000);
  EXPECT_TRUE(NothingToClaim());
}

TEST_P(ParkCancelTest, SweeperCancelsAnExpiredJobThatWasAskedToStop) {
  NewTaskWith("ok");
  Job j = Claim();
  ASSERT_TRUE(store_->RequestCancel(j.id).ok());
  clock_.Advance(31'000);
  auto rec = store_->RecoverExpiredLeases(
      [&](const Job&) { return JobOutcome::Retry("lost", clock_.NowMs()); });
  ASSERT_TRUE(rec.ok());
  ASSERT_EQ(rec->size(), 1u);
  EXPECT_EQ((*rec)[0].status, JobStatus::kCancelled);
}

TEST_P(ParkCancelTest, AHandoffContinuationAdoptsTheChildrenSoTheirEndWakesIt) {
  auto [parent, children] = ParentWithChildren(2);
  NewJob cont;
  cont.task_id = parent.task_id;
  cont.continued_from_job_id = parent.id;
  cont.piece = parent.piece;
  cont.adopt_children_of = parent.id;
  auto next = store_->EnqueueJob(cont);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  ASSERT_TRUE(store_->FinishJob(LeaseOf(parent), JobOutcome::Succeeded("handed off")).ok());
  auto kids = store_->ListChildJobs(next->id);
  ASSERT_TRUE(kids.ok());
  EXPECT_EQ(kids->size(), 2u);
  EXPECT_TRUE(store_->ListChildJobs(parent.id)->empty());
  // The continuation parks on them; the last child's end wakes it.
  Job c1 = Claim("w1"), c2 = Claim("w2"), running = Claim("w3");  // oldest first
  ASSERT_EQ(running.id, next->id);
  ASSERT_TRUE(store_->FinishJob(LeaseOf(running), JobOutcome::WaitingSubtasks("plan")).ok());
  EXPECT_EQ(store_->GetJob(next->id)->status, JobStatus::kWaitingSubtasks);
  for (const Job& child : {c1, c2}) {
    ASSERT_TRUE(store_->FinishJob(LeaseOf(child), JobOutcome::Succeeded("ok")).ok());
  }
  EXPECT_EQ(store_->GetJob(next->id)->status, JobStatus::kQueued);
}

MAESTRO_STORE_CONFORMANCE(ParkCancelTest);

}  // namespace
}  // namespace maestro
