// The worker pool against a real SQLite store and a scripted executor.
#include "worker/worker_pool.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "store/sqlite/sqlite_store.h"
#include "support/scripted_executor.h"
#include "support/temp_dir.h"

namespace maestro {
namespace {

using namespace std::chrono_literals;

class WorkerPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StoreOptions so;
    so.default_max_attempts = 3;
    // The store decides retries (its policy, at the finish): short backoff.
    so.retry.base_delay_ms = 20;
    so.retry.max_delay_ms = 100;
    so.retry.jitter = 0;
    so.retry.max_attempts = 3;
    // Short, so a write lock held by "another process" shows up quickly.
    so.lock_wait_ms = 100;
    so.on_job_available = [this] {
      if (pool_) pool_->Notify();
    };
    auto s = SqliteStore::Open(dir_.File("maestro.db"), so);
    ASSERT_TRUE(s.ok());
    store_ = std::move(s).value();
    opts_.threads = 2;
    opts_.worker_id_prefix = "test";
    opts_.jobs.lease_ms = 5'000;
    opts_.jobs.heartbeat_ms = 20;
    opts_.jobs.poll_interval_ms = 10'000;  // long: proves wake-ups are immediate
    opts_.jobs.shutdown_grace_ms = 2'000;
  }
  void TearDown() override {
    executor_.Release();  // a test that failed while a job was held must not hang here
    if (pool_) pool_->Shutdown();
    pool_.reset();
  }

  void StartPool() {
    pool_ = std::make_unique<WorkerPool>(*store_, executor_, opts_);
    pool_->Start();
  }

  Store::CreatedTask Submit(const std::string& piece) {
    NewTask t;
    t.instruction = "run " + piece;
    t.piece = piece;
    auto c = store_->CreateTask(t);
    EXPECT_TRUE(c.ok());
    return *c;
  }

  // Polls the job until `pred` holds or 5 s pass.
  bool WaitFor(const std::string& job_id, std::function<bool(const Job&)> pred,
               std::chrono::milliseconds limit = 5s) {
    auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      auto j = store_->GetJob(job_id);
      if (j.ok() && pred(*j)) return true;
      std::this_thread::sleep_for(5ms);
    }
    return false;
  }
  bool WaitStatus(const std::string& job_id, JobStatus s) {
    return WaitFor(job_id, [s](const Job& j) { return j.status == s; });
  }

  testing::TempDir dir_;
  std::unique_ptr<SqliteStore> store_;
  testing::ScriptedExecutor executor_;
  WorkerPoolOptions opts_;
  std::unique_ptr<WorkerPool> pool_;
};

TEST_F(WorkerPoolTest, NewJobWakesAnIdleWorkerWithoutWaitingForThePoll) {
  StartPool();
  std::this_thread::sleep_for(50ms);  // both workers idle, waiting up to 10 s
  auto start = std::chrono::steady_clock::now();
  auto c = Submit("ok");
  ASSERT_TRUE(WaitStatus(c.job.id, JobStatus::kSucceeded));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_EQ(store_->GetJob(c.job.id)->result, "done " + c.job.id);
}

TEST_F(WorkerPoolTest, TransientFailuresRetryWithBackoffThenSucceed) {
  StartPool();
  auto c = Submit("flaky:2");
  ASSERT_TRUE(WaitStatus(c.job.id, JobStatus::kSucceeded));
  auto j = store_->GetJob(c.job.id);
  EXPECT_EQ(j->attempt, 3);
  EXPECT_EQ(j->result, "recovered");
  auto events = store_->ListEvents(c.task.id, "", 100);
  int retries = 0;
  for (const auto& e : *events) retries += e.type == "job.status" && e.payload["to"] == "retry";
  EXPECT_EQ(retries, 2);
}

TEST_F(WorkerPoolTest, AResultIsRecordedOnceTheOtherProcesssWriteLockIsFreed) {
  StartPool();
  auto c = Submit("hold");
  auto end = std::chrono::steady_clock::now() + 5s;
  while (executor_.holding() == 0 && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(5ms);
  }
  ASSERT_EQ(executor_.holding(), 1);
  // Another process (here a bare connection) holds the write lock past the
  // store's 100 ms wait while the job ends: the first finish fails busy.
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(dir_.File("maestro.db").c_str(), &other), SQLITE_OK);
  // The pool writes too (heartbeats, its claim loop): wait our turn for the lock.
  sqlite3_busy_timeout(other, 10'000);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  executor_.Release();
  std::this_thread::sleep_for(250ms);
  EXPECT_EQ(store_->GetJob(c.job.id)->status, JobStatus::kRunning);
  ASSERT_EQ(sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(other);
  // The worker tried again with the lease it still holds: the job ran once.
  ASSERT_TRUE(WaitStatus(c.job.id, JobStatus::kSucceeded));
  auto j = store_->GetJob(c.job.id);
  EXPECT_EQ(j->attempt, 1);
  EXPECT_EQ(j->result, "held " + c.job.id);
  EXPECT_EQ(executor_.calls(), 1);
}

TEST_F(WorkerPoolTest, AttemptsRunOutAndFatalErrorsFailAtOnce) {
  StartPool();
  auto transient = Submit("fail-transient");
  auto fatal = Submit("fail-fatal");
  ASSERT_TRUE(WaitStatus(transient.job.id, JobStatus::kFailed));
  ASSERT_TRUE(WaitStatus(fatal.job.id, JobStatus::kFailed));
  EXPECT_EQ(store_->GetJob(transient.job.id)->attempt, 3);
  EXPECT_EQ(store_->GetJob(fatal.job.id)->attempt, 1);
  EXPECT_NE(store_->GetJob(fatal.job.id)->error_message.find("fatal"), std::string::npos);
  // The executor hears of each end once (its chance to reflect on it), not
  // of the two transient failures that were retried. It hears after the row
  // says Failed, so the second end is awaited, not read at once.
  auto end = std::chrono::steady_clock::now() + 5s;
  while (executor_.failed_by_error().size() < 2 && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(5ms);
  }
  std::this_thread::sleep_for(50ms);  // a third (wrong) call would show up here
  std::vector<std::string> ended = executor_.failed_by_error();
  std::sort(ended.begin(), ended.end());
  std::vector<std::string> want = {transient.job.id + ": scripted transient failure",
                                   fatal.job.id + ": scripted fatal failure"};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(ended, want);
}

// Issue 46 step 4: the executor reports, the store decides, and the
// executor's post-commit hook hears the committed status.
TEST_F(WorkerPoolTest, TheExecutorHearsTheStatusTheStoreCommittedNotTheOneItReported) {
  opts_.threads = 1;
  StartPool();
  auto park = Submit("park-subtasks-once");  // reported waiting_subtasks, no child
  auto flaky = Submit("flaky:1");            // reported a retryable failure once
  ASSERT_TRUE(WaitStatus(park.job.id, JobStatus::kSucceeded));
  ASSERT_TRUE(WaitStatus(flaky.job.id, JobStatus::kSucceeded));
  auto heard = [&](const std::string& job_id) {
    std::vector<std::string> out;
    for (const std::string& c : executor_.committed()) {
      if (c.rfind(job_id + ": ", 0) == 0) out.push_back(c.substr(job_id.size() + 2));
    }
    return out;
  };
  auto end = std::chrono::steady_clock::now() + 5s;
  while ((heard(park.job.id).size() < 2 || heard(flaky.job.id).size() < 2) &&
         std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(5ms);
  }
  // No open child: the store requeued the park — read back queued, or
  // already running again when this worker's finish claimed it in the same
  // transaction; never the waiting_subtasks the executor reported.
  std::vector<std::string> park_heard = heard(park.job.id);
  ASSERT_EQ(park_heard.size(), 2u);
  EXPECT_TRUE(park_heard[0] == "queued" || park_heard[0] == "running") << park_heard[0];
  EXPECT_EQ(park_heard[1], "succeeded");
  EXPECT_EQ(store_->GetJob(park.job.id)->attempt, 2) << "it ran again after the requeue";
  EXPECT_EQ(heard(flaky.job.id), (std::vector<std::string>{"retry", "succeeded"}))
      << "attempts left: the store retried the failure";
  auto stats = pool_->stats();
  EXPECT_EQ(stats.retried, 1);
  EXPECT_EQ(stats.failed, 0);
  EXPECT_EQ(stats.succeeded, 2);
}

TEST_F(WorkerPoolTest, ParkedJobsHoldNoThread) {
  opts_.threads = 1;
  StartPool();
  std::vector<std::string> parked;
  for (int i = 0; i < 3; ++i) parked.push_back(Submit("park-human").job.id);
  auto after = Submit("ok");
  ASSERT_TRUE(WaitStatus(after.job.id, JobStatus::kSucceeded));
  for (const auto& id : parked) EXPECT_EQ(store_->GetJob(id)->status, JobStatus::kWaitingHuman);
  // The row says Succeeded a moment before the worker thread lets go of the
  // job, so the count is awaited, not read once.
  auto end = std::chrono::steady_clock::now() + 5s;
  while (pool_->running_jobs() != 0 && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(pool_->running_jobs(), 0);
  // An answer resumes one on the same single thread.
  ASSERT_TRUE(store_->ResumeParkedJob(parked[0]).ok());
  ASSERT_TRUE(WaitFor(parked[0], [](const Job& j) { return j.attempt == 2; }));
}

TEST_F(WorkerPoolTest, CancelRequestReachesARunningJobThroughTheHeartbeat) {
  StartPool();
  auto c = Submit("block");
  ASSERT_TRUE(WaitStatus(c.job.id, JobStatus::kRunning));
  auto report = store_->RequestCancel(c.job.id);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->flagged, 1);
  ASSERT_TRUE(WaitStatus(c.job.id, JobStatus::kCancelled));
  EXPECT_EQ(store_->GetTask(c.task.id)->status, JobStatus::kCancelled);
}

TEST_F(WorkerPoolTest, ShutdownReleasesUnfinishedJobsForAnotherWorker) {
  opts_.jobs.shutdown_grace_ms = 100;
  StartPool();
  auto c = Submit("block");
  ASSERT_TRUE(WaitStatus(c.job.id, JobStatus::kRunning));
  auto t0 = std::chrono::steady_clock::now();
  pool_->Shutdown();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
  auto j = store_->GetJob(c.job.id);
  EXPECT_EQ(j->status, JobStatus::kQueued);
  EXPECT_EQ(j->attempt, 0) << "a released job keeps its attempts";
  EXPECT_EQ(pool_->stats().released, 1);
  // A fresh pool picks it up.
  pool_.reset();
  StartPool();
  ASSERT_TRUE(WaitStatus(c.job.id, JobStatus::kRunning));
  ASSERT_TRUE(store_->RequestCancel(c.job.id).ok());
  ASSERT_TRUE(WaitStatus(c.job.id, JobStatus::kCancelled));
}

TEST_F(WorkerPoolTest, ShutdownLetsRunningJobsFinishWithinGrace) {
  StartPool();
  for (int i = 0; i < 20; ++i) Submit("ok");
  pool_->Shutdown();
  EXPECT_EQ(pool_->running_jobs(), 0);
  auto stats = pool_->stats();
  EXPECT_EQ(stats.released, 0);
  EXPECT_EQ(stats.claimed, stats.succeeded);
}

}  // namespace
}  // namespace maestro
