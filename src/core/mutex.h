// Mutex, MutexLock, CondVar: the lock types of every multi-threaded class in
// src/, annotated for clang's -Wthread-safety (core/thread_annotations.h).
// libstdc++'s std::mutex carries no capability attributes, so members marked
// GUARDED_BY(mu_) need a mutex the analysis knows: this thin wrapper over
// std::mutex / std::condition_variable, with no behaviour of its own.
//
//   mutable Mutex mu_;
//   CondVar cv_;
//   bool stop_ GUARDED_BY(mu_) = false;
//   ...
//   MutexLock lock(&mu_);
//   cv_.WaitFor(&mu_, interval, [&]() REQUIRES(mu_) { return stop_; });
//
// A CondVar predicate reads guarded members, so it is annotated REQUIRES(mu_)
// (the analysis checks a lambda as a function of its own); it runs with the
// mutex held, as with std::condition_variable.
//
// Thread safety: Mutex and CondVar may be used from any thread; a MutexLock
// belongs to the thread that made it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "core/thread_annotations.h"

namespace maestro {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds `*mu` from construction to destruction. Unlock()/Lock() let a loop
// run work without the lock in between (the destructor releases only when held).
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() RELEASE() {
    if (held_) mu_->Unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() RELEASE() {
    mu_->Unlock();
    held_ = false;
  }
  void Lock() ACQUIRE() {
    mu_->Lock();
    held_ = true;
  }

 private:
  Mutex* mu_;
  bool held_ = true;
};

// std::condition_variable over a Mutex the caller holds. Each wait releases
// `*mu` while blocked and holds it again when it returns; the predicate forms
// return as std::condition_variable's do (WaitFor/WaitUntil: the predicate's
// value at the end, so false means timed out).
class CondVar {
 public:
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

  void Wait(Mutex* mu) REQUIRES(mu) {
    Adopted lock(mu);
    cv_.wait(lock.lock);
  }
  template <class Pred>
  void Wait(Mutex* mu, Pred done) REQUIRES(mu) {
    Adopted lock(mu);
    cv_.wait(lock.lock, std::move(done));
  }
  // Returns false when `d` passed without a wake-up (spurious wake-ups return true).
  template <class Rep, class Period>
  bool WaitFor(Mutex* mu, std::chrono::duration<Rep, Period> d) REQUIRES(mu) {
    Adopted lock(mu);
    return cv_.wait_for(lock.lock, d) == std::cv_status::no_timeout;
  }
  template <class Rep, class Period, class Pred>
  bool WaitFor(Mutex* mu, std::chrono::duration<Rep, Period> d, Pred done) REQUIRES(mu) {
    Adopted lock(mu);
    return cv_.wait_for(lock.lock, d, std::move(done));
  }
  template <class Clock, class Duration, class Pred>
  bool WaitUntil(Mutex* mu, std::chrono::time_point<Clock, Duration> deadline, Pred done)
      REQUIRES(mu) {
    Adopted lock(mu);
    return cv_.wait_until(lock.lock, deadline, std::move(done));
  }

 private:
  // The caller's lock seen as a std::unique_lock for the wait, handed back
  // (not unlocked) when the wait ends, also when the predicate throws.
  struct Adopted {
    explicit Adopted(Mutex* mu) : lock(mu->mu_, std::adopt_lock) {}
    ~Adopted() { lock.release(); }
    std::unique_lock<std::mutex> lock;
  };

  std::condition_variable cv_;
};

}  // namespace maestro
