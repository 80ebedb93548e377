#include "cli/client.h"

#include <chrono>
#include <iostream>
#include <thread>

#include "core/http_client.h"
#include "core/json.h"

namespace maestro::cli {

namespace {

constexpr int64_t kConnectTimeoutMs = 5'000;
constexpr int64_t kReadTimeoutMs = 60'000;  // no byte from the server for this long

// The server URL without trailing slashes, so "http://h:8080/" + "/api/..." is one path.
std::string Base(const ClientOptions& o) {
  std::string s = o.server;
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

HttpHeaders Headers(const ClientOptions& o) {
  HttpHeaders h;
  if (!o.token.empty()) h.emplace_back("Authorization", "Bearer " + o.token);
  return h;
}

HttpClient Client(int64_t read_timeout_ms) {
  HttpClientOptions opts;
  opts.connect_timeout_ms = kConnectTimeoutMs;
  opts.idle_timeout_ms = read_timeout_ms;
  return HttpClient(opts);
}

// The transport error without the "cannot reach <url>: " the CLI says itself.
std::string Detail(const Status& st, const std::string& url) {
  std::string_view m = st.message();
  const std::string prefix = "cannot reach " + RedactUrl(url) + ": ";
  if (m.starts_with(prefix)) m.remove_prefix(prefix.size());
  return std::string(m);
}

// Prints the reply and maps it to an exit code. The token is never printed.
int Finish(const Result<HttpReply>& r, const std::string& url) {
  if (!r.ok()) {
    std::cerr << "maestro: cannot reach the server: " << Detail(r.status(), url) << "\n";
    return 1;
  }
  auto body = ParseJson(r->body);
  if (r->status >= 400) {
    std::string msg =
        body.ok() && body->contains("error") ? (*body)["error"].value("message", r->body) : r->body;
    std::cerr << "maestro: " << r->status << ": " << msg << "\n";
    return r->status < 500 ? 2 : 1;
  }
  std::cout << (body.ok() ? body->dump(2) : r->body) << "\n";
  return 0;
}

int Get(const ClientOptions& o, const std::string& path) {
  const std::string url = Base(o) + path;
  return Finish(Client(kReadTimeoutMs).Request("GET", url, Headers(o)), url);
}

int Post(const ClientOptions& o, const std::string& path, const Json& body) {
  const std::string url = Base(o) + path;
  HttpHeaders h = Headers(o);
  h.emplace_back("Content-Type", "application/json");
  return Finish(Client(kReadTimeoutMs).Request("POST", url, h, body.dump()), url);
}

bool IsTerminalStatus(const std::string& s) {
  return s == "succeeded" || s == "failed" || s == "cancelled";
}

}  // namespace

int TaskCreateRemote(const ClientOptions& o, const std::string& instruction,
                     const std::string& piece, const std::string& title, int priority) {
  Json b = {{"instruction", instruction}};
  if (!piece.empty()) b["piece"] = piece;
  if (!title.empty()) b["title"] = title;
  if (priority != 0) b["priority"] = priority;
  return Post(o, "/api/local/tasks", b);
}

int TaskListRemote(const ClientOptions& o, const std::string& status) {
  std::string path = "/api/local/tasks";
  if (!status.empty()) path += "?status=" + UrlEncode(status);
  return Get(o, path);
}

int TaskShowRemote(const ClientOptions& o, const std::string& task_id) {
  return Get(o, "/api/local/tasks/" + UrlEncode(task_id));
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
  std::string line =
      "#" + j->value("id", std::string("?")) + " " + j->value("type", std::string("event"));
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
  const std::string url = Base(o) + "/api/local/tasks/" + task_id + "/events";
  std::string last_id;
  bool done = false;
  for (int reconnects = 0; !done && reconnects < 100; ++reconnects) {
    HttpHeaders h = Headers(o);
    h.emplace_back("Accept", "text/event-stream");
    if (!last_id.empty()) h.emplace_back("Last-Event-ID", last_id);
    std::string buf;
    int status = 0;
    auto on_head = [&](const HttpReply& head) {
      status = head.status;
      return head.status == 200;
    };
    auto on_chunk = [&](std::string_view data) {
      buf.append(data);
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
    };
    // Without a byte for the read timeout the stream counts as dropped: with
    // --no-follow that ends the backlog, otherwise it reconnects.
    auto r = Client(follow ? 30'000 : 2'000).Stream("GET", url, h, {}, on_head, on_chunk);
    // No answer at all on the first try (refused, unknown host): the server is
    // not there. Later drops and timeouts are retried from Last-Event-ID.
    bool unreachable = !r.ok() && status == 0 && reconnects == 0 && last_id.empty() &&
                       r.status().code() == StatusCode::kUnavailable;
    if (status >= 400 || unreachable) {
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
