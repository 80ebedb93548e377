// FileClock: the scheduler's "now" read from a file, for fire drills and
// tests that drive real `maestro serve` processes through simulated time
// (`schedules.clock_file`; never set in production).
//
// The file holds one integer: milliseconds since the Unix epoch. Whoever
// drives the drill rewrites it (atomically: temp + rename); every process
// pointed at it sees the same time, so two servers on one database race for
// the same fire exactly as they would on the wall clock, a day of minutes
// takes seconds, and a restart in the middle keeps the simulated time.
//
// Thread safety: NowMs may be called from any thread.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "core/clock.h"
#include "core/env.h"
#include "core/status.h"

namespace maestro::schedule {

class FileClock final : public Clock {
 public:
  // Fails (naming the file) when the file cannot be read or holds no time,
  // so a drill with a wrong path stops at start, not silently on the wall
  // clock.
  static Result<std::unique_ptr<FileClock>> Open(Env& env, std::string path);

  // The file's time; when a read fails or finds no number (a writer that
  // does not rename), the last good one, with one warning.
  TimeMs NowMs() const override;

 private:
  FileClock(Env& env, std::string path, TimeMs first)
      : env_(env), path_(std::move(path)), last_(first) {}
  Env& env_;
  const std::string path_;
  mutable std::atomic<TimeMs> last_;
  mutable std::atomic<bool> warned_{false};
};

// The integer in `text` (surrounding whitespace allowed), else kInvalidArgument.
Result<TimeMs> ParseClockFile(const std::string& text);

}  // namespace maestro::schedule
