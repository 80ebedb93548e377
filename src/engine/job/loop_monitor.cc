#include "engine/job/loop_monitor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace maestro::engine {

LoopMonitorTracker::LoopMonitorTracker(const Piece& piece)
    : piece_(piece), counts_(piece.loop_monitors.size(), 0) {}

bool LoopMonitorTracker::EndsWith(const std::vector<std::string>& cycle) const {
  if (cycle.empty() || cycle.size() > history_.size()) return false;
  size_t off = history_.size() - cycle.size();
  for (size_t i = 0; i < cycle.size(); ++i) {
    if (history_[off + i] != cycle[i]) return false;
  }
  return true;
}

LoopMonitorVerdict LoopMonitorTracker::Enter(const std::string& movement) {
  history_.push_back(movement);
  LoopMonitorVerdict best;
  for (size_t i = 0; i < piece_.loop_monitors.size(); ++i) {
    const LoopMonitor& lm = piece_.loop_monitors[i];
    if (!EndsWith(lm.cycle)) continue;
    int n = ++counts_[i];
    LoopMonitorVerdict v;
    v.cycles = n;
    if (n > lm.threshold) {
      v.kind = LoopMonitorVerdict::Kind::kExceeded;
      v.on_exceed = lm.on_exceed;
      counts_[i] = 0;
    } else if (n == lm.threshold) {
      v.kind = LoopMonitorVerdict::Kind::kWarn;
      v.message = !lm.warning.empty()
                      ? lm.warning
                      : fmt::format(
                            "Loop warning: the movements {} have repeated {} times. "
                            "Finish what blocks the task now; one more round ends it.",
                            fmt::join(lm.cycle, " -> "), n);
    }
    if (static_cast<int>(v.kind) > static_cast<int>(best.kind)) best = std::move(v);
  }
  return best;
}

}  // namespace maestro::engine
