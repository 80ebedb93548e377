// The protocol side of maestro's MCP server (`POST /mcp`, routes_mcp.cc):
// Model Context Protocol over Streamable HTTP, revision 2025-11-25, also
// accepting 2025-06-18 and 2025-03-26 clients.
//
// This file holds what does not touch tasks: version negotiation, the
// session table, JSON-RPC envelopes, the tool definitions (names, JSON
// schemas) and the progress text of a task event. The tools themselves run
// in routes_mcp.cc on the TaskService (api/task_service.h: the same code as
// the REST routes).
//
// Sessions: `initialize` creates one (a random 64-hex id sent back in
// `Mcp-Session-Id`) bound to the bearer token's user and the negotiated
// version. A session unused for `idle_ttl` is forgotten. One user holds at
// most `max_per_user` live sessions: a new one over that drops the user's
// own least recently used. The table holds at most `max_sessions` over all
// users: when it is full, a user who holds a session gives up their own
// least recently used; a user who holds none is refused (kUnavailable, the
// route's 503) — no user's initialize ever ends another user's session
// (issue 44). A client whose session is gone gets 404 and initializes again.
// A session also tracks its in-flight `create_task` waits by request id, so
// `notifications/cancelled` (or DELETE) can end their streams.
//
// Thread safety: McpSessions and McpWait may be used from any thread; the
// functions are pure.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/json.h"
#include "core/mutex.h"
#include "core/status.h"
#include "store/types.h"

namespace maestro::api::mcp {

inline constexpr const char* kLatestVersion = "2025-11-25";
// Newest first.
const std::vector<std::string>& SupportedVersions();
bool IsSupportedVersion(std::string_view version);
// The client's version when supported, else kLatestVersion (the client then
// decides whether it can speak it).
std::string NegotiateVersion(std::string_view requested);
// structuredContent / outputSchema / titles exist from 2025-06-18 on.
bool HasStructuredContent(std::string_view version);

// JSON-RPC 2.0 error codes.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kSessionNotFound = -32001;  // as the MCP SDKs answer a stale session
inline constexpr int kServerBusy = -32000;       // the session table is full of other users'

Json RpcResult(const Json& id, Json result);
Json RpcError(const Json& id, int code, std::string message);
Json RpcNotification(std::string method, Json params);

// One in-flight create_task wait: its stream polls `cancelled()` and is
// woken by Cancel().
class McpWait {
 public:
  void SetWake(std::function<void()> wake);
  void Cancel();
  bool cancelled() const { return cancelled_.load(); }

 private:
  std::atomic<bool> cancelled_{false};
  Mutex mu_;
  std::function<void()> wake_ GUARDED_BY(mu_);
};

struct McpSessionInfo {
  std::string user;
  std::string version;
  bool initialized = false;
};

class McpSessions {
 public:
  using Clock = std::chrono::steady_clock;
  McpSessions(size_t max_sessions, size_t max_per_user, Clock::duration idle_ttl,
              std::function<Clock::time_point()> now = &Clock::now);

  // A new session for `user` speaking `version`; returns its id. May end
  // one of `user`'s own sessions (above), never another user's;
  // kUnavailable when the table is full of other users' live sessions.
  Result<std::string> Create(const std::string& user, const std::string& version);
  // The live session `id` of `user` (touched: its idle time restarts), or
  // nullopt when unknown, expired, deleted or another user's.
  std::optional<McpSessionInfo> Find(const std::string& id, const std::string& user);
  void MarkInitialized(const std::string& id);
  // Ends the session and cancels its waits. False when Find would fail.
  bool Remove(const std::string& id, const std::string& user);

  // Registers the wait of request `request_key` (the JSON of its id) in
  // session `id` (replacing an older one with that key).
  std::shared_ptr<McpWait> AddWait(const std::string& id, const std::string& request_key);
  // Cancels that wait; false when there is none (finished, or never was).
  bool CancelWait(const std::string& id, const std::string& request_key);

  size_t size() const;
  // The live sessions `user` holds (expired ones not yet swept included).
  size_t CountOf(const std::string& user) const;

 private:
  struct Session {
    McpSessionInfo info;
    Clock::time_point last_used;
    std::map<std::string, std::weak_ptr<McpWait>> waits;
  };
  void ExpireLocked(Clock::time_point now) REQUIRES(mu_);
  // Drops `user`'s least recently used session; false when they hold none.
  bool EvictOwnLocked(const std::string& user) REQUIRES(mu_);

  const size_t max_sessions_;
  const size_t max_per_user_;
  const Clock::duration idle_ttl_;
  const std::function<Clock::time_point()> now_;
  mutable Mutex mu_;
  std::unordered_map<std::string, Session> sessions_ GUARDED_BY(mu_);
};

// The `tools` array of tools/list for a session of `version` (no titles or
// output schemas before 2025-06-18).
Json ToolDefinitions(std::string_view version);
bool IsKnownTool(std::string_view name);
// The argument names a tool's input schema declares.
std::vector<std::string> ToolArguments(std::string_view name);

// A successful tools/call result: `text` (a short line for people), then
// the JSON of `structured` in the same text block, and `structured` as
// structuredContent where the version has it.
Json ToolResult(const Json& structured, const std::string& text, std::string_view version);
// A failed tool call (isError): the model reads `text`.
Json ToolError(const std::string& text);

// A short line for a task event (job status change, LLM call, tool call,
// comment, request...), the `message` of notifications/progress.
std::string ProgressMessage(const Event& e);

}  // namespace maestro::api::mcp
