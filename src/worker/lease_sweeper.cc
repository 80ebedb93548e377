#include "worker/lease_sweeper.h"

#include <spdlog/spdlog.h>

#include "store/retry_policy.h"

namespace maestro {

LeaseSweeper::LeaseSweeper(JobQueue& store, int64_t interval_ms, BrowserCallRecords* pins)
    : store_(store), pins_(pins), interval_ms_(interval_ms) {}

LeaseSweeper::~LeaseSweeper() { Stop(); }

void LeaseSweeper::Start() {
  loop_.Start(std::chrono::milliseconds(interval_ms_), PeriodicTask::FirstRun::kAfterInterval,
              [this] {
                auto n = SweepOnce();
                if (!n.ok()) spdlog::warn("sweeper: {}", n.status().ToString());
              });
}

void LeaseSweeper::Stop() { loop_.Stop(); }

Result<int> LeaseSweeper::SweepOnce() {
  auto recovered = store_.RecoverExpiredLeases([&](const Job& job) {
    // A crashed worker is transient: the store retries or fails the job.
    return RetryPolicy::FailureOf(Unavailable("worker " + job.worker_id + " stopped heartbeating"));
  });
  if (!recovered.ok()) return recovered.status();
  for (const Job& job : *recovered) {
    spdlog::warn("sweeper: job={} lease expired (worker {}) -> {}", job.id, job.worker_id,
                 JobStatusName(job.status));
  }
  if (pins_) {
    auto unpinned = pins_->UnpinOrphanedBrowserLogins(kPinGoneMs);
    if (!unpinned.ok()) return unpinned.status();
    if (*unpinned > 0) {
      spdlog::warn("sweeper: {} browser login(s) pinned to a gone worker unpinned", *unpinned);
    }
  }
  return static_cast<int>(recovered->size());
}

}  // namespace maestro
