#include "engine/loop/subtasks.h"

#include <fmt/format.h>

#include "store/quota_gate.h"

namespace maestro::engine {
namespace {

constexpr size_t kResultExcerpt = 2000;

// The quota and budget of a new subtask of `parent` (issue 44): refused by
// the owner's daily quota, else `t->budget` is the parent's remaining
// budget, or the config's defaults when the parent has none.
Status HoldToBudget(Store& store, const BudgetContext* b, const Task& parent, NewTask* t) {
  Clock& clock = b && b->clock ? *b->clock : *SystemClock::Default();
  if (b && b->settings) {
    MAESTRO_RETURN_IF_ERROR(budget::CheckDailyQuota(store, b->settings->quotas, clock.NowMs(),
                                                    parent.owner, "subtask"));
  }
  auto limits = budget::ParseLimits(parent.budget, "budget");
  if (limits.ok() && !limits->empty()) {
    const budget::PriceTable none;
    auto spent = TreeSpent(store, parent.id, b ? b->prices : none, clock);
    if (!spent.ok()) return spent.status();
    t->budget = budget::LimitsJson(budget::Remaining(*limits, *spent));
  } else if (b && b->settings) {
    t->budget =
        budget::LimitsJson(budget::Effective(b->settings->budgets, t->piece, parent.owner, {}));
  }
  return Status::Ok();
}

std::string Excerpt(const std::string& s) {
  return s.size() <= kResultExcerpt ? s : s.substr(0, kResultExcerpt) + "…";
}

}  // namespace

Result<SubtaskSummary> SummarizeSubtasks(Store& store, const std::string& job_id) {
  SubtaskSummary out;
  MAESTRO_ASSIGN_OR_RETURN(std::vector<Job> kids, store.ListChildJobs(job_id));
  for (const Job& k : kids) {
    ++out.total;
    if (!IsTerminal(k.status)) {
      ++out.pending;
      continue;
    }
    auto task = store.GetTask(k.task_id);
    std::string title = task.ok() ? task->title : "";
    const std::string& body = k.status == JobStatus::kSucceeded ? k.result : k.error_message;
    out.text += fmt::format("- {} (task {}, job {}): {}\n  {}\n", title, k.task_id, k.id,
                            JobStatusName(k.status), Excerpt(body));
  }
  return out;
}

Result<std::string> SpinOffLocal(Store& store, const BudgetContext* budget,
                                 const std::string& task_id, const std::string& job_id,
                                 const std::string& default_piece, const std::string& call_id,
                                 const Json& args) {
  NewTask t;
  t.title = args.value("title", "");
  t.instruction = args.value("instruction", "");
  std::string piece = args.value("piece", "");
  t.piece = piece.empty() ? default_piece : piece;
  t.parent_job_id = job_id;
  t.spawn_key = job_id + "/" + call_id;
  MAESTRO_ASSIGN_OR_RETURN(Task parent, store.GetTask(task_id));
  // The same workspace as the parent (another space needs approval).
  t.space = parent.space;
  MAESTRO_RETURN_IF_ERROR(HoldToBudget(store, budget, parent, &t));
  MAESTRO_ASSIGN_OR_RETURN(Store::CreatedTask created, store.CreateTask(t));
  return fmt::format("Subtask {} created (job {}). Call WaitSubTask to wait for it.",
                     created.task.id, created.job.id);
}

Result<std::string> EnsureSpawnedTask(Store& store, const BudgetContext* budget,
                                      const std::string& job_id, const Request& request,
                                      const std::string& default_piece) {
  const std::string title = request.args.value("title", "");
  const std::string space = request.args.value("space", "");
  MAESTRO_ASSIGN_OR_RETURN(std::vector<Job> kids, store.ListChildJobs(job_id));
  for (const Job& k : kids) {
    auto task = store.GetTask(k.task_id);
    if (task.ok() && task->title == title && task->space == space) {
      return fmt::format("task {} (job {})", k.task_id, k.id);
    }
  }
  NewTask t;
  t.title = title;
  t.instruction = request.args.value("instruction", "");
  std::string piece = request.args.value("piece", "");
  t.piece = piece.empty() ? default_piece : piece;
  t.space = space;
  t.parent_job_id = job_id;
  MAESTRO_ASSIGN_OR_RETURN(Job parent_job, store.GetJob(job_id));
  MAESTRO_ASSIGN_OR_RETURN(Task parent, store.GetTask(parent_job.task_id));
  MAESTRO_RETURN_IF_ERROR(HoldToBudget(store, budget, parent, &t));
  MAESTRO_ASSIGN_OR_RETURN(Store::CreatedTask created, store.CreateTask(t));
  return fmt::format("task {} (job {})", created.task.id, created.job.id);
}

}  // namespace maestro::engine
