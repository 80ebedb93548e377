// TaskService: the task operations — create, comment, continue, cancel,
// decide a request, raise a budget — in one place, on plain values, for
// every caller: the REST routes (routes_tasks.cc, routes_requests.cc), the
// MCP tools (routes_mcp.cc), the A2A agent (routes_a2a.cc), the schedule
// routes (routes_schedules.cc: a template's check, the quota of "run now"),
// and `maestro run` and `maestro task create --db` (cli/run.cc,
// cli/local_commands.cc). So a task is checked, counted and staged the same
// way whichever door it comes through.
//
// It owns:
//   - the new-task checks, in one place (CheckChoices + Create): the mission
//     (it must be visible; it may fix the space), the piece chosen when none
//     is named, the piece, space and profile/model (api/task_validation.h),
//     the budget (the config's defaults under what was asked; max_cost needs
//     a price), and the daily quota (store/quota_gate.h) — all before
//     anything is written;
//   - attachment staging: a create's or comment's files are written into the
//     task's workspace first and recorded with the task or comment in one
//     transaction, and removed again when the store refuses it;
//   - visibility: a task, mission or request `user` may not see is
//     kNotFound, the same answer as a missing one (its id does not leak);
//   - roles (issue 49): an operation on a visible task needs the role in
//     the task's team (api/access.h): run for create, comment, continue,
//     cancel, rename; decide for a decision or a budget raise — else
//     kPermissionDenied (403) naming the role and the team;
//   - the audit log: each operation that succeeds is recorded with its
//     actor (api/audit.h).
// Task semantics beyond these checks (the write gate, the continue gate, a
// decision's compare-and-set) stay in the Store.
//
// Errors are Status values naming the field (kInvalidArgument → 400 at the
// HTTP edge); a quota refusal is kResourceExhausted with field
// budget::kQuotaField. The texts are the API's (docs/api.md); the edges
// only map them.
//
// Thread safety: every method may be called from any thread at once; the
// service holds only immutable options and the thread-safe Store.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/access.h"
#include "api/audit.h"
#include "api/task_validation.h"
#include "api/uploaded_file.h"
#include "core/clock.h"
#include "core/env.h"
#include "core/json.h"
#include "core/status.h"
#include "store/budget.h"
#include "store/store.h"

namespace maestro::api {

struct TaskServiceOptions {
  // The pieces, spaces and profiles a task may name.
  TaskChoices choices;
  // Budget defaults and daily quotas (`budgets:` / `quotas:`).
  budget::Settings budgets;
  // USD per million tokens by profile: a max_cost needs the profile's price.
  budget::PriceTable prices;
  // Quotas count since UTC midnight of this clock's day; a raised budget's
  // wall time is measured with it.
  Clock* clock = SystemClock::Default();
  // Writes attachments beneath the task's workspace.
  Env* env = Env::Default();
  // Where ephemeral workspaces are (a task without a space); "" keeps
  // none, so attachments are refused unless the task names a space.
  std::string data_dir;
  // Stops a job running in this process at once (WorkerPool::CancelRunning);
  // other processes see the cancel flag at their next heartbeat. Unset:
  // only the flag.
  std::function<void(const std::string& job_id)> cancel_running;
  // The path a quota refusal's event names ("api", "cli").
  std::string via = "api";
  // Who may see and do what (roles per team, api/access.h); null: the
  // single-user rules (owner, shared, unowned; everyone an operator).
  std::shared_ptr<const Access> access;
  // Where each operation is recorded (api/audit.h); null: not recorded
  // (`maestro run`, tests).
  std::shared_ptr<AuditLog> audit;
};

class TaskService {
 public:
  TaskService(Store& store, TaskServiceOptions options);

  TaskService(const TaskService&) = delete;
  TaskService& operator=(const TaskService&) = delete;

  // ---- create
  // The checks of a new task that need no store: the piece when none is
  // named (a space's own piece, the router, or the default: ChoosePiece),
  // then piece, space and profile/model (CheckNewTask), which may set
  // `task->profile` and `task->model`. Create runs them; `maestro run` runs
  // them before it opens anything, so an unknown piece writes nothing.
  static Status CheckChoices(const TaskChoices& choices, NewTask* task);
  // A schedule's task template: its piece is already set (a schedule's
  // default is "chat"), so only piece, space and profile/model are checked —
  // each fire creates the task as the template says (Store::FireSchedule).
  Status CheckTemplate(NewTask* task) const;
  // The daily quota gate of a new task of `user` (kResourceExhausted, field
  // budget::kQuotaField, and a quota.refused event when refused).
  Status CheckQuota(const std::string& user);
  // The budget limits a task of `piece` for `user` gets: the config's
  // defaults (task > user > piece > default) under `asked`.
  budget::Limits BudgetFor(const std::string& piece, const std::string& user,
                           const budget::Limits& asked) const;

  // Creates the task `in` for `user` (its owner) with `asked` budget limits
  // and `files`, after every check above and the mission's. `in.piece` ""
  // lets the service choose it. Nothing is written when a check fails; the
  // files are in the workspace before the task exists, so its first job
  // sees them.
  Result<Store::CreatedTask> Create(NewTask in, const budget::Limits& asked,
                                    const std::string& user,
                                    const std::vector<UploadedFile>& files);
  // The same from the fields of POST /api/local/tasks (instruction, title,
  // piece, space, visibility, model, profile, mission_id, priority, budget),
  // each checked with its field named.
  Result<Store::CreatedTask> Create(const Json& body, const std::string& user,
                                    const std::vector<UploadedFile>& files);

  // ---- operations on a task `user` may see (kNotFound otherwise)
  struct Commented {
    Store::CommentResult result;
    std::vector<Attachment> attachments;  // as stored with the comment
  };
  // The write gate (Store::PostComment) with `files` staged first.
  Result<Commented> Comment(const std::string& task_id, const std::string& user,
                            const std::string& body, const std::vector<UploadedFile>& files);
  // The continue gate: a new job after a finished one, with `piece` (""
  // keeps the task's; a named one is checked, and a grounded space's task
  // may only name its piece) and `note`.
  Result<Store::ContinueResult> Continue(const std::string& task_id, const std::string& user,
                                         const std::string& piece, const std::string& note);
  // Cancels the task's open jobs (and flags their children); running ones
  // here stop now through `cancel_running`.
  Result<CancelReport> Cancel(const std::string& task_id, const std::string& user);
  struct Decided {
    Request request;
    std::optional<Job> job;  // the job the decision resumed or ended, when it has one
  };
  // Decides request `request_id` of `kind` on the task (a request of another
  // task or kind is kNotFound); the store's compare-and-set lets one win.
  Result<Decided> Decide(const std::string& task_id, RequestKind kind,
                         const std::string& request_id, const std::string& decision,
                         const std::string& scope, const std::string& user);
  // Raises the limits of a task whose job parked on its budget: `limits` is
  // {max_tokens?, max_cost?, max_llm_calls?, max_wall_s?}; kConflict naming
  // the limit when the raised budget would still stop the next call.
  // Returns the resumed job.
  Result<Job> RaiseBudget(const std::string& task_id, const std::string& user, const Json& limits);

  // Renames the task (a title of CheckTitle's rules).
  Result<Task> Rename(const std::string& task_id, const std::string& user,
                      const std::string& title);

  // ---- visibility, roles and where a task's files are
  // The task if it exists and `user` may see it; kNotFound "no such task:
  // <id>" otherwise.
  Result<Task> VisibleTask(const std::string& task_id, const std::string& user);
  // The visible task when `user`'s role on it grants `cap` (kCapRun,
  // kCapDecide: api/access.h); kPermissionDenied naming the role otherwise.
  Result<Task> TaskAllowing(const std::string& task_id, const std::string& user, uint32_t cap);
  // The mission if it exists and `user` may see it; kNotFound "no such
  // mission: <id>" otherwise.
  Result<Mission> VisibleMission(const std::string& id, const std::string& user);
  // Where the task's workspace is (whether or not it exists yet): its
  // space's directory, else its ephemeral one; "" when neither is known.
  std::string WorkspaceDirOf(const std::string& task_id, const std::string& space) const;

  const TaskServiceOptions& options() const { return options_; }
  const Access& access() const { return *access_; }

 private:
  // Writes `files` into the task's workspace (api/attachments.h).
  Result<std::vector<Attachment>> StageFiles(const std::string& task_id, const std::string& space,
                                             const std::vector<UploadedFile>& files);
  // The mission's rules on `in` (visible; its space, if any, is the task's).
  Status ApplyMission(const std::string& user, NewTask* in);

  // Records `action` of `user` on the task (no-op without an audit log).
  void Audit(const std::string& user, const std::string& action, const Task& task, Json detail);

  Store& store_;
  const TaskServiceOptions options_;
  const std::shared_ptr<const Access> access_;  // options_.access, or the single-user rules
};

}  // namespace maestro::api
