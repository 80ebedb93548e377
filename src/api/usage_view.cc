#include "api/usage_view.h"

#include <algorithm>
#include <cmath>

#include "store/budget.h"

namespace maestro::api {

UsageTotals JobTotals(const JobUsage& u, const budget::PriceTable& prices) {
  UsageTotals t;
  t.llm_calls = u.llm_calls;
  t.prompt_tokens = u.prompt_tokens;
  t.cached_tokens = u.cached_tokens;
  t.cache_write_tokens = u.cache_write_tokens;
  t.completion_tokens = u.completion_tokens;
  t.model_ms = u.model_ms;
  if (auto cost = budget::JobCost(u, prices)) {
    t.cost = *cost;
  } else {
    t.cost_known = false;
  }
  return t;
}

void AddTotals(UsageTotals* sum, const UsageTotals& job) {
  sum->llm_calls += job.llm_calls;
  sum->prompt_tokens += job.prompt_tokens;
  sum->cached_tokens += job.cached_tokens;
  sum->cache_write_tokens += job.cache_write_tokens;
  sum->completion_tokens += job.completion_tokens;
  sum->model_ms += job.model_ms;
  sum->cost += job.cost;
  sum->cost_known = sum->cost_known && job.cost_known;
}

Json UsageJson(const UsageTotals& t) {
  double pct = 0;
  if (t.prompt_tokens > 0) {
    pct = std::round(1000.0 * static_cast<double>(t.cached_tokens) /
                     static_cast<double>(t.prompt_tokens)) /
          10.0;
  }
  return {{"llm_calls", t.llm_calls},
          {"prompt_tokens", t.prompt_tokens},
          {"cached_tokens", t.cached_tokens},
          {"cache_write_tokens", t.cache_write_tokens},
          {"completion_tokens", t.completion_tokens},
          {"cache_hit_pct", pct},
          {"model_ms", t.model_ms},
          {"cost", budget::CostJson(t.cost, t.cost_known)},
          {"currency", "USD"}};
}

Json BudgetJson(const Task& task, const std::vector<JobUsage>& usage,
                const budget::PriceTable& prices, TimeMs now) {
  const TimeMs end = task.completed_at > 0 ? task.completed_at : now;
  Json out = task.budget.is_object() ? task.budget : Json::object();
  out["spent"] = budget::SpentJson(budget::SpentFrom(usage, prices, task.started_at, end));
  return out;
}

}  // namespace maestro::api
