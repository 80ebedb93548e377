// The budget check of the agent loop (issue 18): before every LLM call of a
// job's own loop, the task's recorded usage (its `llm.call` events, every job
// of the task, this job's calls so far included) and the next prompt's
// estimate are held against the task's limits (store/budget.h Check). When
// the call would pass a limit, the movement ends parked — WAITING_HUMAN_BUDGET
// -> waiting_human / budget_exceeded, resuming the SAME movement — and no
// call is made; a `budget.exceeded` event and a system comment ("spent X of
// Y tokens — raise the budget or stop") say why. POST
// /api/local/tasks/:id/budget raises the limits and requeues the job; the
// conversation is replayed as it was, so the prompt prefix stays cached.
//
// Where it sits: RunMovement, after the prompt guard (which gives the
// estimate), right before the call. Delegate sub-agents (delegate_depth > 0)
// are not checked: their calls count, and the parent's next call parks.
//
// Thread safety: runs on the job's thread; BudgetContext is immutable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/clock.h"
#include "engine/movement_result.h"
#include "store/budget.h"

namespace maestro::engine {

struct AgentLoopDeps;

// The job's budget: the task's limits when the job started (they change only
// by RaiseTaskBudget, which requeues a parked job), the price table for
// max_cost, and the clock for max_wall_s.
struct BudgetContext {
  budget::Limits limits;
  budget::PriceTable prices;
  Clock* clock = SystemClock::Default();
};

// nullopt: the call may be made (no limits, or within them; a store error
// is logged and lets the call go). Else the parked MovementResult.
std::optional<MovementResult> BudgetStep(AgentLoopDeps& deps, const std::string& movement,
                                         int64_t next_prompt_estimate);

}  // namespace maestro::engine
