// Task routes: create, list, show, comments (the write gate), continue,
// cancel, and the spaces a task may name.
#include <httplib.h>

#include "api/api_server.h"
#include "api/http_util.h"
#include "api/views.h"

namespace maestro {

using api::Reply;
using api::ReplyError;

namespace {

constexpr const char* kTaskPath = R"(/api/local/tasks/([0-9a-fA-F-]{36}))";

Result<NewTask> ParseNewTask(const std::string& text) {
  auto body = api::ParseObject(text);
  if (!body.ok()) return body.status();
  NewTask t;
  MAESTRO_RETURN_IF_ERROR(api::RequiredString(*body, "instruction", &t.instruction));
  MAESTRO_RETURN_IF_ERROR(api::OptionalString(*body, "title", &t.title));
  MAESTRO_RETURN_IF_ERROR(api::OptionalString(*body, "piece", &t.piece));
  MAESTRO_RETURN_IF_ERROR(api::OptionalString(*body, "space", &t.space));
  MAESTRO_RETURN_IF_ERROR(api::OptionalString(*body, "visibility", &t.visibility));
  MAESTRO_RETURN_IF_ERROR(api::OptionalString(*body, "model", &t.model));
  MAESTRO_RETURN_IF_ERROR(api::OptionalString(*body, "profile", &t.profile));
  if (t.piece.empty()) t.piece = "chat";
  if (t.visibility != "private" && t.visibility != "shared") {
    return InvalidArgument("visibility must be private or shared", "visibility");
  }
  return t;
}

}  // namespace

void ApiServer::TaskRoutes() {
  auto& srv = *server_;

  srv.Post("/api/local/tasks", [this](const httplib::Request& req, httplib::Response& res) {
    auto in = ParseNewTask(req.body);
    if (!in.ok()) return ReplyError(res, in.status());
    // Refused here, before anything is written (no task, no job).
    if (Status st = api::CheckNewTask(options_.choices, &*in); !st.ok()) {
      return ReplyError(res, st);
    }
    in->owner = UserOf(req);
    auto created = store_.CreateTask(*in);
    if (!created.ok()) return ReplyError(res, created.status());
    Reply(res, 201, {{"task", api::TaskJson(created->task)}, {"job", api::JobJson(created->job)}});
  });

  srv.Get("/api/spaces", [this](const httplib::Request&, httplib::Response& res) {
    Reply(res, 200, api::SpacesJson(options_.choices));
  });

  srv.Get("/api/local/tasks", [this](const httplib::Request& req, httplib::Response& res) {
    auto tasks = store_.ListTasks(req.get_param_value("status"), 200);
    if (!tasks.ok()) return ReplyError(res, tasks.status());
    std::string user = UserOf(req);
    Json arr = Json::array();
    for (const auto& t : *tasks) {
      if (api::Authenticator::Visible(t, user)) arr.push_back(api::TaskJson(t));
    }
    Reply(res, 200, {{"tasks", arr}});
  });

  srv.Get(kTaskPath, [this](const httplib::Request& req, httplib::Response& res) {
    std::string id = req.matches[1];
    auto task = VisibleTask(id, UserOf(req));
    if (!task.ok()) return ReplyError(res, task.status());
    auto jobs = store_.ListJobs(id);
    if (!jobs.ok()) return ReplyError(res, jobs.status());
    auto requests = store_.ListRequests(id, "");
    if (!requests.ok()) return ReplyError(res, requests.status());
    Json pending = Json::array();
    for (const auto& r : *requests) {
      if (r.status == "pending") pending.push_back(api::RequestJson(r));
    }
    Json all_jobs = Json::array();
    for (const auto& j : *jobs) all_jobs.push_back(api::JobJson(j));
    Reply(res, 200,
          {{"task", api::TaskJson(*task)},
           {"latest_job", jobs->empty() ? Json(nullptr) : api::JobJson(jobs->back())},
           {"jobs", all_jobs},
           {"pending_requests", pending}});
  });

  srv.Get(std::string(kTaskPath) + "/comments",
          [this](const httplib::Request& req, httplib::Response& res) {
            std::string id = req.matches[1];
            if (auto t = VisibleTask(id, UserOf(req)); !t.ok()) return ReplyError(res, t.status());
            auto comments = store_.ListComments(id);
            if (!comments.ok()) return ReplyError(res, comments.status());
            Json arr = Json::array();
            for (const auto& c : *comments) arr.push_back(api::CommentJson(c));
            Reply(res, 200, {{"comments", arr}});
          });

  srv.Post(std::string(kTaskPath) + "/comments",
           [this](const httplib::Request& req, httplib::Response& res) {
             std::string user = UserOf(req);
             if (auto t = VisibleTask(req.matches[1], user); !t.ok()) {
               return ReplyError(res, t.status());
             }
             auto body = api::ParseObject(req.body);
             if (!body.ok()) return ReplyError(res, body.status());
             std::string text;
             if (Status st = api::RequiredString(*body, "body", &text); !st.ok()) {
               return ReplyError(res, st);
             }
             auto r = store_.PostComment(req.matches[1], user, text);
             if (!r.ok()) return ReplyError(res, r.status());
             Reply(res, 201,
                   {{"comment", api::CommentJson(r->comment)},
                    {"outcome", r->outcome},
                    {"job", api::JobJson(r->job)}});
           });

  srv.Post(std::string(kTaskPath) + "/continue", [this](const httplib::Request& req,
                                                        httplib::Response& res) {
    std::string user = UserOf(req);
    if (auto t = VisibleTask(req.matches[1], user); !t.ok()) {
      return ReplyError(res, t.status());
    }
    Json body = Json::object();
    if (!req.body.empty()) {
      auto parsed = api::ParseObject(req.body);
      if (!parsed.ok()) return ReplyError(res, parsed.status());
      body = *parsed;
    }
    std::string piece, note;
    if (Status st = api::OptionalString(body, "piece", &piece); !st.ok()) {
      return ReplyError(res, st);
    }
    if (Status st = api::OptionalString(body, "note", &note); !st.ok()) {
      return ReplyError(res, st);
    }
    if (!piece.empty()) {  // "" keeps the task's piece
      if (Status st = api::CheckPiece(options_.choices, piece); !st.ok()) {
        return ReplyError(res, st);
      }
    }
    auto r = store_.ContinueTask(req.matches[1], piece, user, note);
    if (!r.ok()) return ReplyError(res, r.status());
    Reply(res, 201, {{"job", api::JobJson(r->job)}, {"comment", api::CommentJson(r->handoff)}});
  });

  srv.Post(std::string(kTaskPath) + "/cancel",
           [this](const httplib::Request& req, httplib::Response& res) {
             std::string id = req.matches[1];
             if (auto t = VisibleTask(id, UserOf(req)); !t.ok()) return ReplyError(res, t.status());
             auto jobs = store_.ListJobs(id);
             if (!jobs.ok()) return ReplyError(res, jobs.status());
             CancelReport total;
             for (const auto& j : *jobs) {
               if (IsTerminal(j.status)) continue;
               auto r = store_.RequestCancel(j.id);
               if (!r.ok()) return ReplyError(res, r.status());
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
             Reply(res, 200, {{"cancelled", total.cancelled}, {"stopping", total.flagged}});
           });
}

}  // namespace maestro
