#include "cli/client.h"

#include <httplib.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "core/json.h"

namespace maestro::cli {

namespace {

httplib::Client Connect(const ClientOptions& o) {
  httplib::Client c(o.server);
  if (!o.token.empty()) c.set_bearer_token_auth(o.token);
  c.set_connection_timeout(std::chrono::seconds(5));
  c.set_read_timeout(std::chrono::seconds(60));
  return c;
}

// Prints the reply and maps it to an exit code. The token is never printed.
int Finish(const httplib::Result& r) {
  if (!r) {
    std::cerr << "maestro: cannot reach the server: " << httplib::to_string(r.error()) << "\n";
    return 1;
  }
  auto body = ParseJson(r->body);
  if (r->status >= 400) {
    std::string msg = body.ok() && body->contains("error")
                          ? (*body)["error"].value("message", r->body)
                          : r->body;
    std::cerr << "maestro: " << r->status << ": " << msg << "\n";
    return r->status < 500 ? 2 : 1;
  }
  std::cout << (body.ok() ? body->dump(2) : r->body) << "\n";
  return 0;
}

int Post(const ClientOptions& o, const std::string& path, const Json& body) {
  return Finish(Connect(o).Post(path, body.dump(), "application/json"));
}

bool IsTerminalStatus(const std::string& s) {
  return s == "succeeded" || s == "failed" || s == "cancelled";
}

}  // namespace

int TaskCreateRemote(const ClientOptions& o, const std::string& instruction,
                     const std::string& piece, const std::string& title) {
  Json b = {{"instruction", instruction}};
  if (!piece.empty()) b["piece"] = piece;
  if (!title.empty()) b["title"] = title;
  return Post(o, "/api/local/tasks", b);
}

int TaskListRemote(const ClientOptions& o, const std::string& status) {
  std::string path = "/api/local/tasks";
  if (!status.empty()) path += "?status=" + httplib::detail::encode_query_param(status);
  return Finish(Connect(o).Get(path));
}

int TaskShowRemote(const ClientOptions& o, const std::string& task_id) {
  return Finish(Connect(o).Get("/api/local/tasks/" + httplib::detail::encode_query_param(task_id)));
}

int TaskComment(const ClientOptions& o, const std::string& task_id, const std::string& body) {
  return Post(o, "/api/local/tasks/" + task_id + "/comments", {{"body", body}});
}

int TaskContinue(const ClientOptions& o, const std::string& task_id, const std::string& piece,
                 const std::string& note) {
  Json b = Json::object();
  if (!piece.empty()) b["piece"] = piece;
  if (!note.empty()) b["note"] = note;
  return Post(o, "/api/local/tasks/" + task_id + "/continue", b);
}

int TaskCancelRemote(const ClientOptions& o, const std::string& task_id) {
  return Post(o, "/api/local/tasks/" + task_id + "/cancel", Json::object());
}

int TaskDecide(const ClientOptions& o, const std::string& task_id, const std::string& kind,
               const std::string& request_id, const std::string& decision,
               const std::string& scope) {
  Json b = {{"decision", decision}};
  if (!scope.empty()) b["scope"] = scope;
  return Post(o, "/api/local/tasks/" + task_id + "/" + kind + "-requests/" + request_id + "/decide",
              b);
}

std::string RenderEventLine(const std::string& data_json) {
  auto j = ParseJson(data_json);
  if (!j.ok() || !j->is_object()) return data_json;
  std::string line = "#" + j->value("id", std::string("?")) + " " +
                     j->value("type", std::string("event"));
  const Json& p = j->contains("payload") ? (*j)["payload"] : Json::object();
  if (p.is_object()) {
    for (const auto& [k, v] : p.items()) {
      std::string text = v.is_string() ? v.get<std::string>() : v.dump();
      if (text.size() > 80) text = text.substr(0, 77) + "...";
      line += " " + k + "=" + text;
    }
  }
  return line;
}

int TaskWatch(const ClientOptions& o, const std::string& task_id, bool follow, std::ostream& out) {
  const std::string path = "/api/local/tasks/" + task_id + "/events";
  std::string last_id;
  bool done = false;
  for (int reconnects = 0; !done && reconnects < 100; ++reconnects) {
    httplib::Headers h = {{"Accept", "text/event-stream"}};
    if (!last_id.empty()) h.emplace("Last-Event-ID", last_id);
    std::string buf;
    int status = 0;
    auto client = Connect(o);
    client.set_read_timeout(std::chrono::seconds(follow ? 30 : 2));
    auto r = client.Get(
        path, h,
        [&](const httplib::Response& res) {
          status = res.status;
          return res.status == 200;
        },
        [&](const char* data, size_t n) {
          buf.append(data, n);
          for (size_t end; (end = buf.find("\n\n")) != std::string::npos;) {
            std::string frame = buf.substr(0, end);
            buf.erase(0, end + 2);
            std::string data_line;
            for (size_t pos = 0; pos < frame.size();) {
              size_t nl = frame.find('\n', pos);
              std::string l = frame.substr(pos, nl == std::string::npos ? nl : nl - pos);
              if (l.rfind("id: ", 0) == 0) last_id = l.substr(4);
              if (l.rfind("data: ", 0) == 0) data_line = l.substr(6);
              pos = nl == std::string::npos ? frame.size() : nl + 1;
            }
            if (data_line.empty()) continue;  // keep-alive
            out << RenderEventLine(data_line) << std::endl;
            auto ev = ParseJson(data_line);
            if (ev.ok() && ev->value("type", "") == "job.status" &&
                IsTerminalStatus((*ev)["payload"].value("to", ""))) {
              done = true;
            }
          }
          return !done;
        });
    if (status >= 400 || (!r && status == 0 && reconnects == 0 && last_id.empty() &&
                          r.error() == httplib::Error::Connection)) {
      std::cerr << "maestro: cannot watch task " << task_id
                << (status ? " (HTTP " + std::to_string(status) + ")" : "") << "\n";
      return status >= 400 && status < 500 ? 2 : 1;
    }
    if (!follow) return 0;
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  return done ? 0 : 1;
}

}  // namespace maestro::cli
