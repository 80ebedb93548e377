// The budget columns and queries of the Store on both backends: a task's
// budget is stored at create, RaiseTaskBudget sets it and requeues only a
// job parked on its budget (one transaction, a budget.raised event), and
// UserUsageSince counts an owner's tasks and llm.call tokens since a time;
// ListTaskTreeUsage sums a task and every subtask below it (issue 44).
#include <gtest/gtest.h>

#include "store/policy.h"
#include "support/store_fixture.h"

namespace maestro {
namespace {

using testing::StoreConformance;

class BudgetStoreTest : public StoreConformance {
 protected:
  Store::CreatedTask NewOwned(const std::string& owner, const Json& budget) {
    NewTask t;
    t.instruction = "do ok";
    t.piece = "ok";
    t.owner = owner;
    t.budget = budget;
    auto c = store_->CreateTask(t);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : Store::CreatedTask{};
  }
  Store::CreatedTask ChildOf(const Job& parent) {
    NewTask t;
    t.instruction = "child";
    t.piece = "ok";
    t.parent_job_id = parent.id;
    auto c = store_->CreateTask(t);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : Store::CreatedTask{};
  }
  void LlmCall(const Store::CreatedTask& c, int64_t prompt, int64_t completion) {
    Event e;
    e.task_id = c.task.id;
    e.job_id = c.job.id;
    e.type = "llm.call";
    e.payload = {{"promptTokens", prompt}, {"completionTokens", completion}};
    ASSERT_TRUE(store_->AppendEvent(e).ok());
  }
};

TEST_P(BudgetStoreTest, TheBudgetIsStoredAndRaisedOnlyForAJobParkedOnIt) {
  auto c = NewOwned("alice", {{"max_tokens", 100}});
  EXPECT_EQ(c.task.budget, Json({{"max_tokens", 100}}));
  EXPECT_EQ(store_->GetTask(c.task.id)->budget, Json({{"max_tokens", 100}}));

  // Not parked: nothing changes.
  auto early = store_->RaiseTaskBudget(c.task.id, {{"max_tokens", 500}});
  EXPECT_EQ(early.status().code(), StatusCode::kConflict);
  EXPECT_EQ(store_->GetTask(c.task.id)->budget["max_tokens"], 100);

  Job j = Claim();
  ASSERT_EQ(j.id, c.job.id);
  ASSERT_TRUE(
      store_->FinishJob(LeaseOf(j), JobOutcome::WaitingHuman("budget_exceeded", "work")).ok());
  // A comment on it is refused: raise the budget or cancel first.
  auto comment = store_->PostComment(c.task.id, "alice", "go on", {});
  EXPECT_EQ(comment.status().code(), StatusCode::kConflict);
  EXPECT_NE(comment.status().message().find("raise the budget"), std::string::npos);

  auto raised = store_->RaiseTaskBudget(c.task.id, {{"max_tokens", 500}});
  ASSERT_TRUE(raised.ok()) << raised.status().ToString();
  EXPECT_EQ(raised->id, c.job.id);
  EXPECT_EQ(raised->status, JobStatus::kQueued);
  EXPECT_EQ(raised->resume_movement, "work") << "resumes the same movement";
  EXPECT_EQ(store_->GetTask(c.task.id)->budget, Json({{"max_tokens", 500}}));
  auto events = store_->ListEvents(c.task.id, "", 100);
  ASSERT_TRUE(events.ok());
  bool seen = false;
  for (const auto& e : *events) {
    if (e.type == "budget.raised") {
      seen = true;
      EXPECT_EQ(e.payload["budget"]["max_tokens"], 500);
    }
  }
  EXPECT_TRUE(seen);
  EXPECT_EQ(Claim().id, c.job.id) << "claimable again";
  EXPECT_EQ(store_->RaiseTaskBudget(c.task.id, {{"max_tokens", 900}}).status().code(),
            StatusCode::kConflict)
      << "running: no longer parked on the budget";

  // Another park reason is not the budget's.
  auto other = NewOwned("alice", Json::object());
  Job o = Claim();
  ASSERT_EQ(o.id, other.job.id);
  ASSERT_TRUE(store_->FinishJob(LeaseOf(o), JobOutcome::WaitingHuman("ask", "work")).ok());
  EXPECT_EQ(store_->RaiseTaskBudget(other.task.id, {{"max_tokens", 9}}).status().code(),
            StatusCode::kConflict);
  EXPECT_EQ(store_->RaiseTaskBudget("00000000-0000-0000-0000-000000000000", {{"max_tokens", 9}})
                .status()
                .code(),
            StatusCode::kNotFound);
  EXPECT_EQ(NewTaskWith().task.budget, Json::object()) << "no budget: {}";
}

TEST_P(BudgetStoreTest, UserUsageCountsTheOwnersTasksAndTokensSinceATime) {
  auto old = NewOwned("alice", Json::object());
  LlmCall(old, 1000, 100);
  clock_.Advance(60'000);
  const TimeMs since = clock_.NowMs();
  auto a = NewOwned("alice", Json::object());
  auto b = NewOwned("alice", Json::object());
  auto bob = NewOwned("bob", Json::object());
  LlmCall(a, 300, 20);
  LlmCall(b, 50, 5);
  LlmCall(bob, 7000, 700);
  LlmCall(old, 10, 1);  // today's call of yesterday's task counts too
  auto u = store_->UserUsageSince("alice", since);
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->tasks, 2);
  EXPECT_EQ(u->tokens, 300 + 20 + 50 + 5 + 10 + 1);
  auto none = store_->UserUsageSince("carol", since);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->tasks, 0);
  EXPECT_EQ(none->tokens, 0);
}

MAESTRO_STORE_CONFORMANCE(BudgetStoreTest);

TEST_P(BudgetStoreTest, TheTreeUsageSumsATaskAndEverySubtaskBelowIt) {
  auto root = NewOwned("alice", {{"max_llm_calls", 2}});
  auto child = ChildOf(root.job);
  auto grandchild = ChildOf(child.job);
  auto other = NewOwned("alice", Json::object());  // not in the tree
  auto sibling_child = ChildOf(other.job);
  LlmCall(root, 10, 1);
  LlmCall(child, 20, 2);
  LlmCall(child, 20, 2);
  LlmCall(grandchild, 40, 4);
  LlmCall(other, 1000, 1000);
  LlmCall(sibling_child, 1000, 1000);
  auto sum = [&](const std::string& task_id) {
    auto usage = store_->ListTaskTreeUsage(task_id);
    EXPECT_TRUE(usage.ok()) << usage.status().ToString();
    std::pair<int64_t, int64_t> calls_tokens{0, 0};
    for (const JobUsage& u : *usage) {
      calls_tokens.first += u.llm_calls;
      calls_tokens.second += u.prompt_tokens + u.completion_tokens;
    }
    return calls_tokens;
  };
  EXPECT_EQ(sum(root.task.id), std::make_pair(int64_t{4}, int64_t{99}));
  EXPECT_EQ(sum(child.task.id), std::make_pair(int64_t{3}, int64_t{88}));
  EXPECT_EQ(sum(grandchild.task.id), std::make_pair(int64_t{1}, int64_t{44}));
  EXPECT_EQ(sum(other.task.id).first, 2);
  EXPECT_TRUE(store_->ListTaskTreeUsage("no-such-task")->empty());
}

}  // namespace
}  // namespace maestro
