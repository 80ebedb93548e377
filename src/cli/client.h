// The CLI's HTTP client side: `maestro task comment|continue|cancel|approve|
// deny|watch --server URL` drive a running `maestro serve` through its API
// (docs/api.md), the same way any program would. Where it sits: in the
// `maestro` binary only; main.cc parses arguments and calls these.
//
// Every command prints the server's JSON reply (or, for `watch`, one line per
// event) and returns a process exit code: 0 ok, 1 server/transport error,
// 2 refused input (4xx).
//
// Thread safety: each call is self-contained; no shared state.
#pragma once

#include <iosfwd>
#include <string>

namespace maestro::cli {

struct ClientOptions {
  std::string server = "http://127.0.0.1:8080";  // --server or MAESTRO_SERVER
  std::string token;                             // --token or MAESTRO_TOKEN
};

// task create | list | show through the API (the task is owned by the token's
// user; list/show see only what that user may see).
int TaskCreateRemote(const ClientOptions& o, const std::string& instruction,
                     const std::string& piece, const std::string& title, int priority = 0);
int TaskListRemote(const ClientOptions& o, const std::string& status);
int TaskShowRemote(const ClientOptions& o, const std::string& task_id);
int TaskComment(const ClientOptions& o, const std::string& task_id, const std::string& body);
int TaskContinue(const ClientOptions& o, const std::string& task_id, const std::string& piece,
                 const std::string& note);
int TaskCancelRemote(const ClientOptions& o, const std::string& task_id);
// decision: "approve" | "deny"; kind: tool | package | spawn.
int TaskDecide(const ClientOptions& o, const std::string& task_id, const std::string& kind,
               const std::string& request_id, const std::string& decision,
               const std::string& scope);
// Follows the task's event stream (SSE, resuming with Last-Event-ID after a
// dropped connection) and prints one line per event to `out`. Returns when a
// job of the task reaches a terminal status (or `follow` is false and the
// backlog is printed).
int TaskWatch(const ClientOptions& o, const std::string& task_id, bool follow, std::ostream& out);

// One event as a terminal line: "#id type key=value ..." (exposed for tests).
std::string RenderEventLine(const std::string& data_json);

}  // namespace maestro::cli
