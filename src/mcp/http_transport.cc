#include "mcp/http_transport.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace maestro::mcp {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr size_t kMaxJsonReply = 64 << 20;
constexpr size_t kMaxErrorBody = 4096;
constexpr auto kNotificationTimeout = 10s;  // a notification/response POST: 202 expected
constexpr auto kCancelledTimeout = 1s;      // best effort: a cancel must not stall the canceller
constexpr auto kDeleteTimeout = 2s;
constexpr auto kListenerSettle = 500ms;  // Initialized waits this long for the GET
constexpr int kDefaultRetryMs = 1000;    // when the server sent no `retry:`
constexpr int kMaxResumes = 5;           // reconnects without a new event

bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  }
  return true;
}

// The server's own words from an error body: a JSON-RPC error's message, or
// the start of the text.
std::string ErrorText(const std::string& body) {
  auto j = ParseJson(body);
  if (j.ok() && j->is_object() && j->contains("error")) {
    const Json& e = (*j)["error"];
    if (e.is_object() && e.contains("message") && e["message"].is_string()) {
      return e["message"].get<std::string>();
    }
  }
  std::string t = body.substr(0, 200);
  t.erase(std::remove(t.begin(), t.end(), '\n'), t.end());
  return t;
}

auto Deadline(std::chrono::milliseconds d) {
  return [end = Clock::now() + d] { return Clock::now() >= end; };
}

}  // namespace

HttpTransport::HttpTransport(Transport spec, std::chrono::milliseconds connect_timeout,
                             std::shared_ptr<const EgressPolicy> egress)
    : spec_(std::move(spec)), http_([&] {
        HttpClientOptions o;
        o.connect_timeout_ms = connect_timeout.count();
        o.egress = std::move(egress);
        return o;
      }()) {}

HttpTransport::~HttpTransport() { Close(); }

Status HttpTransport::Start(Sink sink) {
  if (spec_.url.empty()) return InvalidArgument("an MCP HTTP server needs a url", "url");
  sink_ = std::move(sink);
  return Status::Ok();
}

HttpHeaders HttpTransport::Headers(bool post, const std::string& last_event_id) const {
  HttpHeaders h;
  if (post) {
    h.emplace_back("Content-Type", "application/json");
    h.emplace_back("Accept", "application/json, text/event-stream");
  } else {
    h.emplace_back("Accept", "text/event-stream");
  }
  {
    MutexLock lock(&mu_);
    if (!session_id_.empty()) h.emplace_back("Mcp-Session-Id", session_id_);
    if (!protocol_.empty()) h.emplace_back("MCP-Protocol-Version", protocol_);
  }
  if (!last_event_id.empty()) h.emplace_back("Last-Event-ID", last_event_id);
  for (const auto& [k, v] : spec_.headers) h.emplace_back(k, v);
  return h;
}

Result<HttpReply> HttpTransport::Exchange(const std::string& method, const std::string& body,
                                          const std::string& last_event_id, Reply& reply,
                                          const HttpClient::StopFn& stop, bool initialize) {
  auto on_head = [&](const HttpReply& head) {
    reply.status = head.status;
    reply.sse = StartsWithIgnoreCase(head.Header("Content-Type"), "text/event-stream");
    if (initialize && head.status == 200) {
      MutexLock lock(&mu_);
      session_id_ = head.Header("Mcp-Session-Id");
    }
    return true;
  };
  auto on_chunk = [&](std::string_view chunk) {
    if (reply.status == 200 && reply.sse) {
      reply.sse_reader.Feed(chunk);
      return !stop();  // the reply is in: no need to wait for the server to end the stream
    }
    const size_t cap = reply.status == 200 ? kMaxJsonReply : kMaxErrorBody;
    reply.body.append(chunk.substr(0, cap - std::min(cap, reply.body.size())));
    return reply.body.size() < cap || reply.status != 200;
  };
  return http_.Stream(method, spec_.url, Headers(method == "POST", last_event_id), body, on_head,
                      on_chunk, stop);
}

Status HttpTransport::CheckStatus(const Reply& reply, const std::string& what) const {
  const int s = reply.status;
  if (s >= 200 && s < 300) return Status::Ok();
  const std::string where = RedactUrl(spec_.url);
  const std::string says = reply.body.empty() ? "" : ": " + ErrorText(reply.body);
  if (s == 401 || s == 403) {
    return Status(
        StatusCode::kInvalidArgument,
        "MCP server " + where + " refused the credentials (HTTP " + std::to_string(s) + ")" + says,
        kAuthErrorField);
  }
  bool had_session;
  {
    MutexLock lock(&mu_);
    had_session = !session_id_.empty();
  }
  if (s == 404 && had_session) {
    return Unavailable("MCP session at " + where + " expired (HTTP 404)" + says);
  }
  std::string msg = what + ": MCP server " + where + " answered HTTP " + std::to_string(s) + says;
  if (s >= 500 || s == 404 || s == 408 || s == 429) return Unavailable(msg);
  return InvalidArgument(msg);
}

void HttpTransport::DispatchEvent(const SseEvent& event) {
  if (!event.event.empty() && event.event != "message") return;
  Status st = DispatchJson(event.data);
  if (!st.ok())
    spdlog::warn("mcp: {} sent an SSE event that is not JSON-RPC: {}", RedactUrl(spec_.url),
                 st.message());
}

Status HttpTransport::DispatchJson(const std::string& body) {
  auto parsed = ParseJson(body);
  if (!parsed.ok()) return parsed.status();
  Json& j = *parsed;
  if (j.is_array()) {  // a 2025-03-26 batch
    for (auto& m : j) {
      if (sink_.on_message) sink_.on_message(std::move(m));
    }
  } else if (j.is_object()) {
    if (sink_.on_message) sink_.on_message(std::move(j));
  } else {
    return InvalidArgument("not a JSON-RPC message");
  }
  return Status::Ok();
}

Status HttpTransport::Send(const Json& message, const DoneFn& done) {
  if (closing_) return Unavailable("the MCP session is closed");
  const bool request = message.contains("method") && message.contains("id");
  const std::string method = message.value("method", std::string("response"));
  const std::string body = DumpJson(message);
  auto expired =
      Deadline(method == "notifications/cancelled" ? kCancelledTimeout : kNotificationTimeout);
  HttpClient::StopFn stop = [&] {
    return closing_.load() || (request ? (done && done()) : expired());
  };
  Reply reply(this);
  auto r = Exchange("POST", body, "", reply, stop, method == "initialize");
  if (reply.status != 0 && reply.status != 200) {
    MAESTRO_RETURN_IF_ERROR(CheckStatus(reply, method));
  }
  if (!request) {
    if (!r.ok()) return r.status();
    return Status::Ok();  // 202 Accepted (a 200 with a body is taken as well)
  }
  if (!r.ok() || (!r->stopped && reply.sse)) {
    // Cut (or ended) before the response: resumable once an id was seen.
    if (reply.sse && !reply.sse_reader.last_event_id().empty() && !stop()) {
      return Resume(reply, method, done);
    }
    if (!r.ok()) return r.status();
  }
  if (!reply.sse && reply.body.size() >= kMaxJsonReply) {
    return Status(StatusCode::kResourceExhausted, method + ": the reply from " +
                                                      RedactUrl(spec_.url) + " is over " +
                                                      std::to_string(kMaxJsonReply >> 20) + " MiB");
  }
  if (r->stopped || stop()) return Status::Ok();  // the reply is in, or the caller gave up
  if (reply.status == 202) {
    return Unavailable(method + ": MCP server " + RedactUrl(spec_.url) +
                       " accepted the request but sent no reply");
  }
  if (reply.sse) {
    return Unavailable(method + ": the reply stream from " + RedactUrl(spec_.url) +
                       " ended before its response");
  }
  Status st = DispatchJson(reply.body);
  if (!st.ok()) {
    return Unavailable(method + ": MCP server " + RedactUrl(spec_.url) +
                       " sent a reply that is not JSON-RPC: " + st.message());
  }
  return Status::Ok();
}

Status HttpTransport::Resume(Reply& reply, const std::string& what, const DoneFn& done) {
  HttpClient::StopFn stop = [&] { return closing_.load() || (done && done()); };
  std::string last_id = reply.sse_reader.last_event_id();
  int retry_ms = reply.sse_reader.retry_ms().value_or(kDefaultRetryMs);
  for (int tries = 0; tries < kMaxResumes; ++tries) {
    // Wait the server's retry delay, noticing the caller giving up meanwhile.
    for (auto end = Clock::now() + std::chrono::milliseconds(retry_ms); Clock::now() < end;) {
      if (stop()) return Status::Ok();
      std::this_thread::sleep_for(10ms);
    }
    Reply again(this);
    auto r = Exchange("GET", "", last_id, again, stop, false);
    if (again.status != 0 && again.status != 200) return CheckStatus(again, what + " (resume)");
    if (r.ok() && (r->stopped || stop())) return Status::Ok();
    if (r.ok() && again.status == 200 && !again.sse) {
      return Unavailable(what + ": resuming at " + RedactUrl(spec_.url) + " got no SSE stream");
    }
    if (again.sse_reader.last_event_id() != last_id && !again.sse_reader.last_event_id().empty()) {
      last_id = again.sse_reader.last_event_id();
      tries = -1;  // progress: the budget is for reconnects that bring nothing
    }
    retry_ms = again.sse_reader.retry_ms().value_or(retry_ms);
  }
  return Unavailable(what + ": the reply stream from " + RedactUrl(spec_.url) +
                     " was cut and could not be resumed");
}

void HttpTransport::Initialized(const std::string& protocol_version) {
  {
    MutexLock lock(&mu_);
    protocol_ = protocol_version;
    if (closed_) return;
  }
  listener_ = std::thread([this] { Listen(); });
  MutexLock lock(&mu_);
  cv_.WaitFor(&mu_, kListenerSettle, [&]() REQUIRES(mu_) { return listener_settled_ || closed_; });
}

bool HttpTransport::SleepUnlessClosing(std::chrono::milliseconds d) {
  MutexLock lock(&mu_);
  return !cv_.WaitFor(&mu_, d, [&]() REQUIRES(mu_) { return closed_; });
}

void HttpTransport::Listen() {
  bool settled = false;
  auto settle = [&] {
    if (settled) return;
    settled = true;
    MutexLock lock(&mu_);
    listener_settled_ = true;
    cv_.SignalAll();
  };
  HttpClient::StopFn stop = [this] { return closing_.load(); };
  std::string last_id;
  int retry_ms = kDefaultRetryMs;
  for (int failures = 0; failures < 3 && !closing_;) {
    Reply reply(this);
    // Settle once the head is in (seen within one 50 ms poll): the server
    // has registered the stream by then.
    HttpClient::StopFn settle_then_stop = [&] {
      if (reply.status != 0) settle();
      return stop();
    };
    const auto opened = Clock::now();
    auto r = Exchange("GET", "", last_id, reply, settle_then_stop, false);
    settle();
    if (closing_) return;
    if (reply.status == 200 && reply.sse) {
      // A stream that lived a while or brought news was a good one; one the
      // server ends at once, again and again, is not worth reopening.
      const std::string& id = reply.sse_reader.last_event_id();
      const bool news = !id.empty() && id != last_id;
      failures = news || Clock::now() - opened > 2s ? 0 : failures + 1;
      if (!id.empty()) last_id = id;
      retry_ms = reply.sse_reader.retry_ms().value_or(retry_ms);
    } else if (reply.status == 405 || reply.status == 401 || reply.status == 403) {
      return;  // the server offers no stream here (or not to us)
    } else {
      ++failures;
      if (!r.ok())
        spdlog::debug("mcp: GET stream of {}: {}", RedactUrl(spec_.url), r.status().message());
    }
    if (!SleepUnlessClosing(std::chrono::milliseconds(retry_ms))) return;
  }
}

void HttpTransport::Close() {
  {
    MutexLock lock(&mu_);
    if (closed_) return;
    closed_ = true;
  }
  closing_ = true;  // every Stream in flight stops within 50 ms
  cv_.SignalAll();
  if (listener_.joinable()) listener_.join();
  std::string session;
  {
    MutexLock lock(&mu_);
    session = session_id_;
  }
  if (session.empty()) return;
  auto r =
      http_.Stream("DELETE", spec_.url, Headers(false, ""), {}, {}, {}, Deadline(kDeleteTimeout));
  if (!r.ok()) spdlog::debug("mcp: DELETE {}: {}", RedactUrl(spec_.url), r.status().message());
}

}  // namespace maestro::mcp
