// Clock: the only source of "now" for the runtime.
//
// The store (claims, leases, retry due times) and the worker (heartbeats, the
// lease sweeper, backoff) read time through a Clock so tests can drive time by
// hand with FakeClock instead of sleeping. Times are milliseconds since the
// Unix epoch (UTC), the unit stored in the database.
//
// Thread safety: both implementations may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace maestro {

using TimeMs = int64_t;  // milliseconds since the Unix epoch, UTC

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimeMs NowMs() const = 0;
};

// Wall clock (std::chrono::system_clock).
class SystemClock final : public Clock {
 public:
  TimeMs NowMs() const override;
  // A process-wide instance; stateless, so sharing it is safe.
  static SystemClock* Default();
};

// A clock that moves only when told to.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(TimeMs start = 1'700'000'000'000) : now_(start) {}
  TimeMs NowMs() const override { return now_.load(); }
  void Advance(TimeMs ms) { now_ += ms; }
  void Set(TimeMs ms) { now_ = ms; }

 private:
  std::atomic<TimeMs> now_;
};

// "2026-11-30T10:07:25.123Z"
std::string FormatIso8601(TimeMs ms);

}  // namespace maestro
