// Task routes: create, list, show, rename, comments (the write gate),
// continue, budget, cancel, and the spaces and profiles a task may name.
// Each parses its request and answers; the operation is the TaskService's
// (api/task_service.h), the same one the MCP tools and A2A run, and the
// JSON of a read is TaskReads' (api/task_reads.h).
#include "api/api_server.h"
#include "api/http_util.h"
#include "api/views.h"
#include "store/budget.h"
#include "store/quota_gate.h"
#include "store/title.h"

namespace maestro {

using api::Reply;
using api::ReplyError;

namespace {

constexpr const char* kTaskPath = "/api/local/tasks/{uuid}";

// What the task handlers work with: the operations (TaskService), the JSON
// of reads (TaskReads), the store for the rows a route reads itself, and
// the server's options (upload limits, choices, clock).
struct TaskRouteDeps {
  api::TaskService& tasks;
  api::TaskReads& reads;
  Store& store;
  const ApiOptions& options;
};

// The handlers, one per route (docs/api.md). Another user's task is a 404
// on every one: the service's or the reads' visibility rule answers first.

// POST /api/local/tasks (JSON or multipart with files).
api::HttpResponse CreateTask(const TaskRouteDeps& d, const api::HttpRequest& req) {
  auto upload = api::ParseUploadRequest(req, d.options.attachments);
  if (!upload.ok()) return ReplyError(upload.status());
  auto created = d.tasks.Create(upload->fields, req.user, upload->files);
  if (!created.ok() && created.status().code() == StatusCode::kResourceExhausted &&
      created.status().field() == budget::kQuotaField) {
    // A daily quota: come back at the next UTC midnight.
    return api::ReplyTooMany(created.status(),
                             budget::SecondsToUtcMidnight(d.options.clock->NowMs()));
  }
  if (!created.ok()) return ReplyError(created.status());
  Result<Json> attached = Json::array();
  if (!upload->files.empty()) attached = d.reads.AttachmentsJson(created->task.id, "");
  if (!attached.ok()) return ReplyError(attached.status());
  return Reply(201, {{"task", api::TaskJson(created->task)},
                     {"job", api::JobJson(created->job)},
                     {"attachments", *attached}});
}

// GET /api/spaces: the spaces a task may name — of the caller's teams and
// of none (another team's space is not shown), each with its team.
api::HttpResponse ListSpaces(const TaskRouteDeps& d, const api::HttpRequest& req) {
  const api::Access& access = d.tasks.access();
  Json all = api::SpacesJson(d.options.choices);
  Json seen = Json::array();
  for (auto& s : all["spaces"]) {
    const std::string name = s.value("name", "");
    if (!access.SpaceVisible(name, req.user)) continue;
    s["team"] = access.TeamOfSpace(name);
    seen.push_back(std::move(s));
  }
  return Reply(200, {{"spaces", seen}});
}

// A task's JSON gains its team and what the caller may do on it (the UI
// shows Approve only with can.decide; the server checks again).
void AddTeamAndCan(const api::Access& access, const api::HttpRequest& req, Json* task) {
  Task t;
  t.space = task->value("space", "");
  const uint32_t caps = access.CapsOn(t, req.user) & req.caller.scopes;
  (*task)["team"] = access.TeamOfSpace(t.space);
  (*task)["can"] = {{"run", (caps & api::kCapRun) != 0}, {"decide", (caps & api::kCapDecide) != 0}};
}

// GET /api/profiles: the LLM profiles a create may name (the web UI's
// profile select): names and models, the same for every user (the
// config's), never a URL or key.
api::HttpResponse ListProfiles(const TaskRouteDeps& d) {
  return Reply(200, api::ProfilesJson(d.options.choices));
}

// GET /api/local/tasks[?status=…]: the caller's visible tasks.
api::HttpResponse ListTasks(const TaskRouteDeps& d, const api::HttpRequest& req) {
  auto filter = api::ParseStatusFilter(req.Query("status"));
  if (!filter.ok()) return ReplyError(filter.status());
  auto tasks = d.reads.VisibleTasks(*filter, req.user);
  if (!tasks.ok()) return ReplyError(tasks.status());
  for (auto& t : (*tasks)["tasks"]) AddTeamAndCan(d.tasks.access(), req, &t);
  return Reply(200, *tasks);
}

// GET /api/local/tasks/{id}
api::HttpResponse ShowTask(const TaskRouteDeps& d, const api::HttpRequest& req) {
  auto detail = d.reads.TaskDetail(req.params[0], req.user);
  if (!detail.ok()) return ReplyError(detail.status());
  AddTeamAndCan(d.tasks.access(), req, &(*detail)["task"]);
  return Reply(200, *detail);
}

// PATCH /api/local/tasks/{id}: rename — {"title": "…"} only (1..200
// characters after trimming, no control characters); a task.updated event
// makes live views refresh.
api::HttpResponse RenameTask(const TaskRouteDeps& d, const api::HttpRequest& req) {
  if (auto t = d.tasks.TaskAllowing(req.params[0], req.user, api::kCapRun); !t.ok()) {
    return ReplyError(t.status());
  }
  auto body = api::ParseObject(req.body);
  if (!body.ok()) return ReplyError(body.status());
  if (Status st = api::OnlyFields(*body, {"title"}); !st.ok()) return ReplyError(st);
  const auto it = body->find("title");
  if (it == body->end() || !it->is_string()) {
    return ReplyError(InvalidArgument("title is required and must be a string", "title"));
  }
  std::string title;
  if (Status st = CheckTitle(it->get<std::string>(), &title); !st.ok()) return ReplyError(st);
  auto task = d.tasks.Rename(req.params[0], req.user, title);
  if (!task.ok()) return ReplyError(task.status());
  auto with_usage = d.reads.TasksWithUsage({*task});
  if (!with_usage.ok()) return ReplyError(with_usage.status());
  return Reply(200, {{"task", (*with_usage)[0]}});
}

// GET /api/local/tasks/{id}/comments
api::HttpResponse ListComments(const TaskRouteDeps& d, const api::HttpRequest& req) {
  const std::string& id = req.params[0];
  if (auto t = d.tasks.VisibleTask(id, req.user); !t.ok()) return ReplyError(t.status());
  auto comments = d.store.ListComments(id);
  if (!comments.ok()) return ReplyError(comments.status());
  Json arr = Json::array();
  for (const auto& c : *comments) arr.push_back(api::CommentJson(c));
  return Reply(200, {{"comments", arr}});
}

// POST /api/local/tasks/{id}/comments: the write gate (JSON or multipart).
api::HttpResponse PostComment(const TaskRouteDeps& d, const api::HttpRequest& req) {
  if (auto t = d.tasks.TaskAllowing(req.params[0], req.user, api::kCapRun); !t.ok()) {
    return ReplyError(t.status());
  }
  auto upload = api::ParseUploadRequest(req, d.options.attachments);
  if (!upload.ok()) return ReplyError(upload.status());
  std::string text;
  // With files the text may be left out; without, it is required.
  Status st = upload->files.empty() ? api::RequiredString(upload->fields, "body", &text)
                                    : api::OptionalString(upload->fields, "body", &text);
  if (!st.ok()) return ReplyError(st);
  auto r = d.tasks.Comment(req.params[0], req.user, text, upload->files);
  if (!r.ok()) return ReplyError(r.status());
  return Reply(201, api::CommentedJson(*r));
}

// POST /api/local/tasks/{id}/continue: {piece?, note?}.
api::HttpResponse ContinueTask(const TaskRouteDeps& d, const api::HttpRequest& req) {
  // Visibility first: another user's task is a 404 whatever the body (and
  // a role that cannot run, a 403).
  if (auto t = d.tasks.TaskAllowing(req.params[0], req.user, api::kCapRun); !t.ok()) {
    return ReplyError(t.status());
  }
  Json body = Json::object();
  if (!req.body.empty()) {
    auto parsed = api::ParseObject(req.body);
    if (!parsed.ok()) return ReplyError(parsed.status());
    body = *parsed;
  }
  std::string piece, note;
  if (Status st = api::OptionalString(body, "piece", &piece); !st.ok()) return ReplyError(st);
  if (Status st = api::OptionalString(body, "note", &note); !st.ok()) return ReplyError(st);
  auto r = d.tasks.Continue(req.params[0], req.user, piece, note);
  if (!r.ok()) return ReplyError(r.status());
  return Reply(201, {{"job", api::JobJson(r->job)}, {"comment", api::CommentJson(r->handoff)}});
}

// POST /api/local/tasks/{id}/budget: raise the budget of a task whose job
// parked on it, {max_tokens?, ...}; the job resumes the same movement
// (store/budget.h, docs/api.md).
api::HttpResponse RaiseBudget(const TaskRouteDeps& d, const api::HttpRequest& req) {
  if (auto t = d.tasks.TaskAllowing(req.params[0], req.user, api::kCapDecide); !t.ok()) {
    return ReplyError(t.status());
  }
  auto body = api::ParseObject(req.body);
  if (!body.ok()) return ReplyError(body.status());
  auto job = d.tasks.RaiseBudget(req.params[0], req.user, *body);
  if (!job.ok()) return ReplyError(job.status());
  auto detail = d.reads.TaskDetail(req.params[0], req.user);
  if (!detail.ok()) return ReplyError(detail.status());
  (*detail)["job"] = api::JobJson(*job);
  return Reply(200, *detail);
}

// POST /api/local/tasks/{id}/cancel
api::HttpResponse CancelTask(const TaskRouteDeps& d, const api::HttpRequest& req) {
  auto total = d.tasks.Cancel(req.params[0], req.user);
  if (!total.ok()) return ReplyError(total.status());
  return Reply(200, {{"cancelled", total->cancelled}, {"stopping", total->flagged}});
}

}  // namespace

void ApiServer::TaskRoutes() {
  using api::Need;
  using Req = api::HttpRequest;
  const TaskRouteDeps d{tasks_, reads_, store_, options_};
  const std::string task = kTaskPath;
  router_.Add("POST", "/api/local/tasks", Need::kRun,
              [d](const Req& r) { return CreateTask(d, r); });
  router_.Add("GET", "/api/spaces", Need::kRead, [d](const Req& r) { return ListSpaces(d, r); });
  router_.Add("GET", "/api/profiles", Need::kRead, [d](const Req&) { return ListProfiles(d); });
  router_.Add("GET", "/api/local/tasks", Need::kRead,
              [d](const Req& r) { return ListTasks(d, r); });
  router_.Add("GET", task, Need::kRead, [d](const Req& r) { return ShowTask(d, r); });
  router_.Add("PATCH", task, Need::kRun, [d](const Req& r) { return RenameTask(d, r); });
  router_.Add("GET", task + "/comments", Need::kRead,
              [d](const Req& r) { return ListComments(d, r); });
  router_.Add("POST", task + "/comments", Need::kRun,
              [d](const Req& r) { return PostComment(d, r); });
  router_.Add("POST", task + "/continue", Need::kRun,
              [d](const Req& r) { return ContinueTask(d, r); });
  router_.Add("POST", task + "/budget", Need::kDecide,
              [d](const Req& r) { return RaiseBudget(d, r); });
  router_.Add("POST", task + "/cancel", Need::kRun, [d](const Req& r) { return CancelTask(d, r); });
}

}  // namespace maestro
