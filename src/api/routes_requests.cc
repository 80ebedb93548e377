// Approval request routes: list and decide tool / package / spawn requests.
// A decision is a compare-and-set in the store: exactly one wins, a second
// gets 409; the parked job resumes in the same transaction.
#include <httplib.h>

#include "api/api_server.h"
#include "api/http_util.h"
#include "api/views.h"

namespace maestro {

using api::Reply;
using api::ReplyError;

void ApiServer::RequestRoutes() {
  auto& srv = *server_;
  const std::string base = R"(/api/local/tasks/([0-9a-fA-F-]{36})/(tool|package|spawn)-requests)";

  srv.Get(base, [this](const httplib::Request& req, httplib::Response& res) {
    std::string task_id = req.matches[1], kind = req.matches[2];
    if (auto t = VisibleTask(task_id, UserOf(req)); !t.ok()) return ReplyError(res, t.status());
    auto list = store_.ListRequests(task_id, kind);
    if (!list.ok()) return ReplyError(res, list.status());
    Json arr = Json::array();
    for (const auto& r : *list) arr.push_back(api::RequestJson(r));
    Reply(res, 200, {{"requests", arr}});
  });

  srv.Post(base + R"(/([0-9A-Z]{26})/decide)",
           [this](const httplib::Request& req, httplib::Response& res) {
             std::string task_id = req.matches[1], kind = req.matches[2], rid = req.matches[3];
             std::string user = UserOf(req);
             if (auto t = VisibleTask(task_id, user); !t.ok()) return ReplyError(res, t.status());
             auto body = api::ParseObject(req.body);
             if (!body.ok()) return ReplyError(res, body.status());
             std::string decision, scope;
             if (Status st = api::RequiredString(*body, "decision", &decision); !st.ok()) {
               return ReplyError(res, st);
             }
             if (Status st = api::OptionalString(*body, "scope", &scope); !st.ok()) {
               return ReplyError(res, st);
             }
             auto existing = store_.GetRequest(rid);
             if (!existing.ok()) return ReplyError(res, existing.status());
             if (existing->task_id != task_id || existing->kind != kind) {
               return ReplyError(res, NotFound("request " + rid + " not found"));
             }
             auto decided = store_.DecideRequest(rid, decision, scope, user);
             if (!decided.ok()) return ReplyError(res, decided.status());
             Json out = {{"request", api::RequestJson(*decided)}};
             if (!decided->job_id.empty()) {
               if (auto job = store_.GetJob(decided->job_id); job.ok()) {
                 out["job"] = api::JobJson(*job);
               }
             }
             Reply(res, 200, out);
           });
}

}  // namespace maestro
