// SpinOffTask's spending rules (issue 44) over a real store on both
// backends: a subtask starts with its parent's remaining budget (the
// parent's limits minus what the parent's whole tree spent), or the config's
// defaults when the parent has none — never none — and it is a create path
// held to the owner's daily quota by the one gate (store/quota_gate.h).
#include <gtest/gtest.h>

#include "engine/loop/subtasks.h"
#include "support/store_fixture.h"

namespace maestro::engine {
namespace {

using maestro::testing::StoreConformance;

class SubtasksBudgetTest : public StoreConformance {
 protected:
  Store::CreatedTask Owned(const std::string& owner, const Json& budget,
                           const std::string& parent_job = "") {
    NewTask t;
    t.instruction = "work";
    t.piece = "ok";
    t.owner = owner;
    t.budget = budget;
    t.parent_job_id = parent_job;
    auto c = store_->CreateTask(t);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : Store::CreatedTask{};
  }
  void LlmCall(const Store::CreatedTask& c, int64_t tokens) {
    Event e;
    e.task_id = c.task.id;
    e.job_id = c.job.id;
    e.type = "llm.call";
    e.payload = {{"promptTokens", tokens - 10}, {"completionTokens", 10}};
    ASSERT_TRUE(store_->AppendEvent(e).ok());
  }
  Result<std::string> SpinOff(const Store::CreatedTask& parent, const std::string& call_id,
                              const BudgetContext* b) {
    return SpinOffLocal(*store_, b, parent.task.id, parent.job.id, "ok", call_id,
                        {{"title", "child " + call_id}, {"instruction", "go"}});
  }
  Json ChildBudget(const Store::CreatedTask& parent, size_t index) {
    auto kids = store_->ListChildJobs(parent.job.id);
    EXPECT_TRUE(kids.ok());
    if (!kids.ok() || kids->size() <= index) return Json();
    return store_->GetTask((*kids)[index].task_id)->budget;
  }
  BudgetContext Context() {
    BudgetContext b;
    b.clock = &clock_;
    b.settings = &settings_;
    return b;
  }

  budget::Settings settings_;
};

TEST_P(SubtasksBudgetTest, AChildGetsWhatTheParentsTreeHasLeft) {
  auto parent = Owned("alice", {{"max_llm_calls", 5}, {"max_tokens", 1000}});
  LlmCall(parent, 100);
  LlmCall(parent, 100);
  auto earlier = Owned("", Json::object(), parent.job.id);  // an earlier subtask's call counts
  LlmCall(earlier, 100);
  const BudgetContext b = Context();
  auto made = SpinOff(parent, "call_1", &b);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(ChildBudget(parent, 1), Json({{"max_tokens", 700}, {"max_llm_calls", 2}}));

  // Spent to the end: the child still carries a (stopping) limit.
  LlmCall(parent, 800);
  ASSERT_TRUE(SpinOff(parent, "call_2", &b).ok());
  EXPECT_EQ(ChildBudget(parent, 2), Json({{"max_tokens", 1}, {"max_llm_calls", 1}}));

  // Crash recovery's re-answer (no config) inherits the same way.
  ASSERT_TRUE(SpinOff(parent, "call_3", nullptr).ok());
  EXPECT_EQ(ChildBudget(parent, 3), Json({{"max_tokens", 1}, {"max_llm_calls", 1}}));
}

TEST_P(SubtasksBudgetTest, AChildOfAParentWithoutLimitsGetsTheConfigDefaults) {
  settings_.budgets.all.max_tokens = 5000;
  settings_.budgets.pieces["ok"].max_llm_calls = 7;
  auto parent = Owned("alice", Json::object());
  const BudgetContext b = Context();
  ASSERT_TRUE(SpinOff(parent, "call_1", &b).ok());
  EXPECT_EQ(ChildBudget(parent, 0), Json({{"max_tokens", 5000}, {"max_llm_calls", 7}}));
}

TEST_P(SubtasksBudgetTest, TheOwnersDailyQuotaRefusesTheChild) {
  settings_.quotas.users["alice"].max_tasks_per_day = 2;
  auto parent = Owned("alice", Json::object());
  const BudgetContext b = Context();
  ASSERT_TRUE(SpinOff(parent, "call_1", &b).ok()) << "the second task of the day";
  auto refused = SpinOff(parent, "call_2", &b);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(refused.status().field(), "quota");
  EXPECT_EQ(refused.status().message(),
            "daily quota of 2 tasks reached for user alice; resets at 00:00 UTC");
  EXPECT_EQ(store_->ListChildJobs(parent.job.id)->size(), 1u) << "nothing written";
  EXPECT_EQ(store_->ComputeApiMetrics()->quota_refusals, 1);
  // Another user's quota is their own.
  auto bobs = Owned("bob", Json::object());
  EXPECT_TRUE(SpinOff(bobs, "call_1", &b).ok());
}

MAESTRO_STORE_CONFORMANCE(SubtasksBudgetTest);

}  // namespace
}  // namespace maestro::engine
