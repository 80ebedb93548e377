// Usage and cost of tasks and jobs as the API shows them (`"usage"` on
// GET /api/local/tasks and /tasks/:id, on the task and on each job).
//
// Where it sits: the Store sums each job's `llm.call` events
// (Store::ListJobUsage, one grouped read); this view prices them with the
// config's price table (store/budget.h: `llm.price`,
// `llm_profiles.<name>.price`, USD per million tokens) by the job's profile and adds a task's jobs
// up. A job that made calls on a profile without a price has an unknown cost (null), and so has its
// task.
//
// Thread safety: pure functions over immutable data.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/json.h"
#include "store/api_types.h"
#include "store/budget.h"
#include "store/types.h"

namespace maestro::api {

// A job's or a task's usage; `cost_known` false: some calls were made on a
// profile without a price.
struct UsageTotals {
  int64_t llm_calls = 0;
  int64_t prompt_tokens = 0;
  int64_t cached_tokens = 0;
  int64_t cache_write_tokens = 0;  // written to the cache (Anthropic)
  int64_t completion_tokens = 0;
  int64_t model_ms = 0;
  double cost = 0;  // USD
  bool cost_known = true;
};

// One job's totals, priced by its profile (budget::JobCost). No calls: cost
// 0 (known).
UsageTotals JobTotals(const JobUsage& u, const budget::PriceTable& prices);
// Adds `job` to the task's running `*sum`.
void AddTotals(UsageTotals* sum, const UsageTotals& job);
// {"llm_calls","prompt_tokens","cached_tokens","cache_write_tokens","completion_tokens",
//  "cache_hit_pct" (0..100, one decimal; 0 without prompt tokens),
//  "model_ms","cost" (number, or null when unknown),"currency":"USD"}
Json UsageJson(const UsageTotals& t);
// The task's `budget` as the API shows it: its effective limits (task.budget)
// plus "spent" (store/budget.h SpentJson) from `usage` (the task's jobs);
// wall time runs from the task's start to its completion, or to `now`.
Json BudgetJson(const Task& task, const std::vector<JobUsage>& usage,
                const budget::PriceTable& prices, TimeMs now);

}  // namespace maestro::api
