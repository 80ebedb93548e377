// Watchdog: the agent loop's no-progress detector beyond the identical-call
// guard (seed 000 §3 "watchdog / loop guard" box).
//
// Where it sits: one Watchdog per movement entry. After every iteration's
// tool results the loop calls Record() with the batch's signature and the
// errors its calls returned; at the top of the next iteration (after the
// interjections, before the prompt guard) it calls Check(). Rules:
//
//   repeated_error  the same tool error (tool name + error text) came back
//                   `error_repeat_limit` times within the last
//                   `error_window` iterations
//   call_cycle      the trailing call batches repeat a cycle of period 2..
//                   `max_cycle_period` with distinct members (A B A B …) for
//                   `cycle_repeats` full cycles — period 1 is the loop guard's
//   movement_time   the movement has run `movement_time_limit_ms` wall-clock
//
// A rule that fires the first time yields kWarn: the loop appends the
// verdict's message as a user message (appended, so the cache prefix stays)
// and the rule's history is cleared, so the agent has a fresh start. If the
// same rule fires again in this movement, the verdict is kAbort (the loop
// ends with ABORT `watchdog` and the message as the reason). For the wall
// clock the second firing is `movement_time_grace_ms` after the warning.
//
// Thread safety: a plain object owned by one movement's loop.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

namespace maestro::engine {

struct WatchdogLimits {
  int error_repeat_limit = 3;                       // 0 = rule off
  int error_window = 6;                             // iterations looked at for repeated errors
  int cycle_repeats = 3;                            // full cycles before the rule fires; 0 = off
  int max_cycle_period = 3;                         // the longest cycle looked for (>= 2)
  int64_t movement_time_limit_ms = 60 * 60 * 1000;  // 0 = off
  int64_t movement_time_grace_ms = 10 * 60 * 1000;  // after the time warning
};

// One tool error of an iteration: which tool, and what it said.
struct WatchdogError {
  std::string tool;
  std::string text;
};

struct WatchdogVerdict {
  enum class Kind { kOk, kWarn, kAbort };
  Kind kind = Kind::kOk;
  std::string rule;     // "repeated_error" | "call_cycle" | "movement_time"
  std::string message;  // kWarn: the user message; kAbort: the abort details
};

class Watchdog {
 public:
  Watchdog(WatchdogLimits limits, int64_t start_ms);

  // After an iteration with tool calls: `signature` identifies the batch
  // (CallBatchSignature), `errors` the calls that returned an error.
  void Record(const std::string& signature, const std::vector<WatchdogError>& errors);
  // An iteration without tool calls (a text-only reply) breaks a call cycle.
  void RecordNoCalls();

  // Before the next LLM call. At most one verdict per call (the first rule
  // that fires, in the order of the table above).
  WatchdogVerdict Check(int64_t now_ms);

 private:
  WatchdogVerdict Fire(const std::string& rule, std::string what);
  bool RepeatedError(std::string* what) const;
  bool CallCycle(std::string* what) const;

  WatchdogLimits limits_;
  int64_t start_ms_;
  int64_t time_warned_at_ms_ = -1;
  // Per iteration: the error keys it returned (oldest first).
  std::deque<std::vector<std::string>> error_history_;
  std::deque<std::string> signatures_;  // the last call batches (oldest first)
  std::map<std::string, bool> warned_;  // rule -> already warned in this movement
};

}  // namespace maestro::engine
