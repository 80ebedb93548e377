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
#include <condition_variable>
#include <mutex>
#include <string_view>

namespace maestro {

class CancelToken {
 public:
  enum class Reason { kNone, kUserCancel, kShutdown, kLeaseLost, kDeadline };

  void Cancel(Reason reason) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (reason_ != Reason::kNone) return;
      reason_ = reason;
      cancelled_.store(true, std::memory_order_release);
    }
    cv_.notify_all();
  }
  bool IsCancelled() const { return cancelled_.load(std::memory_order_acquire); }
  Reason reason() const {
    std::lock_guard<std::mutex> lock(mu_);
    return reason_;
  }
  // Sleeps up to `d`; returns true when cancelled (possibly before the call).
  bool WaitFor(std::chrono::milliseconds d) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, d, [&] { return reason_ != Reason::kNone; });
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> cancelled_{false};
  Reason reason_ = Reason::kNone;  // GUARDED_BY(mu_)
};

std::string_view CancelReasonName(CancelToken::Reason r);

}  // namespace maestro
