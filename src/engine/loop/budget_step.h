// The budget check of the agent loop (issues 18 and 44): before every LLM
// call — of the job's own loop and of every delegate sub-agent inside it —
// what was spent is held against the limits of the task and of each task
// above it (store/budget.h Check), with the next prompt's estimate. Spent is
// the `llm.call` events of the whole budget tree: the task, its subtasks and
// theirs (Store::ListTaskTreeUsage), every job, delegates' calls included
// (they are recorded under the job). So a parent's limit caps the parent and
// all its descendants together, and a sub-agent cannot spend past its
// task's limit.
//
// What a verdict does:
//   - the job's own loop, its own task's limit: the movement ends parked —
//     WAITING_HUMAN_BUDGET -> waiting_human / budget_exceeded, resuming the
//     SAME movement — and no call is made; a `budget.exceeded` event and a
//     system comment ("spent X of Y tokens — raise the budget or stop") say
//     why. POST /api/local/tasks/:id/budget raises the limits and requeues
//     the job; the conversation is replayed as it was.
//   - the job's own loop of a subtask, an ANCESTOR's limit: the subtask's
//     job ends (abort budget_exceeded, the same event and comment naming the
//     ancestor): raising the subtask's own budget could not help, and the
//     parent resumes, sees the failed child, and parks on its own budget at
//     its next call.
//   - a delegate sub-agent (delegate_depth > 0): its loop ends (abort
//     budget_exceeded), the delegate tool answers the parent model with an
//     `Error: ... budget ...` result, and the parent's next call parks.
// Calls are made one at a time per job, so a task tree with one job running
// makes at most its limit of calls; each job running at once in the tree
// may pass the check with the last free call (+1 each).
//
// Where it sits: RunMovement, after the prompt guard (which gives the
// estimate), right before the call.
//
// Thread safety: runs on the job's thread; BudgetContext is immutable but
// for its ancestors cache, which only that thread touches.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "engine/loop/movement_result.h"
#include "store/budget.h"
#include "store/store.h"

namespace maestro::engine {

struct AgentLoopDeps;

// The abort reason of a loop stopped by a budget it cannot park on.
inline constexpr const char* kAbortBudgetExceeded = "budget_exceeded";

// How many tasks above a subtask are checked (a deeper tree is cut here:
// SpinOffTask nests far less).
inline constexpr int kMaxBudgetAncestors = 16;

// The job's budget: the task's limits when the job started (they change only
// by RaiseTaskBudget, which requeues a parked job), the price table for
// max_cost, the clock for max_wall_s, and the config's budget defaults and
// quotas for the subtasks it creates (engine/loop/subtasks.h; null: none).
struct BudgetContext {
  budget::Limits limits;
  budget::PriceTable prices;
  Clock* clock = SystemClock::Default();
  const budget::Settings* settings = nullptr;
  // The tasks above the job's task, nearest first: found at the first check
  // and kept (a task's parents never change), so a task with no limits of
  // its own and none above costs no store read per call. Written by
  // BudgetStep on the job's thread only (delegates run on it too).
  mutable std::optional<std::vector<std::string>> ancestors = std::nullopt;
};

// nullopt: the call may be made (no limits, or within them; a store error
// is logged and lets the call go). Else the parked (or, see above, aborted)
// MovementResult.
std::optional<MovementResult> BudgetStep(AgentLoopDeps& deps, const std::string& movement,
                                         int64_t next_prompt_estimate);

// What the budget tree under `task_id` has spent (the task and all its
// subtasks), at the clock's now, wall time from the task's first start.
Result<budget::Spent> TreeSpent(Store& store, const std::string& task_id,
                                const budget::PriceTable& prices, Clock& clock);

// The task `task_id` is a subtask of ("" for a top-level task): the task of
// the parent job of its first job that has one.
Result<std::string> ParentTaskId(Store& store, const std::string& task_id);

}  // namespace maestro::engine
