// Configuration: a YAML file overridden by MAESTRO_* environment variables.
//
// Read once at start by `maestro serve` / `maestro worker` and passed down by
// value; nothing reads the environment after that. Unknown keys in the file
// are errors naming file:line:col and the nearest valid key, so a typo never
// silently falls back to a default.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/model_profile.h"
#include "core/status.h"

namespace maestro {

struct RetryConfig {
  int64_t base_delay_ms = 2'000;   // first retry waits about this long
  int64_t max_delay_ms = 300'000;  // backoff cap
  int max_attempts = 5;            // claims per job before it fails for good
  double jitter = 0.2;             // +/- fraction applied to each delay
};

struct JobsConfig {
  int64_t lease_ms = 30'000;           // a claim is valid this long without heartbeat
  int64_t heartbeat_ms = 10'000;       // how often a running job renews its lease
  int64_t sweep_interval_ms = 5'000;   // how often expired leases are recovered
  int64_t poll_interval_ms = 1'000;    // idle workers re-check the queue (cross-process)
  int64_t shutdown_grace_ms = 30'000;  // SIGTERM: running jobs may finish this long
  int delegate_max_depth = 2;          // nested delegate sub-agents; 0 = delegate never offered
  RetryConfig retry;
};

// A webhook: events are POSTed to `url`, signed with HMAC-SHA256 of the body
// under `secret` (header X-Maestro-Signature: sha256=<hex>). `events` lists
// event types to send (empty: all).
struct WebhookConfig {
  std::string url;
  std::string secret;
  std::vector<std::string> events;
};

// One host a space's RunRemote tool may run commands on (`ssh:` of a space,
// seed 000 §2 "SSH access is resolved from the Tool Policy"; parsed and
// validated by config_space_ssh.cc, used by tools/run_remote.h). The private
// key is never in the config: `key` names where the admin put it.
struct SshHostConfig {
  std::string name;  // what the model names in RunRemote {host}; default: host
  std::string host;  // a DNS name or an IP literal, exactly as ssh is given it
  int port = 22;
  std::string user;
  // "$VARIABLE" (maestro's environment) or an absolute file path outside the
  // space: the OpenSSH private key, read at each call.
  std::string key;
  // The pinned host keys, each "<type> <base64>" (ssh-keyscan's or a
  // known_hosts line's host pattern dropped: the host and port above are the
  // ones pinned).
  std::vector<std::string> known_hosts;
  std::string where;  // file:line:col of the entry
};

// A persistent space (seed 000 "Space"): a directory tasks can name with
// `space`, and the Tool Policy its tools run under. `spaces: {name: {...}}`
// in the file; src/tools turns it into a tools::Space (SpaceFromConfig).
// `tools` empty: the default set (read tools, plus the edit tools when
// edit_allowed, RunCommand when shell_allowed, and the agent tools).
struct SpaceConfig {
  std::string name;
  std::string path;  // absolute; created at start when missing
  std::string description;
  std::vector<std::string> tools;
  bool edit_allowed = false;
  bool shell_allowed = false;
  bool network_allowed = false;
  // `limits:` overrides of the global sandbox limits for RunCommand in this
  // space (validated by src/tools, SandboxLimits::FromJson); null = none.
  Json limits;
  // `mcp_servers:` the MCP servers (names under the top-level
  // `mcp_servers`) a job in this space may open; unset: all of them.
  std::optional<std::vector<std::string>> mcp_servers;
  // `piece:` the piece of a task created in this space without one ("" =
  // pieces.default); `grounded: true` fixes it: a task naming another piece
  // is refused (issue 21, piece routing).
  std::string piece;
  bool grounded = false;
  // `team:` the team (top-level `teams:`) the space belongs to: its members
  // see its tasks, their roles say what they may do (api/access.h); "" = none.
  std::string team;
  // `ssh:` the hosts RunRemote may reach from this space, in file order;
  // empty: no RunRemote.
  std::vector<SshHostConfig> ssh;
  std::string where;  // file:line:col of the entry, for later errors
};

// `http:` — the HTTP edge's threads, limits and timeouts (their meaning:
// src/api/http_server.h; docs/operations.md).
struct HttpConfig {
  int io_threads = 2;
  int handler_threads = 8;
  int64_t max_connections = 10'000;
  int64_t max_streams_per_token = 1'000;
  int64_t max_body_bytes = 1 << 20;
  int64_t header_timeout_ms = 10'000;
  int64_t body_timeout_ms = 30'000;
  int64_t idle_timeout_ms = 60'000;
  int64_t write_timeout_ms = 30'000;
};

// `attachments:` — files sent with a task or a comment (docs/api.md
// "Attachments"). The upload routes' body limit follows from these
// (api/attachments.h UploadBodyLimit), not from http.max_body_bytes.
struct AttachmentsConfig {
  int64_t max_bytes = 10 << 20;        // one file
  int64_t max_count = 10;              // files in one request
  int64_t max_total_bytes = 25 << 20;  // all files of one request
};

// The shared job store (docs/operations.md "Running on PostgreSQL"). An
// empty url keeps the embedded SQLite file data_dir/maestro.db.
struct DatabaseConfig {
  std::string url;  // postgresql://user@host:port/db, MAESTRO_DATABASE_URL
  int pool_size = 8;
  // LISTEN/NOTIFY wakes workers and streams of other processes at once;
  // false behind PgBouncer in transaction mode (NOTIFY does not pass), where
  // workers and streams poll.
  bool notify = true;
};

// `telemetry:` — OpenTelemetry trace export (src/telemetry; docs/operations.md
// "Telemetry"). Off while otlp_endpoint is empty.
struct TelemetryConfig {
  std::string otlp_endpoint;  // http(s)://host:4318 — spans go to <endpoint>/v1/traces
  std::map<std::string, std::string> headers;  // sent with every export (auth)
  double sample_ratio = 1.0;                   // share of tasks whose trace is kept, 0..1
  bool capture_content = false;                // prompts, completions, tool arguments/results
  std::string service_name = "maestro";
};

// `schedules:` — the scheduler loop of `maestro serve` (src/schedule;
// docs/operations.md "Schedules").
struct SchedulesConfig {
  bool enabled = true;      // false: this process fires no schedule (another may)
  int64_t tick_ms = 1'000;  // how often due fires are looked for
  // Non-empty: the scheduler's "now" is read from this file (ms since the
  // epoch) — fire drills and tests over simulated time (schedule/file_clock.h).
  std::string clock_file;
};

// `push:` — Web Push notifications (notify/push_dispatcher.h; docs/
// operations.md "Push"). The VAPID key pair is `key_file` (PKCS#8 PEM),
// generated there on first start; "" = <data_dir>/vapid_key.pem.
struct PushConfig {
  bool enabled = true;
  std::string subject;   // the VAPID `sub`: a mailto: or https: contact ("" = none)
  std::string key_file;  // "" = <data_dir>/vapid_key.pem
  int max_subscriptions_per_user = 10;
};

// The agent's judgement (issue 21; docs/operations.md "Policies, skills,
// memory, lessons"). Empty dirs resolve under data_dir at start.
struct JudgementConfig {
  std::string auto_prompter_dir;  // Auto Prompter policies; "" = <data_dir>/policies
  std::string skills_dir;         // global skills; "" = <data_dir>/skills
  bool memory = false;            // offer the Memory tool (per-space memory files)
  // After a task ends: off|failure|success|always — when a Reflection task
  // writes lessons about it.
  std::string reflection = "off";
  std::string default_piece = "chat";  // a task created without a piece
  std::string router;                  // "llm": an omitted piece is chosen by one LLM call
};

struct Config {
  std::string data_dir = "./data";
  DatabaseConfig database;
  std::string listen_host = "127.0.0.1";
  int listen_port = 8080;
  int workers = 2;
  // Start in any order (cli/startup_wait.h): how long serve and worker wait
  // for PostgreSQL to accept connections and a worker for the data dir's
  // marker, retrying with backoff; 0 = fail at once.
  int64_t startup_wait_ms = 300'000;
  // `maestro worker`: HOST:PORT of its /api/live and /api/ready probes
  // (api/readiness.h); "" = none.
  std::string health_listen;
  std::string admin_token;
  HttpConfig http;
  AttachmentsConfig attachments;
  std::string log_level = "info";   // trace|debug|info|warn|error
  std::string log_format = "text";  // text|json
  // The model profiles (core/model_profile.h): `llm:` is the "default" one,
  // `llm_profiles:` adds more by name (each entry's `name` is its key).
  ModelProfile llm;
  std::map<std::string, ModelProfile> llm_profiles;
  // The `context_storage` section (seed 002/004 settings), kept as JSON and
  // validated by src/context (ContextConfigFromConfig); `where` is its
  // file:line:col for error messages.
  Json context_storage = Json::object();
  std::string context_storage_where;
  // The `packages` section (installer commands per ecosystem), validated by
  // src/tools (PackageInstallerConfigFrom); `packages_where` is its position.
  Json packages = Json::object();
  std::string packages_where;
  // The `sandbox` section: `limits:` for every RunCommand (kept as
  // {"limits": ...}, validated by src/tools, SandboxLimits::FromJson;
  // docs/security.md), `sandbox_where` the position of `limits`.
  Json sandbox = Json::object();
  std::string sandbox_where;
  // `sandbox.required`: a process that runs jobs does not start when
  // RunCommand's bubblewrap (or BrowseWeb's Chromium, with `browser:`)
  // cannot run; false: it starts without them, warned (cli/sandbox_check.h).
  bool sandbox_required = true;
  // The `browser` section (BrowseWeb's Chromium, sandbox, host allow-lists
  // and limits), validated by src/browser (BrowserConfigFrom); null when
  // absent: no BrowseWeb.
  Json browser;
  std::string browser_where;
  // The `budgets` (per-task limits: default, pieces, users) and `quotas`
  // (per-user daily limits) sections, validated by src/store
  // (BudgetConfigFrom, store/budget.h; docs/operations.md).
  Json budgets = Json::object();
  std::string budgets_where;
  Json quotas = Json::object();
  std::string quotas_where;
  // The `mcp_servers` section (MCP servers the agents may use), validated
  // by src/mcp (ServersFromConfig; docs/mcp.md).
  Json mcp_servers = Json::object();
  std::string mcp_servers_where;
  // The `egress` section (what maestro may connect to on someone's behalf:
  // A2A push, webhooks, MCP HTTP servers; the operator's allow-list of
  // internal destinations), validated by src/core (EgressPolicyFrom,
  // core/egress.h; docs/security.md).
  Json egress = Json::object();
  std::string egress_where;
  // The `auth` section (sign-in: OIDC, sessions, the default role) and the
  // `teams` section (members and provider groups with their roles),
  // validated by src/api (AccessSettingsFrom, api/access_config.h; docs/
  // operations.md "Teams and sign-in").
  Json auth = Json::object();
  std::string auth_where;
  Json teams = Json::object();
  std::string teams_where;
  JobsConfig jobs;
  SchedulesConfig schedules;
  PushConfig push;
  JudgementConfig judgement;
  TelemetryConfig telemetry;
  std::vector<WebhookConfig> webhooks;
  std::map<std::string, SpaceConfig> spaces;  // by name
  // Web UI and demo mode (`maestro serve`, see docs/ui.md): where the built
  // UI lives (empty: searched) and, when no llm.base_url is set, which
  // fake-model script and maestro-fakellm binary demo mode uses (empty: searched).
  std::string ui_dir;
  bool demo_enabled = true;  // false: no demo model; jobs fail naming llm.base_url
  std::string demo_script;
  std::string demo_fakellm;

  // Non-fatal remarks found while loading (unknown MAESTRO_* variables).
  std::vector<std::string> warnings;
};

using EnvMap = std::map<std::string, std::string>;

// The process environment's MAESTRO_* variables.
EnvMap MaestroEnvFromProcess();

// Loads `path` if given (a missing explicit file is an error) and applies
// `env` on top. Validates ranges; errors name the key or variable.
Result<Config> LoadConfig(const std::optional<std::string>& path, const EnvMap& env);

// One documented setting: its maestro.yaml key ("" for a client-only
// variable), its environment variable ("" when it has none), what it does,
// and how to read its default from a default-constructed Config.
struct SettingInfo {
  std::string key;
  std::string env;
  std::string help;
  std::function<std::string(const Config&)> default_of;
};

// The table LoadConfig reads environment variables from (so a documented
// variable is never "unknown"); MAESTRO_SERVER and MAESTRO_TOKEN are the
// client's and leave the Config unchanged.
const std::vector<SettingInfo>& Settings();

// Settings() as text for `maestro serve --help`.
std::string SettingsHelp();

// Parses "host:port" (e.g. "127.0.0.1:8080").
Status ParseListen(const std::string& value, std::string* host, int* port);

}  // namespace maestro
