#include "engine/budget_step.h"

#include <spdlog/spdlog.h>

#include "engine/agent_loop.h"
#include "engine/sentinel.h"

namespace maestro::engine {
namespace {

Result<budget::Spent> TaskSpent(Store& store, const std::string& task_id, const BudgetContext& b) {
  auto usage = store.ListJobUsage({task_id});
  if (!usage.ok()) return usage.status();
  auto task = store.GetTask(task_id);
  if (!task.ok()) return task.status();
  return budget::SpentFrom(*usage, b.prices, task->started_at, b.clock->NowMs());
}

void Announce(AgentLoopDeps& d, const std::string& movement, const budget::Verdict& v,
              const std::string& text) {
  Event ev;
  ev.task_id = d.task_id;
  ev.job_id = d.job_id;
  ev.type = "budget.exceeded";
  ev.payload = {{"movement", movement}, {"which", v.which}, {"spent", v.spent}, {"limit", v.limit},
                {"next", v.next},       {"unit", v.unit},   {"message", text}};
  if (auto r = d.store->AppendEvent(ev); !r.ok()) {
    spdlog::warn("job {}: budget.exceeded event: {}", d.job_id, r.status().ToString());
  }
  Comment c;
  c.task_id = d.task_id;
  c.job_id = d.job_id;
  c.author = "system";
  c.kind = CommentKind::kNote;
  c.body = "Budget reached: " + text + ".";
  if (auto r = d.store->AddComment(c); !r.ok()) {
    spdlog::warn("job {}: budget comment: {}", d.job_id, r.status().ToString());
  }
}

}  // namespace

std::optional<MovementResult> BudgetStep(AgentLoopDeps& d, const std::string& movement,
                                         int64_t next_prompt_estimate) {
  if (d.budget == nullptr || d.budget->limits.empty() || d.delegate_depth > 0) return std::nullopt;
  auto spent = TaskSpent(*d.store, d.task_id, *d.budget);
  if (!spent.ok()) {
    spdlog::warn("job {}: budget check: {}", d.job_id, spent.status().ToString());
    return std::nullopt;
  }
  budget::Verdict v = budget::Check(d.budget->limits, *spent, next_prompt_estimate);
  if (!v.exceeded) return std::nullopt;
  const std::string text = budget::ExceededText(v);
  spdlog::info("job {}: budget {} reached in movement {}: {}", d.job_id, v.which, movement, text);
  Announce(d, movement, v, text);
  MovementResult r;
  r.movement = movement;
  r.next = std::string(SentinelName(Sentinel::kWaitingHumanBudget));
  r.wait_reason = "budget_exceeded";
  r.resume_movement = movement;
  r.question = text;
  return r;
}

}  // namespace maestro::engine
