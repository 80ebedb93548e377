#include "engine/loop/budget_step.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "engine/loop/movement_runner.h"
#include "engine/piece/sentinel.h"

namespace maestro::engine {
namespace {

// A budget that stops the next call, and whose it is.
struct Stop {
  budget::Verdict verdict;
  std::string task_id;  // the task whose limit it is
  bool own = true;      // the job's own task (else an ancestor)
};

Result<std::vector<JobUsage>> TreeUsage(Store& store, const std::string& task_id) {
  auto usage = store.ListTaskTreeUsage(task_id);
  if (!usage.ok() && usage.status().code() == StatusCode::kUnimplemented) {
    return store.ListJobUsage({task_id});  // a store without trees: the task alone
  }
  return usage;
}

Result<std::optional<Stop>> CheckOne(Store& store, const Task& task, const budget::Limits& limits,
                                     const BudgetContext& b, int64_t estimate, bool own) {
  if (limits.empty()) return std::optional<Stop>();
  auto usage = TreeUsage(store, task.id);
  if (!usage.ok()) return usage.status();
  const budget::Spent spent =
      budget::SpentFrom(*usage, b.prices, task.started_at, b.clock->NowMs());
  budget::Verdict v = budget::Check(limits, spent, estimate);
  if (!v.exceeded) return std::optional<Stop>();
  return std::optional<Stop>(Stop{v, task.id, own});
}

// The tasks above `task_id`, nearest first (at most kMaxBudgetAncestors).
Result<std::vector<std::string>> Ancestors(Store& store, const std::string& task_id) {
  std::vector<std::string> out;
  std::string id = task_id;
  while (out.size() < static_cast<size_t>(kMaxBudgetAncestors)) {
    auto parent = ParentTaskId(store, id);
    if (!parent.ok()) return parent.status();
    if (parent->empty()) break;
    out.push_back(*parent);
    id = *parent;
  }
  return out;
}

// The first limit the next call would pass: each task above the job's task,
// nearest first — a spent ancestor ends a subtask even when its own limit is
// spent too, as raising its own could not help — then the job's own task
// (its limits as the job started).
Result<std::optional<Stop>> FindStop(Store& store, const std::string& task_id,
                                     const BudgetContext& b, int64_t estimate) {
  if (!b.ancestors) {
    auto found = Ancestors(store, task_id);
    if (!found.ok()) return found.status();
    b.ancestors = std::move(found).value();
  }
  for (const std::string& id : *b.ancestors) {
    auto above = store.GetTask(id);
    if (!above.ok()) return above.status();
    auto limits = budget::ParseLimits(above->budget, "budget");
    if (!limits.ok()) continue;
    auto stop = CheckOne(store, *above, *limits, b, estimate, /*own=*/false);
    if (!stop.ok() || *stop) return stop;
  }
  if (!b.limits.empty()) {
    auto task = store.GetTask(task_id);
    if (!task.ok()) return task.status();
    auto stop = CheckOne(store, *task, b.limits, b, estimate, /*own=*/true);
    if (!stop.ok() || *stop) return stop;
  }
  return std::optional<Stop>();
}

void Announce(AgentLoopDeps& d, const std::string& movement, const Stop& s,
              const std::string& text) {
  Event ev;
  ev.task_id = d.scope.task_id;
  ev.job_id = d.scope.job_id;
  ev.type = "budget.exceeded";
  const budget::Verdict& v = s.verdict;
  ev.payload = {{"movement", movement}, {"which", v.which},
                {"spent", v.spent},     {"limit", v.limit},
                {"next", v.next},       {"unit", v.unit},
                {"message", text},      {"budget_task_id", s.task_id}};
  if (auto r = d.services.store->AppendEvent(ev); !r.ok()) {
    spdlog::warn("job {}: budget.exceeded event: {}", d.scope.job_id, r.status().ToString());
  }
  Comment c;
  c.task_id = d.scope.task_id;
  c.job_id = d.scope.job_id;
  c.author = "system";
  c.kind = CommentKind::kNote;
  c.body = "Budget reached: " + text + ".";
  if (auto r = d.services.store->AddComment(c); !r.ok()) {
    spdlog::warn("job {}: budget comment: {}", d.scope.job_id, r.status().ToString());
  }
}

MovementResult Aborted(const std::string& movement, std::string text) {
  return AbortedMovement(movement, kAbortBudgetExceeded, std::move(text));
}

}  // namespace

Result<std::string> ParentTaskId(Store& store, const std::string& task_id) {
  auto jobs = store.ListJobs(task_id);
  if (!jobs.ok()) return jobs.status();
  for (const Job& j : *jobs) {
    if (j.parent_job_id.empty()) continue;
    auto parent = store.GetJob(j.parent_job_id);
    if (!parent.ok()) return parent.status();
    return parent->task_id;
  }
  return std::string();
}

Result<budget::Spent> TreeSpent(Store& store, const std::string& task_id,
                                const budget::PriceTable& prices, Clock& clock) {
  auto task = store.GetTask(task_id);
  if (!task.ok()) return task.status();
  auto usage = TreeUsage(store, task_id);
  if (!usage.ok()) return usage.status();
  return budget::SpentFrom(*usage, prices, task->started_at, clock.NowMs());
}

std::optional<MovementResult> BudgetStep(AgentLoopDeps& d, const std::string& movement,
                                         int64_t next_prompt_estimate) {
  if (d.scope.budget == nullptr) return std::nullopt;
  auto stop = FindStop(*d.services.store, d.scope.task_id, *d.scope.budget, next_prompt_estimate);
  if (!stop.ok()) {
    spdlog::warn("job {}: budget check: {}", d.scope.job_id, stop.status().ToString());
    return std::nullopt;
  }
  if (!*stop) return std::nullopt;
  const Stop& s = **stop;
  std::string text = budget::ExceededText(s.verdict);
  if (!s.own) text = fmt::format("the budget of the parent task {}: {}", s.task_id, text);
  if (d.loop.delegate_depth > 0) {
    // A sub-agent cannot park the job: it stops, and the delegating agent's
    // next call meets the same budget and parks (or ends) the job.
    spdlog::info("job {}: delegate (depth {}) stopped by budget {} in movement {}: {}",
                 d.scope.job_id, d.loop.delegate_depth, s.verdict.which, movement, text);
    return Aborted(movement, "the task's budget is spent: " + text);
  }
  spdlog::info("job {}: budget {} reached in movement {}: {}", d.scope.job_id, s.verdict.which,
               movement, text);
  Announce(d, movement, s, text);
  if (!s.own) return Aborted(movement, text);
  MovementResult r;
  r.movement = movement;
  r.next = std::string(SentinelName(Sentinel::kWaitingHumanBudget));
  r.wait_reason = "budget_exceeded";
  r.resume_movement = movement;
  r.question = text;
  return r;
}

}  // namespace maestro::engine
