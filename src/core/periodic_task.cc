#include "core/periodic_task.h"

#include <utility>

namespace maestro {

void PeriodicTask::Start(std::chrono::milliseconds interval, FirstRun first,
                         std::function<void()> fn) {
  MutexLock lock(&mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  fn_ = std::move(fn);
  thread_ = std::thread([this, interval, first] { Loop(interval, first); });
}

void PeriodicTask::Stop() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

void PeriodicTask::Loop(std::chrono::milliseconds interval, FirstRun first) {
  MutexLock lock(&mu_);
  if (first == FirstRun::kAfterInterval)
    cv_.WaitFor(&mu_, interval, [&]() REQUIRES(mu_) { return stop_; });
  while (!stop_) {
    lock.Unlock();
    fn_();
    lock.Lock();
    cv_.WaitFor(&mu_, interval, [&]() REQUIRES(mu_) { return stop_; });
  }
}

}  // namespace maestro
