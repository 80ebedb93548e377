// The budget rule and its settings as pure functions (store/budget.h):
// parsing with the field a 400 names, the per-key precedence task > user >
// piece > default, the check before a call, the texts, and the UTC day of
// the quotas.
#include "store/budget.h"

#include <gtest/gtest.h>

namespace maestro::budget {
namespace {

TEST(BudgetRule, TokensParkWhenSpentPlusTheNextPromptWouldPassTheLimit) {
  Limits l;
  l.max_tokens = 1000;
  Spent s;
  s.tokens = 600;
  EXPECT_FALSE(Check(l, s, 400).exceeded) << "exactly at the limit is within it";
  Verdict v = Check(l, s, 401);
  ASSERT_TRUE(v.exceeded);
  EXPECT_EQ(v.which, "max_tokens");
  EXPECT_EQ(v.spent, 600);
  EXPECT_EQ(v.limit, 1000);
  EXPECT_EQ(v.next, 401);
  EXPECT_EQ(ExceededText(v),
            "spent 600 of 1000 tokens (the next call needs about 401) — raise the budget or stop");
}

TEST(BudgetRule, CallsCostAndWallTimeAndTheOrderOfTheKeys) {
  Limits l;
  l.max_llm_calls = 3;
  l.max_cost = 0.25;
  l.max_wall_s = 60;
  Spent s;
  s.llm_calls = 2;
  s.cost = 0.2;
  s.wall_s = 10;
  EXPECT_FALSE(Check(l, s, 100000).exceeded) << "no max_tokens: the estimate does not matter";
  s.llm_calls = 3;
  Verdict v = Check(l, s, 0);
  EXPECT_EQ(v.which, "max_llm_calls");
  EXPECT_EQ(ExceededText(v), "spent 3 of 3 LLM calls — raise the budget or stop");
  s.llm_calls = 0;
  s.cost = 0.25;
  EXPECT_EQ(Check(l, s, 0).which, "max_cost");
  EXPECT_EQ(Check(l, s, 0).unit, "USD");
  s.cost_known = false;
  EXPECT_FALSE(Check(l, s, 0).exceeded) << "an unknown cost cannot be held against a limit";
  s.wall_s = 60.5;
  v = Check(l, s, 0);
  EXPECT_EQ(v.which, "max_wall_s");
  EXPECT_EQ(v.unit, "seconds");
  EXPECT_FALSE(Check(Limits{}, s, 1 << 30).exceeded) << "no limits";
}

TEST(BudgetRule, ParseNamesTheFieldAndKeepsOnlyPositiveNumbers) {
  auto ok = ParseLimits(
      Json{{"max_tokens", 10}, {"max_cost", 0.5}, {"max_llm_calls", 2.0}, {"max_wall_s", 30}},
      "budget");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(*ok->max_tokens, 10);
  EXPECT_EQ(*ok->max_llm_calls, 2);
  EXPECT_DOUBLE_EQ(*ok->max_cost, 0.5);
  EXPECT_EQ(
      LimitsJson(*ok),
      Json({{"max_tokens", 10}, {"max_cost", 0.5}, {"max_llm_calls", 2}, {"max_wall_s", 30.0}}));
  EXPECT_TRUE(ParseLimits(nullptr, "budget")->empty());
  struct Bad {
    Json j;
    std::string field;
  };
  for (const Bad& b : std::vector<Bad>{{{{"max_tokenz", 1}}, "budget.max_tokenz"},
                                       {{{"max_tokens", 0}}, "budget.max_tokens"},
                                       {{{"max_tokens", -5}}, "budget.max_tokens"},
                                       {{{"max_tokens", 2.5}}, "budget.max_tokens"},
                                       {{{"max_cost", "1"}}, "budget.max_cost"},
                                       {{{"max_wall_s", -1.0}}, "budget.max_wall_s"},
                                       {Json::array(), "budget"}}) {
    auto r = ParseLimits(b.j, "budget");
    ASSERT_FALSE(r.ok()) << b.j.dump();
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().field(), b.field) << b.j.dump();
  }
  EXPECT_EQ(ParseLimits(Json{{"bogus", 1}}, "").status().field(), "bogus");
}

TEST(BudgetRule, TheMostSpecificLimitWinsPerKey) {
  Defaults d;
  d.all.max_tokens = 1000;
  d.all.max_wall_s = 600;
  d.pieces["code"].max_tokens = 5000;
  d.pieces["code"].max_llm_calls = 50;
  d.users["alice"].max_llm_calls = 10;
  Limits task;
  task.max_wall_s = 60;
  Limits e = Effective(d, "code", "alice", task);
  EXPECT_EQ(*e.max_tokens, 5000) << "piece over default";
  EXPECT_EQ(*e.max_llm_calls, 10) << "user over piece";
  EXPECT_EQ(*e.max_wall_s, 60) << "task over default";
  EXPECT_FALSE(e.max_cost);
  Limits other = Effective(d, "chat", "bob", {});
  EXPECT_EQ(*other.max_tokens, 1000);
  EXPECT_FALSE(other.max_llm_calls);
}

TEST(BudgetRule, SettingsComeFromTheConfigWithPositions) {
  Config cfg;
  cfg.budgets = {{"default", {{"max_tokens", 100}}}, {"pieces", {{"code", {{"max_cost", 2}}}}}};
  cfg.quotas = {{"default", {{"max_tasks_per_day", 20}}},
                {"users", {{"alice", {{"max_tokens_per_day", 5000}}}}}};
  auto s = SettingsFromConfig(cfg);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(*s->budgets.all.max_tokens, 100);
  EXPECT_DOUBLE_EQ(*s->budgets.pieces["code"].max_cost, 2);
  QuotaLimits alice = s->quotas.For("alice");
  EXPECT_EQ(*alice.max_tasks_per_day, 20) << "the default fills the keys a user does not set";
  EXPECT_EQ(*alice.max_tokens_per_day, 5000);
  EXPECT_FALSE(s->quotas.For("bob").max_tokens_per_day);

  cfg.budgets = {{"pieces", {{"code", {{"max_tokenz", 1}}}}}};
  cfg.budgets_where = "maestro.yaml:7:1";
  auto bad = SettingsFromConfig(cfg);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "budgets.pieces.code.max_tokenz");
  EXPECT_EQ(bad.status().message().rfind("maestro.yaml:7:1: ", 0), 0u) << bad.status().message();
  cfg.budgets = Json::object();
  cfg.quotas = {{"users", {{"bob", {{"max_tasks_per_day", 0}}}}}};
  EXPECT_EQ(SettingsFromConfig(cfg).status().field(), "quotas.users.bob.max_tasks_per_day");
  cfg.quotas = {{"default", {{"max_schedules", 7}}}};
  EXPECT_EQ(SettingsFromConfig(cfg)->quotas.For("bob").max_schedules, 7);
  cfg.quotas = {{"default", {{"max_schedules", -1}}}};
  EXPECT_EQ(SettingsFromConfig(cfg).status().field(), "quotas.default.max_schedules");
}

TEST(BudgetRule, SpentSumsJobsAndPricesThemByProfile) {
  JobUsage a{"t", "j1", "", 2, 1000, 400, 100, 0};
  JobUsage b{"t", "j2", "free", 1, 50, 0, 10, 0};
  PriceTable prices{{"default", LlmPrice{2, 0.5, 8}}};
  Spent s = SpentFrom({a}, prices, 1000, 61'000);
  EXPECT_EQ(s.tokens, 1100);
  EXPECT_EQ(s.llm_calls, 2);
  EXPECT_DOUBLE_EQ(s.cost, (600 * 2 + 400 * 0.5 + 100 * 8) / 1e6);
  EXPECT_DOUBLE_EQ(s.wall_s, 60);
  Spent both = SpentFrom({a, b}, prices, 0, 61'000);
  EXPECT_EQ(both.tokens, 1160);
  EXPECT_FALSE(both.cost_known) << "'free' has no price";
  EXPECT_EQ(both.wall_s, 0) << "not started";
  EXPECT_TRUE(SpentJson(both)["cost"].is_null());
}

TEST(BudgetRule, QuotasCountTheUtcDay) {
  const TimeMs day = 86'400'000;
  const TimeMs midnight = 20'000 * day;
  EXPECT_EQ(UtcDayStart(midnight + 5), midnight);
  EXPECT_EQ(UtcDayStart(midnight), midnight);
  EXPECT_EQ(SecondsToUtcMidnight(midnight + day - 1500), 2);
  EXPECT_EQ(SecondsToUtcMidnight(midnight), 86400);
  QuotaLimits q;
  q.max_tasks_per_day = 2;
  q.max_tokens_per_day = 1000;
  EXPECT_FALSE(QuotaRefusal(q, "alice", 1, 999));
  EXPECT_EQ(*QuotaRefusal(q, "alice", 2, 0),
            "daily quota of 2 tasks reached for user alice; resets at 00:00 UTC");
  EXPECT_EQ(QuotaRefusal(q, "alice", 0, 1000)->rfind("daily quota of 1000 tokens", 0), 0u);
}

// Issue 44: what a subtask inherits, and the per-user schedule limit.
TEST(BudgetRule, RemainingIsTheLimitMinusTheSpentAndNeverNone) {
  Limits l;
  l.max_tokens = 1000;
  l.max_llm_calls = 5;
  l.max_cost = 0.5;
  l.max_wall_s = 60;
  Spent s;
  s.tokens = 400;
  s.llm_calls = 2;
  s.cost = 0.2;
  s.wall_s = 15;
  Limits r = Remaining(l, s);
  EXPECT_EQ(r.max_tokens, 600);
  EXPECT_EQ(r.max_llm_calls, 3);
  EXPECT_DOUBLE_EQ(*r.max_cost, 0.3);
  EXPECT_DOUBLE_EQ(*r.max_wall_s, 45);
  // Spent (or overspent): still a valid limit that stops the first call.
  s.tokens = 5000;
  s.llm_calls = 9;
  s.cost = 2;
  s.wall_s = 100;
  r = Remaining(l, s);
  EXPECT_EQ(r.max_tokens, 1);
  EXPECT_EQ(r.max_llm_calls, 1);
  EXPECT_GT(*r.max_cost, 0);
  EXPECT_GT(*r.max_wall_s, 0);
  EXPECT_TRUE(ParseLimits(LimitsJson(r), "budget").ok()) << LimitsJson(r).dump();
  Limits calls;
  calls.max_llm_calls = r.max_llm_calls;
  Spent one;
  one.llm_calls = 1;
  EXPECT_TRUE(Check(calls, one, 0).exceeded);
  // Unset keys stay unset.
  EXPECT_TRUE(Remaining(Limits{}, s).empty());
}

TEST(BudgetRule, SchedulesPerUserHaveALimitOf50UnlessConfigured) {
  QuotaLimits q;
  EXPECT_FALSE(ScheduleLimitRefusal(q, "bob", 49));
  auto refusal = ScheduleLimitRefusal(q, "bob", 50);
  ASSERT_TRUE(refusal);
  EXPECT_NE(refusal->find("quotas.max_schedules"), std::string::npos) << *refusal;
  q.max_schedules = 2;
  EXPECT_FALSE(ScheduleLimitRefusal(q, "bob", 1));
  EXPECT_TRUE(ScheduleLimitRefusal(q, "bob", 2));
  Quotas all;
  all.all.max_schedules = 3;
  all.users["carol"].max_tasks_per_day = 1;
  EXPECT_EQ(all.For("carol").max_schedules, 3) << "per key: the default where the user has none";
  EXPECT_EQ(all.For("carol").max_tasks_per_day, 1);
}

}  // namespace
}  // namespace maestro::budget
