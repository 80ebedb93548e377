// Budgets and daily quotas (issue 18): the limits a task may spend before
// its job parks, and the per-user daily limits that refuse new tasks.
//
// Where it sits: the API resolves a task's effective limits at create
// (Effective: task > user > piece > default, per key) and stores them on the
// task (tasks.budget). The agent loop asks Check() before every LLM call
// with what the task has spent so far (SpentFrom over Store::ListJobUsage, the
// task's `llm.call` events) and the next prompt's estimate; an exceeded
// verdict parks the job waiting_human / budget_exceeded before the call
// (engine/loop/budget_step.h). POST /api/local/tasks/:id/budget raises the limits
// and requeues the job (Store::RaiseTaskBudget). The daily quota check runs
// on every create path through store/quota_gate.h (against
// Store::UserUsageSince); a subtask starts with its parent's Remaining().
//
// Thread safety: pure functions over values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/config.h"
#include "core/json.h"
#include "core/status.h"
#include "store/api_types.h"

namespace maestro::budget {

// A task's limits; an unset key does not limit.
struct Limits {
  std::optional<int64_t> max_tokens;     // prompt + completion, all jobs of the task
  std::optional<double> max_cost;        // USD, by the price table
  std::optional<int64_t> max_llm_calls;  // LLM calls, all jobs of the task
  std::optional<double> max_wall_s;      // seconds since the task's first job started
  bool empty() const { return !max_tokens && !max_cost && !max_llm_calls && !max_wall_s; }
};

// Parses {max_tokens?, max_cost?, max_llm_calls?, max_wall_s?}: positive
// numbers (max_tokens and max_llm_calls whole). kInvalidArgument naming
// `<prefix>.<key>` for an unknown key or a bad value, `<prefix>` when `j` is
// not an object (prefix "": the bare key). null is an empty object.
Result<Limits> ParseLimits(const Json& j, const std::string& prefix);
// Only the set keys.
Json LimitsJson(const Limits& l);
// Per key: `over` where set, else `base`.
Limits Overlay(const Limits& base, const Limits& over);

// `budgets: {default: {...}, pieces: {<piece>: {...}}, users: {<user>: {...}}}`.
struct Defaults {
  Limits all;
  std::map<std::string, Limits> pieces;
  std::map<std::string, Limits> users;
};
// The limits a new task runs under: task > user > piece > default, per key.
Limits Effective(const Defaults& d, const std::string& piece, const std::string& user,
                 const Limits& task);

// `quotas: {default: {...}, users: {<user>: {...}}}`.
struct QuotaLimits {
  std::optional<int64_t> max_tasks_per_day;
  std::optional<int64_t> max_tokens_per_day;
  // Schedules a user may own at once (issue 44); unset: kDefaultMaxSchedules.
  std::optional<int64_t> max_schedules;
};
// 500 every-minute schedules were accepted before there was a limit.
inline constexpr int64_t kDefaultMaxSchedules = 50;
struct Quotas {
  QuotaLimits all;
  std::map<std::string, QuotaLimits> users;
  // The user's entry where set, else the default, per key.
  QuotaLimits For(const std::string& user) const;
};

struct Settings {
  Defaults budgets;
  Quotas quotas;
};
// Validates the config's `budgets` and `quotas` sections; errors start with
// their file:line:col and name the key (`budgets.pieces.code.max_tokens`).
Result<Settings> SettingsFromConfig(const Config& cfg);

// USD per million tokens by profile name ("default" = the `llm:` section).
using PriceTable = std::map<std::string, LlmPrice>;
PriceTable PricesFromConfig(const Config& cfg);
// USD for `u` at `price`: ((prompt - cached - written) * input + cached *
// cached_input + written * cache_write + completion * output) / 1e6.
double CostUsd(const JobUsage& u, const LlmPrice& price);
// A job's cost by its profile's price ("" = "default"): 0 when it made no
// calls, nullopt when it made calls on a profile without a price.
std::optional<double> JobCost(const JobUsage& u, const PriceTable& prices);
// A cost in the JSON: rounded to ten decimals (enough for one token at any
// price, without float noise like 0.30000000000000004), null when unknown.
Json CostJson(double usd, bool known);

// What a task has spent.
struct Spent {
  int64_t tokens = 0;  // prompt + completion
  int64_t llm_calls = 0;
  double cost = 0;         // USD
  bool cost_known = true;  // false: some calls were made on a profile without a price
  double wall_s = 0;       // since the task's first job started (0: none started)
};
// Sums the task's jobs' usage; `first_started` 0: no wall time yet.
Spent SpentFrom(const std::vector<JobUsage>& usage, const PriceTable& prices, TimeMs first_started,
                TimeMs now);
// {"tokens","llm_calls","cost" (null when unknown),"wall_s"}
Json SpentJson(const Spent& s);

// The verdict before an LLM call.
struct Verdict {
  bool exceeded = false;
  std::string which;  // max_tokens | max_llm_calls | max_cost | max_wall_s
  double spent = 0;   // of `which`, before the call
  double limit = 0;
  double next = 0;   // what the call would add (max_tokens: the prompt estimate; calls: 1)
  std::string unit;  // tokens | LLM calls | USD | seconds
};
// Exceeded when the next call would pass a limit: tokens: spent + the next
// prompt's estimate > max; calls: spent + 1 > max; cost, wall: spent >= max
// (a call's cost and time are not known before it). Keys in that order.
Verdict Check(const Limits& l, const Spent& s, int64_t next_prompt_estimate);
// "spent 1200 of 1500 tokens (the next call needs about 700) — raise the
// budget or stop"
std::string ExceededText(const Verdict& v);

// What a subtask inherits (issue 44): per set key of `l`, the limit minus
// what was spent (tokens, calls, cost; wall time since the parent started),
// at least the smallest positive value of the key (1 token, 1 call, a
// 1e-9 USD, 1 ms) so the result is still a valid, set limit that stops the
// first call of a spent budget.
Limits Remaining(const Limits& l, const Spent& s);

// Start of the UTC day of `now`, and seconds from `now` to the next one.
TimeMs UtcDayStart(TimeMs now);
int64_t SecondsToUtcMidnight(TimeMs now);
// The refusal message when a new task of `user` would pass a daily quota,
// nullopt when it may be created: "daily quota of 5 tasks reached for user
// alice; resets at 00:00 UTC".
std::optional<std::string> QuotaRefusal(const QuotaLimits& q, const std::string& user,
                                        int64_t tasks_today, int64_t tokens_today);
// The refusal when `user`, who owns `owned` schedules, would create one more
// (quotas.max_schedules, kDefaultMaxSchedules when unset); nullopt when allowed.
std::optional<std::string> ScheduleLimitRefusal(const QuotaLimits& q, const std::string& user,
                                                int64_t owned);

}  // namespace maestro::budget
