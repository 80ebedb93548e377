// The one table of maestro.yaml's keys (config_sections.h KeyTable): each
// key's reader, its MAESTRO_* variable and its help row in one entry.
//
// A scalar key names its Config field once (FIELD below): the setter writes
// it and the help reads its default from a default-constructed Config
// through the same accessor, so the help cannot drift from the default.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <type_traits>

#include "core/config_sections.h"

namespace maestro::config_internal {
namespace {

// An accessor of one Config field, for a Config and a const Config alike.
#define FIELD(member) \
  [](auto& c) -> auto& { return c.member; }

// A string check run before the value is stored; null: any string.
using ValueCheck = Status (*)(const std::string& value, const std::string& where);

// An integer >= min; values above `clamp_to` are stored as clamp_to.
template <typename Field>
KeyValue IntKey(int64_t min, Field field, int64_t clamp_to = std::numeric_limits<int64_t>::max()) {
  return {[min, field, clamp_to](Config& c, const std::string& v, const std::string& where) {
            int64_t x;
            MAESTRO_RETURN_IF_ERROR(ParseInt(v, where, min, &x));
            auto& f = field(c);
            f = static_cast<std::remove_reference_t<decltype(f)>>(std::min(x, clamp_to));
            return Status::Ok();
          },
          nullptr, [field](const Config& c) { return std::to_string(field(c)); }};
}

template <typename Field>
KeyValue StringKey(Field field, ValueCheck check = nullptr) {
  return {[field, check](Config& c, const std::string& v, const std::string& where) {
            if (check) MAESTRO_RETURN_IF_ERROR(check(v, where));
            field(c) = v;
            return Status::Ok();
          },
          nullptr, [field](const Config& c) { return std::string(field(c)); }};
}

Status CheckOneOf(const std::vector<std::string>& allowed, const std::string& v,
                  const std::string& where) {
  for (const auto& a : allowed) {
    if (a == v) return Status::Ok();
  }
  return InvalidArgument(
      fmt::format("{}: must be one of {}, got '{}'", where, fmt::join(allowed, "|"), v), where);
}

template <typename Field>
KeyValue OneOfKey(std::vector<std::string> allowed, Field field) {
  return {[allowed, field](Config& c, const std::string& v, const std::string& where) {
            MAESTRO_RETURN_IF_ERROR(CheckOneOf(allowed, v, where));
            field(c) = v;
            return Status::Ok();
          },
          nullptr, [field](const Config& c) { return std::string(field(c)); }};
}

template <typename Field>
KeyValue BoolKey(Field field) {
  return {[field](Config& c, const std::string& v, const std::string& where) {
            MAESTRO_RETURN_IF_ERROR(CheckOneOf({"true", "false"}, v, where));
            field(c) = v == "true";
            return Status::Ok();
          },
          nullptr, [field](const Config& c) { return std::string(field(c) ? "true" : "false"); }};
}

// A number in [0, 1] (NaN is not one).
template <typename Field>
KeyValue FractionKey(Field field) {
  return {[field](Config& c, const std::string& v, const std::string& where) {
            size_t used = 0;
            double d = -1;
            try {
              d = std::stod(v, &used);
            } catch (const std::exception&) {
              used = 0;
            }
            if (used == 0 || used != v.size() || !(d >= 0 && d <= 1)) {
              return InvalidArgument(
                  fmt::format("{}: expected a number between 0 and 1, got '{}'", where, v), where);
            }
            field(c) = d;
            return Status::Ok();
          },
          nullptr, [field](const Config& c) { return fmt::format("{}", field(c)); }};
}

// A mapping or list read by `parse`; the help shows nothing for it.
KeyValue SectionKey(SectionParser parse) { return {nullptr, std::move(parse), nullptr}; }

// A section kept as JSON with its file:line:col, validated later by its
// module (e.g. `context_storage` by src/context); `mapping`: it must be one.
KeyValue JsonSectionKey(Json Config::*json, std::string Config::*where, bool mapping = true) {
  return SectionKey([json, where, mapping](Config& c, const YAML::Node& node, const std::string&,
                                           const std::string& pos, const std::string& name) {
    if (mapping && !node.IsMap()) {
      return InvalidArgument(fmt::format("{}: {} must be a mapping", pos, name), name);
    }
    c.*json = YamlToJson(node);
    c.*where = pos;
    return Status::Ok();
  });
}

// A row that only documents (no key of the file reads it); `shown` is its
// default as the help prints it.
KeyValue DocOnly(std::string shown) {
  return {nullptr, nullptr, [shown](const Config&) { return shown; }};
}

Status CheckDatabaseUrl(const std::string& v, const std::string& where) {
  if (!v.empty() && v.rfind("postgresql://", 0) != 0 && v.rfind("postgres://", 0) != 0) {
    return InvalidArgument(fmt::format("{}: database_url must start with postgresql://", where),
                           where);
  }
  return Status::Ok();
}

Status CheckOtlpEndpoint(const std::string& v, const std::string& where) {
  if (!v.empty() &&
      ((v.rfind("http://", 0) != 0 && v.rfind("https://", 0) != 0) ||
       v.find_first_of(" \t\n") != std::string::npos || v.size() <= v.find("//") + 2)) {
    return InvalidArgument(
        fmt::format("{}: expected an http:// or https:// URL, got '{}'", where, v), where);
  }
  return Status::Ok();
}

// "" (off) or HOST:PORT.
Status CheckHealthListen(const std::string& v, const std::string& where) {
  if (v.empty()) return Status::Ok();
  std::string host;
  int port = 0;
  Status st = ParseListen(v, &host, &port);
  if (!st.ok()) return InvalidArgument(fmt::format("{}: {}", where, st.message()), where);
  return Status::Ok();
}

Status CheckPushSubject(const std::string& v, const std::string& where) {
  if (!v.empty() && v.rfind("mailto:", 0) != 0 && v.rfind("https://", 0) != 0) {
    return InvalidArgument(
        fmt::format("{}: expected a mailto: or https: contact, got '{}'", where, v), where);
  }
  return Status::Ok();
}

KeyValue ListenKey() {
  return {[](Config& c, const std::string& v, const std::string& where) {
            Status st = ParseListen(v, &c.listen_host, &c.listen_port);
            if (!st.ok()) return InvalidArgument(fmt::format("{}: {}", where, st.message()), where);
            return Status::Ok();
          },
          nullptr,
          [](const Config& c) { return c.listen_host + ":" + std::to_string(c.listen_port); }};
}

// `none` is stored as "" (no router).
KeyValue RouterKey() {
  return {[](Config& c, const std::string& v, const std::string& where) {
            MAESTRO_RETURN_IF_ERROR(CheckOneOf({"none", "llm"}, v, where));
            c.judgement.router = v == "llm" ? "llm" : "";
            return Status::Ok();
          },
          nullptr,
          [](const Config& c) { return std::string(c.judgement.router.empty() ? "none" : "llm"); }};
}

}  // namespace

Status ParseInt(const std::string& value, const std::string& where, int64_t min, int64_t* out) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || p != value.data() + value.size()) {
    return InvalidArgument(fmt::format("{}: expected an integer, got '{}'", where, value), where);
  }
  if (v < min) {
    return InvalidArgument(fmt::format("{}: must be >= {}, got {}", where, min, v), where);
  }
  *out = v;
  return Status::Ok();
}

// The documented rows (a non-empty help) come in the order the help lists
// them; the others sit beside their section.
const std::vector<KeyDef>& KeyTable() {
  static const std::vector<KeyDef> table = {
      {"data_dir", StringKey(FIELD(data_dir)), "MAESTRO_DATA_DIR",
       "SQLite file, admin_token, task files"},
      {"database_url", StringKey(FIELD(database.url), CheckDatabaseUrl), "MAESTRO_DATABASE_URL",
       "postgresql://… (empty: SQLite in data_dir)"},
      {"database.pool_size", IntKey(1, FIELD(database.pool_size))},
      {"database.notify", BoolKey(FIELD(database.notify))},
      {"listen", ListenKey(), "MAESTRO_LISTEN", "HOST:PORT of the HTTP API and web UI"},
      {"workers", IntKey(0, FIELD(workers)), "MAESTRO_WORKERS", "worker threads (0: API only)"},
      {"sandbox.required", BoolKey(FIELD(sandbox_required)), "MAESTRO_SANDBOX_REQUIRED",
       "with workers > 0, refuse to start when RunCommand's bubblewrap or BrowseWeb's Chromium "
       "cannot run (false: start without them, warned; "
       "docs/operations.md#the-sandbox-in-a-container)"},
      {"admin_token", StringKey(FIELD(admin_token)), "MAESTRO_ADMIN_TOKEN",
       "admin bearer token (empty: data_dir/admin_token)"},
      {"http.io_threads", IntKey(1, FIELD(http.io_threads))},
      {"http.handler_threads", IntKey(1, FIELD(http.handler_threads))},
      {"http.max_connections", IntKey(1, FIELD(http.max_connections)),
       "MAESTRO_HTTP_MAX_CONNECTIONS", "open HTTP connections"},
      {"http.max_streams_per_token", IntKey(1, FIELD(http.max_streams_per_token)),
       "MAESTRO_HTTP_MAX_STREAMS_PER_TOKEN", "open SSE streams per token"},
      {"http.max_body_bytes", IntKey(1, FIELD(http.max_body_bytes))},
      {"http.header_timeout_ms", IntKey(10, FIELD(http.header_timeout_ms)),
       "MAESTRO_HTTP_HEADER_TIMEOUT_MS", "request headers deadline"},
      {"http.body_timeout_ms", IntKey(10, FIELD(http.body_timeout_ms))},
      {"http.idle_timeout_ms", IntKey(10, FIELD(http.idle_timeout_ms))},
      {"http.write_timeout_ms", IntKey(10, FIELD(http.write_timeout_ms))},
      {"attachments.max_bytes", IntKey(1, FIELD(attachments.max_bytes)),
       "MAESTRO_ATTACHMENTS_MAX_BYTES", "bytes of one attached file"},
      {"attachments.max_count", IntKey(1, FIELD(attachments.max_count)),
       "MAESTRO_ATTACHMENTS_MAX_COUNT", "attached files per request"},
      {"attachments.max_total_bytes", IntKey(1, FIELD(attachments.max_total_bytes)),
       "MAESTRO_ATTACHMENTS_MAX_TOTAL_BYTES", "bytes of all files attached to one request"},
      {"ui.dir", StringKey(FIELD(ui_dir)), "MAESTRO_UI_DIR", "built web UI (empty: searched)"},
      {"demo.enabled", BoolKey(FIELD(demo_enabled)), "MAESTRO_DEMO",
       "demo model when no llm.base_url"},
      {"demo.script", StringKey(FIELD(demo_script)), "MAESTRO_DEMO_SCRIPT",
       "demo model script (empty: searched)"},
      {"demo.fakellm", StringKey(FIELD(demo_fakellm))},
      {"log.level", OneOfKey({"trace", "debug", "info", "warn", "error"}, FIELD(log_level)),
       "MAESTRO_LOG_LEVEL", "trace|debug|info|warn|error"},
      {"log.format", OneOfKey({"text", "json"}, FIELD(log_format)), "MAESTRO_LOG_FORMAT",
       "text|json"},
      {"startup_wait_ms", IntKey(0, FIELD(startup_wait_ms)), "MAESTRO_STARTUP_WAIT_MS",
       "serve/worker: wait this long for PostgreSQL (worker: and the data dir's marker), "
       "retrying with backoff (0: fail at once)"},
      {"health_listen", StringKey(FIELD(health_listen), CheckHealthListen), "MAESTRO_HEALTH_LISTEN",
       "worker: HOST:PORT serving /api/live and /api/ready (empty: off)"},
      {"telemetry.otlp_endpoint", StringKey(FIELD(telemetry.otlp_endpoint), CheckOtlpEndpoint),
       "MAESTRO_OTLP_ENDPOINT",
       "OTLP/HTTP receiver for traces, e.g. http://127.0.0.1:4318 (empty: telemetry off)"},
      {"telemetry.sample_ratio", FractionKey(FIELD(telemetry.sample_ratio))},
      {"telemetry.capture_content", BoolKey(FIELD(telemetry.capture_content))},
      {"telemetry.service_name", StringKey(FIELD(telemetry.service_name))},
      {"telemetry.headers",
       SectionKey(
           [](Config& c, const YAML::Node& node, const std::string& path, const std::string&,
              const std::string&) { return ApplyTelemetryHeaders(c.telemetry, node, path); })},
      {"llm.base_url", StringKey(FIELD(llm.base_url)), "MAESTRO_LLM_BASE_URL",
       "OpenAI-compatible server, e.g. http://host:8081/v1"},
      {"llm.api_key", StringKey(FIELD(llm.api_key)), "MAESTRO_LLM_API_KEY",
       "API key sent to the LLM server"},
      {"llm.model", StringKey(FIELD(llm.model)), "MAESTRO_LLM_MODEL",
       "model name sent to the LLM server"},
      {"llm.context_length", IntKey(512, FIELD(llm.context_length)), "MAESTRO_LLM_CONTEXT_LENGTH",
       "the model's context window (tokens)"},
      {"llm.vision", BoolKey(FIELD(llm.vision)), "MAESTRO_LLM_VISION",
       "the model takes images (attached images sent to it)"},
      {"llm.provider", OneOfKey({"openai", "anthropic", "gemini"}, FIELD(llm.provider)),
       "MAESTRO_LLM_PROVIDER",
       "wire format: openai (chat completions) | anthropic (Messages) | gemini (generateContent)"},
      {"llm.cache_ttl", OneOfKey({"5m", "1h"}, FIELD(llm.cache_ttl))},
      {"llm.max_output_tokens", IntKey(1, FIELD(llm.max_output_tokens))},
      {"llm.api_key_env", StringKey(FIELD(llm.api_key_env))},
      {"llm.stream", BoolKey(FIELD(llm.stream))},
      {"llm.connect_timeout_ms", IntKey(1, FIELD(llm.connect_timeout_ms))},
      {"llm.idle_timeout_ms", IntKey(1, FIELD(llm.idle_timeout_ms))},
      {"llm.total_timeout_ms", IntKey(0, FIELD(llm.total_timeout_ms))},
      {"llm.max_attempts", IntKey(1, FIELD(llm.max_attempts))},
      {"llm.headers",
       SectionKey([](Config& c, const YAML::Node& node, const std::string& path, const std::string&,
                     const std::string&) { return ApplyHeaders(c.llm, node, path); })},
      {"llm.price",
       SectionKey([](Config& c, const YAML::Node& node, const std::string& path, const std::string&,
                     const std::string& name) { return ApplyPrice(c.llm, node, path, name); })},
      {"llm_profiles",
       SectionKey([](Config& c, const YAML::Node& node, const std::string& path, const std::string&,
                     const std::string&) { return ApplyProfiles(c, node, path); })},
      {"schedules.enabled", BoolKey(FIELD(schedules.enabled)), "MAESTRO_SCHEDULES",
       "fire due schedules in this serve (true|false)"},
      {"schedules.tick_ms", IntKey(10, FIELD(schedules.tick_ms)), "MAESTRO_SCHEDULES_TICK_MS",
       "how often due schedule fires are looked for"},
      {"schedules.clock_file", StringKey(FIELD(schedules.clock_file)),
       "MAESTRO_SCHEDULES_CLOCK_FILE",
       "read the scheduler's now (ms since the epoch) from this file: fire drills and tests only"},
      {"push.enabled", BoolKey(FIELD(push.enabled)), "MAESTRO_PUSH",
       "Web Push notifications to subscribed browsers (true|false)"},
      {"push.subject", StringKey(FIELD(push.subject), CheckPushSubject), "MAESTRO_PUSH_SUBJECT",
       "VAPID contact the push services see: mailto:... or https://..."},
      {"push.key_file", StringKey(FIELD(push.key_file)), "MAESTRO_PUSH_KEY_FILE",
       "VAPID P-256 key (PEM), created on first start (\"\" = <data_dir>/vapid_key.pem)"},
      {"push.max_subscriptions_per_user",
       IntKey(1, FIELD(push.max_subscriptions_per_user), /*clamp_to=*/1000),
       "MAESTRO_PUSH_MAX_SUBSCRIPTIONS", "browsers one user may subscribe"},
      {"auto_prompter.dir", StringKey(FIELD(judgement.auto_prompter_dir)),
       "MAESTRO_AUTO_PROMPTER_DIR",
       "Auto Prompter policies: <dir>/<space>.yaml, <dir>/<space>/<piece>.yaml (\"\" = "
       "<data_dir>/policies)"},
      {"skills.dir", StringKey(FIELD(judgement.skills_dir)), "MAESTRO_SKILLS_DIR",
       "global skills, one folder with a SKILL.md each (\"\" = <data_dir>/skills)"},
      {"memory.enabled", BoolKey(FIELD(judgement.memory)), "MAESTRO_MEMORY_ENABLED",
       "offer the Memory tool: per-space notes the agent reads and appends to"},
      {"reflection.on",
       OneOfKey({"off", "failure", "success", "always"}, FIELD(judgement.reflection)),
       "MAESTRO_REFLECTION_ON",
       "when a Reflection task writes lessons about an ended task: off|failure|success|always"},
      {"pieces.default", StringKey(FIELD(judgement.default_piece)), "MAESTRO_PIECES_DEFAULT",
       "the piece of a task created without one"},
      {"pieces.router", RouterKey(), "MAESTRO_PIECES_ROUTER",
       "llm: a task created without a piece gets one chosen by one LLM call (none = the default)"},
      {"jobs.lease_ms", IntKey(100, FIELD(jobs.lease_ms)), "", "a claim's lease without heartbeat"},
      {"jobs.heartbeat_ms", IntKey(10, FIELD(jobs.heartbeat_ms))},
      {"jobs.sweep_interval_ms", IntKey(10, FIELD(jobs.sweep_interval_ms))},
      {"jobs.poll_interval_ms", IntKey(10, FIELD(jobs.poll_interval_ms))},
      {"jobs.shutdown_grace_ms", IntKey(0, FIELD(jobs.shutdown_grace_ms))},
      {"jobs.delegate_max_depth", IntKey(0, FIELD(jobs.delegate_max_depth))},
      {"jobs.retry.max_attempts", IntKey(1, FIELD(jobs.retry.max_attempts)), "",
       "claims per job before it fails"},
      {"jobs.retry.base_delay_ms", IntKey(0, FIELD(jobs.retry.base_delay_ms))},
      {"jobs.retry.max_delay_ms", IntKey(0, FIELD(jobs.retry.max_delay_ms))},
      {"jobs.retry.jitter", FractionKey(FIELD(jobs.retry.jitter))},
      // Sections kept as JSON for their module (Config's comments say which).
      {"context_storage", JsonSectionKey(&Config::context_storage, &Config::context_storage_where)},
      {"packages", JsonSectionKey(&Config::packages, &Config::packages_where)},
      {"sandbox.limits", SectionKey([](Config& c, const YAML::Node& node, const std::string&,
                                       const std::string& pos, const std::string& name) {
         if (!node.IsMap()) {
           return InvalidArgument(fmt::format("{}: {} must be a mapping", pos, name), name);
         }
         c.sandbox["limits"] = YamlToJson(node);
         c.sandbox_where = pos;
         return Status::Ok();
       })},
      {"browser", JsonSectionKey(&Config::browser, &Config::browser_where)},
      {"budgets", JsonSectionKey(&Config::budgets, &Config::budgets_where)},
      {"quotas", JsonSectionKey(&Config::quotas, &Config::quotas_where)},
      {"mcp_servers", JsonSectionKey(&Config::mcp_servers, &Config::mcp_servers_where,
                                     /*mapping=*/false)},
      {"egress", JsonSectionKey(&Config::egress, &Config::egress_where)},
      {"auth", JsonSectionKey(&Config::auth, &Config::auth_where)},
      {"teams", JsonSectionKey(&Config::teams, &Config::teams_where)},
      // Read by api/access_config.cc when auth.oidc has no client_secret
      // (a secret kept out of the file).
      {"", DocOnly(""), "MAESTRO_OIDC_CLIENT_SECRET", "auth.oidc.client_secret (else the file's)"},
      {"webhooks",
       SectionKey([](Config& c, const YAML::Node& node, const std::string& path, const std::string&,
                     const std::string&) { return ApplyWebhooks(c, node, path); })},
      {"spaces",
       SectionKey([](Config& c, const YAML::Node& node, const std::string& path, const std::string&,
                     const std::string&) { return ApplySpaces(c, node, path); })},
      {"spaces.<name>.ssh", DocOnly(""), "",
       "RunRemote's hosts for a space: [{host, port, user, key: $VARIABLE or /abs/file (never "
       "the key), known_hosts: pinned key lines}] (docs/operations.md \"Spaces\")"},
      // Read by the `maestro task …` client commands, not by the server.
      {"", DocOnly("http://127.0.0.1:8080"), "MAESTRO_SERVER",
       "client: server URL for `maestro task`"},
      {"", DocOnly(""), "MAESTRO_TOKEN", "client: bearer token (else data_dir/admin_token)"},
  };
  return table;
}

#undef FIELD

}  // namespace maestro::config_internal
