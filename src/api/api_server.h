// ApiServer: maestro's HTTP edge (cpp-httplib is used only in this folder).
//
// Routes (DESIGN.md §6; docs/api.md has examples):
//   GET  /api/health                              open
//   POST /api/local/tasks, GET /api/local/tasks, GET /api/local/tasks/:id
//   GET|POST /api/local/tasks/:id/comments        POST runs the write gate
//   POST /api/local/tasks/:id/continue            the continue gate
//   POST /api/local/tasks/:id/cancel              job + children; running ones stop
//   GET  /api/local/tasks/:id/{tool,package,spawn}-requests
//   POST /api/local/tasks/:id/{tool,package,spawn}-requests/:rid/decide
//   GET  /api/local/tasks/:id/events              SSE (Last-Event-ID) or JSON polling
//   GET  /metrics                                 Prometheus text
// Task semantics live in the Store's gates; this layer validates input,
// maps errors (one place: http_util.cc) and streams.
//
// Auth: when `admin_token` is set, /api/local/* and /metrics require
// `Authorization: Bearer <token>`; /api/health is open.
//
// Thread safety: httplib serves requests on its own thread pool; handlers
// only touch the thread-safe Store and EventSignal.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "api/event_signal.h"
#include "core/status.h"
#include "store/store.h"

namespace httplib {
class Server;
}

namespace maestro {

struct ApiOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: pick a free port
  std::string admin_token;
  std::string version;
  int schema_version = 0;
  int workers = 0;
  size_t max_body_bytes = 1 << 20;
  int server_threads = 64;  // each open SSE stream holds one
  // Stops a job running in this process at once (WorkerPool::CancelRunning);
  // other processes see the cancel flag at their next heartbeat.
  std::function<void(const std::string& job_id)> cancel_running;
};

class ApiServer {
 public:
  ApiServer(Store& store, ApiOptions options);
  ~ApiServer();

  // Binds and starts serving on a background thread. Returns the bound port.
  Result<int> Start();
  void Stop();

  // Wire StoreOptions::on_commit to signal().Notify() so SSE streams wake.
  api::EventSignal& signal() { return signal_; }

 private:
  void Routes();
  void TaskRoutes();
  void RequestRoutes();
  void StreamRoutes();

  Store& store_;
  ApiOptions options_;
  api::EventSignal signal_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

// HTTP status for a Status code (400, 404, 409, 413, 503, 500...).
int HttpStatusFor(StatusCode code);
// {"error":{"code":"NOT_FOUND","message":"...","field":"..."}}
std::string ErrorBody(const Status& status);

}  // namespace maestro
