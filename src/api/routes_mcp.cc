// MCP routes: maestro as an MCP server at `/mcp` (Streamable HTTP, MCP
// 2025-11-25; 2025-06-18 and 2025-03-26 clients accepted). The protocol
// pieces (versions, sessions, tool schemas, progress texts) are in
// mcp_server.h; this file answers the HTTP requests and runs the tools on
// the TaskService (api/task_service.h) and TaskReads (api/task_reads.h),
// the same code as the REST routes.
//
//   POST   /mcp  one JSON-RPC message (no batches). A request is answered
//                with application/json — or, for create_task with `wait` or
//                a progress token, with an SSE stream: notifications/progress
//                for the task's events, then the tools/call response once
//                the task's jobs are all finished or waiting for a person.
//                Notifications and responses → 202.
//   DELETE /mcp  ends the session (Mcp-Session-Id) → 204.
//   GET    /mcp  405: there is no server-initiated stream.
//
// The bearer token's user is the MCP user (ApiServer::Handle authenticates
// /mcp like /api/local/*): a session belongs to its user, and the tools see
// only the tasks that user may see.
#include <spdlog/spdlog.h>
#include <strings.h>

#include <algorithm>

#include "api/api_server.h"
#include "api/http_util.h"
#include "api/mcp_server.h"
#include "api/views.h"

namespace maestro {

namespace mcp = api::mcp;
using api::HttpRequest;
using api::HttpResponse;

namespace {

HttpResponse Rpc(int http_status, const Json& message) {
  HttpResponse r;
  r.status = http_status;
  r.body = DumpJson(message);
  return r;
}

HttpResponse Accepted() {
  HttpResponse r;
  r.status = 202;
  return r;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The MCP client must accept both a JSON answer and an SSE stream.
bool AcceptsJsonAndSse(const std::string& accept) {
  const std::string a = Lower(accept);
  const bool any = a.find("*/*") != std::string::npos;
  return any || (a.find("application/json") != std::string::npos &&
                 a.find("text/event-stream") != std::string::npos);
}

bool IsJsonContentType(const std::string& content_type) {
  const std::string c = Lower(content_type);
  return c.rfind("application/json", 0) == 0;
}

// A browser page may only talk to /mcp from the server's own origin (DNS
// rebinding: the spec's Origin check). Clients outside a browser send none.
bool OriginAllowed(const HttpRequest& req) {
  const std::string origin = req.Header("Origin");
  if (origin.empty()) return true;
  const size_t scheme = origin.find("://");
  if (scheme == std::string::npos) return false;
  const std::string host = req.Header("Host");
  return !host.empty() && strcasecmp(origin.substr(scheme + 3).c_str(), host.c_str()) == 0;
}

// The string field `key` of object `o`, or "" (never throws on a wrong type).
std::string StringField(const Json& o, const char* key) {
  if (!o.is_object() || !o.contains(key) || !o[key].is_string()) return "";
  return o[key].get<std::string>();
}

bool ValidId(const Json& id) { return id.is_string() || id.is_number_integer(); }

// The text a tool failure gives the model: the status's own message (it
// names the field), never an internal detail.
std::string FailureText(const Status& st) {
  if (st.code() == StatusCode::kInternal) {
    spdlog::error("mcp: {}", st.ToString());
    return "internal error (see the maestro server log)";
  }
  return st.message();
}

// A task is settled when none of its jobs can move without a person: each
// is finished (succeeded, failed, cancelled) or waiting_human. A handoff's
// continuation, a retry or a follow-up keep it open.
bool Settled(const std::vector<Job>& jobs) {
  if (jobs.empty()) return false;
  return std::all_of(jobs.begin(), jobs.end(), [](const Job& j) {
    return IsTerminal(j.status) || j.status == JobStatus::kWaitingHuman;
  });
}

std::string JobStatusOf(const Json& job) { return StringField(job, "status"); }

}  // namespace

// What the endpoint runs on: the task operations and reads (shared with the
// REST routes), the store and signal a create_task wait watches, and its
// limits.
struct McpEndpointDeps {
  api::TaskService& tasks;
  api::TaskReads& reads;
  Store& store;
  notify::EventSignal& signal;
  std::string version;  // serverInfo.version
  size_t max_sessions = 1000;
  size_t max_sessions_per_user = 32;
  std::chrono::milliseconds session_idle{30 * 60 * 1000};
  // Concurrent streams are capped per key (HttpResponse::stream_key).
  std::function<std::string(const HttpRequest&)> stream_key;
};

// The session table and the JSON-RPC dispatch of /mcp; one per ApiServer.
class McpEndpoint {
 public:
  explicit McpEndpoint(McpEndpointDeps deps)
      : deps_(std::move(deps)),
        sessions_(deps_.max_sessions, deps_.max_sessions_per_user, deps_.session_idle) {}

  HttpResponse Post(const HttpRequest& req);
  HttpResponse Delete(const HttpRequest& req);
  // The tools/call result of a settled create_task wait (the stream's end).
  Json SettledResult(const std::string& task_id, const std::string& user,
                     const std::string& version);

 private:
  HttpResponse Dispatch(const HttpRequest& req, const Json& msg);
  HttpResponse Initialize(const HttpRequest& req, const Json& id, const Json& params);
  void Notify(const std::string& session_id, const std::string& method, const Json& params);
  HttpResponse CallTool(const HttpRequest& req, const std::string& session_id,
                        const mcp::McpSessionInfo& session, const Json& id, const Json& params);
  HttpResponse CreateTask(const HttpRequest& req, const std::string& session_id,
                          const mcp::McpSessionInfo& session, const Json& id, const Json& args,
                          const Json& progress_token);
  // get_task, list_tasks, comment, decide_request, cancel_task.
  Json RunTool(const std::string& name, const Json& args, const std::string& user,
               const std::string& version);

  McpEndpointDeps deps_;
  mcp::McpSessions sessions_;
};

namespace {

// create_task with `wait`: the task's events become notifications/progress
// (when the client gave a progress token) and the stream ends with the
// tools/call response once the task is settled. Like TaskEventsSource it
// holds no events in memory: it reads "events after N" when the task got a
// commit, and polls once a second for what another process committed.
// `notifications/cancelled` for its request (or DELETE of the session)
// ends it without a response, as the spec wants; the task goes on.
class McpWaitSource : public api::StreamSource {
 public:
  McpWaitSource(McpEndpoint& endpoint, Store& store, notify::EventSignal& signal,
                std::string task_id, std::string user, std::string version, Json request_id,
                Json progress_token, std::shared_ptr<mcp::McpWait> control)
      : endpoint_(endpoint),
        store_(store),
        signal_(signal),
        task_id_(std::move(task_id)),
        user_(std::move(user)),
        version_(std::move(version)),
        request_id_(std::move(request_id)),
        progress_token_(std::move(progress_token)),
        control_(std::move(control)) {}
  ~McpWaitSource() override {
    control_->SetWake(nullptr);
    if (watch_ != 0) signal_.Unwatch(watch_);
  }
  void Watch(std::function<void()> wake) override {
    control_->SetWake(wake);
    watch_ = signal_.WatchTask(task_id_, std::move(wake));
  }
  Step Pull(bool, std::string* out) override {
    if (control_->cancelled()) return Step::kEnd;
    // Jobs before events: a job that settled is then always reported with
    // the events up to its last status change.
    auto jobs = store_.ListJobs(task_id_);
    if (!jobs.ok()) return Fail(jobs.status(), out);
    const bool settled = Settled(*jobs);
    auto events = store_.ListEvents(task_id_, cursor_, kBatch);
    if (!events.ok()) return Fail(events.status(), out);
    for (const auto& e : *events) {
      cursor_ = e.id;
      if (progress_token_.is_null()) continue;
      Json params = {{"progressToken", progress_token_},
                     {"progress", ++progress_},
                     {"message", mcp::ProgressMessage(e)}};
      Send(mcp::RpcNotification("notifications/progress", std::move(params)), out);
    }
    if (events->size() == kBatch) return Step::kMore;
    if (!settled) return Step::kIdle;
    Send(mcp::RpcResult(request_id_, endpoint_.SettledResult(task_id_, user_, version_)), out);
    return Step::kEnd;
  }
  std::chrono::milliseconds poll_interval() const override { return kPollInterval; }

 private:
  static constexpr size_t kBatch = 200;
  static constexpr std::chrono::milliseconds kPollInterval{1000};

  static void Send(const Json& message, std::string* out) {
    out->append(api::SseFrame("", "message", DumpJson(message)));
  }
  Step Fail(const Status& st, std::string* out) {
    spdlog::error("mcp: create_task wait for task {}: {}", task_id_, st.ToString());
    Send(mcp::RpcError(request_id_, mcp::kInternalError, "internal error"), out);
    return Step::kEnd;
  }

  McpEndpoint& endpoint_;
  Store& store_;
  notify::EventSignal& signal_;
  const std::string task_id_;
  const std::string user_;
  const std::string version_;
  const Json request_id_;
  const Json progress_token_;
  const std::shared_ptr<mcp::McpWait> control_;
  std::string cursor_;
  int64_t progress_ = 0;
  uint64_t watch_ = 0;
};

}  // namespace

HttpResponse McpEndpoint::Post(const HttpRequest& req) {
  if (!OriginAllowed(req)) {
    return Rpc(403, mcp::RpcError(nullptr, mcp::kInvalidRequest, "Origin not allowed"));
  }
  if (!IsJsonContentType(req.Header("Content-Type"))) {
    return Rpc(
        415, mcp::RpcError(nullptr, mcp::kInvalidRequest, "Content-Type must be application/json"));
  }
  if (!AcceptsJsonAndSse(req.Header("Accept"))) {
    return Rpc(406, mcp::RpcError(nullptr, mcp::kInvalidRequest,
                                  "Accept must list application/json and text/event-stream"));
  }
  // An unsupported version is refused (before the session check, so also
  // without one); a supported one other than the session's is tolerated —
  // answers keep the session's negotiated version.
  if (std::string v = req.Header("MCP-Protocol-Version");
      !v.empty() && !mcp::IsSupportedVersion(v)) {
    std::string all;
    for (const auto& s : mcp::SupportedVersions()) all += (all.empty() ? "" : ", ") + s;
    return Rpc(400, mcp::RpcError(nullptr, mcp::kInvalidRequest,
                                  "unsupported MCP-Protocol-Version; supported: " + all));
  }
  const size_t first = req.body.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && req.body[first] == '[') {
    return Rpc(400, mcp::RpcError(nullptr, mcp::kInvalidRequest,
                                  "JSON-RPC batches are not supported: send one message per POST"));
  }
  auto body = api::ParseObject(req.body);  // valid UTF-8, bounded nesting; no parser text
  if (!body.ok()) {
    return Rpc(400,
               mcp::RpcError(nullptr, mcp::kParseError, "parse error: " + body.status().message()));
  }
  try {
    return Dispatch(req, *body);
  } catch (const std::exception& e) {
    spdlog::error("mcp: request failed: {}", e.what());
    const Json id = body->contains("id") && ValidId((*body)["id"]) ? (*body)["id"] : Json(nullptr);
    return Rpc(500, mcp::RpcError(id, mcp::kInternalError, "internal error"));
  }
}

HttpResponse McpEndpoint::Dispatch(const HttpRequest& req, const Json& msg) {
  const bool has_id = msg.contains("id");
  const Json id = has_id && ValidId(msg["id"]) ? msg["id"] : Json(nullptr);
  if (StringField(msg, "jsonrpc") != "2.0") {
    return Rpc(400, mcp::RpcError(id, mcp::kInvalidRequest, "jsonrpc must be \"2.0\""));
  }
  if (has_id && id.is_null()) {
    return Rpc(400,
               mcp::RpcError(nullptr, mcp::kInvalidRequest, "id must be a string or an integer"));
  }
  const bool has_method = msg.contains("method") && msg["method"].is_string();
  const bool is_response =
      !has_method && has_id && (msg.contains("result") || msg.contains("error"));
  if (!has_method && !is_response) {
    return Rpc(400, mcp::RpcError(id, mcp::kInvalidRequest,
                                  "not a JSON-RPC request, notification or response"));
  }
  const std::string method = has_method ? msg["method"].get<std::string>() : "";
  const Json params = msg.contains("params") ? msg["params"] : Json::object();
  if (method == "initialize") {
    if (!has_id) {
      return Rpc(400, mcp::RpcError(nullptr, mcp::kInvalidRequest,
                                    "initialize is a request: it needs an id"));
    }
    return Initialize(req, id, params);
  }

  const std::string session_id = req.Header("Mcp-Session-Id");
  if (session_id.empty()) {
    return Rpc(400, mcp::RpcError(id, mcp::kInvalidRequest,
                                  "Mcp-Session-Id header required: send initialize first"));
  }
  auto session = sessions_.Find(session_id, req.user);
  if (!session) {
    return Rpc(404, mcp::RpcError(id, mcp::kSessionNotFound,
                                  "session not found (expired or ended): initialize a new one"));
  }
  if (is_response) return Accepted();  // maestro sends no requests; nothing waits for one
  if (!has_id) {
    Notify(session_id, method, params);
    return Accepted();
  }
  if (!params.is_object()) {
    return Rpc(200, mcp::RpcError(id, mcp::kInvalidParams, "params must be an object"));
  }
  if (method == "ping") return Rpc(200, mcp::RpcResult(id, Json::object()));
  if (method == "tools/list") {
    return Rpc(200, mcp::RpcResult(id, {{"tools", mcp::ToolDefinitions(session->version)}}));
  }
  if (method == "tools/call") return CallTool(req, session_id, *session, id, params);
  return Rpc(200, mcp::RpcError(id, mcp::kMethodNotFound, "Method not found: " + method));
}

HttpResponse McpEndpoint::Initialize(const HttpRequest& req, const Json& id, const Json& params) {
  const std::string requested = StringField(params, "protocolVersion");
  if (requested.empty()) {
    return Rpc(200,
               mcp::RpcError(id, mcp::kInvalidParams, "initialize needs params.protocolVersion"));
  }
  const std::string version = mcp::NegotiateVersion(requested);
  auto session_id = sessions_.Create(req.user, version);
  if (!session_id.ok() && session_id.status().code() == StatusCode::kUnavailable) {
    // Full of other users' live sessions: refused, none of theirs is ended.
    HttpResponse busy =
        Rpc(503, mcp::RpcError(id, mcp::kServerBusy, session_id.status().message()));
    busy.headers.emplace_back("Retry-After", "5");
    return busy;
  }
  if (!session_id.ok()) {
    spdlog::error("mcp: cannot create a session: {}", session_id.status().ToString());
    return Rpc(500, mcp::RpcError(id, mcp::kInternalError, "internal error"));
  }
  Json server_info = {{"name", "maestro"}, {"version", deps_.version}};
  if (mcp::HasStructuredContent(version)) server_info["title"] = "maestro agent task server";
  Json result = {
      {"protocolVersion", version},
      {"capabilities", {{"tools", {{"listChanged", false}}}}},
      {"serverInfo", server_info},
      {"instructions",
       "maestro runs agent tasks. create_task starts one (wait: true streams progress and "
       "returns its result); get_task / list_tasks show tasks; comment answers a question "
       "or adds guidance; decide_request approves or denies a pending tool, package or spawn "
       "request; cancel_task stops a task."}};
  HttpResponse res = Rpc(200, mcp::RpcResult(id, std::move(result)));
  res.headers.emplace_back("Mcp-Session-Id", *session_id);
  return res;
}

void McpEndpoint::Notify(const std::string& session_id, const std::string& method,
                         const Json& params) {
  if (method == "notifications/initialized") {
    sessions_.MarkInitialized(session_id);
  } else if (method == "notifications/cancelled" && params.is_object() &&
             params.contains("requestId") && ValidId(params["requestId"])) {
    sessions_.CancelWait(session_id, DumpJson(params["requestId"]));
  }
  // Any other notification (roots/list_changed, progress...) is not for us.
}

HttpResponse McpEndpoint::Delete(const HttpRequest& req) {
  if (!OriginAllowed(req)) {
    return Rpc(403, mcp::RpcError(nullptr, mcp::kInvalidRequest, "Origin not allowed"));
  }
  const std::string session_id = req.Header("Mcp-Session-Id");
  if (session_id.empty()) {
    return Rpc(400, mcp::RpcError(nullptr, mcp::kInvalidRequest, "Mcp-Session-Id header required"));
  }
  if (!sessions_.Remove(session_id, req.user)) {
    return Rpc(404, mcp::RpcError(nullptr, mcp::kSessionNotFound, "session not found"));
  }
  HttpResponse res;
  res.status = 204;
  return res;
}

HttpResponse McpEndpoint::CallTool(const HttpRequest& req, const std::string& session_id,
                                   const mcp::McpSessionInfo& session, const Json& id,
                                   const Json& params) {
  const std::string name = StringField(params, "name");
  if (name.empty()) {
    return Rpc(200, mcp::RpcError(id, mcp::kInvalidParams, "tools/call needs params.name"));
  }
  if (!mcp::IsKnownTool(name)) {
    return Rpc(200, mcp::RpcError(id, mcp::kInvalidParams, "Unknown tool: " + name));
  }
  const Json args = params.contains("arguments") ? params["arguments"] : Json::object();
  if (!args.is_object()) {
    return Rpc(200, mcp::RpcError(id, mcp::kInvalidParams, "arguments must be an object"));
  }
  const auto known = mcp::ToolArguments(name);
  for (const auto& [key, value] : args.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    return Rpc(200, mcp::RpcResult(id, mcp::ToolError("unknown argument '" + key + "' for " + name +
                                                      "; it takes: " + list)));
  }
  Json progress_token = nullptr;
  if (params.contains("_meta") && params["_meta"].is_object() &&
      params["_meta"].contains("progressToken") && ValidId(params["_meta"]["progressToken"])) {
    progress_token = params["_meta"]["progressToken"];
  }
  // /mcp needs `run`; a decision also needs the credential's `decide`
  // scope (the role in the task's team is TaskService's check).
  if (name == "decide_request" && !(req.caller.scopes & api::kCapDecide)) {
    return Rpc(200,
               mcp::RpcResult(id, mcp::ToolError("this token's scopes do not include decide")));
  }
  if (name == "create_task") return CreateTask(req, session_id, session, id, args, progress_token);
  return Rpc(200, mcp::RpcResult(id, RunTool(name, args, req.user, session.version)));
}

HttpResponse McpEndpoint::CreateTask(const HttpRequest& req, const std::string& session_id,
                                     const mcp::McpSessionInfo& session, const Json& id,
                                     const Json& args, const Json& progress_token) {
  bool wait = false;
  if (args.contains("wait") && !args["wait"].is_null()) {
    if (!args["wait"].is_boolean()) {
      return Rpc(200, mcp::RpcResult(id, mcp::ToolError("wait must be a boolean")));
    }
    wait = args["wait"].get<bool>();
  }
  auto created = deps_.tasks.Create(args, req.user, {});
  if (!created.ok()) {
    return Rpc(200, mcp::RpcResult(id, mcp::ToolError(FailureText(created.status()))));
  }
  const Task& task = created->task;
  if (!wait && progress_token.is_null()) {
    Json out = {{"task", api::TaskJson(task)}, {"job", api::JobJson(created->job)}};
    std::string text = "Created task " + task.id + " (piece " + task.piece + "); job " +
                       created->job.id + " is queued. get_task shows how it goes.";
    return Rpc(200, mcp::RpcResult(id, mcp::ToolResult(out, text, session.version)));
  }
  HttpResponse res;
  res.stream = std::make_shared<McpWaitSource>(*this, deps_.store, deps_.signal, task.id, req.user,
                                               session.version, id, progress_token,
                                               sessions_.AddWait(session_id, DumpJson(id)));
  res.stream_key = deps_.stream_key(req);
  return res;
}

Json McpEndpoint::SettledResult(const std::string& task_id, const std::string& user,
                                const std::string& version) {
  auto detail = deps_.reads.TaskDetail(task_id, user);
  if (!detail.ok()) return mcp::ToolError(FailureText(detail.status()));
  const Json& job = (*detail)["latest_job"];
  const std::string status = JobStatusOf(job);
  const std::string job_id = StringField(job, "id");
  Json out = {{"task", (*detail)["task"]},
              {"job", job},
              {"status", status},
              {"waiting_human", status == "waiting_human"},
              {"result", StringField(job, "result")},
              {"pending_requests", (*detail)["pending_requests"]}};
  std::string text;
  if (status == "succeeded") {
    out["summary"] = "finished";
    text = "Task " + task_id + " finished: job " + job_id +
           " succeeded. Result: " + StringField(job, "result");
  } else if (status == "waiting_human") {
    out["summary"] = "needs you";
    const std::string reason = StringField(job, "wait_reason");
    text = "Task " + task_id + " needs you: job " + job_id + " is waiting_human (" + reason + ").";
    if (reason == "ask" || reason == "reconcile") {
      std::string question;
      if (auto comments = deps_.store.ListComments(task_id); comments.ok()) {
        for (const Comment& c : *comments) {
          if (c.job_id == job_id && c.author != "user") question = c.body;
        }
      }
      out["question"] = question;
      text += " Question: " + question + " Answer with the comment tool.";
    } else {
      for (const auto& r : (*detail)["pending_requests"]) {
        text += " Pending " + StringField(r, "kind") + " request " + StringField(r, "id") + ": " +
                StringField(r, "name") + ".";
      }
      text += " Decide with decide_request.";
    }
  } else if (status == "failed") {
    out["summary"] = "failed";
    text = "Task " + task_id + ": job " + job_id + " failed: " + StringField(job, "error_message");
  } else {
    out["summary"] = status;
    text = "Task " + task_id + ": job " + job_id + " is " + status + ".";
  }
  return mcp::ToolResult(out, text, version);
}

Json McpEndpoint::RunTool(const std::string& name, const Json& args, const std::string& user,
                          const std::string& version) {
  std::string task_id;
  if (name != "list_tasks") {
    if (Status st = api::RequiredString(args, "task_id", &task_id); !st.ok()) {
      return mcp::ToolError(st.message());
    }
  }
  if (name == "get_task") {
    auto detail = deps_.reads.TaskDetail(task_id, user);
    if (!detail.ok()) return mcp::ToolError(FailureText(detail.status()));
    const Json& job = (*detail)["latest_job"];
    std::string text =
        "Task " + task_id + ": " + std::to_string((*detail)["jobs"].size()) +
        " job(s), the newest " + (job.is_null() ? std::string("none") : JobStatusOf(job)) + "; " +
        std::to_string((*detail)["pending_requests"].size()) + " pending request(s).";
    return mcp::ToolResult(*detail, text, version);
  }
  if (name == "list_tasks") {
    std::string status;
    if (Status st = api::OptionalString(args, "status", &status); !st.ok()) {
      return mcp::ToolError(st.message());
    }
    auto filter = api::ParseStatusFilter(status);
    if (!filter.ok()) return mcp::ToolError(filter.status().message());
    auto tasks = deps_.reads.VisibleTasks(*filter, user);
    if (!tasks.ok()) return mcp::ToolError(FailureText(tasks.status()));
    return mcp::ToolResult(*tasks, std::to_string((*tasks)["tasks"].size()) + " task(s).", version);
  }
  if (name == "comment") {
    std::string body;
    if (Status st = api::RequiredString(args, "body", &body); !st.ok()) {
      return mcp::ToolError(st.message());
    }
    auto commented = deps_.tasks.Comment(task_id, user, body, {});
    if (!commented.ok()) return mcp::ToolError(FailureText(commented.status()));
    const Json r = api::CommentedJson(*commented);
    std::string text = "Comment posted (" + StringField(r, "outcome") + "); job " +
                       StringField(r["job"], "id") + " is " + JobStatusOf(r["job"]) + ".";
    return mcp::ToolResult(r, text, version);
  }
  if (name == "decide_request") {
    std::string kind, request_id, decision, scope;
    for (auto [field, out] : {std::pair{"kind", &kind}, std::pair{"request_id", &request_id},
                              std::pair{"decision", &decision}}) {
      if (Status st = api::RequiredString(args, field, out); !st.ok()) {
        return mcp::ToolError(st.message());
      }
    }
    if (Status st = api::OptionalString(args, "scope", &scope); !st.ok()) {
      return mcp::ToolError(st.message());
    }
    auto parsed_kind = api::ParseKindField(kind);
    if (!parsed_kind.ok()) return mcp::ToolError(parsed_kind.status().message());
    auto decided = deps_.tasks.Decide(task_id, *parsed_kind, request_id, decision, scope, user);
    if (!decided.ok()) return mcp::ToolError(FailureText(decided.status()));
    const Json r = api::DecidedJson(*decided);
    std::string text = kind + " request " + request_id + " " + StringField(r["request"], "status");
    if (r.contains("job")) {
      text += "; job " + StringField(r["job"], "id") + " is " + JobStatusOf(r["job"]);
    }
    return mcp::ToolResult(r, text + ".", version);
  }
  // cancel_task
  auto total = deps_.tasks.Cancel(task_id, user);
  if (!total.ok()) return mcp::ToolError(FailureText(total.status()));
  Json out = {{"cancelled", total->cancelled}, {"stopping", total->flagged}};
  return mcp::ToolResult(out,
                         "Cancelled " + std::to_string(total->cancelled) + " job(s); " +
                             std::to_string(total->flagged) + " running job(s) stopping.",
                         version);
}

void ApiServer::McpRoutes() {
  mcp_ = std::make_shared<McpEndpoint>(
      McpEndpointDeps{tasks_, reads_, store_, signal_, options_.version, options_.mcp_max_sessions,
                      options_.mcp_max_sessions_per_user, options_.mcp_session_idle,
                      [](const HttpRequest& req) { return StreamKey(req); }});
  McpEndpoint* mcp = mcp_.get();
  router_.Add("POST", "/mcp", api::Need::kRun,
              [mcp](const HttpRequest& req) { return mcp->Post(req); });
  router_.Add("DELETE", "/mcp", api::Need::kRead,
              [mcp](const HttpRequest& req) { return mcp->Delete(req); });
  // No server-initiated stream: everything arrives on the POST's answer.
  router_.Add("GET", "/mcp", api::Need::kRead, [](const HttpRequest&) {
    HttpResponse res = Rpc(405, mcp::RpcError(nullptr, mcp::kInvalidRequest,
                                              "GET /mcp is not supported: POST JSON-RPC messages"));
    res.headers.emplace_back("Allow", "POST, DELETE");
    return res;
  });
}

}  // namespace maestro
