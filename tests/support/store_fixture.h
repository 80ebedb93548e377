// Test fixtures over a real store driven by a FakeClock.
//
// StoreTest: a SqliteStore on a temp file (what most tests need).
// StoreConformance: the same tests run once per backend — SQLite and a real
// PostgreSQL 15 started by the suite (support/pg_server.h) — so the Store
// contract is proven on both (tests/unit/store/). When PostgreSQL cannot
// start, its half is skipped with the reason; with TEST_REQUIRE_POSTGRES=1
// (CI) it fails instead.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "store/sql/sql_store.h"
#include "support/temp_dir.h"

namespace maestro::testing {

enum class StoreBackend { kSqlite, kPostgres };

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }

  // Closes and reopens the store on the same database (a restart).
  void Reopen();
  // A second, independent store on the same database: its own connections
  // and write lock, standing in for another process.
  Result<std::unique_ptr<SqlStore>> OpenAnother(StoreOptions o);

  // A task with one queued job running `piece`.
  Store::CreatedTask NewTaskWith(const std::string& piece = "ok") {
    NewTask t;
    t.instruction = "do " + piece;
    t.piece = piece;
    auto c = store_->CreateTask(t);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : Store::CreatedTask{};
  }

  Job Claim(const std::string& worker = "w1") {
    ClaimFilter f;
    f.worker_id = worker;
    auto c = store_->ClaimNextJob(f, 30'000);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_TRUE(c.ok() && c->has_value()) << "nothing to claim";
    return c.ok() && c->has_value() ? **c : Job{};
  }

  bool NothingToClaim(const std::string& worker = "w1") {
    ClaimFilter f;
    f.worker_id = worker;
    auto c = store_->ClaimNextJob(f, 30'000);
    return c.ok() && !c->has_value();
  }

  static Lease LeaseOf(const Job& j) { return Lease{j.id, j.worker_id, j.fencing_token}; }

  // A claimed (running) parent job and `n` queued subtasks of their own
  // tasks pointing at it.
  std::pair<Job, std::vector<Job>> ParentWithChildren(int n);
  // How many times a job of `task_id` went from waiting_subtasks to queued
  // (fan-in wake-ups).
  int QueuedEventsFromWaiting(const std::string& task_id);

  JobStatus StatusOf(const std::string& job_id) {
    auto j = store_->GetJob(job_id);
    EXPECT_TRUE(j.ok());
    return j.ok() ? j->status : JobStatus::kFailed;
  }

  StoreBackend backend_ = StoreBackend::kSqlite;
  std::string pg_url_;  // the test's own PostgreSQL database
  TempDir dir_;
  FakeClock clock_;
  std::atomic<int> wakeups_{0};
  std::unique_ptr<SqlStore> store_;
};

class StoreConformance : public StoreTest, public ::testing::WithParamInterface<StoreBackend> {
 protected:
  void SetUp() override;
};

std::string BackendName(const ::testing::TestParamInfo<StoreBackend>& info);

// Instantiates a StoreConformance-derived suite on both backends.
#define MAESTRO_STORE_CONFORMANCE(Suite)                                                   \
  INSTANTIATE_TEST_SUITE_P(Backends, Suite,                                                \
                           ::testing::Values(::maestro::testing::StoreBackend::kSqlite,    \
                                             ::maestro::testing::StoreBackend::kPostgres), \
                           ::maestro::testing::BackendName)

}  // namespace maestro::testing
