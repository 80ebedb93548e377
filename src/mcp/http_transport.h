// HttpTransport: an MCP server at a URL, spoken to by the Streamable HTTP
// transport (MCP 2025-03-26 and later) through core's HttpClient.
//
// Where it sits: under mcp::Client (see mcp_client.h) for a Transport with a
// url. Every message is a POST with `Accept: application/json,
// text/event-stream`. A request's reply is one JSON body or an SSE stream
// that carries the server's notifications and requests for it and then the
// response; Send reads it on the caller's thread, dispatching each message
// as it arrives (so progress reaches the caller live), and stops as soon as
// the caller's DoneFn says the reply is in or it stopped waiting. A stream
// that ends before the response after an event id was seen is resumed:
// GET with `Last-Event-ID` after the server's `retry:` delay (MCP
// 2025-11-25 lets a server close such a stream at will). After initialize,
// `Mcp-Session-Id` (when the server gave one) and `MCP-Protocol-Version`
// go on every request, and one listener thread keeps the optional GET
// stream open for messages the server sends outside any request
// (notifications/tools/list_changed): opened before notifications/
// initialized goes out, so what the server says right after is not lost;
// reconnected with Last-Event-ID when the server ends it; given up on a
// 405 or after three failed tries. Close() stops all of it and DELETEs the
// session.
//
// Errors: HTTP 401/403 → kInvalidArgument with field kAuthErrorField
// (IsAuthError); 404 on a session → kUnavailable "session expired"; other
// 4xx → kInvalidArgument with the server's message; 5xx, refused
// connections and broken streams → kUnavailable. With an egress policy (a
// configured server, mcp_tools.h ServerConfig::egress) every request's URL
// is checked and its connection pinned to the checked address; an internal
// address the operator did not allow is kInvalidArgument, field "url", and
// nothing is sent.
//
// Thread safety: as Channel. Send runs concurrently from many threads (one
// POST each); the Sink is called from those threads and the listener.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "core/http_client.h"
#include "core/mutex.h"
#include "core/sse_parser.h"
#include "mcp/channel.h"
#include "mcp/mcp_client.h"

namespace maestro::mcp {

class HttpTransport final : public Channel {
 public:
  // `egress` (null: none) checks the URL and pins each connection to the
  // address it checked (core/egress.h).
  HttpTransport(Transport spec, std::chrono::milliseconds connect_timeout,
                std::shared_ptr<const EgressPolicy> egress = nullptr);
  ~HttpTransport() override;
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  Status Start(Sink sink) override;
  Status Send(const Json& message, const DoneFn& done) override;
  void Initialized(const std::string& protocol_version) override;
  void Close() override;

 private:
  // What one POST or GET brought back.
  struct Reply {
    // Its SSE events go to `t`'s DispatchEvent as they complete.
    explicit Reply(HttpTransport* t)
        : sse_reader([t](const SseEvent& e) { t->DispatchEvent(e); }) {}
    int status = 0;
    bool sse = false;
    std::string body;  // a JSON reply, or an error's body (capped)
    SseParser sse_reader;
  };

  HttpHeaders Headers(bool post, const std::string& last_event_id) const;
  // One exchange; SSE events are dispatched while it runs.
  Result<HttpReply> Exchange(const std::string& method, const std::string& body,
                             const std::string& last_event_id, Reply& reply,
                             const HttpClient::StopFn& stop, bool initialize);
  Status CheckStatus(const Reply& reply, const std::string& what) const;
  Status DispatchJson(const std::string& body);
  void DispatchEvent(const SseEvent& event);
  // GETs the rest of a request's reply stream after it was cut.
  Status Resume(Reply& reply, const std::string& what, const DoneFn& done);
  void Listen();
  bool SleepUnlessClosing(std::chrono::milliseconds d);

  const Transport spec_;
  const HttpClient http_;
  Sink sink_;
  std::atomic<bool> closing_{false};
  std::thread listener_;

  mutable Mutex mu_;
  CondVar cv_;  // Close → the listener; the listener's first reply → Initialized
  std::string session_id_ GUARDED_BY(mu_);
  std::string protocol_ GUARDED_BY(mu_);
  bool listener_settled_ GUARDED_BY(mu_) = false;  // its GET was answered (or gave up)
  bool closed_ GUARDED_BY(mu_) = false;
};

}  // namespace maestro::mcp
