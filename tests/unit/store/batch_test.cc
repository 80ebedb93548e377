// Batched enqueue, claim and finish (Store::EnqueueJobs, ClaimJobs,
// FinishJobs): the same rules as EnqueueJob, ClaimNextJob and FinishJob,
// several jobs per transaction.
#include <mutex>
#include <set>
#include <thread>

#include "support/store_fixture.h"

namespace maestro {
namespace {

using testing::StoreConformance;

// job.status events of `job_id` entering `to` (from `from`, when given).
int JobStatusEvents(Store& store, const std::string& task_id, const std::string& job_id,
                    const std::string& to, const std::string& from = "") {
  auto events = store.ListEvents(task_id, "", 1000);
  EXPECT_TRUE(events.ok());
  int n = 0;
  for (const auto& e : *events) {
    if (e.type == "job.status" && e.job_id == job_id && e.payload["to"] == to &&
        (from.empty() || e.payload["from"] == from)) {
      ++n;
    }
  }
  return n;
}

std::vector<Job> ClaimBatch(Store& store, const std::string& worker, int max) {
  ClaimFilter f;
  f.worker_id = worker;
  auto c = store.ClaimJobs(f, 30'000, max);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : std::vector<Job>{};
}

TEST_P(StoreConformance, BatchEnqueueMakesEachJobAsEnqueueJobWould) {
  auto a = NewTaskWith("ok");
  auto b = NewTaskWith("ok");
  ASSERT_TRUE(store_->FinishJob(LeaseOf(Claim()), JobOutcome::Succeeded("")).ok());
  ASSERT_TRUE(store_->FinishJob(LeaseOf(Claim()), JobOutcome::Succeeded("")).ok());
  clock_.Advance(5);
  std::vector<NewJob> batch(3);
  batch[0].task_id = a.task.id;
  batch[0].piece = "ok";
  batch[1].task_id = b.task.id;
  batch[1].piece = "ok";
  batch[1].priority = 7;
  batch[2].task_id = a.task.id;
  batch[2].piece = "ok";
  auto got = store_->EnqueueJobs(batch);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 3u);
  for (size_t i = 0; i < got->size(); ++i) {
    const Job& j = (*got)[i];
    EXPECT_EQ(j.task_id, batch[i].task_id);
    EXPECT_EQ(j.status, JobStatus::kQueued);
    EXPECT_EQ(j.created_at, clock_.NowMs());
    EXPECT_EQ(JobStatusEvents(*store_, j.task_id, j.id, "queued"), 1) << j.id;
    if (i > 0) {
      EXPECT_GT(j.seq, (*got)[i - 1].seq);
    }
  }
  EXPECT_EQ((*got)[1].priority, 7);
  // The mirror: each task shows its newest job's status.
  for (const auto& id : {a.task.id, b.task.id}) {
    auto t = store_->GetTask(id);
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(t->status, JobStatus::kQueued);
  }
  // Claimed as any queued jobs: b's (higher priority) first, then a's
  // oldest; a's second waits for its first.
  std::vector<Job> claimed = ClaimBatch(*store_, "w1", 10);
  ASSERT_EQ(claimed.size(), 2u);
  EXPECT_EQ(claimed[0].id, (*got)[1].id);
  EXPECT_EQ(claimed[1].id, (*got)[0].id);
}

TEST_P(StoreConformance, BatchEnqueueIsAllOrNothing) {
  auto a = NewTaskWith("ok");
  auto before = store_->ListEvents(a.task.id, "", 1000);
  ASSERT_TRUE(before.ok());
  std::vector<NewJob> batch(2);
  batch[0].task_id = a.task.id;
  batch[0].piece = "ok";
  batch[1].task_id = "00000000-0000-4000-8000-000000000000";  // no such task
  batch[1].piece = "ok";
  auto got = store_->EnqueueJobs(batch);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kNotFound) << got.status().ToString();
  auto jobs = store_->ListJobs(a.task.id);
  ASSERT_TRUE(jobs.ok());
  EXPECT_EQ(jobs->size(), 1u) << "the valid job of a failed batch was kept";
  auto after = store_->ListEvents(a.task.id, "", 1000);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->size(), before->size());
  batch[1].task_id = "";
  got = store_->EnqueueJobs(batch);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
  batch[1].task_id = a.task.id;
  batch[1].adopt_children_of = batch[0].task_id;
  got = store_->EnqueueJobs(batch);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
  jobs = store_->ListJobs(a.task.id);
  ASSERT_TRUE(jobs.ok());
  EXPECT_EQ(jobs->size(), 1u);
  auto none = store_->EnqueueJobs({});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST_P(StoreConformance, BatchClaimTakesOldestFirstAndOneJobPerTask) {
  auto a = NewTaskWith("ok");
  clock_.Advance(1);
  auto b = NewTaskWith("ok");
  clock_.Advance(1);
  NewJob second;  // a second job of task a: must wait for the first
  second.task_id = a.task.id;
  second.piece = "ok";
  auto a2 = store_->EnqueueJob(second);
  ASSERT_TRUE(a2.ok());
  clock_.Advance(1);
  auto c = NewTaskWith("ok");

  std::vector<Job> got = ClaimBatch(*store_, "w1", 10);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].id, a.job.id);
  EXPECT_EQ(got[1].id, b.job.id);
  EXPECT_EQ(got[2].id, c.job.id);
  for (const Job& j : got) {
    EXPECT_EQ(j.status, JobStatus::kRunning);
    EXPECT_EQ(j.worker_id, "w1");
    EXPECT_EQ(j.fencing_token, 1);
    EXPECT_EQ(j.attempt, 1);
    EXPECT_EQ(j.lease_expires_at, clock_.NowMs() + 30'000);
    EXPECT_EQ(StatusOf(j.id), JobStatus::kRunning);
    EXPECT_EQ(JobStatusEvents(*store_, j.task_id, j.id, "running"), 1);
  }
  // The task mirrors its newest job: a's is the queued second one.
  EXPECT_EQ(store_->GetTask(b.task.id)->status, JobStatus::kRunning);
  EXPECT_EQ(store_->GetTask(c.task.id)->status, JobStatus::kRunning);
  EXPECT_EQ(store_->GetTask(a.task.id)->status, JobStatus::kQueued);
  EXPECT_EQ(StatusOf(a2->id), JobStatus::kQueued);
  EXPECT_TRUE(ClaimBatch(*store_, "w2", 10).empty()) << "task a already runs a job";

  // Once a's first job ends, its second becomes claimable.
  auto done = store_->FinishJobs({{LeaseOf(got[0]), JobOutcome::Succeeded("")}});
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  std::vector<Job> next = ClaimBatch(*store_, "w2", 10);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].id, a2->id);
}

TEST_P(StoreConformance, BatchClaimPutsDueRetriesFirstAndStopsAtMax) {
  auto first = NewTaskWith("ok");
  Job j = Claim();
  ASSERT_TRUE(
      store_->FinishJob(LeaseOf(j), JobOutcome::Retry("boom", clock_.NowMs() + 5'000)).ok());
  clock_.Advance(1);
  auto q1 = NewTaskWith("ok");
  clock_.Advance(1);
  auto q2 = NewTaskWith("ok");
  clock_.Advance(1);
  auto q3 = NewTaskWith("ok");

  // The retry is not due yet: queued jobs only, and no more than max.
  std::vector<Job> got = ClaimBatch(*store_, "w1", 2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].id, q1.job.id);
  EXPECT_EQ(got[1].id, q2.job.id);

  clock_.Advance(5'000);
  got = ClaimBatch(*store_, "w1", 5);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].id, first.job.id);
  EXPECT_EQ(got[0].attempt, 2);
  EXPECT_EQ(got[0].fencing_token, 2);
  EXPECT_EQ(JobStatusEvents(*store_, first.task.id, first.job.id, "running"), 2);
  EXPECT_EQ(got[1].id, q3.job.id);

  EXPECT_TRUE(ClaimBatch(*store_, "w1", 5).empty());
  EXPECT_TRUE(ClaimBatch(*store_, "w1", 0).empty());
}

TEST_P(StoreConformance, BatchFinishFencesEachItemAlone) {
  std::vector<Store::CreatedTask> tasks;
  for (int i = 0; i < 3; ++i) tasks.push_back(NewTaskWith("ok"));
  std::vector<Job> got = ClaimBatch(*store_, "w1", 3);
  ASSERT_EQ(got.size(), 3u);

  Lease stale = LeaseOf(got[1]);
  stale.fencing_token += 1;  // as if the job had been re-claimed since
  auto res = store_->FinishJobs({{LeaseOf(got[0]), JobOutcome::Succeeded("r0")},
                                 {stale, JobOutcome::Succeeded("r1")},
                                 {Lease{"no-such-job", "w1", 1}, JobOutcome::Succeeded("")},
                                 {LeaseOf(got[2]), JobOutcome::Failed("bad")}});
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  ASSERT_EQ(res->size(), 4u);
  EXPECT_TRUE((*res)[0].ok()) << (*res)[0].ToString();
  EXPECT_EQ((*res)[1].code(), StatusCode::kLeaseLost);
  EXPECT_EQ((*res)[2].code(), StatusCode::kNotFound);
  EXPECT_TRUE((*res)[3].ok()) << (*res)[3].ToString();

  EXPECT_EQ(StatusOf(got[0].id), JobStatus::kSucceeded);
  EXPECT_EQ(store_->GetJob(got[0].id)->result, "r0");
  EXPECT_EQ(store_->GetTask(got[0].task_id)->status, JobStatus::kSucceeded);
  // The fenced-off item changed nothing: still running, no event.
  EXPECT_EQ(StatusOf(got[1].id), JobStatus::kRunning);
  EXPECT_EQ(store_->GetTask(got[1].task_id)->status, JobStatus::kRunning);
  EXPECT_EQ(JobStatusEvents(*store_, got[1].task_id, got[1].id, "succeeded"), 0);
  EXPECT_EQ(StatusOf(got[2].id), JobStatus::kFailed);
  EXPECT_EQ(store_->GetTask(got[2].task_id)->error_message, "bad");
  EXPECT_EQ(JobStatusEvents(*store_, got[2].task_id, got[2].id, "failed"), 1);

  // The lease holder can still finish it; a second finish of a done job is fenced.
  res = store_->FinishJobs(
      {{LeaseOf(got[1]), JobOutcome::Succeeded("")}, {LeaseOf(got[0]), JobOutcome::Succeeded("")}});
  ASSERT_TRUE(res.ok());
  EXPECT_TRUE((*res)[0].ok());
  EXPECT_EQ((*res)[1].code(), StatusCode::kLeaseLost);
  EXPECT_EQ(StatusOf(got[1].id), JobStatus::kSucceeded);
  EXPECT_TRUE(store_->FinishJobs({}).ok());
}

TEST_P(StoreConformance, BatchFinishAppliesAJobNamedTwiceOnce) {
  NewTaskWith("ok");
  std::vector<Job> got = ClaimBatch(*store_, "w1", 1);
  ASSERT_EQ(got.size(), 1u);
  auto res = store_->FinishJobs({{LeaseOf(got[0]), JobOutcome::Succeeded("first")},
                                 {LeaseOf(got[0]), JobOutcome::Failed("second")}});
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_TRUE((*res)[0].ok());
  EXPECT_EQ((*res)[1].code(), StatusCode::kLeaseLost);
  EXPECT_EQ(store_->GetJob(got[0].id)->result, "first");
  EXPECT_EQ(JobStatusEvents(*store_, got[0].task_id, got[0].id, "succeeded"), 1);
  EXPECT_EQ(JobStatusEvents(*store_, got[0].task_id, got[0].id, "failed"), 0);
}

TEST_P(StoreConformance, BatchFinishHandsOnTheUndeliveredCommentsOfEachJob) {
  std::vector<Store::CreatedTask> tasks;
  for (int i = 0; i < 2; ++i) tasks.push_back(NewTaskWith("ok"));
  std::vector<Job> got = ClaimBatch(*store_, "w1", 2);
  ASSERT_EQ(got.size(), 2u);
  // A comment arrives on the first task while its job runs, and is never
  // delivered into a prompt.
  auto posted = store_->PostComment(got[0].task_id, "alice", "one more thing", {});
  ASSERT_TRUE(posted.ok()) << posted.status().ToString();
  auto res = store_->FinishJobs({{LeaseOf(got[0]), JobOutcome::Succeeded("a")},
                                 {LeaseOf(got[1]), JobOutcome::Succeeded("b")}});
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_TRUE((*res)[0].ok());
  EXPECT_TRUE((*res)[1].ok());
  // The first task carries on in a follow-up job that has the comment; the
  // second ends.
  auto jobs = store_->ListJobs(got[0].task_id);
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ(jobs->back().status, JobStatus::kQueued);
  auto pending = store_->ListUndeliveredComments(jobs->back().id);
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ(pending->front().body, "one more thing");
  EXPECT_EQ(store_->GetTask(got[0].task_id)->status, JobStatus::kQueued);
  EXPECT_EQ(store_->GetTask(got[1].task_id)->status, JobStatus::kSucceeded);
  EXPECT_EQ(store_->ListJobs(got[1].task_id)->size(), 1u);
}

TEST_P(StoreConformance, BatchFinishOfTheLastChildrenWakesTheParentOnce) {
  auto p = NewTaskWith("park-subtasks");
  Job parent = Claim("parent-worker");
  for (int i = 0; i < 3; ++i) {
    NewTask t;
    t.instruction = "child " + std::to_string(i);
    t.piece = "ok";
    t.parent_job_id = parent.id;
    ASSERT_TRUE(store_->CreateTask(t).ok());
  }
  ASSERT_TRUE(store_->FinishJob(LeaseOf(parent), JobOutcome::WaitingSubtasks("implement")).ok());
  std::vector<Job> children = ClaimBatch(*store_, "w1", 10);
  ASSERT_EQ(children.size(), 3u);
  int before = wakeups_;
  auto res = store_->FinishJobs({{LeaseOf(children[0]), JobOutcome::Succeeded("")},
                                 {LeaseOf(children[1]), JobOutcome::Failed("x")},
                                 {LeaseOf(children[2]), JobOutcome::Cancelled()}});
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  for (const Status& s : *res) EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(StatusOf(parent.id), JobStatus::kQueued);
  EXPECT_EQ(JobStatusEvents(*store_, p.task.id, parent.id, "queued", "waiting_subtasks"), 1);
  EXPECT_GT(wakeups_.load(), before) << "the requeued parent is announced";
}

TEST_P(StoreConformance, ConcurrentBatchClaimersTakeEveryJobOnceAndOnePerTask) {
  const int kJobs = backend_ == testing::StoreBackend::kPostgres ? 600 : 2'000;
  StoreOptions o;
  o.clock = &clock_;
  auto other = OpenAnother(o);  // another process's store on the same database
  ASSERT_TRUE(other.ok());
  std::vector<std::string> tasks;
  for (int i = 0; i < 40; ++i) tasks.push_back(NewTaskWith("ok").task.id);
  for (int i = 0; i < kJobs - 40; ++i) {
    NewJob j;
    j.task_id = tasks[i % tasks.size()];
    j.piece = "ok";
    ASSERT_TRUE(store_->EnqueueJob(j).ok());
  }

  std::mutex mu;
  std::multiset<std::string> claimed;
  std::atomic<int> errors{0};
  std::atomic<int> same_task_in_batch{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Store& s = (t % 2 == 0) ? static_cast<Store&>(*store_) : static_cast<Store&>(**other);
      ClaimFilter f;
      f.worker_id = "w" + std::to_string(t);
      for (int idle = 0; idle < 50;) {
        auto c = s.ClaimJobs(f, 60'000, 8);
        if (!c.ok()) {
          ++errors;
          continue;
        }
        if (c->empty()) {
          ++idle;  // other claimers may hold the tasks for a moment
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
          continue;
        }
        idle = 0;
        std::set<std::string> batch_tasks;
        std::vector<std::pair<Lease, JobOutcome>> done;
        for (const Job& j : *c) {
          if (!batch_tasks.insert(j.task_id).second) ++same_task_in_batch;
          done.emplace_back(LeaseOf(j), JobOutcome::Succeeded(""));
        }
        {
          std::lock_guard<std::mutex> lock(mu);
          for (const Job& j : *c) claimed.insert(j.id);
        }
        auto res = s.FinishJobs(done);
        if (!res.ok()) {
          ++errors;
          continue;
        }
        for (const Status& st : *res) {
          if (!st.ok()) ++errors;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(same_task_in_batch.load(), 0);
  EXPECT_EQ(claimed.size(), static_cast<size_t>(kJobs));
  EXPECT_EQ(std::set<std::string>(claimed.begin(), claimed.end()).size(), claimed.size())
      << "a job was claimed twice";
  auto counts = store_->CountJobsByStatus();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ((*counts)["succeeded"], kJobs);
}

}  // namespace
}  // namespace maestro
