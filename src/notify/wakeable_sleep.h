// WakeableSleep: the wait of a dispatcher thread that follows the events
// table (WebhookDispatcher, PushDispatcher): sleep up to a poll interval,
// waking early on Stop() and, when asked, on Notify() (new events were
// committed; the Notifier calls it).
//
// A Notify() is not remembered beyond the generation it bumps: one that
// lands between the caller's read of the table and the start of its Sleep is
// missed, and the poll interval bounds the delay (as before the helper).
//
// Thread safety: all methods may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>

#include "core/mutex.h"

namespace maestro::notify {

class WakeableSleep {
 public:
  // Wakes sleepers that asked for it (new events were committed).
  void Notify() EXCLUDES(mu_) {
    {
      MutexLock lock(&mu_);
      ++generation_;
    }
    cv_.SignalAll();
  }
  // Wakes every sleeper for good; later sleeps return false at once.
  void Stop() EXCLUDES(mu_) {
    {
      MutexLock lock(&mu_);
      stopped_ = true;
    }
    cv_.SignalAll();
  }
  bool stopped() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return stopped_;
  }
  // Sleeps up to `ms`, or until Stop() (or a Notify() when `wake_on_notify`).
  // False when stopped.
  bool Sleep(int64_t ms, bool wake_on_notify) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    const uint64_t seen = generation_;
    cv_.WaitFor(&mu_, std::chrono::milliseconds(ms), [&]() REQUIRES(mu_) {
      return stopped_ || (wake_on_notify && generation_ != seen);
    });
    return !stopped_;
  }

 private:
  mutable Mutex mu_;
  CondVar cv_;
  uint64_t generation_ GUARDED_BY(mu_) = 0;
  bool stopped_ GUARDED_BY(mu_) = false;
};

}  // namespace maestro::notify
