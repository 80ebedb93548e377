#include "api/api_server.h"

#include <httplib.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "api/http_util.h"
#include "core/json.h"

namespace maestro {

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kConflict:
    case StatusCode::kLeaseLost:
      return 409;
    case StatusCode::kResourceExhausted:
      return 413;
    case StatusCode::kUnimplemented:
      return 501;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kDeadlineExceeded:
      return 504;
    case StatusCode::kCancelled:
      return 409;
    case StatusCode::kInternal:
      return 500;
  }
  return 500;
}

std::string ErrorBody(const Status& st) {
  Json err = {{"code", std::string(StatusCodeName(st.code()))}};
  // Internal errors may carry SQL or paths; the client gets a generic text.
  err["message"] = st.code() == StatusCode::kInternal ? "internal error" : st.message();
  if (!st.field().empty()) err["field"] = st.field();
  return DumpJson(Json{{"error", err}});
}

ApiServer::ApiServer(Store& store, ApiOptions options)
    : store_(store),
      options_(std::move(options)),
      auth_(store, options_.admin_token),
      hub_(options_.job_stream_buffer),
      server_(std::make_unique<httplib::Server>()) {}

std::string ApiServer::UserOf(const httplib::Request& req) {
  return auth_.UserFor(req.get_header_value("Authorization")).value_or("");
}

Result<Task> ApiServer::VisibleTask(const std::string& task_id, const std::string& user) {
  auto task = store_.GetTask(task_id);
  if (!task.ok()) return task.status();
  // Same answer as a missing task: the id of a private task does not leak.
  if (!api::Authenticator::Visible(*task, user)) return NotFound("task " + task_id + " not found");
  return task;
}

ApiServer::~ApiServer() { Stop(); }

void ApiServer::Routes() {
  auto& srv = *server_;
  srv.set_payload_max_length(options_.max_body_bytes);
  int threads = options_.server_threads;
  srv.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  srv.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    bool guarded = req.path.rfind("/api/local/", 0) == 0 || req.path == "/metrics" ||
                   req.path == "/api/pieces" || req.path == "/api/spaces";
    if (!guarded) return httplib::Server::HandlerResponse::Unhandled;
    if (!auth_.UserFor(req.get_header_value("Authorization"))) {
      res.status = 401;
      res.set_content(DumpJson(Json{{"error",
                                     {{"code", "UNAUTHENTICATED"},
                                      {"message", "missing or wrong bearer token"}}}}),
                      "application/json");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  srv.Get("/api/health", [this](const httplib::Request&, httplib::Response& res) {
    api::Reply(res, 200,
               {{"status", "ok"},
                {"version", options_.version},
                {"schema_version", options_.schema_version},
                {"workers", options_.workers},
                {"demo", options_.demo}});
  });
  TaskRoutes();
  RequestRoutes();
  StreamRoutes();
  LiveRoutes();
  InboxRoutes();
  UiRoutes();  // last: its catch-all must not shadow an API route

  srv.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    StatusCode code = res.status == 413   ? StatusCode::kResourceExhausted
                      : res.status == 404 ? StatusCode::kNotFound
                                          : StatusCode::kInvalidArgument;
    std::string msg = res.status == 413   ? "request body too large"
                      : res.status == 404 ? "no such route"
                                          : "bad request";
    res.set_content(ErrorBody(Status(code, msg)), "application/json");
  });
}

Result<int> ApiServer::Bind() {
  if (bound_port_ > 0) return bound_port_;
  // Exclusive: cpp-httplib's default sets SO_REUSEPORT, which lets a second
  // server bind the same port and the kernel split the connections between
  // the two. SO_REUSEADDR alone still allows a restart over TIME_WAIT
  // sockets but refuses a port another socket listens on.
  server_->set_socket_options([](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  const std::string where = options_.host + ":" + std::to_string(options_.port);
  errno = 0;
  int port = options_.port;
  bool ok = true;
  if (port == 0) {
    port = server_->bind_to_any_port(options_.host);
    ok = port > 0;
  } else {
    ok = server_->bind_to_port(options_.host, port);
  }
  if (!ok) {
    const int err = errno;
    return Unavailable("cannot listen on " + where + ": " +
                       (err != 0 ? std::strerror(err) : "bind failed"));
  }
  bound_port_ = port;
  return port;
}

Result<int> ApiServer::Start() {
  MAESTRO_ASSIGN_OR_RETURN(int port, Bind());
  Routes();
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  return port;
}

void ApiServer::Stop() {
  signal_.Stop();  // ends open SSE streams
  hub_.Stop();
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace maestro
