#include "worker/lease_sweeper.h"

#include <spdlog/spdlog.h>

namespace maestro {

LeaseSweeper::LeaseSweeper(Store& store, RetryPolicy policy, int64_t interval_ms, Clock* clock)
    : store_(store), policy_(policy), interval_ms_(interval_ms), clock_(clock) {}

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
    return policy_.OnFailure(job, Unavailable("worker " + job.worker_id + " stopped heartbeating"),
                             clock_->NowMs());
  });
  if (!recovered.ok()) return recovered.status();
  for (const Job& job : *recovered) {
    spdlog::warn("sweeper: job={} lease expired (worker {}) -> {}", job.id, job.worker_id,
                 JobStatusName(job.status));
  }
  return static_cast<int>(recovered->size());
}

}  // namespace maestro
