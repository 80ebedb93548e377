// Approval request routes: list and decide tool / package / spawn requests.
// A decision is a compare-and-set in the store: exactly one wins, a second
// gets 409; the parked job resumes in the same transaction.
#include "api/api_server.h"
#include "api/http_util.h"
#include "api/views.h"

namespace maestro {

using api::Reply;
using api::ReplyError;

Result<Json> ApiServer::DecideRequestFor(const std::string& task_id, RequestKind kind,
                                         const std::string& request_id, const std::string& decision,
                                         const std::string& scope, const std::string& user) {
  if (auto t = VisibleTask(task_id, user); !t.ok()) return t.status();
  auto existing = store_.GetRequest(request_id);
  if (!existing.ok()) return existing.status();
  if (existing->task_id != task_id || existing->kind != kind) {
    return NotFound("request " + request_id + " not found");
  }
  auto decided = store_.DecideRequest(request_id, decision, scope, user);
  if (!decided.ok()) return decided.status();
  Json out = {{"request", api::RequestJson(*decided)}};
  if (!decided->job_id.empty()) {
    if (auto job = store_.GetJob(decided->job_id); job.ok()) out["job"] = api::JobJson(*job);
  }
  return out;
}

void ApiServer::RequestRoutes() {
  for (RequestKind kind : {RequestKind::kTool, RequestKind::kPackage, RequestKind::kSpawn}) {
    const std::string base =
        "/api/local/tasks/{uuid}/" + std::string(RequestKindName(kind)) + "-requests";

    router_.Add("GET", base, api::Access::kToken, [this, kind](const api::HttpRequest& req) {
      std::string task_id = req.params[0];
      if (auto t = VisibleTask(task_id, req.user); !t.ok()) return ReplyError(t.status());
      auto list = store_.ListRequests(task_id, kind);
      if (!list.ok()) return ReplyError(list.status());
      Json arr = Json::array();
      for (const auto& r : *list) arr.push_back(api::RequestJson(r));
      return Reply(200, {{"requests", arr}});
    });

    router_.Add("POST", base + "/{ulid}/decide", api::Access::kToken,
                [this, kind](const api::HttpRequest& req) {
                  std::string task_id = req.params[0], rid = req.params[1];
                  std::string user = req.user;
                  if (auto t = VisibleTask(task_id, user); !t.ok()) return ReplyError(t.status());
                  auto body = api::ParseObject(req.body);
                  if (!body.ok()) return ReplyError(body.status());
                  std::string decision, scope;
                  if (Status st = api::RequiredString(*body, "decision", &decision); !st.ok()) {
                    return ReplyError(st);
                  }
                  if (Status st = api::OptionalString(*body, "scope", &scope); !st.ok()) {
                    return ReplyError(st);
                  }
                  auto out = DecideRequestFor(task_id, kind, rid, decision, scope, user);
                  if (!out.ok()) return ReplyError(out.status());
                  return Reply(200, *out);
                });
  }
}

}  // namespace maestro
