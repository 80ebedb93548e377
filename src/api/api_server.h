// ApiServer: maestro's HTTP edge — the routes, on the event-driven
// HttpServer (http_server.h; the HTTP library is included by that one file).
//
// Routes (DESIGN.md §6; docs/api.md has examples):
//   GET  /api/health                              open
//   GET  /api/live, GET /api/ready                open: liveness, readiness (api/readiness.h)
//   POST /api/local/tasks, GET /api/local/tasks, GET /api/local/tasks/:id
//   PATCH /api/local/tasks/:id                    {"title"}: rename (task.updated event)
//   GET|POST /api/local/tasks/:id/comments        POST runs the write gate
//   GET  /api/local/tasks/:id/attachments         files sent with the task
//   (create and comment take multipart/form-data or JSON `attachments`:
//   api/attachments.h; the upload routes' body limit follows from them)
//   POST /api/local/tasks/:id/continue            the continue gate
//   POST /api/local/tasks/:id/cancel              job + children; running ones stop
//   GET  /api/local/tasks/:id/{tool,package,spawn}-requests
//   POST /api/local/tasks/:id/{tool,package,spawn}-requests/:rid/decide
//   GET  /api/local/tasks/:id/events              SSE (Last-Event-ID) or JSON polling
//   GET  /api/local/tasks/:id/files[/<path>]      the workspace: listing, one file
//   (routes_workspace.cc) GET  /api/local/tasks/:id/diff                per job commit,
//   uncommitted, total GET  /api/local/tasks/:id/tool-calls          the tool ledger as one card
//   per call GET  /api/local/jobs/:id/stream               live deltas (SSE) from the JobStreamHub
//   GET  /api/local/notifications, POST .../read  the user's inbox
//   POST|GET /api/local/schedules, GET|PATCH|DELETE /api/local/schedules/:id
//   POST /api/local/schedules/:id/run, GET .../tasks  run now, fire history
//                                                 (routes_schedules.cc)
//   POST /api/local/captcha-pool/resolve          {"space_id","screen"}: requeue every
//                                                 job the caller may resolve parked on
//                                                 that CAPTCHA screen (routes_captcha.cc)
//   GET|POST /api/local/tokens, DELETE .../{ulid}  the caller's scoped tokens; the admin
//                                                 makes any user's (routes_tokens.cc)
//   GET  /api/local/audit[/export]                admins: the audit log, JSON lines
//                                                 (routes_audit.cc)
//   GET  /api/pieces                              the piece catalog
//   GET  /api/spaces                              the configured persistent spaces
//   GET  /api/profiles                            the LLM profiles' names and models
//   GET  /api/local/push/key                      Web Push: the VAPID public key (routes_push.cc)
//   GET|POST /api/local/push/subscriptions        the caller's browsers; DELETE .../{id}
//   GET  /metrics                                 Prometheus text
//   GET  /api/info                                open: version, demo flag, model
//   POST /mcp                                     MCP server (Streamable HTTP, routes_mcp.cc):
//                                                 JSON-RPC in, JSON or SSE out; DELETE /mcp
//                                                 ends the session, GET /mcp is 405
//   GET  /.well-known/agent-card.json             open: the A2A Agent Card
//   POST /a2a                                     A2A agent (JSON-RPC, routes_a2a.cc): JSON
//                                                 or SSE out (message/stream, resubscribe)
//   GET  /*  (not /api/, /metrics)                 the web UI (routes_ui.cc)
// The task operations (create, comment, continue, cancel, decide, raise a
// budget) and their checks are the TaskService's (api/task_service.h), which
// the REST routes, the MCP tools and the A2A agent share; their JSON answers
// are TaskReads' (api/task_reads.h). Task semantics live in the Store's
// gates; this layer parses input, maps errors (one place: http_util.cc) and
// streams.
//
// Auth (api/auth.h): /api/local/*, /api/pieces, /api/spaces, /api/profiles, /metrics, /mcp and
// /a2a require
// `Authorization: Bearer <token>` (401 otherwise); /api/health is open. Every
// route that names a task checks its visibility: another user's private task
// is a 404.
//
// Routes take an HttpRequest and return an HttpResponse (api/http.h). The
// two live streams are pull-based StreamSources woken by the EventSignal
// (store commits) and the JobStreamHub (deltas): an open stream holds no
// thread. Both belong to the process's notify::Notifier (notify/notifier.h),
// which the store's commit hooks reach; the API holds references.
//
// Thread safety: handlers run concurrently on the HttpServer's pool and
// only touch the thread-safe Store, EventSignal and JobStreamHub.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "api/attachments.h"
#include "api/auth.h"
#include "api/http_server.h"
#include "api/job_status_cache.h"
#include "api/readiness.h"
#include "api/router.h"
#include "api/task_reads.h"
#include "api/task_service.h"
#include "api/task_validation.h"
#include "api/usage_view.h"
#include "browser/browser_session.h"
#include "core/clock.h"
#include "core/egress.h"
#include "core/env.h"
#include "core/status.h"
#include "identity/oidc.h"
#include "notify/job_stream.h"
#include "notify/notifier.h"
#include "store/budget.h"
#include "store/store.h"

namespace maestro::browser {
class BrowserService;
}  // namespace maestro::browser

namespace maestro {

class McpEndpoint;  // routes_mcp.cc
namespace api::a2a {
class A2aEndpoint;  // a2a_endpoint.h
}

struct ApiOptions {
  // Address, threads, limits and timeouts of the HTTP edge.
  api::HttpServerOptions http;
  Env* env = Env::Default();  // reads workspace files for the workspace routes
  std::string admin_token;
  std::string version;
  int schema_version = 0;
  // The store's backend for maestro_build_info: "sqlite" | "postgres".
  std::string backend = "sqlite";
  // USD per million tokens by profile (store/budget.h); a profile absent
  // here makes the cost of its jobs unknown (null).
  budget::PriceTable prices;
  // Budget defaults and daily quotas (store/budget.h; `budgets:`/`quotas:`).
  budget::Settings budgets;
  // Quotas count since UTC midnight of this clock's day.
  Clock* clock = SystemClock::Default();
  int workers = 0;
  // GET /api/ready (api/readiness.h): the process's startup state (null:
  // never ready) and the schema version this binary migrates to.
  std::shared_ptr<const api::StartupState> startup;
  int latest_schema_version = 0;
  // Stops a job running in this process at once (WorkerPool::CancelRunning);
  // other processes see the cancel flag at their next heartbeat.
  std::function<void(const std::string& job_id)> cancel_running;
  // The body of GET /api/pieces (engine::PieceCatalogJson); unset: 501.
  std::function<Json()> pieces_json;
  // The pieces, spaces and profiles create/continue may name (checked
  // before any row is written) and the body of GET /api/spaces.
  api::TaskChoices choices;
  // The built web UI (index.html + assets) served at `/`; empty: `/` says
  // how to build it. `demo`: the model is the bundled scripted fake
  // (GET /api/info tells the UI so it can say so).
  std::string ui_dir;
  bool demo = false;
  std::string model;
  // MCP sessions (POST /mcp): at most this many are kept, and this many per
  // user (a user's own least recently used goes first; never another
  // user's: api/mcp_server.h), each forgotten after this long unused.
  size_t mcp_max_sessions = 1000;
  size_t mcp_max_sessions_per_user = 32;
  std::chrono::milliseconds mcp_session_idle{30 * 60 * 1000};
  // The data directory: the tasks' ephemeral workspaces and context
  // directories (tools.jsonl) the workspace routes read; "" serves none.
  std::string data_dir;
  // Limits of the files a create or comment may carry (`attachments:`).
  AttachmentsConfig attachments;
  // What A2A push receivers may be (`egress:`, core/egress.h); the default
  // admits no internal address.
  std::shared_ptr<const EgressPolicy> egress = std::make_shared<const EgressPolicy>();
  // The jobs' browsers of this process (the live view of a login park);
  // unset or null: none. A browser another process holds is reached
  // through the store (routes_browser.cc), each call waited for this long
  // (then 504); a holder not seen for `browser_holder_fresh` is gone (404).
  std::function<browser::BrowserService*()> browsers;
  std::chrono::milliseconds browser_call_timeout{10'000};
  std::chrono::milliseconds browser_holder_fresh{5'000};
  // Web Push (routes_push.cc): the VAPID public key (base64url) browsers
  // subscribe with; "" = push off (the routes answer 503).
  std::string push_public_key;
  int push_max_subscriptions = 10;
  // Who may see and do what (`teams:`, `auth.default_role`; api/access.h);
  // null: the single-user rules.
  std::shared_ptr<const api::Access> access;
  // OIDC sign-in for the web UI (`auth.oidc`; routes_auth.cc); null: bearer
  // tokens only. Sessions last `session_ttl_s`.
  std::shared_ptr<identity::OidcClient> oidc;
  int64_t session_ttl_s = 12 * 3600;
};

class ApiServer {
 public:
  // `notifier` (its EventSignal and JobStreamHub) must outlive the server.
  ApiServer(Store& store, notify::Notifier& notifier, ApiOptions options);
  ~ApiServer();

  // Claims the listening address exclusively (a port another process listens
  // on is refused, no SO_REUSEPORT sharing) without serving yet, so a caller
  // can check the address before starting anything else. Returns the bound
  // port; kUnavailable "cannot listen on HOST:PORT: <reason>" otherwise.
  // Idempotent.
  Result<int> Bind();
  // Binds (unless Bind() already did) and starts serving on a background
  // thread. Returns the bound port.
  Result<int> Start();
  void Stop();

  // The Notifier's, which the store's on_commit wakes.
  notify::EventSignal& signal() { return signal_; }
  // The Notifier's hub behind /api/local/jobs/:id/stream.
  JobStreamHub& job_streams() { return hub_; }
  JobStreamHub::PublishFn job_publisher() { return hub_.Publisher(); }

 private:
  // Each registers its file's routes (routes_<name>.cc): one named handler
  // per route, bound with what it needs (api::Need) in one line.
  void Routes();
  void TaskRoutes();
  void RequestRoutes();
  void StreamRoutes();
  void LiveRoutes();
  void InboxRoutes();
  void UiRoutes();
  void McpRoutes();
  void A2aRoutes();
  void WorkspaceRoutes();
  void AttachmentRoutes();
  void ScheduleRoutes();  // routes_schedules.cc
  void LessonRoutes();    // routes_lessons.cc
  void MissionRoutes();   // routes_missions.cc
  void CaptchaRoutes();   // routes_captcha.cc
  void BrowserRoutes();   // routes_browser.cc
  void PushRoutes();      // routes_push.cc
  void AuthRoutes();      // routes_auth.cc: /auth/login, /auth/callback, /auth/logout, /api/me
  void RoutesTokens();    // routes_tokens.cc: the caller's scoped tokens
  void RoutesAudit();     // routes_audit.cc: the audit log and its export
  // Dispatch, counting the answer by route pattern for /metrics.
  api::HttpResponse Handle(api::HttpRequest& req);
  // Auth, then the route, then the UI fallback, then 404 (a malformed task
  // or job id: "no such task|job: <id>"). `*pattern`: the matched route's.
  api::HttpResponse Dispatch(api::HttpRequest& req, std::string* pattern);
  // The web UI for a GET outside /api/ and /metrics (routes_ui.cc).
  api::HttpResponse ServeUi(const api::HttpRequest& req) const;
  // Concurrent streams are capped per bearer token (HttpServerOptions).
  static std::string StreamKey(const api::HttpRequest& req);

  Store& store_;
  ApiOptions options_;
  // The task operations of every route, MCP tool and A2A call (made from
  // options_), and the JSON they answer with.
  api::TaskService tasks_;
  api::TaskReads reads_;
  notify::EventSignal& signal_;                // the Notifier's
  std::shared_ptr<const api::Access> access_;  // options_.access or the single-user rules
  std::shared_ptr<api::AuditLog> audit_;
  api::Authenticator auth_;
  JobStreamHub& hub_;             // the Notifier's; Stop() stops it (the streams end)
  api::JobStatusCache statuses_;  // for the job streams
  api::Router router_;
  std::shared_ptr<McpEndpoint> mcp_;  // sessions of /mcp; before server_ (its streams go first)
  std::shared_ptr<api::a2a::A2aEndpoint> a2a_;  // /a2a; Stop() ends its blocking waits
  std::unique_ptr<api::HttpServer> server_;
};

}  // namespace maestro
