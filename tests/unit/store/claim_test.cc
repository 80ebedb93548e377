// Claim order, filters, the per-task lock, leases and fencing.
#include <fmt/format.h>

#include "store/postgres/pg_conn.h"
#include "store/sql/dialect.h"
#include "support/store_fixture.h"

namespace maestro {
namespace {

using testing::StoreConformance;

TEST_P(StoreConformance, CreateTaskQueuesAJobAndWakesWorkers) {
  auto c = NewTaskWith("ok");
  EXPECT_EQ(c.job.status, JobStatus::kQueued);
  EXPECT_EQ(c.task.status, JobStatus::kQueued);
  EXPECT_EQ(c.job.max_attempts, 3);
  EXPECT_GE(wakeups_.load(), 1);
  auto comments = store_->ListComments(c.task.id);
  ASSERT_TRUE(comments.ok());
  ASSERT_EQ(comments->size(), 1u);
  EXPECT_EQ((*comments)[0].kind, CommentKind::kInstruction);
}

TEST_P(StoreConformance, ClaimSetsRunningWorkerLeaseAndToken) {
  auto c = NewTaskWith("ok");
  Job j = Claim("w1");
  EXPECT_EQ(j.id, c.job.id);
  EXPECT_EQ(j.status, JobStatus::kRunning);
  EXPECT_EQ(j.worker_id, "w1");
  EXPECT_EQ(j.fencing_token, 1);
  EXPECT_EQ(j.attempt, 1);
  EXPECT_EQ(j.lease_expires_at, clock_.NowMs() + 30'000);
  auto task = store_->GetTask(c.task.id);
  EXPECT_EQ(task->status, JobStatus::kRunning);
  EXPECT_GT(task->started_at, 0);
  EXPECT_TRUE(NothingToClaim("w2"));
}

TEST_P(StoreConformance, QueuedJobsAreClaimedOldestFirst) {
  auto a = NewTaskWith("ok");
  clock_.Advance(1);
  auto b = NewTaskWith("ok");
  clock_.Advance(1);
  auto c = NewTaskWith("ok");
  EXPECT_EQ(Claim().id, a.job.id);
  EXPECT_EQ(Claim().id, b.job.id);
  EXPECT_EQ(Claim().id, c.job.id);
}

TEST_P(StoreConformance, HigherPriorityIsClaimedFirstAndFollowUpsInheritIt) {
  auto low = NewTaskWith("ok");
  NewTask urgent_in;
  urgent_in.instruction = "urgent";
  urgent_in.piece = "ok";
  urgent_in.priority = 50;
  auto urgent = store_->CreateTask(urgent_in);
  ASSERT_TRUE(urgent.ok()) << urgent.status().ToString();
  auto later_low = NewTaskWith("ok");
  EXPECT_EQ(Claim().id, urgent->job.id);  // newer, but higher priority
  EXPECT_EQ(Claim().id, low.job.id);      // then oldest first
  EXPECT_EQ(Claim().id, later_low.job.id);

  // A comment on the finished urgent task queues a follow-up at its priority.
  Job done = *store_->GetJob(urgent->job.id);
  ASSERT_TRUE(store_->FinishJob(LeaseOf(done), JobOutcome::Succeeded("ok")).ok());
  auto followup = store_->PostComment(urgent->task.id, "user", "and one more thing", {});
  ASSERT_TRUE(followup.ok());
  EXPECT_EQ(followup->job.priority, 50);

  urgent_in.priority = kMaxPriority + 1;
  auto bad = store_->CreateTask(urgent_in);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "priority");
}

TEST_P(StoreConformance, DueRetryJobsComeBeforeQueuedOnesAndNotBeforeTheirTime) {
  auto first = NewTaskWith("ok");
  Job j = Claim();
  ASSERT_TRUE(
      store_->FinishJob(LeaseOf(j), JobOutcome::Retry("boom", clock_.NowMs() + 5'000)).ok());
  EXPECT_EQ(StatusOf(j.id), JobStatus::kRetry);
  auto later = NewTaskWith("ok");
  // Not due yet: the queued job goes first.
  EXPECT_EQ(Claim().id, later.job.id);
  auto third = NewTaskWith("ok");
  clock_.Advance(5'000);
  Job retried = Claim();
  EXPECT_EQ(retried.id, first.job.id);
  EXPECT_EQ(retried.attempt, 2);
  EXPECT_EQ(retried.fencing_token, 2);
  EXPECT_EQ(Claim().id, third.job.id);
}

TEST_P(StoreConformance, ModelAndWorkerFiltersRestrictClaims) {
  auto c = NewTaskWith("ok");
  NewTask other;
  other.instruction = "x";
  auto t2 = store_->CreateTask(other);
  ASSERT_TRUE(t2.ok());
  // Make the first task's job unavailable (running) so only filters decide.
  Job running = Claim("w0");
  EXPECT_EQ(running.id, c.job.id);
  ClaimFilter llama{"w-llama", {"llama"}, {}, "", 0};
  // t2's job has no model: any worker may take it.
  auto got = store_->ClaimNextJob(llama, 1000);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->task_id, t2->task.id);

  NewTask third;
  third.instruction = "needs qwen";
  third.model = "qwen3";
  auto t3 = store_->CreateTask(third);
  ASSERT_TRUE(t3.ok());
  got = store_->ClaimNextJob(llama, 1000);
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->has_value()) << "llama worker must not take a qwen3 job";
  ClaimFilter qwen{"w-qwen", {"qwen3", "other"}, {}, "", 0};
  got = store_->ClaimNextJob(qwen, 1000);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->task_id, t3->task.id);

  NewJob mine;
  mine.task_id = t3->task.id;
  mine.required_worker = "w-special";
  ASSERT_TRUE(store_->FinishJob(LeaseOf(**got), JobOutcome::Succeeded("ok")).ok());
  auto pinned_job = store_->EnqueueJob(mine);
  ASSERT_TRUE(pinned_job.ok());
  EXPECT_TRUE(NothingToClaim("w-other"));
  EXPECT_EQ(Claim("w-special").id, pinned_job->id);
}

TEST_P(StoreConformance, ATaskRunsAtMostOneJobAtATime) {
  auto c = NewTaskWith("ok");
  NewJob second;
  second.task_id = c.task.id;
  second.piece = "ok";
  auto j2 = store_->EnqueueJob(second);
  ASSERT_TRUE(j2.ok());
  Job first = Claim("w1");
  EXPECT_EQ(first.id, c.job.id);
  EXPECT_TRUE(NothingToClaim("w2")) << "second job of a running task must wait";
  ASSERT_TRUE(store_->FinishJob(LeaseOf(first), JobOutcome::Succeeded("done")).ok());
  EXPECT_EQ(Claim("w2").id, j2->id);
}

// What a claim holds while it takes task A's first job (PostgreSQL: the
// job's row and the task's claim lock, sql::TaskFreeAndLocked) makes
// another claim pass over A's second job too. Taking it would fail the
// later commit on the one-running-job-per-task index and rerun its batch.
TEST_P(StoreConformance, AClaimSkipsTheTasksAnotherClaimIsTaking) {
  if (backend_ != testing::StoreBackend::kPostgres) {
    GTEST_SKIP() << "SQLite's claims are serialized: none runs beside another";
  }
  auto a = NewTaskWith("ok");
  clock_.Advance(1);
  auto b = NewTaskWith("ok");
  NewJob second;
  second.task_id = a.task.id;
  second.piece = "ok";
  ASSERT_TRUE(store_->EnqueueJob(second).ok());

  auto other = postgres::PgConn::Open(pg_url_);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  ASSERT_TRUE((*other)
                  ->ExecScript(fmt::format("BEGIN; SELECT 1 FROM jobs WHERE id = '{}' FOR UPDATE;"
                                           " SELECT pg_advisory_xact_lock({}, hashtext('{}'))",
                                           a.job.id, sql::kClaimTaskLocks, a.task.id))
                  .ok());
  ClaimFilter f;
  f.worker_id = "w1";
  auto claimed = store_->ClaimJobs(f, 30'000, 10);
  ASSERT_TRUE(claimed.ok()) << claimed.status().ToString();
  ASSERT_EQ(claimed->size(), 1u);
  EXPECT_EQ(claimed->front().id, b.job.id);

  ASSERT_TRUE((*other)->ExecScript("ROLLBACK").ok());
  auto after = store_->ClaimJobs(f, 30'000, 10);
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->size(), 1u);
  EXPECT_EQ(after->front().id, a.job.id);
}

TEST_P(StoreConformance, StaleWorkerWriteAfterLosingLeaseIsRejected) {
  auto c = NewTaskWith("ok");
  Job stale = Claim("w1");
  clock_.Advance(31'000);  // lease expired, worker silent
  auto recovered = store_->RecoverExpiredLeases(
      [&](const Job&) { return JobOutcome::Retry("worker lost", clock_.NowMs()); });
  ASSERT_TRUE(recovered.ok());
  ASSERT_EQ(recovered->size(), 1u);
  Job fresh = Claim("w2");
  EXPECT_EQ(fresh.id, stale.id);
  EXPECT_EQ(fresh.fencing_token, stale.fencing_token + 1);

  // The old worker wakes up and tries to write: rejected, nothing changes.
  Status st = store_->FinishJob(LeaseOf(stale), JobOutcome::Succeeded("late"));
  EXPECT_EQ(st.code(), StatusCode::kLeaseLost) << st.ToString();
  auto hb = store_->Heartbeat(LeaseOf(stale), 30'000);
  EXPECT_EQ(hb.status().code(), StatusCode::kLeaseLost);
  auto j = store_->GetJob(fresh.id);
  EXPECT_EQ(j->status, JobStatus::kRunning);
  EXPECT_EQ(j->worker_id, "w2");
  EXPECT_EQ(j->result, "");
  // The new holder's write succeeds.
  EXPECT_TRUE(store_->FinishJob(LeaseOf(fresh), JobOutcome::Succeeded("fresh")).ok());
  EXPECT_EQ(store_->GetJob(fresh.id)->result, "fresh");
}

TEST_P(StoreConformance, HeartbeatExtendsLeaseSoSweeperLeavesItAlone) {
  NewTaskWith("ok");
  Job j = Claim();
  clock_.Advance(20'000);
  auto hb = store_->Heartbeat(LeaseOf(j), 30'000);
  ASSERT_TRUE(hb.ok());
  EXPECT_EQ(hb->lease_expires_at, clock_.NowMs() + 30'000);
  clock_.Advance(20'000);  // 40 s after claim, 20 s after heartbeat
  auto recovered = store_->RecoverExpiredLeases(
      [&](const Job&) { return JobOutcome::Failed("should not happen"); });
  ASSERT_TRUE(recovered.ok());
  EXPECT_TRUE(recovered->empty());
  EXPECT_EQ(StatusOf(j.id), JobStatus::kRunning);
}

TEST_P(StoreConformance, FinishRecordsResultTaskStatusAndEvents) {
  auto c = NewTaskWith("ok");
  Job j = Claim();
  ASSERT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::Succeeded("42")).ok());
  auto job = store_->GetJob(j.id);
  EXPECT_EQ(job->status, JobStatus::kSucceeded);
  EXPECT_EQ(job->result, "42");
  EXPECT_GT(job->finished_at, 0);
  auto task = store_->GetTask(c.task.id);
  EXPECT_EQ(task->status, JobStatus::kSucceeded);
  EXPECT_GT(task->completed_at, 0);
  auto events = store_->ListEvents(c.task.id, "", 100);
  ASSERT_TRUE(events.ok());
  std::vector<std::string> path;
  for (const auto& e : *events) {
    if (e.type == "job.status") path.push_back(e.payload["to"].get<std::string>());
  }
  EXPECT_EQ(path, (std::vector<std::string>{"queued", "running", "succeeded"}));
  // Resume after an event id returns only newer events.
  auto tail = store_->ListEvents(c.task.id, (*events)[1].id, 100);
  EXPECT_EQ(tail->size(), events->size() - 2);
}

TEST_P(StoreConformance, FailedJobRecordsErrorOnTask) {
  auto c = NewTaskWith("ok");
  Job j = Claim();
  ASSERT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::Failed("fatal: bad piece")).ok());
  auto task = store_->GetTask(c.task.id);
  EXPECT_EQ(task->status, JobStatus::kFailed);
  EXPECT_EQ(task->error_message, "fatal: bad piece");
  // A terminal job cannot be finished again.
  EXPECT_EQ(store_->FinishJob(LeaseOf(j), JobOutcome::Succeeded("x")).code(),
            StatusCode::kLeaseLost);
}

TEST_P(StoreConformance, ReleasedJobGoesBackToQueueWithoutSpendingAnAttempt) {
  NewTaskWith("ok");
  Job j = Claim();
  ASSERT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::Released()).ok());
  auto job = store_->GetJob(j.id);
  EXPECT_EQ(job->status, JobStatus::kQueued);
  EXPECT_EQ(job->attempt, 0);
  Job again = Claim("w2");
  EXPECT_EQ(again.attempt, 1);
}

TEST_P(StoreConformance, TaskStatsAccumulate) {
  auto c = NewTaskWith("ok");
  auto delta = [](int64_t llm, int64_t tools, int64_t tokens, int64_t compressions) {
    TaskStatsDelta d;
    d.llm_calls = llm;
    d.tool_calls = tools;
    d.tokens = tokens;
    d.compressions = compressions;
    return d;
  };
  ASSERT_TRUE(store_->AddTaskStats(c.task.id, delta(1, 2, 300, 0)).ok());
  ASSERT_TRUE(store_->AddTaskStats(c.task.id, delta(1, 0, 200, 1)).ok());
  auto t = store_->GetTask(c.task.id);
  EXPECT_EQ(t->llm_call_count, 2);
  EXPECT_EQ(t->tool_call_count, 2);
  EXPECT_EQ(t->total_tokens, 500);
  EXPECT_EQ(t->compression_count, 1);
  EXPECT_EQ(store_->AddTaskStats("nope", delta(1, 0, 0, 0)).code(), StatusCode::kNotFound);
}

// Seed 002: the row records what served the task. Provenance fills only the
// columns still empty: the first job's profile stays, a request's explicit
// model is never overwritten, and counters still add up in the same write.
TEST_P(StoreConformance, TaskProvenanceFillsOnlyEmptyColumns) {
  NewTask in;
  in.instruction = "provenance";
  in.owner = "u";
  in.model = "asked-for";
  auto c = store_->CreateTask(in);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  TaskStatsDelta first;
  first.llm_calls = 1;
  first.llm_provider = "fast";
  first.model = "served";
  first.context_length = 8192;
  ASSERT_TRUE(store_->AddTaskStats(c->task.id, first).ok());
  TaskStatsDelta later;
  later.llm_provider = "default";
  later.model = "other";
  later.context_length = 32768;
  ASSERT_TRUE(store_->AddTaskStats(c->task.id, later).ok());
  auto t = store_->GetTask(c->task.id);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->llm_provider, "fast");
  EXPECT_EQ(t->model, "asked-for");
  EXPECT_EQ(t->context_length, 8192);
  EXPECT_EQ(t->llm_call_count, 1);
}

TEST_P(StoreConformance, BadInputIsRejectedWithField) {
  NewTask t;
  auto r = store_->CreateTask(t);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().field(), "instruction");
  NewJob j;
  j.task_id = "missing";
  EXPECT_EQ(store_->EnqueueJob(j).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->GetJob("nope").status().code(), StatusCode::kNotFound);
}

MAESTRO_STORE_CONFORMANCE(StoreConformance);

}  // namespace
}  // namespace maestro
