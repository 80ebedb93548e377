// Channel: the message path under one mcp::Client — JSON-RPC messages in
// and out, nothing more. StdioTransport (a child's stdin/stdout) and
// HttpTransport (Streamable HTTP) implement it; the Client keeps all the
// JSON-RPC state (ids, the pending-request table, progress tokens) itself,
// so both transports share one request/reply logic.
//
// Private to src/mcp: others use mcp_client.h only.
//
// Thread safety: Send may be called from several threads at once and from
// inside a Sink callback; Initialized once after the handshake; Close from
// any thread except from inside a Sink callback (it joins the threads that
// run them).
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "core/json.h"
#include "core/status.h"

namespace maestro::mcp {

class Channel {
 public:
  struct Sink {
    // Each message the server sent (request, notification or response), in
    // the order it sent them on one stream. Runs on a channel thread, or
    // (HTTP) on the thread inside Send whose reply stream carries it.
    std::function<void(Json message)> on_message;
    // The server is gone for good (its process ended, its stdout closed).
    // At most once.
    std::function<void(Status why)> on_lost;
  };
  // Polled while a Send waits for its request's reply stream: true when the
  // reply was dispatched or the caller stopped waiting (cancel, deadline).
  using DoneFn = std::function<bool()>;

  virtual ~Channel() = default;

  // Starts the server (stdio) or nothing (HTTP). Once, before any Send.
  virtual Status Start(Sink sink) = 0;

  // Sends one message. For a request, `done` says when to stop waiting:
  // stdio returns once the line is written (the reply comes through the
  // Sink); HTTP carries the reply on the POST's own response, so it returns
  // after dispatching it, or when done() turns true. An error means the
  // message (or its reply stream) failed at the transport: unreachable,
  // HTTP 401/403 (IsAuthError), session expired, the server gone.
  virtual Status Send(const Json& message, const DoneFn& done) = 0;

  // The handshake negotiated `protocol_version`; called before
  // notifications/initialized goes out.
  virtual void Initialized(const std::string& protocol_version) { (void)protocol_version; }

  // Ends the session (stdio: the process is killed and reaped; HTTP: the
  // session is DELETEd). Makes every Send in flight return. Idempotent.
  virtual void Close() = 0;
};

// The auth refusal IsAuthError() recognises: kInvalidArgument (retrying with
// the same credentials cannot help) with this field.
inline constexpr const char* kAuthErrorField = "mcp.authorization";

}  // namespace maestro::mcp
