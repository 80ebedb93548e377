// LoopMonitorTracker: the piece runner's loop guard for `loop_monitors`
// (a cycle of movements seen N times -> a warning, then ABORT or a next).
//
// The runner calls Enter() each time it enters a movement. A monitor's cycle
// (e.g. [review, fix]) counts once each time the walk's most recent entries
// equal the cycle in order. At `threshold` counts the verdict is kWarn: the
// runner appends the warning as a user message (appending keeps the cached
// prefix). At threshold + 1 it is kExceeded: the runner ends the walk with
// ABORT (reason loop_monitor) or enters `on_exceed`; the monitor's count then
// restarts so a jump to a movement inside the cycle does not trip it at once.
// Also counts entries against the piece's max_movements.
//
// Thread safety: not thread-safe; one tracker per job run, owned by its runner.
#pragma once

#include <string>
#include <vector>

#include "engine/piece/piece.h"

namespace maestro::engine {

struct LoopMonitorVerdict {
  enum class Kind { kNone, kWarn, kExceeded };
  Kind kind = Kind::kNone;
  std::string message;    // kWarn: the user message to append
  std::string on_exceed;  // kExceeded: "ABORT" or a movement name
  int cycles = 0;         // completed cycles of the monitor that fired
};

class LoopMonitorTracker {
 public:
  // REQUIRES: `piece` outlives the tracker.
  explicit LoopMonitorTracker(const Piece& piece);

  // Records entering `movement`; the strongest verdict of all monitors
  // (kExceeded over kWarn, the first monitor in file order on a tie).
  LoopMonitorVerdict Enter(const std::string& movement);

  int entries() const { return static_cast<int>(history_.size()); }
  // True once more movements were entered than the piece's max_movements.
  bool OverMaxMovements() const { return entries() > piece_.max_movements; }

 private:
  bool EndsWith(const std::vector<std::string>& cycle) const;

  const Piece& piece_;
  std::vector<std::string> history_;
  std::vector<int> counts_;  // per monitor
};

}  // namespace maestro::engine
