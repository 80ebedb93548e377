#include "api/task_service.h"

#include <fmt/format.h>

#include "api/attachments.h"
#include "api/auth.h"
#include "api/http_util.h"
#include "core/hash.h"
#include "core/ids.h"
#include "store/quota_gate.h"
#include "workspace/workspace.h"

namespace maestro::api {
namespace {

Status CheckVisibility(const std::string& visibility) {
  if (visibility == "private" || visibility == "shared") return Status::Ok();
  return InvalidArgument("visibility must be private or shared", "visibility");
}

// The fields of a create request (POST /api/local/tasks, MCP create_task,
// A2A message/send).
Result<NewTask> NewTaskFromJson(const Json& body) {
  NewTask t;
  t.piece.clear();  // none named: CheckChoices picks it
  MAESTRO_RETURN_IF_ERROR(RequiredString(body, "instruction", &t.instruction));
  MAESTRO_RETURN_IF_ERROR(OptionalString(body, "title", &t.title));
  MAESTRO_RETURN_IF_ERROR(OptionalString(body, "piece", &t.piece));
  MAESTRO_RETURN_IF_ERROR(OptionalString(body, "space", &t.space));
  // Unset: the space decides (a team space's tasks are the team's).
  t.visibility.clear();
  MAESTRO_RETURN_IF_ERROR(OptionalString(body, "visibility", &t.visibility));
  MAESTRO_RETURN_IF_ERROR(OptionalString(body, "model", &t.model));
  MAESTRO_RETURN_IF_ERROR(OptionalString(body, "profile", &t.profile));
  MAESTRO_RETURN_IF_ERROR(OptionalString(body, "mission_id", &t.mission_id));
  MAESTRO_RETURN_IF_ERROR(OptionalInt(body, "priority", kMinPriority, kMaxPriority, &t.priority));
  return t;
}

// The budget.exceeded event the task's job parked with last (its `next`
// estimate decides whether raised limits still stop the call).
double LastParkEstimate(Store& store, const std::string& task_id) {
  auto events = store.ListEvents(task_id, "", 100000);
  double next = 0;
  if (!events.ok()) return next;
  for (const Event& e : *events) {
    if (e.type == "budget.exceeded") next = e.payload.value("next", 0.0);
  }
  return next;
}

}  // namespace

TaskService::TaskService(Store& store, TaskServiceOptions options)
    : store_(store),
      options_(std::move(options)),
      access_(options_.access ? options_.access : std::make_shared<const Access>()) {}

void TaskService::Audit(const std::string& user, const std::string& action, const Task& task,
                        Json detail) {
  if (!options_.audit) return;
  options_.audit->Record(user, action, task.id, access_->TeamOfSpace(task.space),
                         std::move(detail));
}

Result<Task> TaskService::TaskAllowing(const std::string& task_id, const std::string& user,
                                       uint32_t cap) {
  auto task = VisibleTask(task_id, user);
  if (!task.ok()) return task.status();
  MAESTRO_RETURN_IF_ERROR(access_->Allow(*task, user, cap));
  return task;
}

Result<Task> TaskService::Rename(const std::string& task_id, const std::string& user,
                                 const std::string& title) {
  auto task = TaskAllowing(task_id, user, kCapRun);
  if (!task.ok()) return task.status();
  auto renamed = store_.SetTaskTitle(task_id, title);
  if (renamed.ok()) Audit(user, "task.rename", *renamed, {{"title", renamed->title}});
  return renamed;
}

Status TaskService::CheckChoices(const TaskChoices& choices, NewTask* task) {
  MAESTRO_RETURN_IF_ERROR(ChoosePiece(choices, task));
  return CheckNewTask(choices, task);
}

Status TaskService::CheckTemplate(NewTask* task) const {
  return CheckNewTask(options_.choices, task);
}

// The one quota gate of every create path (store/quota_gate.h).
Status TaskService::CheckQuota(const std::string& user) {
  return budget::CheckDailyQuota(store_, options_.budgets.quotas, options_.clock->NowMs(), user,
                                 options_.via);
}

budget::Limits TaskService::BudgetFor(const std::string& piece, const std::string& user,
                                      const budget::Limits& asked) const {
  return budget::Effective(options_.budgets.budgets, piece, user, asked);
}

Status TaskService::ApplyMission(const std::string& user, NewTask* in) {
  if (in->mission_id.empty()) return Status::Ok();
  auto m = VisibleMission(in->mission_id, user);
  if (!m.ok()) {
    if (m.status().code() != StatusCode::kNotFound) return m.status();
    return InvalidArgument("unknown mission '" + SafeEcho(in->mission_id) + "'", "mission_id");
  }
  // A mission of one space keeps its tasks there.
  if (in->space.empty()) in->space = m->space;
  if (!m->space.empty() && in->space != m->space) {
    return InvalidArgument("mission " + m->id + " works in space '" + m->space + "'", "space");
  }
  return Status::Ok();
}

Result<Store::CreatedTask> TaskService::Create(const Json& body, const std::string& user,
                                               const std::vector<UploadedFile>& files) {
  auto in = NewTaskFromJson(body);
  if (!in.ok()) return in.status();
  if (!in->visibility.empty()) MAESTRO_RETURN_IF_ERROR(CheckVisibility(in->visibility));
  auto asked = budget::ParseLimits(body.contains("budget") ? body["budget"] : Json(), "budget");
  if (!asked.ok()) return asked.status();
  return Create(*std::move(in), *asked, user, files);
}

Result<Store::CreatedTask> TaskService::Create(NewTask in, const budget::Limits& asked,
                                               const std::string& user,
                                               const std::vector<UploadedFile>& files) {
  // Refused here, before anything is written (no task, no job).
  if (!in.visibility.empty()) MAESTRO_RETURN_IF_ERROR(CheckVisibility(in.visibility));
  MAESTRO_RETURN_IF_ERROR(ApplyMission(user, &in));
  MAESTRO_RETURN_IF_ERROR(CheckChoices(options_.choices, &in));
  if (in.visibility.empty()) {
    in.visibility = access_->TeamOfSpace(in.space).empty() ? "private" : "shared";
  }
  // Another team's space is as unknown as a missing one; in the caller's
  // own team the role must allow running.
  if (!access_->SpaceVisible(in.space, user)) {
    return InvalidArgument("unknown space: " + SafeEcho(in.space), "space");
  }
  {
    Task as_created;
    as_created.space = in.space;
    MAESTRO_RETURN_IF_ERROR(access_->Allow(as_created, user, kCapRun));
  }
  in.owner = user;
  const budget::Limits limits = BudgetFor(in.piece, user, asked);
  const std::string profile = in.profile.empty() ? "default" : in.profile;
  if (limits.max_cost && !options_.prices.count(profile)) {
    return InvalidArgument(
        fmt::format("budget.max_cost needs a price for the LLM profile '{}', and it has none: set "
                    "{} in the config, or give max_tokens instead",
                    profile,
                    profile == "default" ? "llm.price" : "llm_profiles." + profile + ".price"),
        "budget.max_cost");
  }
  in.budget = budget::LimitsJson(limits);
  MAESTRO_RETURN_IF_ERROR(CheckQuota(user));
  auto created = [&]() -> Result<Store::CreatedTask> {
    if (files.empty()) return store_.CreateTask(in);
    // The files go into the workspace first and the rows with the task, so
    // its first job cannot start without them.
    in.id = NewUuid();
    auto written = StageFiles(in.id, in.space, files);
    if (!written.ok()) return written.status();
    in.attachments = *written;
    auto c = store_.CreateTask(in);
    if (!c.ok()) RemoveAttachments(*options_.env, WorkspaceDirOf(in.id, in.space), *written);
    return c;
  }();
  if (created.ok()) {
    Audit(user, "task.create", created->task,
          {{"piece", created->task.piece},
           {"space", created->task.space},
           {"visibility", created->task.visibility},
           {"files", files.size()}});
  }
  return created;
}

Result<TaskService::Commented> TaskService::Comment(const std::string& task_id,
                                                    const std::string& user,
                                                    const std::string& body,
                                                    const std::vector<UploadedFile>& files) {
  auto task = TaskAllowing(task_id, user, kCapRun);
  if (!task.ok()) return task.status();
  auto written = StageFiles(task_id, task->space, files);
  if (!written.ok()) return written.status();
  auto r = store_.PostComment(task_id, user, body, *written);
  if (!r.ok()) {
    RemoveAttachments(*options_.env, WorkspaceDirOf(task_id, task->space), *written);
    return r.status();
  }
  Commented out{*std::move(r), {}};
  Audit(user, "task.comment", *task,
        {{"comment_id", out.result.comment.id},
         {"outcome", std::string(CommentOutcomeName(out.result.outcome))},
         {"files", written->size()}});
  if (written->empty()) return out;
  // Read back as stored (ids, comment id, times).
  auto all = store_.ListAttachments(task_id);
  if (!all.ok()) return all.status();
  for (Attachment& a : *all) {
    if (a.comment_id == out.result.comment.id) out.attachments.push_back(std::move(a));
  }
  return out;
}

Result<Store::ContinueResult> TaskService::Continue(const std::string& task_id,
                                                    const std::string& user,
                                                    const std::string& piece,
                                                    const std::string& note) {
  auto task = TaskAllowing(task_id, user, kCapRun);
  if (!task.ok()) return task.status();
  if (!piece.empty()) {  // "" keeps the task's piece
    MAESTRO_RETURN_IF_ERROR(CheckPiece(options_.choices, piece));
    // A grounded space runs only its piece, on a Continue as at create.
    NewTask as_created;
    as_created.space = task->space;
    as_created.piece = piece;
    MAESTRO_RETURN_IF_ERROR(ChoosePiece(options_.choices, &as_created));
  }
  auto continued = store_.ContinueTask(task_id, piece, user, note);
  if (continued.ok()) Audit(user, "task.continue", *task, {{"piece", piece}});
  return continued;
}

Result<CancelReport> TaskService::Cancel(const std::string& task_id, const std::string& user) {
  auto task = TaskAllowing(task_id, user, kCapRun);
  if (!task.ok()) return task.status();
  auto jobs = store_.ListJobs(task_id);
  if (!jobs.ok()) return jobs.status();
  CancelReport total;
  for (const auto& j : *jobs) {
    if (IsTerminal(j.status)) continue;
    auto r = store_.RequestCancel(j.id);
    if (!r.ok()) return r.status();
    total.cancelled += r->cancelled;
    total.flagged += r->flagged;
    if (!options_.cancel_running) continue;
    // Stop it now if it runs here (its children run as their own jobs).
    if (j.status == JobStatus::kRunning) options_.cancel_running(j.id);
    if (auto children = store_.ListChildJobs(j.id); children.ok()) {
      for (const auto& c : *children) {
        if (c.status == JobStatus::kRunning) options_.cancel_running(c.id);
      }
    }
  }
  Audit(user, "task.cancel", *task, {{"cancelled", total.cancelled}, {"flagged", total.flagged}});
  return total;
}

Result<TaskService::Decided> TaskService::Decide(const std::string& task_id, RequestKind kind,
                                                 const std::string& request_id,
                                                 const std::string& decision,
                                                 const std::string& scope,
                                                 const std::string& user) {
  auto task = TaskAllowing(task_id, user, kCapDecide);
  if (!task.ok()) return task.status();
  auto existing = store_.GetRequest(request_id);
  if (!existing.ok()) return existing.status();
  if (existing->task_id != task_id || existing->kind != kind) {
    return NotFound("request " + request_id + " not found");
  }
  auto decided = store_.DecideRequest(request_id, decision, scope, user);
  if (!decided.ok()) return decided.status();
  Decided out{*std::move(decided), std::nullopt};
  Audit(user, "request.decide", *task,
        {{"request_id", request_id},
         {"kind", std::string(RequestKindName(kind))},
         {"name", existing->name},
         {"decision", decision},
         {"scope", scope},
         {"args_sha256", Sha256Hex(DumpJson(existing->args))}});
  if (!out.request.job_id.empty()) {
    if (auto job = store_.GetJob(out.request.job_id); job.ok()) out.job = *std::move(job);
  }
  return out;
}

Result<Job> TaskService::RaiseBudget(const std::string& task_id, const std::string& user,
                                     const Json& limits) {
  auto task = TaskAllowing(task_id, user, kCapDecide);
  if (!task.ok()) return task.status();
  auto raise = budget::ParseLimits(limits, "");
  if (!raise.ok()) return raise.status();
  if (raise->empty()) {
    return InvalidArgument("give at least one of max_tokens, max_cost, max_llm_calls, max_wall_s",
                           "budget");
  }
  auto current = budget::ParseLimits(task->budget, "budget");
  const budget::Limits raised = budget::Overlay(current.ok() ? *current : budget::Limits{}, *raise);
  if (raise->max_cost && !options_.prices.count("default")) {
    auto jobs = store_.ListJobs(task_id);
    const std::string profile = jobs.ok() && !jobs->empty() && !jobs->back().profile.empty()
                                    ? jobs->back().profile
                                    : "default";
    if (!options_.prices.count(profile)) {
      return InvalidArgument("max_cost needs a price for the LLM profile '" + profile + "'",
                             "max_cost");
    }
  }
  auto usage = store_.ListJobUsage({task_id});
  if (!usage.ok()) return usage.status();
  const budget::Spent spent =
      budget::SpentFrom(*usage, options_.prices, task->started_at, options_.clock->NowMs());
  const budget::Verdict still =
      budget::Check(raised, spent, static_cast<int64_t>(LastParkEstimate(store_, task_id)));
  if (still.exceeded) {
    return Status(StatusCode::kConflict,
                  "the budget would still be exceeded: " + budget::ExceededText(still),
                  still.which);
  }
  auto resumed = store_.RaiseTaskBudget(task_id, budget::LimitsJson(raised));
  if (resumed.ok()) Audit(user, "budget.raise", *task, {{"limits", budget::LimitsJson(raised)}});
  return resumed;
}

Result<Task> TaskService::VisibleTask(const std::string& task_id, const std::string& user) {
  auto task = store_.GetTask(task_id);
  // Same answer for a missing task and another user's private one: the id
  // of a private task does not leak.
  if ((!task.ok() && task.status().code() == StatusCode::kNotFound) ||
      (task.ok() && !access_->Visible(*task, user))) {
    return NotFound("no such task: " + SafeEcho(task_id));
  }
  return task;
}

Result<Mission> TaskService::VisibleMission(const std::string& id, const std::string& user) {
  auto m = store_.GetMission(id);
  const bool hidden = m.ok() && !access_->Visible(*m, user);
  if ((!m.ok() && m.status().code() == StatusCode::kNotFound) || hidden) {
    return NotFound("no such mission: " + SafeEcho(id));
  }
  return m;
}

std::string TaskService::WorkspaceDirOf(const std::string& task_id,
                                        const std::string& space) const {
  if (!space.empty()) {
    for (const auto& s : options_.choices.spaces) {
      if (s.name == space) return s.path;
    }
    return "";
  }
  if (options_.data_dir.empty()) return "";
  return tools::EphemeralWorkspaceDir(options_.data_dir, task_id);
}

Result<std::vector<Attachment>> TaskService::StageFiles(const std::string& task_id,
                                                        const std::string& space,
                                                        const std::vector<UploadedFile>& files) {
  if (files.empty()) return std::vector<Attachment>();
  const std::string dir = WorkspaceDirOf(task_id, space);
  if (dir.empty()) {
    return Status(StatusCode::kUnavailable, "this server keeps no workspaces: attachments are off",
                  "attachments");
  }
  return WriteAttachments(*options_.env, dir, files);
}

}  // namespace maestro::api
