// Readiness and liveness: what a process waits for before it can serve,
// and the two probe routes that report it (issue 47).
//
//   GET /api/live   200 {"live":true} while the process runs: touches no
//                   store and no lock, answered on the I/O thread (a store
//                   that is down does not make an orchestrator restart us).
//   GET /api/ready  200 {"ready":true,"store":"ok","schema_version":N,
//                   "workers":{"configured":K,"running":true}} when the
//                   store answers a query now, its schema version is this
//                   binary's latest, and the worker pool runs (not required
//                   with 0 workers); else 503 {"ready":false,"waiting_for":
//                   [...]} naming each unmet condition: what the startup
//                   waits for ("database", "data_dir marker <path>"),
//                   "database" (no answer), "migrations" (another schema),
//                   "workers", "shutdown" (draining after SIGTERM).
//
// StartupState is written by the cli's startup (cli/runtime.cc, serve.cc)
// and read by the probes: `maestro serve` answers them on its API
// (api_server.cc), `maestro worker` on a HealthServer of its own
// (--health-listen), started before it waits for the store so the probes
// say what it waits for. Both routes are public and say nothing of a
// user's data; the 503 names conditions, never a store's error text.
//
// Thread safety: StartupState may be written and read from any thread; the
// schema probe is called without its lock. HealthServer: Start/Stop from
// one thread.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "api/http.h"
#include "api/http_server.h"
#include "core/mutex.h"
#include "core/status.h"

namespace maestro::api {

class StartupState {
 public:
  // What the startup waits for now ("database", "data_dir marker <path>");
  // "" when it waits for nothing.
  void SetWaitingFor(std::string what) EXCLUDES(mu_);
  std::string waiting_for() const EXCLUDES(mu_);
  // Reads the store's schema version (a cheap query); set once the store is
  // open. Whatever it refers to must outlive every probe server.
  void SetSchemaProbe(std::function<Result<int>()> probe) EXCLUDES(mu_);
  std::function<Result<int>()> schema_probe() const EXCLUDES(mu_);
  void SetWorkersRunning(bool running) EXCLUDES(mu_);
  bool workers_running() const EXCLUDES(mu_);
  // After SIGTERM: not ready (the process drains).
  void SetStopping() EXCLUDES(mu_);
  bool stopping() const EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::string waiting_for_ GUARDED_BY(mu_);
  std::function<Result<int>()> schema_probe_ GUARDED_BY(mu_);
  bool workers_running_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
};

struct ReadinessOptions {
  int workers_configured = 0;
  int latest_schema_version = 0;  // the binary's (its backend's migrations)
};

// The answers of GET /api/ready (probes the store once) and GET /api/live.
HttpResponse ReadyReply(const StartupState& state, const ReadinessOptions& options);
HttpResponse LiveReply();

// `maestro worker --health-listen HOST:PORT`: /api/live and /api/ready on
// their own port (one I/O and one handler thread); every other request is
// a 404.
class HealthServer {
 public:
  HealthServer(std::string host, int port, std::shared_ptr<const StartupState> state,
               ReadinessOptions options);
  ~HealthServer();
  // Binds and serves; kUnavailable "cannot listen on HOST:PORT: <reason>".
  Result<int> Start();
  void Stop();

 private:
  std::shared_ptr<const StartupState> state_;
  ReadinessOptions options_;
  std::unique_ptr<HttpServer> server_;
};

}  // namespace maestro::api
