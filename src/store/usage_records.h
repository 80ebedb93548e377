// UsageRecords: the usage and budgets role of the Store (store/store.h) —
// what jobs, task trees and users spent (summed from `llm.call` events), and
// the budget gate that raises a task's limits and resumes its parked job.
//
// Who uses it: the engine's budget step sums a task tree's spending
// (engine/loop/budget_step.h); the daily quota gate counts a user's day
// (store/quota_gate.h); the API shows a task's usage and raises its budget
// (api/).
//
// Not pure, so other Store implementations (test fakes) need not provide
// them; the defaults answer kUnimplemented.
//
// Thread safety: every method may be called from any thread concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/json.h"
#include "core/status.h"
#include "store/api_types.h"
#include "store/types.h"
#include "store/unsupported.h"

namespace maestro {

class UsageRecords {
 public:
  virtual ~UsageRecords() = default;

  // The usage of every job of the given tasks that made an LLM call, from
  // their `llm.call` events, in one grouped read: by task, then by the job's
  // first call. Jobs without a call are absent.
  virtual Result<std::vector<JobUsage>> ListJobUsage(const std::vector<std::string>& /*task_ids*/) {
    return NotSupportedByStore();
  }
  // The budget tree of a task (issue 44): the usage, as ListJobUsage, of
  // `task_id` and every task below it (subtasks: tasks whose jobs have a
  // parent_job_id of a job in the tree, at any depth), in one read. The
  // subtasks' spending counts toward every ancestor's budget.
  virtual Result<std::vector<JobUsage>> ListTaskTreeUsage(const std::string& /*task_id*/) {
    return NotSupportedByStore();
  }
  // The budget gate (issue 18): when the task's newest job is parked
  // waiting_human with wait_reason budget_exceeded, sets the task's budget
  // limits to `budget` (store/budget.h LimitsJson), requeues that job to
  // resume its movement and appends a `budget.raised` event {budget, job_id}
  // — one transaction. kConflict (nothing changed) when no job is parked on
  // the budget; kNotFound when the task does not exist. Returns the job.
  virtual Result<Job> RaiseTaskBudget(const std::string& /*task_id*/, const Json& /*budget*/) {
    return NotSupportedByStore();
  }
  // What `owner` used since `since` (the daily quotas): tasks created, and
  // tokens (prompt + completion) of the `llm.call` events of their tasks.
  struct UserUsage {
    int64_t tasks = 0;
    int64_t tokens = 0;
  };
  virtual Result<UserUsage> UserUsageSince(const std::string& /*owner*/, TimeMs /*since*/) {
    return NotSupportedByStore();
  }
};

}  // namespace maestro
