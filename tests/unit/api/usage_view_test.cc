// Usage and cost as the API shows them (api/usage_view.h): the price math by
// profile, the task totals, and the JSON shape.
#include "api/usage_view.h"

#include <gtest/gtest.h>

namespace maestro::api {
namespace {

// The price math lives in store/budget.h; the view prices jobs with it.
using budget::CostUsd;
using budget::PricesFromConfig;
using budget::PriceTable;

JobUsage Usage(const std::string& profile, int64_t prompt, int64_t cached, int64_t completion,
               int64_t calls = 1) {
  JobUsage u;
  u.profile = profile;
  u.llm_calls = calls;
  u.prompt_tokens = prompt;
  u.cached_tokens = cached;
  u.completion_tokens = completion;
  u.model_ms = 100 * calls;
  return u;
}

TEST(UsageViewTest, CostIsPerMillionTokensWithCachedInputPricedApart) {
  LlmPrice p{2.0, 0.5, 8.0};
  // (1M - 400k) * 2 + 400k * 0.5 + 100k * 8 = 1.2 + 0.2 + 0.8 USD.
  EXPECT_NEAR(CostUsd(Usage("", 1'000'000, 400'000, 100'000), p), 2.2, 1e-12);
  EXPECT_DOUBLE_EQ(CostUsd(Usage("", 0, 0, 0), p), 0.0);
  // More cached than prompt (a server's odd report) never costs less than
  // all-cached.
  EXPECT_NEAR(CostUsd(Usage("", 100, 500, 0), p), 100 * 0.5 / 1e6, 1e-15);
}

// Issue 50: Anthropic reports the prompt tokens written to its cache; they
// are part of the prompt and priced as cache_write.
TEST(UsageViewTest, CacheWritesArePricedApartAndShown) {
  LlmPrice p{3.0, 0.3, 15.0, 3.75};
  JobUsage u = Usage("", 1'000'000, 600'000, 10'000);
  u.cache_write_tokens = 300'000;
  // 100k * 3 + 600k * 0.3 + 300k * 3.75 + 10k * 15 = 0.3 + 0.18 + 1.125 + 0.15 USD.
  EXPECT_NEAR(CostUsd(u, p), 1.755, 1e-12);
  // A write larger than the uncached rest (an odd report) is capped by it.
  u.cache_write_tokens = 900'000;
  EXPECT_NEAR(CostUsd(u, p), (600'000 * 0.3 + 400'000 * 3.75 + 10'000 * 15.0) / 1e6, 1e-12);
  u.cache_write_tokens = 300'000;
  Json shown = UsageJson(JobTotals(u, {{"default", p}}));
  EXPECT_EQ(shown["cache_write_tokens"], 300'000);
  EXPECT_EQ(shown["cached_tokens"], 600'000);
  EXPECT_EQ(shown["cache_hit_pct"], 60.0);
}

TEST(UsageViewTest, JobsArePricedByTheirProfileAndUnknownPricesMakeTheCostNull) {
  Config cfg;
  cfg.llm.price = LlmPrice{1.0, 0.1, 4.0};
  ModelProfile fast;
  fast.price = LlmPrice{3.0, 3.0, 15.0};
  cfg.llm_profiles["fast"] = fast;
  cfg.llm_profiles["local"] = ModelProfile{};  // no price
  PriceTable prices = PricesFromConfig(cfg);
  ASSERT_EQ(prices.size(), 2u);
  EXPECT_EQ(prices.count("local"), 0u);

  UsageTotals d = JobTotals(Usage("", 10'000, 4'000, 1'000), prices);
  EXPECT_TRUE(d.cost_known);
  EXPECT_NEAR(d.cost, (6'000 * 1.0 + 4'000 * 0.1 + 1'000 * 4.0) / 1e6, 1e-15);
  EXPECT_NEAR(JobTotals(Usage("default", 10'000, 4'000, 1'000), prices).cost, d.cost, 1e-15)
      << "\"default\" is the llm: section too";
  UsageTotals f = JobTotals(Usage("fast", 10'000, 4'000, 1'000), prices);
  EXPECT_NEAR(f.cost, (10'000 * 3.0 + 1'000 * 15.0) / 1e6, 1e-15);
  UsageTotals l = JobTotals(Usage("local", 10, 0, 1), prices);
  EXPECT_FALSE(l.cost_known);
  UsageTotals idle = JobTotals(Usage("local", 0, 0, 0, 0), prices);
  EXPECT_TRUE(idle.cost_known) << "a job without calls cost nothing";

  UsageTotals task;
  AddTotals(&task, d);
  AddTotals(&task, f);
  AddTotals(&task, idle);
  EXPECT_TRUE(task.cost_known);
  EXPECT_NEAR(task.cost, d.cost + f.cost, 1e-15);
  EXPECT_EQ(task.llm_calls, 2);
  EXPECT_EQ(task.prompt_tokens, 20'000);
  EXPECT_EQ(task.cached_tokens, 8'000);
  EXPECT_EQ(task.completion_tokens, 2'000);
  EXPECT_EQ(task.model_ms, 200);
  AddTotals(&task, l);
  EXPECT_FALSE(task.cost_known) << "one unpriced job with usage makes the task's cost unknown";

  EXPECT_FALSE(JobTotals(Usage("", 10, 0, 1), PriceTable{}).cost_known) << "no price table";
}

TEST(UsageViewTest, JsonShape) {
  UsageTotals t;
  t.llm_calls = 3;
  t.prompt_tokens = 3000;
  t.cached_tokens = 2000;
  t.completion_tokens = 90;
  t.model_ms = 4200;
  t.cost = 0.1 + 0.2;
  Json j = UsageJson(t);
  EXPECT_EQ(j["llm_calls"], 3);
  EXPECT_EQ(j["prompt_tokens"], 3000);
  EXPECT_EQ(j["cached_tokens"], 2000);
  EXPECT_EQ(j["completion_tokens"], 90);
  EXPECT_DOUBLE_EQ(j["cache_hit_pct"].get<double>(), 66.7) << "one decimal";
  EXPECT_EQ(j["model_ms"], 4200);
  EXPECT_EQ(j["cost"].dump(), "0.3") << "no float noise";
  EXPECT_EQ(j["currency"], "USD");
  EXPECT_EQ(j["cache_write_tokens"], 0);
  EXPECT_EQ(j.size(), 9u);

  t.cost_known = false;
  EXPECT_TRUE(UsageJson(t)["cost"].is_null());
  Json zero = UsageJson(UsageTotals{});
  EXPECT_EQ(zero["cache_hit_pct"], 0.0) << "no prompt tokens: 0, not NaN";
  EXPECT_EQ(zero["cost"], 0.0);
}

}  // namespace
}  // namespace maestro::api
