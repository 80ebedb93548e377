// Wakers: callbacks registered under a key (a task id, a job id) and called
// when something for that key happened. This is how a live stream learns
// that it has something to send without a thread waiting for it: the
// publisher calls Wake(key), the stream's callback schedules a pull.
//
// A waker must be cheap and must not block (it typically posts to an event
// loop); Wake() calls them outside the lock, so a waker may Remove() itself
// or others. After Remove() returns, that waker is never called again except
// by a Wake() already running on another thread — callbacks must tolerate
// that (hold a weak reference to what they wake).
//
// Thread safety: all methods may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/mutex.h"

namespace maestro {

class Wakers {
 public:
  using Fn = std::function<void()>;

  // Registers `fn` under `key`; returns its id for Remove().
  uint64_t Add(const std::string& key, Fn fn) EXCLUDES(mu_);
  void Remove(uint64_t id) EXCLUDES(mu_);
  // Calls every waker of `key`.
  void Wake(const std::string& key) EXCLUDES(mu_);
  // Calls every waker (shutdown).
  void WakeAll() EXCLUDES(mu_);
  size_t size() const;

 private:
  mutable Mutex mu_;
  uint64_t next_id_ GUARDED_BY(mu_) = 1;
  std::unordered_map<std::string, std::map<uint64_t, std::shared_ptr<Fn>>> by_key_ GUARDED_BY(mu_);
  std::unordered_map<uint64_t, std::string> key_of_ GUARDED_BY(mu_);
};

}  // namespace maestro
