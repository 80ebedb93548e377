#include "cli/client.h"

#include <fmt/format.h>

#include <chrono>
#include <functional>
#include <iostream>

#include "cli/format.h"
#include "core/json.h"

namespace maestro::cli {

namespace {

// Runs one call: a failure is reported and mapped to its exit code; a
// success prints the JSON (--json) or `human(body)`.
int Finish(const ClientOptions& o, const Result<ApiReply>& r,
           const std::function<std::string(const Json&)>& human) {
  if (!r.ok()) return ReportTransportError(o, r.status());
  if (r->status >= 400) return ReportHttpError(o, *r);
  if (o.json || r->body.is_null()) {
    std::cout << (r->body.is_null() ? r->raw : r->body.dump(2)) << "\n";
  } else {
    std::cout << human(r->body);
  }
  return 0;
}

std::string TaskPath(const std::string& task_id) {
  return "/api/local/tasks/" + UrlEncode(task_id);
}

std::string JobLine(const Json& job) {
  if (!job.is_object()) return "";
  return fmt::format("job {} {}\n", job.value("id", ""), job.value("status", ""));
}

}  // namespace

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int TaskCreateRemote(const ClientOptions& o, const std::string& instruction,
                     const std::string& piece, const std::string& title, int priority,
                     const Json& budget) {
  Json b = {{"instruction", instruction}};
  if (budget.is_object() && !budget.empty()) b["budget"] = budget;
  if (!piece.empty()) b["piece"] = piece;
  if (!title.empty()) b["title"] = title;
  if (priority != 0) b["priority"] = priority;
  return Finish(o, ApiClient(o).Post("/api/local/tasks", b), [](const Json& j) {
    const std::string id = j["task"].value("id", "");
    return fmt::format("created task {} ({})\nfollow it: maestro task watch {}\n", id,
                       TaskTitle(j["task"]), id);
  });
}

int TaskListRemote(const ClientOptions& o, const std::string& status) {
  std::string path = "/api/local/tasks";
  if (!status.empty()) path += "?status=" + UrlEncode(status);
  return Finish(o, ApiClient(o).Get(path), [](const Json& j) { return TaskListText(j, NowMs()); });
}

int TaskShowRemote(const ClientOptions& o, const std::string& task_id) {
  ApiClient c(o);
  return Finish(o, c.Get(TaskPath(task_id)), [&](const Json& j) {
    Json comments;  // the open question, when the task waits for one
    if (j.contains("latest_job") && j["latest_job"].is_object() &&
        j["latest_job"].value("status", "") == "waiting_human") {
      auto r = c.Get(TaskPath(task_id) + "/comments");
      if (r.ok() && r->status == 200) comments = r->body.value("comments", Json::array());
    }
    return TaskShowText(j, comments, NowMs());
  });
}

int TaskComment(const ClientOptions& o, const std::string& task_id, const std::string& body) {
  return Finish(o, ApiClient(o).Post(TaskPath(task_id) + "/comments", {{"body", body}}),
                [&](const Json& j) {
                  return fmt::format("comment posted ({})\n", j.value("outcome", "")) +
                         JobLine(j.value("job", Json()));
                });
}

int TaskContinue(const ClientOptions& o, const std::string& task_id, const std::string& piece,
                 const std::string& note) {
  Json b = Json::object();
  if (!piece.empty()) b["piece"] = piece;
  if (!note.empty()) b["note"] = note;
  return Finish(o, ApiClient(o).Post(TaskPath(task_id) + "/continue", b),
                [](const Json& j) { return "continued: " + JobLine(j.value("job", Json())); });
}

int TaskCancelRemote(const ClientOptions& o, const std::string& task_id) {
  return Finish(o, ApiClient(o).Post(TaskPath(task_id) + "/cancel", Json::object()),
                [](const Json& j) {
                  return fmt::format("cancelled {} job(s), stopping {}\n", j.value("cancelled", 0),
                                     j.value("stopping", 0));
                });
}

int TaskDecide(const ClientOptions& o, const std::string& task_id, const std::string& kind,
               const std::string& request_id, const std::string& decision,
               const std::string& scope) {
  Json b = {{"decision", decision}};
  if (!scope.empty()) b["scope"] = scope;
  const std::string path =
      TaskPath(task_id) + "/" + kind + "-requests/" + UrlEncode(request_id) + "/decide";
  return Finish(o, ApiClient(o).Post(path, b), [](const Json& j) {
    const Json req = j.value("request", Json::object());
    return fmt::format("request {} {}\n", req.value("id", ""), req.value("status", "")) +
           JobLine(j.value("job", Json()));
  });
}

}  // namespace maestro::cli
