// A2A routes: maestro as an Agent2Agent agent (a2a_endpoint.h has the
// protocol's behaviour). This file only wires the endpoint to the
// TaskService (api/task_service.h) — the same operations the REST routes
// and /mcp run — and mounts it:
//
//   GET  /.well-known/agent-card.json  open (ApiServer::Dispatch guards only
//                                      /api/local/*, /mcp, /a2a, ...)
//   POST /a2a                          bearer-authenticated JSON-RPC
#include <algorithm>

#include "api/a2a_endpoint.h"
#include "api/api_server.h"

namespace maestro {

using api::HttpRequest;

void ApiServer::A2aRoutes() {
  api::a2a::A2aTaskOps ops;
  ops.create = [this](const Json& body, const std::string& user) {
    return tasks_.Create(body, user, {});  // A2A text parts only: no files
  };
  ops.visible_task = [this](const std::string& task_id, const std::string& user) {
    return tasks_.VisibleTask(task_id, user);
  };
  ops.comment = [this](const std::string& task_id, const std::string& user,
                       const std::string& body) -> Result<Json> {
    auto r = tasks_.Comment(task_id, user, body, {});
    if (!r.ok()) return r.status();
    return api::CommentedJson(*r);
  };
  ops.cancel = [this](const std::string& task_id, const std::string& user) {
    return tasks_.Cancel(task_id, user);
  };
  ops.pieces_json = options_.pieces_json;
  api::a2a::A2aOptions ao;
  ao.version = options_.version;
  ao.listen = options_.http.host + ":" + std::to_string(options_.http.port);
  // Half the handler pool at most: the other routes always keep threads.
  ao.max_blocking_waits = std::max<size_t>(1, options_.http.handler_threads / 2);
  ao.stream_key = [](const HttpRequest& req) { return StreamKey(req); };
  ao.push.egress = options_.egress;
  ao.live = &hub_;
  a2a_ = std::make_shared<api::a2a::A2aEndpoint>(store_, signal_, std::move(ops), std::move(ao));
  api::a2a::A2aEndpoint* a2a = a2a_.get();
  router_.Add("GET", "/.well-known/agent-card.json", api::Need::kPublic,
              [a2a](const HttpRequest& req) { return a2a->Card(req); });
  router_.Add("POST", "/a2a", api::Need::kRun,
              [a2a](const HttpRequest& req) { return a2a->Post(req); });
}

}  // namespace maestro
