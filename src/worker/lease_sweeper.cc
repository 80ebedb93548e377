#include "worker/lease_sweeper.h"

#include <spdlog/spdlog.h>

namespace maestro {

LeaseSweeper::LeaseSweeper(Store& store, RetryPolicy policy, int64_t interval_ms, Clock* clock)
    : store_(store), policy_(policy), interval_ms_(interval_ms), clock_(clock) {}

LeaseSweeper::~LeaseSweeper() { Stop(); }

void LeaseSweeper::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { Loop(); });
}

void LeaseSweeper::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

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

void LeaseSweeper::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::milliseconds(interval_ms_), [&] { return stop_; });
    if (stop_) return;
    lock.unlock();
    auto n = SweepOnce();
    if (!n.ok()) spdlog::warn("sweeper: {}", n.status().ToString());
    lock.lock();
  }
}

}  // namespace maestro
