// The state machine's rules without a database (store/policy.h): every
// branch of the comment gate, the continue gate, the outcome mapping and
// fan-in. The row code of both backends applies exactly these.
#include "store/policy.h"

#include <gtest/gtest.h>

namespace maestro::policy {
namespace {

Job JobIn(JobStatus status, std::string wait_reason = "") {
  Job j;
  j.id = "j1";
  j.task_id = "t1";
  j.piece = "chat";
  j.model = "m";
  j.profile = "p";
  j.status = status;
  j.wait_reason = std::move(wait_reason);
  j.resume_movement = "draft";
  j.ask_count = 2;
  j.attempt = 3;
  j.result = "old result";
  j.error_message = "old error";
  return j;
}

TEST(CommentGateTest, EachJobStateTakesItsBranch) {
  struct Row {
    std::optional<Job> newest;
    CommentGate gate;
    std::string kind, outcome;
  };
  const Row rows[] = {
      {std::nullopt, CommentGate::kFollowUp, "reply", "followup"},
      {JobIn(JobStatus::kRunning), CommentGate::kInterjection, "interjection", "interjection"},
      {JobIn(JobStatus::kWaitingSubtasks), CommentGate::kInterjection, "interjection",
       "interjection"},
      {JobIn(JobStatus::kQueued), CommentGate::kReused, "reply", "reused"},
      {JobIn(JobStatus::kRetry), CommentGate::kReused, "reply", "reused"},
      {JobIn(JobStatus::kWaitingHuman, "ask"), CommentGate::kAnswer, "answer", "followup"},
      {JobIn(JobStatus::kWaitingHuman, "tool_request"), CommentGate::kDecideFirst, "", ""},
      {JobIn(JobStatus::kWaitingHuman, "package_request"), CommentGate::kDecideFirst, "", ""},
      {JobIn(JobStatus::kWaitingHuman, "spawn_request"), CommentGate::kDecideFirst, "", ""},
      {JobIn(JobStatus::kSucceeded), CommentGate::kFollowUp, "reply", "followup"},
      {JobIn(JobStatus::kFailed), CommentGate::kFollowUp, "reply", "followup"},
      {JobIn(JobStatus::kCancelled), CommentGate::kFollowUp, "reply", "followup"},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.newest
                     ? std::string(JobStatusName(r.newest->status)) + "/" + r.newest->wait_reason
                     : "no job");
    CommentGate g = DecideCommentGate(r.newest);
    EXPECT_EQ(g, r.gate);
    if (g == CommentGate::kDecideFirst) continue;
    EXPECT_EQ(CommentKindName(KindFor(g)), r.kind);
    EXPECT_EQ(CommentOutcomeName(GateOutcome(g)), r.outcome);
  }
}

TEST(CommentGateTest, FollowUpReentersWhereTheJobStopped) {
  NewJob next = FollowUpOf(JobIn(JobStatus::kWaitingHuman, "ask"));
  EXPECT_EQ(next.task_id, "t1");
  EXPECT_EQ(next.piece, "chat");
  EXPECT_EQ(next.model, "m");
  EXPECT_EQ(next.profile, "p");
  EXPECT_EQ(next.continued_from_job_id, "j1");
  EXPECT_EQ(next.resume_movement, "draft");
  EXPECT_EQ(next.ask_count, 2);
}

TEST(ContinueGateTest, OnlyAFinishedTaskContinues) {
  EXPECT_EQ(CheckContinue("t1", std::nullopt).code(), StatusCode::kConflict);
  for (JobStatus s : {JobStatus::kQueued, JobStatus::kRunning, JobStatus::kRetry,
                      JobStatus::kWaitingHuman, JobStatus::kWaitingSubtasks}) {
    EXPECT_EQ(CheckContinue("t1", JobIn(s)).code(), StatusCode::kConflict) << JobStatusName(s);
  }
  for (JobStatus s : {JobStatus::kSucceeded, JobStatus::kFailed, JobStatus::kCancelled}) {
    EXPECT_TRUE(CheckContinue("t1", JobIn(s)).ok()) << JobStatusName(s);
  }
  NewJob same = ContinuationOf(JobIn(JobStatus::kFailed), "");
  EXPECT_EQ(same.piece, "chat");
  EXPECT_EQ(same.continued_from_job_id, "j1");
  EXPECT_EQ(same.resume_movement, "");  // a Continue starts the piece afresh
  EXPECT_EQ(ContinuationOf(JobIn(JobStatus::kFailed), "coding").piece, "coding");
}

TEST(OutcomeTest, TerminalOutcomes) {
  const Job running = JobIn(JobStatus::kRunning);
  auto ok = MapOutcome(running, JobOutcome::Succeeded("done"), {}, 100);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->to, JobStatus::kSucceeded);
  EXPECT_EQ(ok->result, "done");
  EXPECT_EQ(ok->error_message, "");
  EXPECT_EQ(ok->finished_at, 100);
  EXPECT_TRUE(ok->hands_on_comments);

  auto failed = MapOutcome(running, JobOutcome::Failed("boom"), {}, 100);
  EXPECT_EQ(failed->to, JobStatus::kFailed);
  EXPECT_EQ(failed->error_message, "boom");
  EXPECT_EQ(failed->finished_at, 100);
  EXPECT_FALSE(failed->hands_on_comments);  // kept for the next job the person starts

  auto cancelled = MapOutcome(running, JobOutcome::Cancelled(), {}, 100);
  EXPECT_EQ(cancelled->to, JobStatus::kCancelled);
  EXPECT_EQ(cancelled->error_message, "cancelled");
  EXPECT_FALSE(cancelled->hands_on_comments);
}

TEST(OutcomeTest, RetryAndRelease) {
  const Job running = JobIn(JobStatus::kRunning);
  auto retry = MapOutcome(running, JobOutcome::Retry("503", 5000), {}, 100);
  EXPECT_EQ(retry->to, JobStatus::kRetry);
  EXPECT_EQ(retry->next_retry_at, 5000);
  EXPECT_EQ(retry->finished_at, 0);
  EXPECT_EQ(retry->attempt, 3);

  auto released = MapOutcome(running, JobOutcome::Released(), {}, 100);
  EXPECT_EQ(released->to, JobStatus::kQueued);
  EXPECT_EQ(released->attempt, 2);  // a shutdown is not the job's fault
  Job first = running;
  first.attempt = 0;
  EXPECT_EQ(MapOutcome(first, JobOutcome::Released(), {}, 100)->attempt, 0);
}

TEST(OutcomeTest, ParksAndTheFactsThatChangeThem) {
  const Job running = JobIn(JobStatus::kRunning);
  JobOutcome ask = JobOutcome::WaitingHuman("ask", "review");
  EXPECT_TRUE(NeedsUndelivered(ask));
  EXPECT_FALSE(NeedsOpenChildren(ask));
  auto parked = MapOutcome(running, ask, {}, 100);
  EXPECT_EQ(parked->to, JobStatus::kWaitingHuman);
  EXPECT_EQ(parked->wait_reason, "ask");
  EXPECT_EQ(parked->resume_movement, "review");
  EXPECT_EQ(parked->finished_at, 0);
  // A comment arrived while the agent was asking: it answers the ASK.
  auto answered = MapOutcome(running, ask, {.undelivered_comments = 1}, 100);
  EXPECT_EQ(answered->to, JobStatus::kSucceeded);
  EXPECT_EQ(answered->result, kAnsweredResult);
  EXPECT_EQ(answered->wait_reason, "");
  EXPECT_EQ(answered->resume_movement, "review");
  EXPECT_TRUE(answered->hands_on_comments);

  JobOutcome tool = JobOutcome::WaitingHuman("tool_request", "draft");
  EXPECT_FALSE(NeedsUndelivered(tool));
  EXPECT_EQ(MapOutcome(running, tool, {.undelivered_comments = 1}, 100)->to,
            JobStatus::kWaitingHuman);

  JobOutcome subtasks = JobOutcome::WaitingSubtasks("merge");
  EXPECT_TRUE(NeedsOpenChildren(subtasks));
  EXPECT_EQ(MapOutcome(running, subtasks, {.open_children = 2}, 100)->to,
            JobStatus::kWaitingSubtasks);
  auto none_open = MapOutcome(running, subtasks, {.open_children = 0}, 100);
  EXPECT_EQ(none_open->to, JobStatus::kQueued);  // nothing to wait for
  EXPECT_EQ(none_open->wait_reason, "");

  JobOutcome bad = JobOutcome::WaitingHuman("ask", "x");
  bad.park_status = JobStatus::kFailed;
  EXPECT_EQ(MapOutcome(running, bad, {}, 100).status().code(), StatusCode::kInvalidArgument);
}

TEST(FanInTest, OnlyAWaitingParentWithNoOpenChildWakes) {
  EXPECT_TRUE(ParentWakes(JobIn(JobStatus::kWaitingSubtasks), 0));
  EXPECT_FALSE(ParentWakes(JobIn(JobStatus::kWaitingSubtasks), 1));
  EXPECT_FALSE(ParentWakes(JobIn(JobStatus::kCancelled), 0));
  EXPECT_FALSE(ParentWakes(JobIn(JobStatus::kQueued), 0));
}

}  // namespace
// The names are the DB and wire strings: each parses back to itself, and the
// comment gate's "answer" is one of them (it used to be missing from the list).
TEST(EnumNames, EveryNameParsesBackAndUnknownNamesDoNot) {
  for (const std::string& n : AllNames<JobStatus>())
    EXPECT_EQ(JobStatusName(*ParseJobStatus(n)), n);
  for (const std::string& n : AllNames<CommentKind>()) {
    EXPECT_EQ(CommentKindName(*ParseCommentKind(n)), n);
  }
  for (const std::string& n : AllNames<RequestKind>()) {
    EXPECT_EQ(RequestKindName(*ParseRequestKind(n)), n);
  }
  for (const std::string& n : AllNames<RequestStatus>()) {
    EXPECT_EQ(RequestStatusName(*ParseRequestStatus(n)), n);
  }
  for (const std::string& n : AllNames<GrantScope>()) {
    EXPECT_EQ(GrantScopeName(*ParseGrantScope(n)), n);
  }
  EXPECT_EQ(AllNames<CommentOutcome>(),
            (std::vector<std::string>{"interjection", "reused", "followup"}));
  EXPECT_EQ(ParseCommentKind("answer"), CommentKind::kAnswer);
  EXPECT_FALSE(ParseJobStatus("sleeping").has_value());
  EXPECT_FALSE(ParseCommentKind("").has_value());
  EXPECT_FALSE(ParseRequestKind("Tool").has_value());
  EXPECT_FALSE(ParseRequestStatus("approve").has_value());
  EXPECT_FALSE(ParseGrantScope("forever").has_value());
}

}  // namespace maestro::policy
