#include "api/api_server.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <optional>

#include "api/a2a_endpoint.h"
#include "api/http_util.h"
#include "core/hash.h"
#include "core/json.h"

namespace maestro {
namespace {

// The TaskService's part of the server's options.
api::TaskServiceOptions TaskServiceOptionsOf(Store& store, const ApiOptions& o) {
  api::TaskServiceOptions t;
  t.access = o.access ? o.access : std::make_shared<const api::Access>();
  t.audit = std::make_shared<api::AuditLog>(store, o.clock);
  t.choices = o.choices;
  t.budgets = o.budgets;
  t.prices = o.prices;
  t.clock = o.clock;
  t.env = o.env;
  t.data_dir = o.data_dir;
  t.cancel_running = o.cancel_running;
  return t;
}

}  // namespace

ApiServer::ApiServer(Store& store, notify::Notifier& notifier, ApiOptions options)
    : store_(store),
      options_(std::move(options)),
      tasks_(store, TaskServiceOptionsOf(store, options_)),
      reads_(store, tasks_),
      signal_(notifier.signal()),
      access_(tasks_.options().access),
      audit_(tasks_.options().audit),
      auth_(store, options_.admin_token, options_.oidc != nullptr, options_.clock),
      hub_(notifier.job_streams()) {
  Routes();
  api::HttpApp app;
  app.handle = [this](api::HttpRequest& req) { return Handle(req); };
  // Health and liveness touch no store: answered on the I/O thread even
  // when every pool thread is busy, so they measure the edge, not the queue
  // behind it (readiness asks the store: the pool).
  app.runs_inline = [](const api::HttpRequest& req) {
    return req.method == "GET" && (req.path == "/api/health" || req.path == "/api/live");
  };
  // Only the two upload routes take bodies with files.
  app.body_limit = [base = options_.http.max_body_bytes,
                    upload =
                        api::UploadBodyLimit(options_.attachments, options_.http.max_body_bytes)](
                       std::string_view method, std::string_view path) {
    constexpr std::string_view kTasks = "/api/local/tasks";
    constexpr std::string_view kComments = "/comments";
    const bool comments = path.size() > kTasks.size() + kComments.size() &&
                          path.substr(0, kTasks.size() + 1) == "/api/local/tasks/" &&
                          path.substr(path.size() - kComments.size()) == kComments;
    return method == "POST" && (path == kTasks || comments) ? upload : base;
  };
  server_ = std::make_unique<api::HttpServer>(options_.http, std::move(app));
}

ApiServer::~ApiServer() { Stop(); }

std::string ApiServer::StreamKey(const api::HttpRequest& req) {
  return Sha256Hex(req.Header("Authorization"));
}

api::HttpResponse ApiServer::Handle(api::HttpRequest& req) {
  std::string pattern;
  try {
    api::HttpResponse res = Dispatch(req, &pattern);
    router_.CountRequest(req.method, pattern, res.status);
    return res;
  } catch (...) {
    router_.CountRequest(req.method, pattern, 500);  // the server answers 500 for it
    throw;
  }
}

namespace {

// A path under /api/local/tasks/ or /api/local/jobs/ whose id segment can
// never be an id: 404 "no such task: <id>" (or job) instead of "no such
// route", with the id echoed safely.
std::optional<Status> MalformedId(std::string_view path) {
  struct {
    std::string_view prefix, placeholder, noun;
  } const kIds[] = {{"/api/local/tasks/", "{uuid}", "task"},
                    {"/api/local/jobs/", "{id}", "job"},
                    {"/api/local/schedules/", "{uuid}", "schedule"}};
  for (const auto& k : kIds) {
    if (path.substr(0, k.prefix.size()) != k.prefix) continue;
    std::string_view id = path.substr(k.prefix.size());
    id = id.substr(0, id.find('/'));
    if (id.empty() || api::Router::Fits(k.placeholder, id)) return std::nullopt;
    return NotFound(fmt::format("no such {}: {}", k.noun, api::SafeEcho(id)));
  }
  return std::nullopt;
}

}  // namespace

api::HttpResponse ApiServer::Dispatch(api::HttpRequest& req, std::string* pattern) {
  const std::string& path = req.path;
  api::Need need = api::Need::kPublic;
  const auto* handler = router_.Match(req.method, path, &req.params, pattern, &need);
  // The route's own need (stated at its registration); a path no route of
  // this method matches asks for a credential when a route of another method
  // does, and everywhere under /api/local/, so the table is not probed
  // without one.
  bool guarded = handler ? need != api::Need::kPublic
                         : router_.NeedsToken(path) || path.rfind("/api/local/", 0) == 0;
  if (guarded) {
    auto caller = auth_.Authenticate(req);
    // MCP and A2A clients read the scheme from the challenge (no OAuth: a
    // maestro token).
    if (!caller.ok()) {
      if (caller.status().code() != StatusCode::kUnauthenticated) {
        return api::ReplyError(caller.status());
      }
      return api::ReplyUnauthenticated(path == "/mcp" || path == "/a2a", caller.status().message());
    }
    req.caller = *std::move(caller);
    req.user = req.caller.user;
    // Then: a session's write carries its CSRF token; the credential's
    // scopes and the user's roles grant what the route needs (403 naming
    // what is missing; a task's own team is checked by TaskService).
    if (Status st = api::Authenticator::CheckCsrf(req, req.caller); !st.ok()) {
      return api::ReplyError(st);
    }
    if (handler) {
      if (Status st = access_->AllowRoute(req.caller, need); !st.ok()) return api::ReplyError(st);
    }
  }
  if (handler) return (*handler)(req);
  if (auto bad = MalformedId(path)) return api::ReplyError(*bad);
  bool api_path = path.rfind("/api/", 0) == 0 || path == "/api" || path == "/metrics";
  if (req.method == "GET" && !api_path) return ServeUi(req);
  return api::ReplyError(NotFound("no such route"));
}

namespace {

std::string_view NeedName(api::Need n) {
  return n == api::Need::kPublic ? "public" : api::CapName(api::CapOf(n));
}

}  // namespace

void ApiServer::Routes() {
  // The route table itself (who may call what): the routes-by-role test
  // walks it, so every route, a later one too, is called by every role.
  router_.Add("GET", "/api/routes", api::Need::kRead, [this](const api::HttpRequest&) {
    Json arr = Json::array();
    for (const auto& r : router_.Routes()) {
      arr.push_back({{"method", r.method}, {"pattern", r.pattern}, {"need", NeedName(r.need)}});
    }
    return api::Reply(200, {{"routes", arr}});
  });
  router_.Add("GET", "/api/health", api::Need::kPublic, [this](const api::HttpRequest&) {
    return api::Reply(200, {{"status", "ok"},
                            {"version", options_.version},
                            {"schema_version", options_.schema_version},
                            {"workers", options_.workers},
                            {"demo", options_.demo}});
  });
  router_.Add("GET", "/api/live", api::Need::kPublic,
              [](const api::HttpRequest&) { return api::LiveReply(); });
  router_.Add("GET", "/api/ready", api::Need::kPublic, [this](const api::HttpRequest&) {
    if (!options_.startup) {
      return api::Reply(503, {{"ready", false}, {"waiting_for", Json::array({"startup"})}});
    }
    return api::ReadyReply(*options_.startup, {options_.workers, options_.latest_schema_version});
  });
  TaskRoutes();
  RequestRoutes();
  StreamRoutes();
  LiveRoutes();
  InboxRoutes();
  McpRoutes();
  A2aRoutes();
  WorkspaceRoutes();
  AttachmentRoutes();
  ScheduleRoutes();
  LessonRoutes();
  MissionRoutes();
  CaptchaRoutes();
  BrowserRoutes();
  PushRoutes();
  AuthRoutes();
  RoutesTokens();
  RoutesAudit();
  UiRoutes();
}

Result<int> ApiServer::Bind() { return server_->Bind(); }

Result<int> ApiServer::Start() { return server_->Start(); }

void ApiServer::Stop() {
  // Blocking A2A sends answer first, so the drain does not wait for them;
  // streams end with their final frame; then nothing publishes into a
  // server that is gone.
  if (a2a_) a2a_->Stop();
  if (server_) server_->Stop();
  hub_.Stop();
}

}  // namespace maestro
