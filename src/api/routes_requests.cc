// Approval request routes: list and decide tool / package / spawn requests.
// A decision is a compare-and-set in the store: exactly one wins, a second
// gets 409; the parked job resumes in the same transaction. The decision is
// the TaskService's Decide (api/task_service.h), as for the MCP tool.
#include "api/api_server.h"
#include "api/http_util.h"
#include "api/views.h"

namespace maestro {

using api::Reply;
using api::ReplyError;

namespace {

// GET /api/local/tasks/{id}/{kind}-requests: the task's requests of `kind`.
api::HttpResponse ListRequests(api::TaskService& tasks, Store& store, RequestKind kind,
                               const api::HttpRequest& req) {
  const std::string& task_id = req.params[0];
  if (auto t = tasks.VisibleTask(task_id, req.user); !t.ok()) return ReplyError(t.status());
  auto list = store.ListRequests(task_id, kind);
  if (!list.ok()) return ReplyError(list.status());
  Json arr = Json::array();
  for (const auto& r : *list) arr.push_back(api::RequestJson(r));
  return Reply(200, {{"requests", arr}});
}

// POST /api/local/tasks/{id}/{kind}-requests/{ulid}/decide: {decision, scope?}.
api::HttpResponse DecideRequest(api::TaskService& tasks, RequestKind kind,
                                const api::HttpRequest& req) {
  const std::string& task_id = req.params[0];
  const std::string& rid = req.params[1];
  // Visibility (404) and the role (403) before the body is read.
  if (auto t = tasks.TaskAllowing(task_id, req.user, api::kCapDecide); !t.ok()) {
    return ReplyError(t.status());
  }
  auto body = api::ParseObject(req.body);
  if (!body.ok()) return ReplyError(body.status());
  std::string decision, scope;
  if (Status st = api::RequiredString(*body, "decision", &decision); !st.ok()) {
    return ReplyError(st);
  }
  if (Status st = api::OptionalString(*body, "scope", &scope); !st.ok()) return ReplyError(st);
  auto out = tasks.Decide(task_id, kind, rid, decision, scope, req.user);
  if (!out.ok()) return ReplyError(out.status());
  return Reply(200, api::DecidedJson(*out));
}

}  // namespace

void ApiServer::RequestRoutes() {
  using Req = api::HttpRequest;
  for (RequestKind kind : {RequestKind::kTool, RequestKind::kPackage, RequestKind::kSpawn}) {
    const std::string base =
        "/api/local/tasks/{uuid}/" + std::string(RequestKindName(kind)) + "-requests";
    router_.Add("GET", base, api::Need::kRead,
                [this, kind](const Req& r) { return ListRequests(tasks_, store_, kind, r); });
    router_.Add("POST", base + "/{ulid}/decide", api::Need::kDecide,
                [this, kind](const Req& r) { return DecideRequest(tasks_, kind, r); });
  }
}

}  // namespace maestro
