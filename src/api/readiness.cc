#include "api/readiness.h"

#include <utility>

#include "api/http_util.h"
#include "core/json.h"

namespace maestro::api {

void StartupState::SetWaitingFor(std::string what) {
  MutexLock lock(&mu_);
  waiting_for_ = std::move(what);
}

std::string StartupState::waiting_for() const {
  MutexLock lock(&mu_);
  return waiting_for_;
}

void StartupState::SetSchemaProbe(std::function<Result<int>()> probe) {
  MutexLock lock(&mu_);
  schema_probe_ = std::move(probe);
}

std::function<Result<int>()> StartupState::schema_probe() const {
  MutexLock lock(&mu_);
  return schema_probe_;
}

void StartupState::SetWorkersRunning(bool running) {
  MutexLock lock(&mu_);
  workers_running_ = running;
}

bool StartupState::workers_running() const {
  MutexLock lock(&mu_);
  return workers_running_;
}

void StartupState::SetStopping() {
  MutexLock lock(&mu_);
  stopping_ = true;
}

bool StartupState::stopping() const {
  MutexLock lock(&mu_);
  return stopping_;
}

HttpResponse ReadyReply(const StartupState& state, const ReadinessOptions& options) {
  Json waiting = Json::array();
  if (state.stopping()) waiting.push_back("shutdown");
  const std::string startup = state.waiting_for();
  if (!startup.empty()) waiting.push_back(startup);
  // The store is asked now (not a flag set at start): a database that went
  // away makes the process unready until it answers again. Its error text
  // is not shown (this route is public).
  int version = 0;
  bool store_ok = false;
  if (auto probe = state.schema_probe()) {
    auto v = probe();
    store_ok = v.ok();
    if (store_ok) version = *v;
  }
  if (!store_ok && startup.empty()) waiting.push_back("database");
  if (store_ok && version != options.latest_schema_version) waiting.push_back("migrations");
  const bool running = state.workers_running();
  if (options.workers_configured > 0 && !running && startup.empty()) waiting.push_back("workers");
  if (!waiting.empty()) return Reply(503, {{"ready", false}, {"waiting_for", waiting}});
  return Reply(200,
               {{"ready", true},
                {"store", "ok"},
                {"schema_version", version},
                {"workers", {{"configured", options.workers_configured}, {"running", running}}}});
}

HttpResponse LiveReply() { return Reply(200, {{"live", true}}); }

namespace {

bool IsProbe(const HttpRequest& req, const char* path) {
  return req.method == "GET" && req.path == path;
}

}  // namespace

HealthServer::HealthServer(std::string host, int port, std::shared_ptr<const StartupState> state,
                           ReadinessOptions options)
    : state_(std::move(state)), options_(options) {
  HttpServerOptions ho;
  ho.host = std::move(host);
  ho.port = port;
  ho.io_threads = 1;
  ho.handler_threads = 1;
  ho.max_connections = 64;  // probes, not clients
  ho.max_body_bytes = 1024;
  ho.drain_timeout = std::chrono::milliseconds(1000);
  HttpApp app;
  app.handle = [this](HttpRequest& req) {
    if (IsProbe(req, "/api/live")) return LiveReply();
    if (IsProbe(req, "/api/ready")) return ReadyReply(*state_, options_);
    return ReplyError(NotFound("no such route"));
  };
  app.runs_inline = [](const HttpRequest& req) { return IsProbe(req, "/api/live"); };
  server_ = std::make_unique<HttpServer>(std::move(ho), std::move(app));
}

HealthServer::~HealthServer() { Stop(); }

Result<int> HealthServer::Start() { return server_->Start(); }

void HealthServer::Stop() {
  if (server_) server_->Stop();
}

}  // namespace maestro::api
