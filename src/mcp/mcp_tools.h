// The MCP servers of one job, as tools the model can call.
//
// Where it sits: PieceExecutor opens a JobMcp when a job starts — one
// mcp::Client per configured server the piece may use (every server when a
// movement allows all tools) — and registers the servers' tools into the
// job's copy of the ToolRegistry, so they go through the same Dispatcher,
// policy, grants, ledger and `tool.call` metrics as the builtin tools. The
// JobMcp is destroyed with the job, which closes the sessions (a stdio
// server is killed and reaped).
//
// Names: `mcp__<server>__<tool>` with characters outside [A-Za-z0-9_-] made
// `_`; a name over 64 characters (the OpenAI limit) keeps its first 55 and
// gets `_` + 8 hex of SHA-256(server/tool). The tools are registered sorted
// by that name and their schemas passed through as sent, so the job's tools
// array is byte-identical across jobs while the servers' lists are
// unchanged. A `tools/list_changed` during a job is only logged: it applies
// at the next job.
//
// Policy (per server, ServerConfig): `tools_allow` / `tools_deny` filter the
// tools by their MCP name; `approval: never` puts the tools in the job's
// allowed set; `once` leaves them out, so the model asks with RequestTool and
// a task grant opens them; `always` needs a grant bound to each call's
// arguments (scope once). A call is read-only (parallel, re-runnable after a
// crash) only when the server marks it `readOnlyHint`.
//
// Secrets: `bearer_env` and `env` values of the form `$NAME` are read from
// maestro's environment at job start; they are never logged nor put in the
// prompt. A `required` server whose secret is unset, or that refuses it
// (HTTP 401/403), makes the job park: auth_needed() says which server and
// which variable (wait reason `mcp_auth_required`).
//
// stdio servers run confined by the Sandbox like RunCommand: the workspace
// read-write, `readonly_paths` (where the server is installed) read-only, no
// network unless `network: true`, as nobody. `{workspace}` in args and cwd
// is the job's workspace.
//
// Thread safety: Open/Register on the job's thread; the registered handlers
// may run concurrently (mcp::Client is thread-safe).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/cancel.h"
#include "core/egress.h"
#include "core/json.h"
#include "core/status.h"
#include "mcp/mcp_client.h"
#include "sandbox/sandbox.h"
#include "tools/registry.h"

namespace maestro::mcp {

enum class Approval { kNever, kOnce, kAlways };

struct ServerConfig {
  std::string name;
  std::vector<std::string> command;  // stdio: program + args
  std::map<std::string, std::string> env;
  std::string cwd;
  std::vector<std::string> readonly_paths;
  bool network = false;
  std::string url;  // Streamable HTTP
  std::map<std::string, std::string> headers;
  std::string bearer_env;  // the variable holding the bearer token
  bool required = false;
  std::vector<std::string> tools_allow;  // empty: all
  std::vector<std::string> tools_deny;
  Approval approval = Approval::kNever;
  int64_t timeout_ms = 60'000;  // per call
  std::string where;            // file:line:col for messages
  // HTTP: what `url` may reach (`egress:`, core/egress.h); the default
  // admits no internal address.
  std::shared_ptr<const EgressPolicy> egress = std::make_shared<const EgressPolicy>();
};

// Validates the `mcp_servers` config section; errors name `where` and the key.
Result<std::map<std::string, ServerConfig>> ServersFromConfig(const Json& section,
                                                              const std::string& where);

std::string ExposedName(const std::string& server, const std::string& tool);

struct JobMcpOptions {
  const std::map<std::string, ServerConfig>* servers = nullptr;
  // The piece's tool universe: servers with a tool named here are opened;
  // nullopt (some movement allows every tool) opens every server.
  std::optional<std::set<std::string>> wanted;
  // The servers the job's space allows (spaces.<name>.mcp_servers); nullopt: all.
  std::optional<std::set<std::string>> only;
  std::string workspace;
  std::shared_ptr<const tools::Sandbox> sandbox;  // confines stdio servers
  std::function<std::optional<std::string>(const std::string&)> getenv;
  // Progress of a running call, as a job-stream delta.
  std::function<void(const Json& delta)> on_progress;
  std::string client_version = "0";
};

struct AuthNeeded {
  std::string server;
  std::string variable;  // "" when the server refused the token it got
  std::string message;   // for the person: what to set, where
};

class JobMcp {
 public:
  // Opens the servers. A required server that needs a token → auth_needed();
  // a required server that fails otherwise → the error; an optional one that
  // fails is left out (logged) and the job goes on without its tools.
  static Result<std::unique_ptr<JobMcp>> Open(const JobMcpOptions& options);
  ~JobMcp();

  const std::optional<AuthNeeded>& auth_needed() const { return auth_needed_; }
  // Registers the tools (sorted by exposed name); adds those whose server
  // has approval: never to *auto_allowed.
  Status Register(tools::ToolRegistry& registry, std::set<std::string>* auto_allowed) const;
  std::vector<std::string> tool_names() const;

 private:
  struct Server {
    const ServerConfig* config = nullptr;
    std::shared_ptr<Client> client;
    std::vector<Tool> tools;  // after allow/deny
  };
  JobMcp() = default;
  std::vector<Server> servers_;
  std::optional<AuthNeeded> auth_needed_;
  std::function<void(const Json& delta)> on_progress_;
};

}  // namespace maestro::mcp
