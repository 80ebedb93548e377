#include "api/api_server.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include "core/json.h"

namespace maestro {

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return 200;
    case StatusCode::kInvalidArgument: return 400;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kConflict:
    case StatusCode::kLeaseLost: return 409;
    case StatusCode::kResourceExhausted: return 413;
    case StatusCode::kUnimplemented: return 501;
    case StatusCode::kUnavailable: return 503;
    case StatusCode::kDeadlineExceeded: return 504;
    case StatusCode::kCancelled: return 409;
    case StatusCode::kInternal: return 500;
  }
  return 500;
}

std::string ErrorBody(const Status& st) {
  Json err = {{"code", std::string(StatusCodeName(st.code()))}};
  // Internal errors may carry SQL or paths; the client gets a generic text.
  err["message"] = st.code() == StatusCode::kInternal ? "internal error" : st.message();
  if (!st.field().empty()) err["field"] = st.field();
  return Json{{"error", err}}.dump();
}

namespace {

void Reply(httplib::Response& res, int code, const Json& body) {
  res.status = code;
  res.set_content(body.dump(), "application/json");
}

void ReplyError(httplib::Response& res, const Status& st) {
  if (st.code() == StatusCode::kInternal) spdlog::error("api: {}", st.ToString());
  res.status = HttpStatusFor(st.code());
  res.set_content(ErrorBody(st), "application/json");
}

Json TaskJson(const Task& t) {
  return {{"id", t.id},
          {"title", t.title},
          {"instruction", t.instruction},
          {"piece", t.piece},
          {"space", t.space},
          {"visibility", t.visibility},
          {"status", t.status},
          {"model", t.model},
          {"llm_call_count", t.llm_call_count},
          {"tool_call_count", t.tool_call_count},
          {"total_tokens", t.total_tokens},
          {"compression_count", t.compression_count},
          {"error_message", t.error_message},
          {"created_at", t.created_at},
          {"started_at", t.started_at},
          {"completed_at", t.completed_at},
          {"updated_at", t.updated_at}};
}

Json JobJson(const Job& j) {
  return {{"id", j.id},
          {"task_id", j.task_id},
          {"status", JobStatusName(j.status)},
          {"piece", j.piece},
          {"attempt", j.attempt},
          {"max_attempts", j.max_attempts},
          {"wait_reason", j.wait_reason},
          {"resume_movement", j.resume_movement},
          {"ask_count", j.ask_count},
          {"parent_job_id", j.parent_job_id},
          {"error_message", j.error_message},
          {"result", j.result},
          {"next_retry_at", j.next_retry_at},
          {"created_at", j.created_at},
          {"finished_at", j.finished_at}};
}

// Reads an optional string field; a present non-string is a 400 naming it.
Status OptionalString(const Json& body, const char* field, std::string* out) {
  if (!body.contains(field) || body[field].is_null()) return Status::Ok();
  if (!body[field].is_string()) {
    return InvalidArgument(std::string(field) + " must be a string", field);
  }
  *out = body[field].get<std::string>();
  return Status::Ok();
}

Result<NewTask> ParseNewTask(const std::string& text) {
  auto body = ParseJson(text);
  if (!body.ok()) return InvalidArgument(body.status().message(), "body");
  if (!body->is_object()) return InvalidArgument("body must be a JSON object", "body");
  NewTask t;
  if (!body->contains("instruction")) return InvalidArgument("instruction is required", "instruction");
  MAESTRO_RETURN_IF_ERROR(OptionalString(*body, "instruction", &t.instruction));
  if (t.instruction.find_first_not_of(" \t\r\n") == std::string::npos) {
    return InvalidArgument("instruction must not be empty", "instruction");
  }
  MAESTRO_RETURN_IF_ERROR(OptionalString(*body, "title", &t.title));
  MAESTRO_RETURN_IF_ERROR(OptionalString(*body, "piece", &t.piece));
  MAESTRO_RETURN_IF_ERROR(OptionalString(*body, "space", &t.space));
  MAESTRO_RETURN_IF_ERROR(OptionalString(*body, "visibility", &t.visibility));
  if (t.piece.empty()) t.piece = "chat";
  if (t.visibility != "private" && t.visibility != "shared") {
    return InvalidArgument("visibility must be private or shared", "visibility");
  }
  return t;
}

}  // namespace

ApiServer::ApiServer(Store& store, ApiOptions options)
    : store_(store), options_(std::move(options)), server_(std::make_unique<httplib::Server>()) {}

ApiServer::~ApiServer() { Stop(); }

void ApiServer::Routes() {
  auto& srv = *server_;
  srv.set_payload_max_length(options_.max_body_bytes);
  srv.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (req.path.rfind("/api/local/", 0) != 0 || options_.admin_token.empty()) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    if (req.get_header_value("Authorization") != "Bearer " + options_.admin_token) {
      res.status = 401;
      res.set_content(Json{{"error", {{"code", "UNAUTHENTICATED"},
                                      {"message", "missing or wrong bearer token"}}}}
                          .dump(),
                      "application/json");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  srv.Get("/api/health", [this](const httplib::Request&, httplib::Response& res) {
    Reply(res, 200,
          {{"status", "ok"},
           {"version", options_.version},
           {"schema_version", options_.schema_version},
           {"workers", options_.workers}});
  });

  srv.Post("/api/local/tasks", [this](const httplib::Request& req, httplib::Response& res) {
    auto in = ParseNewTask(req.body);
    if (!in.ok()) return ReplyError(res, in.status());
    auto created = store_.CreateTask(*in);
    if (!created.ok()) return ReplyError(res, created.status());
    Reply(res, 201, {{"task", TaskJson(created->task)}, {"job", JobJson(created->job)}});
  });

  srv.Get("/api/local/tasks", [this](const httplib::Request& req, httplib::Response& res) {
    auto tasks = store_.ListTasks(req.get_param_value("status"), 200);
    if (!tasks.ok()) return ReplyError(res, tasks.status());
    Json arr = Json::array();
    for (const auto& t : *tasks) arr.push_back(TaskJson(t));
    Reply(res, 200, {{"tasks", arr}});
  });

  srv.Get(R"(/api/local/tasks/([0-9a-fA-F-]+))",
          [this](const httplib::Request& req, httplib::Response& res) {
            std::string id = req.matches[1];
            auto task = store_.GetTask(id);
            if (!task.ok()) return ReplyError(res, task.status());
            auto jobs = store_.ListJobs(id);
            if (!jobs.ok()) return ReplyError(res, jobs.status());
            auto requests = store_.ListRequests(id, "");
            if (!requests.ok()) return ReplyError(res, requests.status());
            Json pending = Json::array();
            for (const auto& r : *requests) {
              if (r.status == "pending") {
                pending.push_back({{"id", r.id}, {"kind", r.kind}, {"name", r.name},
                                   {"args", r.args}, {"reason", r.reason}});
              }
            }
            Json body = {{"task", TaskJson(*task)},
                         {"latest_job", jobs->empty() ? Json(nullptr) : JobJson(jobs->back())},
                         {"pending_requests", pending}};
            Reply(res, 200, body);
          });

  srv.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    StatusCode code = res.status == 413   ? StatusCode::kResourceExhausted
                      : res.status == 404 ? StatusCode::kNotFound
                                          : StatusCode::kInvalidArgument;
    std::string msg = res.status == 413 ? "request body too large"
                      : res.status == 404 ? "no such route"
                                          : "bad request";
    res.set_content(ErrorBody(Status(code, msg)), "application/json");
  });
}

Result<int> ApiServer::Start() {
  Routes();
  int port = options_.port;
  if (port == 0) {
    port = server_->bind_to_any_port(options_.host);
    if (port < 0) return Unavailable("cannot bind " + options_.host);
  } else if (!server_->bind_to_port(options_.host, port)) {
    return Unavailable("cannot bind " + options_.host + ":" + std::to_string(port));
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  return port;
}

void ApiServer::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace maestro
