#include "core/periodic_task.h"

#include <utility>

namespace maestro {

void PeriodicTask::Start(std::chrono::milliseconds interval, FirstRun first,
                         std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  fn_ = std::move(fn);
  thread_ = std::thread([this, interval, first] { Loop(interval, first); });
}

void PeriodicTask::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PeriodicTask::Loop(std::chrono::milliseconds interval, FirstRun first) {
  std::unique_lock<std::mutex> lock(mu_);
  if (first == FirstRun::kAfterInterval) cv_.wait_for(lock, interval, [&] { return stop_; });
  while (!stop_) {
    lock.unlock();
    fn_();
    lock.lock();
    cv_.wait_for(lock, interval, [&] { return stop_; });
  }
}

}  // namespace maestro
