#include "engine/loop/watchdog.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace maestro::engine {
namespace {

constexpr size_t kErrorTextKeyBytes = 300;  // long errors differ in their tails (paths, times)

std::string ErrorKey(const WatchdogError& e) {
  return e.tool + '\x1f' + e.text.substr(0, kErrorTextKeyBytes);
}

// "ReadFile, EditFile" from a CallBatchSignature (name \x1f args \x1e ...).
std::string CallNames(const std::string& signature) {
  std::string names;
  size_t pos = 0;
  while (pos < signature.size()) {
    size_t end = signature.find('\x1e', pos);
    if (end == std::string::npos) end = signature.size();
    std::string call = signature.substr(pos, end - pos);
    names += (names.empty() ? "" : "+") + call.substr(0, call.find('\x1f'));
    pos = end + 1;
  }
  return names;
}

}  // namespace

Watchdog::Watchdog(WatchdogLimits limits, int64_t start_ms) : limits_(limits), start_ms_(start_ms) {
  limits_.max_cycle_period = std::max(2, limits_.max_cycle_period);
  limits_.error_window = std::max(1, limits_.error_window);
}

void Watchdog::Record(const std::string& signature, const std::vector<WatchdogError>& errors) {
  std::vector<std::string> keys;
  for (const auto& e : errors) keys.push_back(ErrorKey(e));
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());  // once per iteration
  error_history_.push_back(std::move(keys));
  while (error_history_.size() > static_cast<size_t>(limits_.error_window)) {
    error_history_.pop_front();
  }
  signatures_.push_back(signature);
  size_t keep = static_cast<size_t>(limits_.max_cycle_period * std::max(1, limits_.cycle_repeats));
  while (signatures_.size() > keep) signatures_.pop_front();
}

void Watchdog::RecordNoCalls() {
  error_history_.push_back({});
  while (error_history_.size() > static_cast<size_t>(limits_.error_window)) {
    error_history_.pop_front();
  }
  signatures_.clear();
}

bool Watchdog::RepeatedError(std::string* what) const {
  if (limits_.error_repeat_limit <= 0) return false;
  std::map<std::string, int> counts;
  for (const auto& keys : error_history_) {
    for (const auto& k : keys) {
      if (++counts[k] < limits_.error_repeat_limit) continue;
      size_t sep = k.find('\x1f');
      *what =
          fmt::format("{} returned the same error {} times in the last {} iterations: \"{}\"",
                      k.substr(0, sep), counts[k], error_history_.size(), k.substr(sep + 1, 200));
      return true;
    }
  }
  return false;
}

bool Watchdog::CallCycle(std::string* what) const {
  if (limits_.cycle_repeats <= 0) return false;
  const size_t n = signatures_.size();
  for (int p = 2; p <= limits_.max_cycle_period; ++p) {
    size_t span = static_cast<size_t>(p * limits_.cycle_repeats);
    if (n < span) continue;
    bool periodic = true;
    for (size_t i = n - span + static_cast<size_t>(p); i < n && periodic; ++i) {
      periodic = signatures_[i] == signatures_[i - static_cast<size_t>(p)];
    }
    std::set<std::string> members(signatures_.end() - p, signatures_.end());
    if (!periodic || members.size() < 2) continue;  // period 1 is the identical-call guard
    std::string names;
    for (size_t i = n - static_cast<size_t>(p); i < n; ++i) {
      names += (names.empty() ? "" : " -> ") + CallNames(signatures_[i]);
    }
    *what = fmt::format("the same cycle of {} call batches ({}) repeated {} times", p, names,
                        limits_.cycle_repeats);
    return true;
  }
  return false;
}

WatchdogVerdict Watchdog::Fire(const std::string& rule, std::string what) {
  WatchdogVerdict v;
  v.rule = rule;
  if (warned_[rule]) {
    v.kind = WatchdogVerdict::Kind::kAbort;
    v.message = fmt::format("no progress after a watchdog warning ({}): {}", rule, what);
    return v;
  }
  warned_[rule] = true;
  // A fresh start for the rule: the agent gets the whole threshold again.
  if (rule == "repeated_error") error_history_.clear();
  if (rule == "call_cycle") signatures_.clear();
  v.kind = WatchdogVerdict::Kind::kWarn;
  if (rule == "movement_time") {
    v.message = fmt::format(
        "[maestro watchdog] {}. Finish this movement now: `transition` to the next movement or "
        "`complete` (status error if you are blocked). In {} minutes the movement is stopped.",
        what, limits_.movement_time_grace_ms / 60000);
  } else {
    v.message = fmt::format(
        "[maestro watchdog] No progress: {}. Repeating it will not help. Read the results, "
        "change the approach (other arguments, another tool), or call `complete` with status "
        "error naming the blocker. If this happens again, the movement is stopped.",
        what);
  }
  return v;
}

WatchdogVerdict Watchdog::Check(int64_t now_ms) {
  std::string what;
  if (RepeatedError(&what)) return Fire("repeated_error", what);
  if (CallCycle(&what)) return Fire("call_cycle", what);
  if (limits_.movement_time_limit_ms > 0) {
    int64_t elapsed = now_ms - start_ms_;
    if (time_warned_at_ms_ < 0 && elapsed >= limits_.movement_time_limit_ms) {
      time_warned_at_ms_ = now_ms;
      return Fire("movement_time",
                  fmt::format("this movement has run for {} minutes", elapsed / 60000));
    }
    if (time_warned_at_ms_ >= 0 && now_ms - time_warned_at_ms_ >= limits_.movement_time_grace_ms) {
      return Fire("movement_time",
                  fmt::format("the movement ran {} minutes, {} after the warning", elapsed / 60000,
                              (now_ms - time_warned_at_ms_) / 60000));
    }
  }
  return {};
}

}  // namespace maestro::engine
