// EventSignal: wakes SSE handlers when the store committed something.
//
// The store calls Notify() after each commit (StoreOptions::on_commit); an
// SSE handler remembers the generation it last saw and waits for a newer one
// (or a timeout, to send a keep-alive), then reads new events from the store.
// Polling the database on every tick is avoided without any event being
// carried in memory: the database stays the only source of truth.
//
// Thread safety: all methods may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace maestro::api {

class EventSignal {
 public:
  void Notify() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++generation_;
    }
    cv_.notify_all();
  }
  uint64_t generation() const {
    std::lock_guard<std::mutex> lock(mu_);
    return generation_;
  }
  // Returns the current generation once it differs from `seen` or `d` passed.
  uint64_t WaitNewer(uint64_t seen, std::chrono::milliseconds d) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, d, [&] { return generation_ != seen || stopped_; });
    return generation_;
  }
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopped_ = true;
    }
    cv_.notify_all();
  }
  bool stopped() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stopped_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  uint64_t generation_ = 0;  // GUARDED_BY(mu_)
  bool stopped_ = false;     // GUARDED_BY(mu_)
};

}  // namespace maestro::api
