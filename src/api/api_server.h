// ApiServer: maestro's HTTP edge (cpp-httplib is used only in this folder).
//
// Routes so far: GET /api/health, and the task basics of DESIGN.md §6
// (POST/GET /api/local/tasks, GET /api/local/tasks/:id). Errors leave here as
// {"error":{"code","message","field"?}} with the HTTP status of their
// StatusCode; the mapping lives in one function (http_errors.cc).
//
// Auth: when `admin_token` is set, /api/local/* requires
// `Authorization: Bearer <token>`; /api/health is open.
//
// Thread safety: httplib serves requests on its own thread pool; handlers
// only touch the thread-safe Store.
#pragma once

#include <memory>
#include <string>
#include <thread>

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
};

class ApiServer {
 public:
  ApiServer(Store& store, ApiOptions options);
  ~ApiServer();

  // Binds and starts serving on a background thread. Returns the bound port.
  Result<int> Start();
  void Stop();

 private:
  void Routes();

  Store& store_;
  ApiOptions options_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

// HTTP status for a Status code (400, 404, 409, 413, 503, 500...).
int HttpStatusFor(StatusCode code);
// {"error":{"code":"NOT_FOUND","message":"...","field":"..."}}
std::string ErrorBody(const Status& status);

}  // namespace maestro
