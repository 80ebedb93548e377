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

}  // namespace

void ApiServer::TaskRoutes() {
  router_.Add("POST", "/api/local/tasks", api::Access::kToken, [this](const api::HttpRequest& req) {
    auto upload = api::ParseUploadRequest(req, options_.attachments);
    if (!upload.ok()) return ReplyError(upload.status());
    auto created = tasks_.Create(upload->fields, req.user, upload->files);
    if (!created.ok() && created.status().code() == StatusCode::kResourceExhausted &&
        created.status().field() == budget::kQuotaField) {
      // A daily quota: come back at the next UTC midnight.
      return api::ReplyTooMany(created.status(),
                               budget::SecondsToUtcMidnight(options_.clock->NowMs()));
    }
    if (!created.ok()) return ReplyError(created.status());
    Result<Json> attached = Json::array();
    if (!upload->files.empty()) attached = reads_.AttachmentsJson(created->task.id, "");
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
    auto tasks = reads_.VisibleTasks(*filter, req.user);
    if (!tasks.ok()) return ReplyError(tasks.status());
    return Reply(200, *tasks);
  });

  router_.Add("GET", kTaskPath, api::Access::kToken, [this](const api::HttpRequest& req) {
    auto detail = reads_.TaskDetail(req.params[0], req.user);
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
    auto with_usage = reads_.TasksWithUsage({*task});
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
                auto r = tasks_.Comment(req.params[0], req.user, text, upload->files);
                if (!r.ok()) return ReplyError(r.status());
                return Reply(201, api::CommentedJson(*r));
              });

  router_.Add("POST", std::string(kTaskPath) + "/continue", api::Access::kToken,
              [this](const api::HttpRequest& req) {
                // Visibility first: another user's task is a 404 whatever the body.
                if (auto t = VisibleTask(req.params[0], req.user); !t.ok()) {
                  return ReplyError(t.status());
                }
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
                auto r = tasks_.Continue(req.params[0], req.user, piece, note);
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
                auto job = tasks_.RaiseBudget(req.params[0], req.user, *body);
                if (!job.ok()) return ReplyError(job.status());
                auto detail = reads_.TaskDetail(req.params[0], req.user);
                if (!detail.ok()) return ReplyError(detail.status());
                (*detail)["job"] = api::JobJson(*job);
                return Reply(200, *detail);
              });

  router_.Add("POST", std::string(kTaskPath) + "/cancel", api::Access::kToken,
              [this](const api::HttpRequest& req) {
                auto total = tasks_.Cancel(req.params[0], req.user);
                if (!total.ok()) return ReplyError(total.status());
                return Reply(200, {{"cancelled", total->cancelled}, {"stopping", total->flagged}});
              });
}

}  // namespace maestro
