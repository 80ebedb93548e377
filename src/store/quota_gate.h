// The daily quota gate (issues 18 and 44): the one function that decides
// whether a new task of a user may be created. Every create path calls it
// right before it writes the task — POST /api/local/tasks, the MCP server's
// create_task, A2A message/send, `maestro run` and `task create --db` (all
// through api::TaskService::Create), a schedule's cron fire
// (schedule/scheduler.h) and its "run now", and a job's SpinOffTask
// (engine/loop/subtasks.h). A delegate sub-agent is not a task.
//
// The count is what Store::UserUsageSince reports since the UTC day began:
// the user's tasks created (whatever created them) and the tokens of their
// tasks' LLM calls. Check and create are two steps, so two creates racing
// at the last free slot may both pass; the bound is the number of creates
// in flight at once, not a multiple of the quota.
//
// Thread safety: a stateless function over the Store (thread-safe).
#pragma once

#include <string>

#include "core/clock.h"
#include "core/status.h"
#include "store/budget.h"
#include "store/store.h"

namespace maestro::budget {

// The field of a quota refusal (the create route answers it with 429).
inline constexpr const char* kQuotaField = "quota";

// Ok when `user` may create one more task at `now` under `quotas`. Else
// kResourceExhausted with field kQuotaField and the refusal text
// ("daily quota of 5 tasks reached for user alice; resets at 00:00 UTC"),
// after a task-less `quota.refused` event {user, message, via} is appended
// (maestro_quota_refusals_total counts them). `via` names the path
// ("api", "schedule", "subtask"); `record` false skips the event (a check
// repeated every scheduler tick). A store error is returned as it is.
Status CheckDailyQuota(Store& store, const Quotas& quotas, TimeMs now, const std::string& user,
                       const std::string& via, bool record = true);

}  // namespace maestro::budget
