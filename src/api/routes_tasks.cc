// Task routes: create, list, show, comments (the write gate), continue,
// cancel, and the spaces a task may name; and the task operations behind
// them that the MCP tools share (ApiServer::CreateTaskFor, TaskDetail, ...).
#include <fmt/format.h>

#include <map>

#include "api/api_server.h"
#include "api/http_util.h"
#include "api/views.h"
#include "core/ids.h"
#include "store/budget.h"
#include "store/quota_gate.h"
#include "store/title.h"

namespace maestro {

using api::Reply;
using api::ReplyError;

namespace {

constexpr const char* kTaskPath = "/api/local/tasks/{uuid}";

// The fields of a create request (POST /api/local/tasks, MCP create_task).
Result<NewTask> NewTaskFromJson(const Json& body) {
  NewTask t;
  t.piece.clear();  // none named: api::ChoosePiece picks it
  MAESTRO_RETURN_IF_ERROR(api::RequiredString(body, "instruction", &t.instruction));
  MAESTRO_RETURN_IF_ERROR(api::OptionalString(body, "title", &t.title));
  MAESTRO_RETURN_IF_ERROR(api::OptionalString(body, "piece", &t.piece));
  MAESTRO_RETURN_IF_ERROR(api::OptionalString(body, "space", &t.space));
  MAESTRO_RETURN_IF_ERROR(api::OptionalString(body, "visibility", &t.visibility));
  MAESTRO_RETURN_IF_ERROR(api::OptionalString(body, "model", &t.model));
  MAESTRO_RETURN_IF_ERROR(api::OptionalString(body, "profile", &t.profile));
  MAESTRO_RETURN_IF_ERROR(api::OptionalString(body, "mission_id", &t.mission_id));
  MAESTRO_RETURN_IF_ERROR(
      api::OptionalInt(body, "priority", kMinPriority, kMaxPriority, &t.priority));
  if (t.visibility != "private" && t.visibility != "shared") {
    return InvalidArgument("visibility must be private or shared", "visibility");
  }
  return t;
}

// The quota refusal's field: the create route answers it with 429.
constexpr const char* kQuotaField = budget::kQuotaField;

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

// The one quota gate of every create path (store/quota_gate.h).
Status ApiServer::CheckQuota(const std::string& user) {
  return budget::CheckDailyQuota(store_, options_.budgets.quotas, options_.clock->NowMs(), user,
                                 "api");
}

Result<Store::CreatedTask> ApiServer::CreateTaskFor(const Json& body, const std::string& user,
                                                    const std::vector<api::UploadedFile>& files) {
  auto in = NewTaskFromJson(body);
  if (!in.ok()) return in.status();
  auto asked = budget::ParseLimits(body.contains("budget") ? body["budget"] : Json(), "budget");
  if (!asked.ok()) return asked.status();
  // Refused here, before anything is written (no task, no job).
  if (!in->mission_id.empty()) {
    auto m = VisibleMission(in->mission_id, user);
    if (!m.ok()) {
      if (m.status().code() != StatusCode::kNotFound) return m.status();
      return InvalidArgument("unknown mission '" + api::SafeEcho(in->mission_id) + "'",
                             "mission_id");
    }
    // A mission of one space keeps its tasks there.
    if (in->space.empty()) in->space = m->space;
    if (!m->space.empty() && in->space != m->space) {
      return InvalidArgument("mission " + m->id + " works in space '" + m->space + "'", "space");
    }
  }
  MAESTRO_RETURN_IF_ERROR(api::ChoosePiece(options_.choices, &*in));
  MAESTRO_RETURN_IF_ERROR(api::CheckNewTask(options_.choices, &*in));
  in->owner = user;
  const budget::Limits limits =
      budget::Effective(options_.budgets.budgets, in->piece, user, *asked);
  const std::string profile = in->profile.empty() ? "default" : in->profile;
  if (limits.max_cost && !options_.prices.count(profile)) {
    return InvalidArgument(
        fmt::format("budget.max_cost needs a price for the LLM profile '{}', and it has none: set "
                    "{} in the config, or give max_tokens instead",
                    profile,
                    profile == "default" ? "llm.price" : "llm_profiles." + profile + ".price"),
        "budget.max_cost");
  }
  in->budget = budget::LimitsJson(limits);
  MAESTRO_RETURN_IF_ERROR(CheckQuota(user));
  if (files.empty()) return store_.CreateTask(*in);
  // The files go into the workspace first and the rows with the task, so
  // its first job cannot start without them.
  in->id = NewUuid();
  auto written = StoreFiles(in->id, in->space, files);
  if (!written.ok()) return written.status();
  in->attachments = *written;
  auto created = store_.CreateTask(*in);
  if (!created.ok()) {
    api::RemoveAttachments(*options_.env, WorkspaceDirOf(in->id, in->space), *written);
  }
  return created;
}

Result<Json> ApiServer::RaiseBudget(const std::string& task_id, const std::string& user,
                                    const Json& body) {
  auto task = VisibleTask(task_id, user);
  if (!task.ok()) return task.status();
  auto raise = budget::ParseLimits(body, "");
  if (!raise.ok()) return raise.status();
  if (raise->empty()) {
    return InvalidArgument("give at least one of max_tokens, max_cost, max_llm_calls, max_wall_s",
                           "budget");
  }
  auto current = budget::ParseLimits(task->budget, "budget");
  const budget::Limits limits = budget::Overlay(current.ok() ? *current : budget::Limits{}, *raise);
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
      budget::Check(limits, spent, static_cast<int64_t>(LastParkEstimate(store_, task_id)));
  if (still.exceeded) {
    return Status(StatusCode::kConflict,
                  "the budget would still be exceeded: " + budget::ExceededText(still),
                  still.which);
  }
  auto job = store_.RaiseTaskBudget(task_id, budget::LimitsJson(limits));
  if (!job.ok()) return job.status();
  auto detail = TaskDetail(task_id, user);
  if (!detail.ok()) return detail.status();
  (*detail)["job"] = api::JobJson(*job);
  return *detail;
}

Result<Json> ApiServer::TaskDetail(const std::string& task_id, const std::string& user) {
  auto task = VisibleTask(task_id, user);
  if (!task.ok()) return task.status();
  auto jobs = store_.ListJobs(task_id);
  if (!jobs.ok()) return jobs.status();
  auto requests = store_.ListRequests(task_id, std::nullopt);
  if (!requests.ok()) return requests.status();
  auto usage = store_.ListJobUsage({task_id});
  if (!usage.ok()) return usage.status();
  std::map<std::string, api::UsageTotals> by_job;
  api::UsageTotals total;
  for (const auto& u : *usage) {
    api::UsageTotals t = api::JobTotals(u, options_.prices);
    api::AddTotals(&total, t);
    by_job[u.job_id] = t;
  }
  auto job_json = [&](const Job& j) {
    Json out = api::JobJson(j);
    auto it = by_job.find(j.id);
    out["usage"] = api::UsageJson(it == by_job.end() ? api::UsageTotals{} : it->second);
    return out;
  };
  Json pending = Json::array();
  for (const auto& r : *requests) {
    if (r.status == RequestStatus::kPending) pending.push_back(api::RequestJson(r));
  }
  Json all_jobs = Json::array();
  for (const auto& j : *jobs) all_jobs.push_back(job_json(j));
  Json task_json = api::TaskJson(*task);
  task_json["usage"] = api::UsageJson(total);
  task_json["budget"] = api::BudgetJson(*task, *usage, options_.prices, options_.clock->NowMs());
  return Json{{"task", task_json},
              {"latest_job", jobs->empty() ? Json(nullptr) : job_json(jobs->back())},
              {"jobs", all_jobs},
              {"pending_requests", pending}};
}

Result<Json> ApiServer::TasksWithUsage(const std::vector<Task>& tasks) {
  std::vector<std::string> ids;
  ids.reserve(tasks.size());
  for (const auto& t : tasks) ids.push_back(t.id);
  auto usage = store_.ListJobUsage(ids);
  if (!usage.ok()) return usage.status();
  std::map<std::string, api::UsageTotals> by_task;
  std::map<std::string, std::vector<JobUsage>> usage_of;
  for (const auto& u : *usage) {
    api::AddTotals(&by_task[u.task_id], api::JobTotals(u, options_.prices));
    usage_of[u.task_id].push_back(u);
  }
  const TimeMs now = options_.clock->NowMs();
  Json arr = Json::array();
  for (const auto& t : tasks) {
    Json j = api::TaskJson(t);
    auto it = by_task.find(t.id);
    j["usage"] = api::UsageJson(it == by_task.end() ? api::UsageTotals{} : it->second);
    j["budget"] = api::BudgetJson(t, usage_of[t.id], options_.prices, now);
    arr.push_back(std::move(j));
  }
  return arr;
}

Result<Json> ApiServer::VisibleTasks(std::optional<JobStatus> status, const std::string& user) {
  auto tasks = store_.ListTasks(status, 200);
  if (!tasks.ok()) return tasks.status();
  std::vector<Task> visible;
  for (auto& t : *tasks) {
    if (api::Authenticator::Visible(t, user)) visible.push_back(std::move(t));
  }
  auto arr = TasksWithUsage(visible);
  if (!arr.ok()) return arr.status();
  return Json{{"tasks", *arr}};
}

Result<Json> ApiServer::CommentOn(const std::string& task_id, const std::string& user,
                                  const std::string& body,
                                  const std::vector<api::UploadedFile>& files) {
  auto task = VisibleTask(task_id, user);
  if (!task.ok()) return task.status();
  auto written = StoreFiles(task_id, task->space, files);
  if (!written.ok()) return written.status();
  auto r = store_.PostComment(task_id, user, body, *written);
  if (!r.ok()) {
    api::RemoveAttachments(*options_.env, WorkspaceDirOf(task_id, task->space), *written);
    return r.status();
  }
  Json attached = Json::array();
  if (!written->empty()) {
    MAESTRO_ASSIGN_OR_RETURN(attached, AttachmentsJson(task_id, r->comment.id));
  }
  return Json{{"comment", api::CommentJson(r->comment)},
              {"outcome", CommentOutcomeName(r->outcome)},
              {"job", api::JobJson(r->job)},
              {"attachments", attached}};
}

Result<CancelReport> ApiServer::CancelTaskFor(const std::string& task_id, const std::string& user) {
  if (auto t = VisibleTask(task_id, user); !t.ok()) return t.status();
  auto jobs = store_.ListJobs(task_id);
  if (!jobs.ok()) return jobs.status();
  CancelReport total;
  for (const auto& j : *jobs) {
    if (IsTerminal(j.status)) continue;
    auto r = store_.RequestCancel(j.id);
    if (!r.ok()) return r.status();
    total.cancelled += r->cancelled;
    total.flagged += r->flagged;
    // Stop it now if it runs here (its children run as their own jobs).
    if (j.status == JobStatus::kRunning && options_.cancel_running) {
      options_.cancel_running(j.id);
    }
    auto children = store_.ListChildJobs(j.id);
    if (children.ok() && options_.cancel_running) {
      for (const auto& c : *children) {
        if (c.status == JobStatus::kRunning) options_.cancel_running(c.id);
      }
    }
  }
  return total;
}

void ApiServer::TaskRoutes() {
  router_.Add("POST", "/api/local/tasks", api::Access::kToken, [this](const api::HttpRequest& req) {
    auto upload = api::ParseUploadRequest(req, options_.attachments);
    if (!upload.ok()) return ReplyError(upload.status());
    auto created = CreateTaskFor(upload->fields, req.user, upload->files);
    if (!created.ok() && created.status().code() == StatusCode::kResourceExhausted &&
        created.status().field() == kQuotaField) {
      // A daily quota: come back at the next UTC midnight.
      return api::ReplyTooMany(created.status(),
                               budget::SecondsToUtcMidnight(options_.clock->NowMs()));
    }
    if (!created.ok()) return ReplyError(created.status());
    Result<Json> attached = Json::array();
    if (!upload->files.empty()) attached = AttachmentsJson(created->task.id, "");
    if (!attached.ok()) return ReplyError(attached.status());
    return Reply(201, {{"task", api::TaskJson(created->task)},
                       {"job", api::JobJson(created->job)},
                       {"attachments", *attached}});
  });

  router_.Add("GET", "/api/spaces", api::Access::kToken, [this](const api::HttpRequest&) {
    return Reply(200, api::SpacesJson(options_.choices));
  });

  // The LLM profiles a create may name (the web UI's profile select): names
  // and models, the same for every user (the config's), never a URL or key.
  router_.Add("GET", "/api/profiles", api::Access::kToken, [this](const api::HttpRequest&) {
    return Reply(200, api::ProfilesJson(options_.choices));
  });

  router_.Add("GET", "/api/local/tasks", api::Access::kToken, [this](const api::HttpRequest& req) {
    auto filter = api::ParseStatusFilter(req.Query("status"));
    if (!filter.ok()) return ReplyError(filter.status());
    auto tasks = VisibleTasks(*filter, req.user);
    if (!tasks.ok()) return ReplyError(tasks.status());
    return Reply(200, *tasks);
  });

  router_.Add("GET", kTaskPath, api::Access::kToken, [this](const api::HttpRequest& req) {
    auto detail = TaskDetail(req.params[0], req.user);
    if (!detail.ok()) return ReplyError(detail.status());
    return Reply(200, *detail);
  });

  // Rename: {"title": "…"} only (1..200 characters after trimming, no
  // control characters); a task.updated event makes live views refresh.
  router_.Add("PATCH", kTaskPath, api::Access::kToken, [this](const api::HttpRequest& req) {
    if (auto t = VisibleTask(req.params[0], req.user); !t.ok()) return ReplyError(t.status());
    auto body = api::ParseObject(req.body);
    if (!body.ok()) return ReplyError(body.status());
    if (Status st = api::OnlyFields(*body, {"title"}); !st.ok()) return ReplyError(st);
    const auto it = body->find("title");
    if (it == body->end() || !it->is_string()) {
      return ReplyError(InvalidArgument("title is required and must be a string", "title"));
    }
    std::string title;
    if (Status st = CheckTitle(it->get<std::string>(), &title); !st.ok()) return ReplyError(st);
    auto task = store_.SetTaskTitle(req.params[0], title);
    if (!task.ok()) return ReplyError(task.status());
    auto with_usage = TasksWithUsage({*task});
    if (!with_usage.ok()) return ReplyError(with_usage.status());
    return Reply(200, {{"task", (*with_usage)[0]}});
  });

  router_.Add("GET", std::string(kTaskPath) + "/comments", api::Access::kToken,
              [this](const api::HttpRequest& req) {
                std::string id = req.params[0];
                if (auto t = VisibleTask(id, req.user); !t.ok()) return ReplyError(t.status());
                auto comments = store_.ListComments(id);
                if (!comments.ok()) return ReplyError(comments.status());
                Json arr = Json::array();
                for (const auto& c : *comments) arr.push_back(api::CommentJson(c));
                return Reply(200, {{"comments", arr}});
              });

  router_.Add("POST", std::string(kTaskPath) + "/comments", api::Access::kToken,
              [this](const api::HttpRequest& req) {
                if (auto t = VisibleTask(req.params[0], req.user); !t.ok()) {
                  return ReplyError(t.status());
                }
                auto upload = api::ParseUploadRequest(req, options_.attachments);
                if (!upload.ok()) return ReplyError(upload.status());
                std::string text;
                // With files the text may be left out; without, it is required.
                Status st = upload->files.empty()
                                ? api::RequiredString(upload->fields, "body", &text)
                                : api::OptionalString(upload->fields, "body", &text);
                if (!st.ok()) return ReplyError(st);
                auto r = CommentOn(req.params[0], req.user, text, upload->files);
                if (!r.ok()) return ReplyError(r.status());
                return Reply(201, *r);
              });

  router_.Add("POST", std::string(kTaskPath) + "/continue", api::Access::kToken,
              [this](const api::HttpRequest& req) {
                std::string user = req.user;
                auto task = VisibleTask(req.params[0], user);
                if (!task.ok()) return ReplyError(task.status());
                Json body = Json::object();
                if (!req.body.empty()) {
                  auto parsed = api::ParseObject(req.body);
                  if (!parsed.ok()) return ReplyError(parsed.status());
                  body = *parsed;
                }
                std::string piece, note;
                if (Status st = api::OptionalString(body, "piece", &piece); !st.ok()) {
                  return ReplyError(st);
                }
                if (Status st = api::OptionalString(body, "note", &note); !st.ok()) {
                  return ReplyError(st);
                }
                if (!piece.empty()) {  // "" keeps the task's piece
                  if (Status st = api::CheckPiece(options_.choices, piece); !st.ok()) {
                    return ReplyError(st);
                  }
                  // A grounded space runs only its piece, on a Continue as at create.
                  NewTask as_created;
                  as_created.space = task->space;
                  as_created.piece = piece;
                  if (Status st = api::ChoosePiece(options_.choices, &as_created); !st.ok()) {
                    return ReplyError(st);
                  }
                }
                auto r = store_.ContinueTask(req.params[0], piece, user, note);
                if (!r.ok()) return ReplyError(r.status());
                return Reply(201, {{"job", api::JobJson(r->job)},
                                   {"comment", api::CommentJson(r->handoff)}});
              });

  // Raise the budget of a task whose job parked on it: {max_tokens?, ...};
  // the job resumes the same movement (store/budget.h, docs/api.md).
  router_.Add("POST", std::string(kTaskPath) + "/budget", api::Access::kToken,
              [this](const api::HttpRequest& req) {
                auto body = api::ParseObject(req.body);
                if (!body.ok()) return ReplyError(body.status());
                auto r = RaiseBudget(req.params[0], req.user, *body);
                if (!r.ok()) return ReplyError(r.status());
                return Reply(200, *r);
              });

  router_.Add("POST", std::string(kTaskPath) + "/cancel", api::Access::kToken,
              [this](const api::HttpRequest& req) {
                auto total = CancelTaskFor(req.params[0], req.user);
                if (!total.ok()) return ReplyError(total.status());
                return Reply(200, {{"cancelled", total->cancelled}, {"stopping", total->flagged}});
              });
}

}  // namespace maestro
