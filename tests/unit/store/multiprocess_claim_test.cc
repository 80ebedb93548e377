// Claim exclusivity across processes: 8 `store_claimer` processes, each with
// its own store on one database, drain one queue. Every job is claimed
// exactly once, succeeds on its first attempt, and no two jobs of one task
// ran at once — on SQLite (file locking) and on PostgreSQL (SKIP LOCKED and
// the one-running-job-per-task index).
#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "support/process.h"
#include "support/store_fixture.h"

namespace maestro {
namespace {

using testing::StoreConformance;

TEST_P(StoreConformance, EightClaimerProcessesClaimEachJobExactlyOnce) {
  constexpr int kTasks = 40, kJobsPerTask = 15, kClaimers = 8;
  std::vector<std::string> tasks;
  for (int i = 0; i < kTasks; ++i) tasks.push_back(NewTaskWith("ok").task.id);
  for (int i = 0; i < kTasks * (kJobsPerTask - 1); ++i) {
    NewJob j;
    j.task_id = tasks[i % kTasks];
    j.piece = "ok";
    ASSERT_TRUE(store_->EnqueueJob(j).ok());
  }
  const std::string target =
      backend_ == testing::StoreBackend::kPostgres ? pg_url_ : dir_.File("maestro.db");
  const std::string start = dir_.File("go");
  std::vector<std::unique_ptr<testing::Process>> claimers;
  for (int i = 0; i < kClaimers; ++i) {
    const std::string name = "p" + std::to_string(i);
    claimers.push_back(std::make_unique<testing::Process>(
        std::vector<std::string>{STORE_CLAIMER_BIN, target, name, start},
        std::map<std::string, std::string>{}, dir_.File(name + ".out"), dir_.File(name + ".err")));
    ASSERT_TRUE(claimers.back()->started());
  }
  std::ofstream(start) << "go";
  std::multiset<std::string> claimed;
  for (auto& c : claimers) {
    auto code = c->Wait(std::chrono::seconds(240));
    ASSERT_TRUE(code.has_value()) << "a claimer did not finish";
    EXPECT_EQ(*code, 0) << c->Stderr();
    std::istringstream lines(c->Stdout());
    for (std::string id; std::getline(lines, id);) claimed.insert(id);
  }
  EXPECT_EQ(claimed.size(), static_cast<size_t>(kTasks * kJobsPerTask));
  std::set<std::string> unique(claimed.begin(), claimed.end());
  EXPECT_EQ(unique.size(), claimed.size()) << "a job was claimed twice";

  for (const auto& task : tasks) {
    auto jobs = store_->ListJobs(task);
    ASSERT_TRUE(jobs.ok());
    for (const Job& j : *jobs) {
      EXPECT_EQ(j.status, JobStatus::kSucceeded) << j.id;
      EXPECT_EQ(j.attempt, 1) << j.id;
      EXPECT_EQ(j.fencing_token, 1) << j.id;
    }
    // One running job per task: replay the task's job.status events; the
    // count of running jobs never exceeds one.
    auto events = store_->ListEvents(task, "", 100'000);
    ASSERT_TRUE(events.ok());
    int running = 0, most = 0;
    for (const Event& e : *events) {
      if (e.type != "job.status") continue;
      if (e.payload.value("to", "") == "running") ++running;
      if (e.payload.value("from", "") == "running") --running;
      most = std::max(most, running);
    }
    std::string trace;
    for (const Event& e : *events) {
      if (e.type == "job.status") {
        trace += e.id + " " + e.job_id + " " + e.payload.value("from", "") + "->" +
                 e.payload.value("to", "") + "\n";
      }
    }
    EXPECT_EQ(most, 1) << "task " << task << " ran two jobs at once:\n" << trace;
    EXPECT_EQ(running, 0);
  }
}

}  // namespace
}  // namespace maestro
