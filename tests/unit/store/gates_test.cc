// Seed 000's write gate and continue gate, and approval decisions resuming
// the parked job — one case per branch.
#include "support/store_fixture.h"

namespace maestro {
namespace {

using testing::StoreConformance;

class GateTest : public StoreConformance {
 protected:
  Store::CommentResult Post(const std::string& task_id, const std::string& body) {
    auto r = store_->PostComment(task_id, "alice", body, {});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : Store::CommentResult{};
  }
};

TEST_P(GateTest, RunningJobGetsAnInterjectionDeliveredOnce) {
  auto c = NewTaskWith("ok");
  Job j = Claim();
  auto r = Post(c.task.id, "also check the tests");
  EXPECT_EQ(r.outcome, CommentOutcome::kInterjection);
  EXPECT_EQ(r.job.id, j.id);
  EXPECT_EQ(r.comment.kind, CommentKind::kInterjection);
  auto pending = store_->ListUndeliveredComments(j.id);
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].body, "also check the tests");
  ASSERT_TRUE(store_->AckDeliveredComments({(*pending)[0].id}).ok());
  EXPECT_TRUE(store_->ListUndeliveredComments(j.id)->empty());
  EXPECT_EQ(store_->ListJobs(c.task.id)->size(), 1u) << "no new job";
}

// Several interjections delivered at one iteration boundary are acked
// together: each of them, not the first one again (one prepared statement
// run once per id).
TEST_P(GateTest, InterjectionsAckedTogetherAreAllDelivered) {
  auto c = NewTaskWith("ok");
  Job j = Claim();
  for (const char* body : {"first", "second", "third"}) Post(c.task.id, body);
  auto pending = store_->ListUndeliveredComments(j.id);
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(pending->size(), 3u);
  std::vector<std::string> ids;
  for (const Comment& m : *pending) ids.push_back(m.id);
  ASSERT_TRUE(store_->AckDeliveredComments(ids).ok());
  auto left = store_->ListUndeliveredComments(j.id);
  ASSERT_TRUE(left.ok());
  EXPECT_TRUE(left->empty()) << left->size() << " still undelivered";
}

TEST_P(GateTest, AnInterjectionLeftWhenTheJobSucceedsGoesToAFollowUp) {
  auto c = NewTaskWith("ok");
  Job j = Claim();
  auto r = Post(c.task.id, "one more thing");
  ASSERT_EQ(r.outcome, CommentOutcome::kInterjection);
  ASSERT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::Succeeded("done")).ok());
  auto jobs = store_->ListJobs(c.task.id);
  ASSERT_EQ(jobs->size(), 2u);
  const Job& next = jobs->back();
  EXPECT_EQ(next.status, JobStatus::kQueued);
  EXPECT_EQ(next.continued_from_job_id, j.id);
  auto moved = store_->ListUndeliveredComments(next.id);
  ASSERT_EQ(moved->size(), 1u);
  EXPECT_EQ((*moved)[0].id, r.comment.id);
  EXPECT_TRUE(store_->ListUndeliveredComments(j.id)->empty());
}

TEST_P(GateTest, AnInterjectionWhileTheAgentAsksAnswersTheAsk) {
  auto c = NewTaskWith("ok");
  Job j = Claim();
  ASSERT_EQ(Post(c.task.id, "blue").outcome, CommentOutcome::kInterjection);
  ASSERT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::WaitingHuman("ask", "m")).ok());
  EXPECT_EQ(store_->GetJob(j.id)->status, JobStatus::kSucceeded) << "answered, not waiting";
  auto jobs = store_->ListJobs(c.task.id);
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ(jobs->back().resume_movement, "m");
  EXPECT_EQ(store_->ListUndeliveredComments(jobs->back().id)->size(), 1u);
}

TEST_P(GateTest, AFailedJobKeepsItsCommentForTheNextFollowUpWithoutLooping) {
  auto c = NewTaskWith("ok");
  Job j = Claim();
  auto first = Post(c.task.id, "first note");
  ASSERT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::Failed("broken")).ok());
  EXPECT_EQ(store_->ListJobs(c.task.id)->size(), 1u) << "no job created by the failure";
  auto second = Post(c.task.id, "try again");
  ASSERT_EQ(second.outcome, CommentOutcome::kFollowUp);
  auto pending = store_->ListUndeliveredComments(second.job.id);
  ASSERT_EQ(pending->size(), 2u) << "the follow-up takes the failed job's comment too";
  EXPECT_EQ((*pending)[0].id, first.comment.id);
}

TEST_P(GateTest, WaitingSubtasksAlsoTakesInterjections) {
  auto c = NewTaskWith("ok");
  Job j = Claim();
  ASSERT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::WaitingSubtasks("m")).ok());
  // No children: the parent was queued at once; give it a child to wait for.
  Job again = Claim();
  NewTask child;
  child.instruction = "child";
  child.parent_job_id = again.id;
  ASSERT_TRUE(store_->CreateTask(child).ok());
  ASSERT_TRUE(store_->FinishJob(LeaseOf(again), JobOutcome::WaitingSubtasks("m")).ok());
  EXPECT_EQ(Post(c.task.id, "fyi").outcome, CommentOutcome::kInterjection);
}

TEST_P(GateTest, PendingApprovalRefusesTheCommentAndLosesNothing) {
  auto c = NewTaskWith("ok");
  Job j = Claim();
  Request req;
  req.task_id = c.task.id;
  req.job_id = j.id;
  req.kind = RequestKind::kTool;
  req.name = "RunCommand";
  req.args = {{"command", "make"}};
  auto created = store_->CreateRequest(req);
  ASSERT_TRUE(created.ok());
  ASSERT_TRUE(
      store_->FinishJob(LeaseOf(j), JobOutcome::WaitingHuman("tool_request", "implement")).ok());
  auto refused = store_->PostComment(c.task.id, "alice", "hello?", {});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kConflict);
  EXPECT_NE(refused.status().message().find("decide the request first"), std::string::npos);
  EXPECT_EQ(store_->ListComments(c.task.id)->size(), 1u) << "nothing half-written";

  // Deciding requeues the same job in the same movement.
  ASSERT_TRUE(store_->DecideRequest(created->id, "deny", "", "alice").ok());
  auto job = store_->GetJob(j.id);
  EXPECT_EQ(job->status, JobStatus::kQueued);
  EXPECT_EQ(job->resume_movement, "implement");
  EXPECT_EQ(Post(c.task.id, "now it works").outcome, CommentOutcome::kReused);
}

TEST_P(GateTest, QueuedOrRetryJobIsReused) {
  auto c = NewTaskWith("ok");
  auto r = Post(c.task.id, "one more thing");
  EXPECT_EQ(r.outcome, CommentOutcome::kReused);
  EXPECT_EQ(r.job.id, c.job.id);
  Job j = Claim();
  ASSERT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::Retry("x", clock_.NowMs() + 1000)).ok());
  EXPECT_EQ(Post(c.task.id, "and another").outcome, CommentOutcome::kReused);
  EXPECT_EQ(store_->ListJobs(c.task.id)->size(), 1u);
}

TEST_P(GateTest, AnsweredAskStartsAFollowUpInheritingMovementAndAskCount) {
  auto c = NewTaskWith("ok");
  Job j = Claim();
  JobOutcome ask = JobOutcome::WaitingHuman("ask", "plan");
  ask.ask_count = 2;
  ASSERT_TRUE(store_->FinishJob(LeaseOf(j), ask).ok());
  auto r = Post(c.task.id, "use PostgreSQL");
  EXPECT_EQ(r.outcome, CommentOutcome::kFollowUp);
  EXPECT_EQ(r.comment.kind, CommentKind::kAnswer);
  EXPECT_NE(r.job.id, j.id);
  EXPECT_EQ(r.job.status, JobStatus::kQueued);
  EXPECT_EQ(r.job.resume_movement, "plan");
  EXPECT_EQ(r.job.ask_count, 2);
  EXPECT_EQ(r.job.continued_from_job_id, j.id);
  EXPECT_EQ(StatusOf(j.id), JobStatus::kSucceeded) << "the answered ASK job ends";
  EXPECT_EQ(r.comment.job_id, r.job.id);
}

TEST_P(GateTest, FinishedTaskGetsAFollowUpJob) {
  auto c = NewTaskWith("ok");
  Job j = Claim();
  ASSERT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::Failed("boom")).ok());
  auto r = Post(c.task.id, "try again please");
  EXPECT_EQ(r.outcome, CommentOutcome::kFollowUp);
  EXPECT_EQ(store_->GetTask(c.task.id)->status, JobStatus::kQueued);
  EXPECT_EQ(store_->PostComment(c.task.id, "a", "  ", {}).status().field(), "body");
  EXPECT_EQ(store_->PostComment("nope", "a", "x", {}).status().code(), StatusCode::kNotFound);
}

TEST_P(GateTest, ContinueNeedsAFinishedJobAndLeavesAHandoffComment) {
  auto c = NewTaskWith("ok");
  auto early = store_->ContinueTask(c.task.id, "", "alice", "");
  EXPECT_EQ(early.status().code(), StatusCode::kConflict) << "queued job is not finished";
  Job j = Claim();
  EXPECT_EQ(store_->ContinueTask(c.task.id, "", "alice", "").status().code(),
            StatusCode::kConflict);
  ASSERT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::Succeeded("v1")).ok());
  auto cont = store_->ContinueTask(c.task.id, "coding", "alice", "");
  ASSERT_TRUE(cont.ok()) << cont.status().ToString();
  EXPECT_EQ(cont->job.continued_from_job_id, j.id);
  EXPECT_EQ(cont->job.piece, "coding");
  EXPECT_EQ(cont->handoff.kind, CommentKind::kHandoff);
  EXPECT_EQ(cont->handoff.job_id, cont->job.id);
  EXPECT_EQ(store_->ContinueTask("nope", "", "a", "").status().code(), StatusCode::kNotFound);
}

TEST_P(GateTest, JobCountsByStatus) {
  NewTaskWith("ok");
  NewTaskWith("ok");
  Job j = Claim();
  ASSERT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::Succeeded("")).ok());
  auto counts = store_->CountJobsByStatus();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(counts->at("queued"), 1);
  EXPECT_EQ(counts->at("succeeded"), 1);
}

MAESTRO_STORE_CONFORMANCE(GateTest);

}  // namespace
}  // namespace maestro
