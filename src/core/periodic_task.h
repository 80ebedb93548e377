// PeriodicTask: one background thread that runs a function every interval
// until stopped — the loop shared by the LeaseSweeper (recover expired
// leases) and the ContextJanitor (remove old context directories).
//
// Why its own type: each of them needs the same careful parts — a stop flag
// and condition variable so Stop() wakes a sleeping loop at once instead of
// after a whole interval, the function run WITHOUT the lock, and an
// idempotent Start/Stop — and getting them right once is cheaper than thrice.
//
// Thread safety: Start/Stop from one owning thread; the function runs on the
// task's thread and must not call Stop().
#pragma once

#include <chrono>
#include <functional>
#include <thread>

#include "core/mutex.h"

namespace maestro {

class PeriodicTask {
 public:
  enum class FirstRun { kImmediately, kAfterInterval };

  PeriodicTask() = default;
  ~PeriodicTask() { Stop(); }
  PeriodicTask(const PeriodicTask&) = delete;
  PeriodicTask& operator=(const PeriodicTask&) = delete;

  // Starts the thread; a second Start while running does nothing.
  void Start(std::chrono::milliseconds interval, FirstRun first, std::function<void()> fn);
  // Wakes the thread and joins it; returns once `fn` is not running.
  void Stop();

 private:
  void Loop(std::chrono::milliseconds interval, FirstRun first);

  Mutex mu_;
  CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  std::function<void()> fn_;  // set before the thread starts
  std::thread thread_;
};

}  // namespace maestro
