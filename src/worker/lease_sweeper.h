// LeaseSweeper: recovers jobs whose worker stopped heartbeating (crashed,
// killed, partitioned). Every sweep_interval_ms it asks the store for running
// jobs with an expired lease and reports each as a retryable failure; the
// store's policy decides it as it decides every job's end — `retry` with the
// backoff of StoreOptions::retry, `failed` when out of attempts, `cancelled`
// when a cancel was requested. The fencing token makes the dead worker's
// late writes fail.
//
// Any number of processes may sweep the same database: each recovery is a
// transaction conditioned on the job still being expired.
//
// With `pins`, each sweep also unpins the browser logins pinned to a holder
// that is gone (BrowserCallRecords::UnpinOrphanedBrowserLogins): a job handed
// over through the live view is never left queued for a dead worker.
//
// Thread safety: Start/Stop from one thread; SweepOnce from any.
#pragma once

#include "core/periodic_task.h"
#include "store/store.h"

namespace maestro {

class LeaseSweeper {
 public:
  // A pinned login's holder is gone after this long without a refresh.
  static constexpr int64_t kPinGoneMs = 30'000;

  LeaseSweeper(JobQueue& store, int64_t interval_ms, BrowserCallRecords* pins = nullptr);
  ~LeaseSweeper();

  void Start();
  void Stop();
  // One pass; returns how many jobs were recovered.
  Result<int> SweepOnce();

 private:
  JobQueue& store_;
  BrowserCallRecords* const pins_;
  const int64_t interval_ms_;
  PeriodicTask loop_;  // last: stopped before the members it uses go
};

}  // namespace maestro
