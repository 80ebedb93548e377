// LeaseSweeper: recovers jobs whose worker stopped heartbeating (crashed,
// killed, partitioned). Every sweep_interval_ms it asks the store for running
// jobs with an expired lease and turns each into `retry` with the policy's
// backoff (or `failed` when out of attempts, `cancelled` when a cancel was
// requested). The fencing token makes the dead worker's late writes fail.
//
// Any number of processes may sweep the same database: each recovery is a
// transaction conditioned on the job still being expired.
//
// Thread safety: Start/Stop from one thread; SweepOnce from any.
#pragma once

#include "core/clock.h"
#include "core/periodic_task.h"
#include "store/store.h"
#include "worker/retry_policy.h"

namespace maestro {

class LeaseSweeper {
 public:
  LeaseSweeper(Store& store, RetryPolicy policy, int64_t interval_ms,
               Clock* clock = SystemClock::Default());
  ~LeaseSweeper();

  void Start();
  void Stop();
  // One pass; returns how many jobs were recovered.
  Result<int> SweepOnce();

 private:
  Store& store_;
  const RetryPolicy policy_;
  const int64_t interval_ms_;
  Clock* clock_;
  PeriodicTask loop_;  // last: stopped before the members it uses go
};

}  // namespace maestro
