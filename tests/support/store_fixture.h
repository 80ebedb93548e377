// Test fixture: a real SqliteStore on a temp file, driven by a FakeClock.
#pragma once

#include <atomic>
#include <memory>

#include <gtest/gtest.h>

#include "core/clock.h"
#include "store/sqlite/sqlite_store.h"
#include "support/temp_dir.h"

namespace maestro::testing {

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }

  void Reopen() {
    store_.reset();
    StoreOptions o;
    o.clock = &clock_;
    o.default_max_attempts = 3;
    o.on_job_available = [this] { ++wakeups_; };
    auto s = SqliteStore::Open(dir_.File("maestro.db"), o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
  }

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

  JobStatus StatusOf(const std::string& job_id) {
    auto j = store_->GetJob(job_id);
    EXPECT_TRUE(j.ok());
    return j.ok() ? j->status : JobStatus::kFailed;
  }

  TempDir dir_;
  FakeClock clock_;
  std::atomic<int> wakeups_{0};
  std::unique_ptr<SqliteStore> store_;
};

}  // namespace maestro::testing
