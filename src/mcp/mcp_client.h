// mcp::Client: one session with one MCP server (Model Context Protocol,
// JSON-RPC 2.0), over stdio (a child process) or Streamable HTTP.
//
// Where it sits: the engine opens a Client per configured server when a job
// starts (src/mcp/mcp_tools.h turns its tools into the job's `mcp__<server>__
// <tool>` tools), calls tools through it from the Dispatcher, and closes it
// when the job ends — so a stdio server lives exactly as long as its job.
//
// Protocol: `initialize` offers kLatestProtocol and accepts any of
// SupportedProtocols() the server answers with (2025-11-25, 2025-06-18,
// 2025-03-26); anything else fails the connect. Then `notifications/
// initialized`. `tools/list` follows `nextCursor` to the end. `tools/call`
// carries a progress token; `notifications/progress` for it reach
// CallOptions::on_progress; when CallOptions::cancel fires the client sends
// `notifications/cancelled` for the request and returns kCancelled at once.
// `notifications/tools/list_changed` is only recorded (tools_changed()):
// the caller applies it at the next job, never mid-job, because the tools
// array of a running job must stay byte-stable. Requests from the server
// (`ping`, anything else) are answered (ping: {}, others: method not found).
//
// Transports:
// - stdio: Transport::argv is started as a child (already wrapped in the
//   task's sandbox by the caller) with Transport::env as its whole
//   environment, newline-delimited JSON on stdin/stdout, each stderr line
//   to ClientOptions::on_stderr. Close(): stdin closed, SIGTERM, SIGKILL
//   after 500 ms, reaped — a stdio server is gone within 1 s.
// - Streamable HTTP: each message is a POST to Transport::url with
//   `Accept: application/json, text/event-stream`; a reply is JSON or an SSE
//   stream (events carry responses, notifications and server requests;
//   `id:` remembered so a cut stream is resumed with a GET and
//   `Last-Event-ID`). `Mcp-Session-Id` from initialize is sent on every
//   later request, `MCP-Protocol-Version` after negotiation; Close() sends
//   DELETE for the session. HTTP 401/403 → IsAuthError().
//
// Errors (Status): kUnavailable (cannot start / reach the server, it died,
// the session expired), kDeadlineExceeded (no reply in time), kCancelled,
// kInvalidArgument (the server answered a JSON-RPC error: its message),
// IsAuthError() for an authentication refusal. A tool that fails is NOT an
// error: CallResult::is_error (the model reads the text).
//
// Thread safety: after Connect, ListTools/CallTool/Ping may be called from
// several threads at once (requests are matched to replies by id); Close()
// may be called from any thread and makes pending calls fail kUnavailable.
// on_stderr and on_progress run on a transport thread (HTTP progress: on
// the calling thread) and must not call Close().
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/cancel.h"
#include "core/egress.h"
#include "core/env.h"
#include "core/json.h"
#include "core/status.h"

namespace maestro::mcp {

inline constexpr const char* kLatestProtocol = "2025-11-25";
// Newest first.
const std::vector<std::string>& SupportedProtocols();

// How to reach one server: argv (stdio) or url (Streamable HTTP).
struct Transport {
  std::vector<std::string> argv;               // stdio: the command, ready to exec
  std::map<std::string, std::string> env;      // stdio: the child's whole environment
  std::string cwd;                             // stdio: working directory ("" = inherit)
  std::string url;                             // http: the MCP endpoint
  std::map<std::string, std::string> headers;  // http: extra headers (Authorization...)
};

struct ClientOptions {
  std::chrono::milliseconds connect_timeout{15'000};       // start + initialize
  std::chrono::milliseconds request_timeout{60'000};       // default per request
  std::function<void(const std::string& line)> on_stderr;  // stdio server's stderr
  std::string client_name = "maestro";
  std::string client_version = "0";
  Env* env = Env::Default();  // starts a stdio server's process
  // Streamable HTTP: the egress policy the URL goes through (core/egress.h);
  // null: none (the caller vouches for the URL).
  std::shared_ptr<const EgressPolicy> egress;
};

struct Tool {
  std::string name;
  std::string title;
  std::string description;
  Json input_schema = Json::object();  // always an object schema
  Json output_schema;                  // null when none
  bool read_only = false;              // annotations.readOnlyHint
  Json annotations;                    // as sent, null when none
};

struct CallResult {
  bool is_error = false;
  // The content blocks for the model: text as is; image/audio as
  // "[image image/png, 1234 bytes]"; resource_link as "[resource <uri>
  // <name>]"; an embedded text resource as its text; joined by "\n". When
  // there is structuredContent and no text block, its compact JSON.
  std::string text;
  Json structured;               // structuredContent, null when none
  Json content = Json::array();  // the blocks as sent
};

struct CallOptions {
  std::chrono::milliseconds timeout{0};  // 0: ClientOptions::request_timeout
  const CancelToken* cancel = nullptr;   // fired → notifications/cancelled, kCancelled
  // notifications/progress of this call: progress, total (if sent), message.
  std::function<void(double progress, std::optional<double> total, const std::string& message)>
      on_progress;
  // W3C trace context of the caller's span, sent as params._meta.traceparent
  // ("" = none).
  std::string traceparent;
};

// True when `st` is the server refusing our credentials (HTTP 401/403).
bool IsAuthError(const Status& st);

class Client {
 public:
  // Starts/reaches the server and completes the initialize handshake.
  static Result<std::unique_ptr<Client>> Connect(const Transport& transport, ClientOptions options);
  virtual ~Client() = default;

  virtual const std::string& protocol_version() const = 0;
  virtual const Json& server_info() const = 0;          // initialize's serverInfo
  virtual const Json& server_capabilities() const = 0;  // initialize's capabilities

  virtual Result<std::vector<Tool>> ListTools() = 0;
  virtual Result<CallResult> CallTool(const std::string& name, const Json& arguments,
                                      const CallOptions& options) = 0;
  virtual Status Ping() = 0;
  // A notifications/tools/list_changed arrived since Connect.
  virtual bool tools_changed() const = 0;
  // Ends the session (see the transports above). Idempotent.
  virtual void Close() = 0;
};

}  // namespace maestro::mcp
