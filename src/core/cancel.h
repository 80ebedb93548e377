// CancelToken: cooperative cancellation shared between the thread doing the
// work (an executor, an LLM stream, a tool process) and whoever may stop it
// (the heartbeat that sees a cancel request, shutdown, a lost lease).
//
// The first Cancel() wins and fixes the reason; later calls are ignored.
// Waiters can block on WaitFor() and are woken at once by Cancel().
//
// Thread safety: all methods may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <string_view>

#include "core/mutex.h"

namespace maestro {

class CancelToken {
 public:
  enum class Reason { kNone, kUserCancel, kShutdown, kLeaseLost, kDeadline };

  void Cancel(Reason reason) {
    {
      MutexLock lock(&mu_);
      if (reason_ != Reason::kNone) return;
      reason_ = reason;
      cancelled_.store(true, std::memory_order_release);
    }
    cv_.SignalAll();
  }
  bool IsCancelled() const { return cancelled_.load(std::memory_order_acquire); }
  Reason reason() const {
    MutexLock lock(&mu_);
    return reason_;
  }
  // Sleeps up to `d`; returns true when cancelled (possibly before the call).
  bool WaitFor(std::chrono::milliseconds d) {
    MutexLock lock(&mu_);
    return cv_.WaitFor(&mu_, d, [&]() REQUIRES(mu_) { return reason_ != Reason::kNone; });
  }

 private:
  mutable Mutex mu_;
  CondVar cv_;
  std::atomic<bool> cancelled_{false};
  Reason reason_ GUARDED_BY(mu_) = Reason::kNone;
};

std::string_view CancelReasonName(CancelToken::Reason r);

}  // namespace maestro
