// Subtasks of a job (seed 000 §2/§4, seed 001 WAIT_SUBTASKS): what the parent
// agent reads about its children, and the child an approved spawn request
// asked for.
//
// Where it sits: SpinOffTask creates child tasks (parent_job_id = the job);
// WaitSubTask parks the job in waiting_subtasks; the store requeues the parent
// in the same transaction as its last child's end. When the parent resumes,
// PlanJobPrompt adds SummarizeSubtasks' text to the task instruction (seed
// 000's "subtask resume notice"), and a re-issued WaitSubTask with no open
// child is answered with the same text instead of parking again (which would
// requeue at once and loop). For SpinOffTask to another space, the approval
// is a spawn request; EnsureSpawnedTask creates the child once when the
// re-issued call finds the approval.
//
// Spending (issue 44): a subtask is a create path like POST /tasks — its
// owner's daily quota is checked first (store/quota_gate.h), and it counts
// toward that quota — and it starts with its parent's REMAINING budget
// (the parent task's limits minus what the parent's budget tree has spent,
// store/budget.h Remaining), or, when the parent has no limits, the
// config's defaults for its piece and owner: never none. Its spending also
// counts toward every task above it (budget_step.h), so the parent's limit
// caps the parent and all its descendants together.
//
// Thread safety: stateless functions over the Store (which is thread-safe).
#pragma once

#include <string>

#include "engine/loop/budget_step.h"
#include "store/store.h"

namespace maestro::engine {

struct SubtaskSummary {
  int total = 0;     // child jobs of the job
  int pending = 0;   // not yet ended
  std::string text;  // one entry per ended child: title, ids, status, result/error
};

Result<SubtaskSummary> SummarizeSubtasks(Store& store, const std::string& job_id);

// SpinOffTask without a space: the child task of `job_id` in the parent's
// workspace, keyed by (job, call id) so a second attempt — a recovered job
// answering the call a crash left without its result — yields the same
// child. `budget` (the job's BudgetContext; null: no config, as crash
// recovery's re-answer) gives the quotas, defaults, prices and clock. A
// quota refusal is kResourceExhausted (field "quota"). Returns the tool
// result text.
Result<std::string> SpinOffLocal(Store& store, const BudgetContext* budget,
                                 const std::string& task_id, const std::string& job_id,
                                 const std::string& default_piece, const std::string& call_id,
                                 const Json& args);

// The child task of `job_id` that the approved spawn `request` asked for:
// created on the first call, found (same title and space) afterwards, held
// to the quota and budget rules as SpinOffLocal. Returns "task <id> (job <id>)".
Result<std::string> EnsureSpawnedTask(Store& store, const BudgetContext* budget,
                                      const std::string& job_id, const Request& request,
                                      const std::string& default_piece);

}  // namespace maestro::engine
