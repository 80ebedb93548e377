#include "core/config.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <functional>

#include "core/config_sections.h"
#include "core/json.h"

extern char** environ;

namespace maestro {
namespace {

// One setter per dotted key; the same table serves the YAML file and the env.
using Setter = std::function<Status(Config&, const std::string& value, const std::string& where)>;

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

Setter IntField(int64_t min, std::function<void(Config&, int64_t)> set) {
  return [min, set](Config& c, const std::string& v, const std::string& where) {
    int64_t x;
    MAESTRO_RETURN_IF_ERROR(ParseInt(v, where, min, &x));
    set(c, x);
    return Status::Ok();
  };
}

Setter StringField(std::function<void(Config&, const std::string&)> set) {
  return [set](Config& c, const std::string& v, const std::string&) {
    set(c, v);
    return Status::Ok();
  };
}

Setter OneOf(std::vector<std::string> allowed,
             std::function<void(Config&, const std::string&)> set) {
  return [allowed, set](Config& c, const std::string& v, const std::string& where) {
    for (const auto& a : allowed) {
      if (a == v) {
        set(c, v);
        return Status::Ok();
      }
    }
    return InvalidArgument(
        fmt::format("{}: must be one of {}, got '{}'", where, fmt::join(allowed, "|"), v), where);
  };
}

const std::map<std::string, Setter>& Keys() {
  static const std::
      map<std::string, Setter>
          keys =
              {
                  {"data_dir",
                   StringField([](Config& c, const std::string& v) { c.data_dir = v; })},
                  {"database_url",
                   [](Config& c, const std::string& v, const std::string& where) {
                     if (!v.empty() && v.rfind("postgresql://", 0) != 0 &&
                         v.rfind("postgres://", 0) != 0) {
                       return InvalidArgument(
                           fmt::format("{}: database_url must start with postgresql://", where),
                           where);
                     }
                     c.database.url = v;
                     return Status::Ok();
                   }},
                  {"database.pool_size",
                   IntField(1, [](Config& c,
                                  int64_t v) { c.database.pool_size = static_cast<int>(v); })},
                  {"database.notify",
                   OneOf({"true", "false"},
                         [](Config& c, const std::string& v) { c.database.notify = v == "true"; })},
                  {"listen",
                   [](Config& c, const std::string& v, const std::string& where) {
                     Status st = ParseListen(v, &c.listen_host, &c.listen_port);
                     if (!st.ok())
                       return InvalidArgument(fmt::format("{}: {}", where, st.message()), where);
                     return Status::Ok();
                   }},
                  {"workers",
                   IntField(0, [](Config& c, int64_t v) { c.workers = static_cast<int>(v); })},
                  {"admin_token",
                   StringField([](Config& c, const std::string& v) { c.admin_token = v; })},
                  {"http.io_threads",
                   IntField(1,
                            [](Config& c, int64_t v) { c.http.io_threads = static_cast<int>(v); })},
                  {"http.handler_threads",
                   IntField(1, [](Config& c,
                                  int64_t v) { c.http.handler_threads = static_cast<int>(v); })},
                  {"http.max_connections",
                   IntField(1, [](Config& c, int64_t v) { c.http.max_connections = v; })},
                  {"http.max_streams_per_token",
                   IntField(1, [](Config& c, int64_t v) { c.http.max_streams_per_token = v; })},
                  {"http.max_body_bytes",
                   IntField(1, [](Config& c, int64_t v) { c.http.max_body_bytes = v; })},
                  {"http.header_timeout_ms",
                   IntField(10, [](Config& c, int64_t v) { c.http.header_timeout_ms = v; })},
                  {"http.body_timeout_ms",
                   IntField(10, [](Config& c, int64_t v) { c.http.body_timeout_ms = v; })},
                  {"http.idle_timeout_ms",
                   IntField(10, [](Config& c, int64_t v) { c.http.idle_timeout_ms = v; })},
                  {"http.write_timeout_ms",
                   IntField(10, [](Config& c, int64_t v) { c.http.write_timeout_ms = v; })},
                  {"attachments.max_bytes",
                   IntField(1, [](Config& c, int64_t v) { c.attachments.max_bytes = v; })},
                  {"attachments.max_count",
                   IntField(1, [](Config& c, int64_t v) { c.attachments.max_count = v; })},
                  {"attachments.max_total_bytes",
                   IntField(1, [](Config& c, int64_t v) { c.attachments.max_total_bytes = v; })},
                  {"ui.dir", StringField([](Config& c, const std::string& v) { c.ui_dir = v; })},
                  {"demo.enabled",
                   OneOf({"true", "false"},
                         [](Config& c, const std::string& v) { c.demo_enabled = v == "true"; })},
                  {"demo.script",
                   StringField([](Config& c, const std::string& v) { c.demo_script = v; })},
                  {"demo.fakellm",
                   StringField([](Config& c, const std::string& v) { c.demo_fakellm = v; })},
                  {"log.level", OneOf({"trace", "debug", "info", "warn", "error"},
                                      [](Config& c, const std::string& v) { c.log_level = v; })},
                  {"log.format", OneOf({"text", "json"},
                                       [](Config& c, const std::string& v) { c.log_format = v; })},
                  {"llm.base_url",
                   StringField([](Config& c, const std::string& v) { c.llm.base_url = v; })},
                  {"llm.api_key",
                   StringField([](Config& c, const std::string& v) { c.llm.api_key = v; })},
                  {"llm.model",
                   StringField([](Config& c, const std::string& v) { c.llm.model = v; })},
                  {"llm.context_length",
                   IntField(512, [](Config& c, int64_t v) { c.llm.context_length = v; })},
                  {"llm.api_key_env",
                   StringField([](Config& c, const std::string& v) { c.llm.api_key_env = v; })},
                  {"llm.stream", OneOf({"true", "false"},
                                       [](Config& c, const std::string& v) {
                                         c.llm.stream = v == "true";
                                       })},
                  {"llm.vision", OneOf({"true", "false"},
                                       [](Config& c, const std::string& v) {
                                         c.llm.vision = v == "true";
                                       })},
                  {"llm.connect_timeout_ms",
                   IntField(1, [](Config& c, int64_t v) { c.llm.connect_timeout_ms = v; })},
                  {"llm.idle_timeout_ms",
                   IntField(1, [](Config& c, int64_t v) { c.llm.idle_timeout_ms = v; })},
                  {"llm.total_timeout_ms",
                   IntField(0, [](Config& c, int64_t v) { c.llm.total_timeout_ms = v; })},
                  {"llm.max_attempts",
                   IntField(
                       1, [](Config& c, int64_t v) { c.llm.max_attempts = static_cast<int>(v); })},
                  // Maps, handled in ApplyYamlMap; listed so typos get a suggestion.
                  {"llm.headers", nullptr},
                  {"llm.price", nullptr},
                  {"llm_profiles", nullptr},
                  {"context_storage", nullptr},
                  {"packages", nullptr},
                  {"sandbox", nullptr},
                  {"browser", nullptr},
                  {"budgets", nullptr},
                  {"quotas", nullptr},
                  {"mcp_servers", nullptr},
                  {"egress", nullptr},
                  {"webhooks", nullptr},
                  {"spaces", nullptr},
                  {"telemetry.headers", nullptr},
                  {"telemetry.otlp_endpoint",
                   [](Config& c, const std::string& v, const std::string& where) {
                     if (!v.empty() &&
                         ((v.rfind("http://", 0) != 0 && v.rfind("https://", 0) != 0) ||
                          v.find_first_of(" \t\n") != std::string::npos ||
                          v.size() <= v.find("//") + 2)) {
                       return InvalidArgument(
                           fmt::format("{}: expected an http:// or https:// URL, got '{}'", where,
                                       v),
                           where);
                     }
                     c.telemetry.otlp_endpoint = v;
                     return Status::Ok();
                   }},
                  {"telemetry.sample_ratio",
                   [](Config& c, const std::string& v, const std::string& where) {
                     try {
                       size_t used = 0;
                       double d = std::stod(v, &used);
                       if (used != v.size() || !(d >= 0 && d <= 1)) throw std::invalid_argument(v);
                       c.telemetry.sample_ratio = d;
                       return Status::Ok();
                     } catch (const std::exception&) {
                       return InvalidArgument(
                           fmt::format("{}: expected a number between 0 and 1, got '{}'", where, v),
                           where);
                     }
                   }},
                  {"telemetry.capture_content", OneOf({"true", "false"},
                                                      [](Config& c, const std::string& v) {
                                                        c.telemetry.capture_content = v == "true";
                                                      })},
                  {"telemetry.service_name",
                   StringField(
                       [](Config& c, const std::string& v) { c.telemetry.service_name = v; })},
                  {"schedules.enabled", OneOf({"true", "false"},
                                              [](Config& c, const std::string& v) {
                                                c.schedules.enabled = v == "true";
                                              })},
                  {"schedules.tick_ms",
                   IntField(10, [](Config& c, int64_t v) { c.schedules.tick_ms = v; })},
                  {"schedules.clock_file",
                   StringField(
                       [](Config& c, const std::string& v) { c.schedules.clock_file = v; })},
                  {"push.enabled", OneOf({"true", "false"},
                                         [](Config& c, const std::string& v) {
                                           c.push.enabled = v == "true";
                                         })},
                  {"push.subject",
                   [](Config& c, const std::string& v, const std::string& where) {
                     if (!v.empty() && v.rfind("mailto:", 0) != 0 && v.rfind("https://", 0) != 0) {
                       return InvalidArgument(
                           fmt::format("{}: expected a mailto: or https: contact, got '{}'", where,
                                       v),
                           where);
                     }
                     c.push.subject = v;
                     return Status::Ok();
                   }},
                  {"push.key_file",
                   StringField([](Config& c, const std::string& v) { c.push.key_file = v; })},
                  {"push.max_subscriptions_per_user",
                   IntField(1, [](Config& c, int64_t v) {
                     c.push.max_subscriptions_per_user = static_cast<int>(std::min<int64_t>(v, 1000));
                   })},
                  {"auto_prompter.dir",
                   StringField(
                       [](Config& c, const std::string& v) { c.judgement.auto_prompter_dir = v; })},
                  {"skills.dir",
                   StringField(
                       [](Config& c, const std::string& v) { c.judgement.skills_dir = v; })},
                  {"memory.enabled", OneOf({"true", "false"},
                                           [](Config& c, const std::string& v) {
                                             c.judgement.memory = v == "true";
                                           })},
                  {"reflection.on",
                   OneOf({"off", "failure", "success", "always"},
                         [](Config& c, const std::string& v) { c.judgement.reflection = v; })},
                  {"pieces.default",
                   StringField(
                       [](Config& c, const std::string& v) { c.judgement.default_piece = v; })},
                  {"pieces.router", OneOf({"none", "llm"},
                                          [](Config& c, const std::string& v) {
                                            c.judgement.router = v == "llm" ? "llm" : "";
                                          })},
                  {"jobs.lease_ms",
                   IntField(100, [](Config& c, int64_t v) { c.jobs.lease_ms = v; })},
                  {"jobs.heartbeat_ms",
                   IntField(10, [](Config& c, int64_t v) { c.jobs.heartbeat_ms = v; })},
                  {"jobs.sweep_interval_ms",
                   IntField(10, [](Config& c, int64_t v) { c.jobs.sweep_interval_ms = v; })},
                  {"jobs.poll_interval_ms",
                   IntField(10, [](Config& c, int64_t v) { c.jobs.poll_interval_ms = v; })},
                  {"jobs.shutdown_grace_ms",
                   IntField(0, [](Config& c, int64_t v) { c.jobs.shutdown_grace_ms = v; })},
                  {"jobs.delegate_max_depth", IntField(0,
                                                       [](Config& c, int64_t v) {
                                                         c.jobs.delegate_max_depth =
                                                             static_cast<int>(v);
                                                       })},
                  {"jobs.retry.base_delay_ms",
                   IntField(0, [](Config& c, int64_t v) { c.jobs.retry.base_delay_ms = v; })},
                  {"jobs.retry.max_delay_ms",
                   IntField(0, [](Config& c, int64_t v) { c.jobs.retry.max_delay_ms = v; })},
                  {"jobs.retry.max_attempts", IntField(1,
                                                       [](Config& c, int64_t v) {
                                                         c.jobs.retry.max_attempts =
                                                             static_cast<int>(v);
                                                       })},
                  {"jobs.retry.jitter",
                   [](Config& c, const std::string& v, const std::string& where) {
                     try {
                       size_t used = 0;
                       double d = std::stod(v, &used);
                       if (used != v.size() || d < 0 || d > 1) throw std::invalid_argument(v);
                       c.jobs.retry.jitter = d;
                       return Status::Ok();
                     } catch (const std::exception&) {
                       return InvalidArgument(
                           fmt::format("{}: expected a number between 0 and 1, got '{}'", where, v),
                           where);
                     }
                   }},
              };
  return keys;
}

// The documented settings: one row per environment variable (and per key
// `maestro serve --help` lists), next to the setters above. The default is
// read from a default-constructed Config, so the help cannot drift from it.
std::string Str(int64_t v) { return std::to_string(v); }
std::string Bool(bool v) { return v ? "true" : "false"; }

const std::vector<SettingInfo>& SettingsTable() {
  using G = std::function<std::string(const Config&)>;
  static const std::vector<SettingInfo> rows = {
      {"data_dir", "MAESTRO_DATA_DIR", "SQLite file, admin_token, task files",
       G([](const Config& c) { return c.data_dir; })},
      {"database_url", "MAESTRO_DATABASE_URL", "postgresql://… (empty: SQLite in data_dir)",
       G([](const Config& c) { return c.database.url; })},
      {"listen", "MAESTRO_LISTEN", "HOST:PORT of the HTTP API and web UI",
       G([](const Config& c) { return c.listen_host + ":" + Str(c.listen_port); })},
      {"workers", "MAESTRO_WORKERS", "worker threads (0: API only)",
       G([](const Config& c) { return Str(c.workers); })},
      {"admin_token", "MAESTRO_ADMIN_TOKEN", "admin bearer token (empty: data_dir/admin_token)",
       G([](const Config& c) { return c.admin_token; })},
      {"http.max_connections", "MAESTRO_HTTP_MAX_CONNECTIONS", "open HTTP connections",
       G([](const Config& c) { return Str(c.http.max_connections); })},
      {"http.max_streams_per_token", "MAESTRO_HTTP_MAX_STREAMS_PER_TOKEN",
       "open SSE streams per token",
       G([](const Config& c) { return Str(c.http.max_streams_per_token); })},
      {"http.header_timeout_ms", "MAESTRO_HTTP_HEADER_TIMEOUT_MS", "request headers deadline",
       G([](const Config& c) { return Str(c.http.header_timeout_ms); })},
      {"attachments.max_bytes", "MAESTRO_ATTACHMENTS_MAX_BYTES", "bytes of one attached file",
       G([](const Config& c) { return Str(c.attachments.max_bytes); })},
      {"attachments.max_count", "MAESTRO_ATTACHMENTS_MAX_COUNT", "attached files per request",
       G([](const Config& c) { return Str(c.attachments.max_count); })},
      {"attachments.max_total_bytes", "MAESTRO_ATTACHMENTS_MAX_TOTAL_BYTES",
       "bytes of all files attached to one request",
       G([](const Config& c) { return Str(c.attachments.max_total_bytes); })},
      {"ui.dir", "MAESTRO_UI_DIR", "built web UI (empty: searched)",
       G([](const Config& c) { return c.ui_dir; })},
      {"demo.enabled", "MAESTRO_DEMO", "demo model when no llm.base_url",
       G([](const Config& c) { return Bool(c.demo_enabled); })},
      {"demo.script", "MAESTRO_DEMO_SCRIPT", "demo model script (empty: searched)",
       G([](const Config& c) { return c.demo_script; })},
      {"log.level", "MAESTRO_LOG_LEVEL", "trace|debug|info|warn|error",
       G([](const Config& c) { return c.log_level; })},
      {"log.format", "MAESTRO_LOG_FORMAT", "text|json",
       G([](const Config& c) { return c.log_format; })},
      {"telemetry.otlp_endpoint", "MAESTRO_OTLP_ENDPOINT",
       "OTLP/HTTP receiver for traces, e.g. http://127.0.0.1:4318 (empty: telemetry off)",
       G([](const Config& c) { return c.telemetry.otlp_endpoint; })},
      {"llm.base_url", "MAESTRO_LLM_BASE_URL", "OpenAI-compatible server, e.g. http://host:8081/v1",
       G([](const Config& c) { return c.llm.base_url; })},
      {"llm.api_key", "MAESTRO_LLM_API_KEY", "API key sent to the LLM server",
       G([](const Config& c) { return c.llm.api_key; })},
      {"llm.model", "MAESTRO_LLM_MODEL", "model name sent to the LLM server",
       G([](const Config& c) { return c.llm.model; })},
      {"llm.context_length", "MAESTRO_LLM_CONTEXT_LENGTH", "the model's context window (tokens)",
       G([](const Config& c) { return Str(c.llm.context_length); })},
      {"llm.vision", "MAESTRO_LLM_VISION", "the model takes images (attached images sent to it)",
       G([](const Config& c) { return Bool(c.llm.vision); })},
      {"schedules.enabled", "MAESTRO_SCHEDULES", "fire due schedules in this serve (true|false)",
       G([](const Config& c) { return Bool(c.schedules.enabled); })},
      {"schedules.tick_ms", "MAESTRO_SCHEDULES_TICK_MS",
       "how often due schedule fires are looked for",
       G([](const Config& c) { return Str(c.schedules.tick_ms); })},
      {"schedules.clock_file", "MAESTRO_SCHEDULES_CLOCK_FILE",
       "read the scheduler's now (ms since the epoch) from this file: fire drills and tests only",
       G([](const Config& c) { return c.schedules.clock_file; })},
      {"push.enabled", "MAESTRO_PUSH", "Web Push notifications to subscribed browsers (true|false)",
       G([](const Config& c) { return Bool(c.push.enabled); })},
      {"push.subject", "MAESTRO_PUSH_SUBJECT",
       "VAPID contact the push services see: mailto:... or https://...",
       G([](const Config& c) { return c.push.subject; })},
      {"push.key_file", "MAESTRO_PUSH_KEY_FILE",
       "VAPID P-256 key (PEM), created on first start (\"\" = <data_dir>/vapid_key.pem)",
       G([](const Config& c) { return c.push.key_file; })},
      {"push.max_subscriptions_per_user", "MAESTRO_PUSH_MAX_SUBSCRIPTIONS",
       "browsers one user may subscribe",
       G([](const Config& c) { return Str(c.push.max_subscriptions_per_user); })},
      {"auto_prompter.dir", "MAESTRO_AUTO_PROMPTER_DIR",
       "Auto Prompter policies: <dir>/<space>.yaml, <dir>/<space>/<piece>.yaml (\"\" = "
       "<data_dir>/policies)",
       G([](const Config& c) { return c.judgement.auto_prompter_dir; })},
      {"skills.dir", "MAESTRO_SKILLS_DIR",
       "global skills, one folder with a SKILL.md each (\"\" = <data_dir>/skills)",
       G([](const Config& c) { return c.judgement.skills_dir; })},
      {"memory.enabled", "MAESTRO_MEMORY_ENABLED",
       "offer the Memory tool: per-space notes the agent reads and appends to",
       G([](const Config& c) { return std::string(c.judgement.memory ? "true" : "false"); })},
      {"reflection.on", "MAESTRO_REFLECTION_ON",
       "when a Reflection task writes lessons about an ended task: off|failure|success|always",
       G([](const Config& c) { return c.judgement.reflection; })},
      {"pieces.default", "MAESTRO_PIECES_DEFAULT", "the piece of a task created without one",
       G([](const Config& c) { return c.judgement.default_piece; })},
      {"pieces.router", "MAESTRO_PIECES_ROUTER",
       "llm: a task created without a piece gets one chosen by one LLM call (none = the default)",
       G([](const Config& c) { return std::string(c.judgement.router.empty() ? "none" : "llm"); })},
      {"jobs.lease_ms", "", "a claim's lease without heartbeat",
       G([](const Config& c) { return Str(c.jobs.lease_ms); })},
      {"jobs.retry.max_attempts", "", "claims per job before it fails",
       G([](const Config& c) { return Str(c.jobs.retry.max_attempts); })},
      {"spaces.<name>.ssh", "",
       "RunRemote's hosts for a space: [{host, port, user, key: $VARIABLE or /abs/file (never "
       "the key), known_hosts: pinned key lines}] (docs/operations.md \"Spaces\")",
       G([](const Config&) { return std::string(); })},
      // Read by the `maestro task …` client commands, not by the server.
      {"", "MAESTRO_SERVER", "client: server URL for `maestro task`",
       G([](const Config&) { return std::string("http://127.0.0.1:8080"); })},
      {"", "MAESTRO_TOKEN", "client: bearer token (else data_dir/admin_token)",
       G([](const Config&) { return std::string(); })},
  };
  return rows;
}

// Environment variable -> dotted key ("" for a client-only variable).
const std::map<std::string, std::string>& EnvKeys() {
  static const std::map<std::string, std::string> env = [] {
    std::map<std::string, std::string> m;
    for (const SettingInfo& s : SettingsTable()) {
      if (!s.env.empty()) m[s.env] = s.key;
    }
    return m;
  }();
  return env;
}

// Valid child names of a map at `prefix` ("" for the root, "jobs." ...).
std::vector<std::string> ChildKeys(const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& [key, _] : Keys()) {
    if (key.rfind(prefix, 0) != 0) continue;
    std::string rest = key.substr(prefix.size());
    std::string head = rest.substr(0, rest.find('.'));
    if (out.empty() || out.back() != head) out.push_back(head);
  }
  return out;
}

Status ApplyYamlMap(Config& cfg, const YAML::Node& map, const std::string& prefix,
                    const std::string& path, const std::string& shown_prefix = "");

// `price: {input, cached_input?, output}` in USD per million tokens: numbers
// >= 0; cached_input defaults to input. `name` is the key errors name
// ("llm.price", "llm_profiles.fast.price").
Status ApplyPrice(LlmConfig& llm, const YAML::Node& node, const std::string& path,
                  const std::string& name) {
  if (!node.IsMap()) {
    return InvalidArgument(
        fmt::format("{}: {} must be a mapping of input, cached_input, output (USD per million "
                    "tokens)",
                    YamlPosition(path, node), name),
        name);
  }
  LlmPrice price;
  std::optional<double> input, cached, output;
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    const std::string field = name + "." + key;
    std::optional<double>* slot = key == "input"          ? &input
                                  : key == "cached_input" ? &cached
                                  : key == "output"       ? &output
                                                          : nullptr;
    if (!slot) {
      return InvalidArgument(fmt::format("{}: unknown key '{}'; {} has input, cached_input, output",
                                         YamlPosition(path, kv.first), field, name),
                             field);
    }
    double v = -1;
    bool number = false;
    if (kv.second.IsScalar()) {
      const std::string& text = kv.second.Scalar();
      try {
        size_t used = 0;
        v = std::stod(text, &used);
        number = used == text.size() && std::isfinite(v);
      } catch (const std::exception&) {
        number = false;
      }
    }
    if (!number || v < 0) {
      return InvalidArgument(
          fmt::format("{}: {} must be a number >= 0 (USD per million tokens), got '{}'",
                      YamlPosition(path, kv.second), field,
                      kv.second.IsScalar() ? kv.second.Scalar() : std::string("a non-scalar")),
          field);
    }
    *slot = v;
  }
  for (const auto& [value, key] : {std::pair{&input, "input"}, std::pair{&output, "output"}}) {
    if (!*value) {
      return InvalidArgument(fmt::format("{}: {}.{} is required (USD per million tokens)",
                                         YamlPosition(path, node), name, key),
                             name + "." + key);
    }
  }
  price.input = *input;
  price.output = *output;
  price.cached_input = cached ? *cached : *input;
  llm.price = price;
  return Status::Ok();
}

Status ApplyHeaders(LlmConfig& llm, const YAML::Node& node, const std::string& path) {
  if (!node.IsMap()) {
    return InvalidArgument(
        fmt::format("{}: headers must be a mapping of name: value", YamlPosition(path, node)),
        "llm.headers");
  }
  for (const auto& h : node) {
    if (!h.second.IsScalar()) {
      return InvalidArgument(
          fmt::format("{}: header values must be strings", YamlPosition(path, h.second)),
          "llm.headers");
    }
    llm.headers[h.first.as<std::string>()] = h.second.Scalar();
  }
  return Status::Ok();
}

// `telemetry.headers: {name: value}`: sent with every OTLP export.
Status ApplyTelemetryHeaders(TelemetryConfig& t, const YAML::Node& node, const std::string& path) {
  if (!node.IsMap()) {
    return InvalidArgument(fmt::format("{}: telemetry.headers must be a mapping of name: value",
                                       YamlPosition(path, node)),
                           "telemetry.headers");
  }
  for (const auto& h : node) {
    if (!h.second.IsScalar()) {
      return InvalidArgument(
          fmt::format("{}: telemetry.headers values must be strings", YamlPosition(path, h.second)),
          "telemetry.headers");
    }
    t.headers[h.first.as<std::string>()] = h.second.Scalar();
  }
  return Status::Ok();
}

// `llm_profiles: {name: {<llm keys>}}`: each profile is parsed with the same
// key table as `llm:` into a scratch config.
Status ApplyProfiles(Config& cfg, const YAML::Node& node, const std::string& path) {
  if (!node.IsMap()) {
    return InvalidArgument(
        fmt::format("{}: llm_profiles must map names to profiles", YamlPosition(path, node)),
        "llm_profiles");
  }
  for (const auto& p : node) {
    Config scratch;
    const std::string name = p.first.as<std::string>();
    MAESTRO_RETURN_IF_ERROR(
        ApplyYamlMap(scratch, p.second, "llm.", path, "llm_profiles." + name + "."));
    cfg.llm_profiles[name] = scratch.llm;
  }
  return Status::Ok();
}

// `webhooks: [{url, secret, events?: [type...]}]`.
Status ApplyWebhooks(Config& cfg, const YAML::Node& list, const std::string& path) {
  if (!list.IsSequence()) {
    return InvalidArgument(fmt::format("{}: 'webhooks' must be a list", YamlPosition(path, list)),
                           "webhooks");
  }
  for (const auto& item : list) {
    std::string pos = YamlPosition(path, item);
    if (!item.IsMap() || !item["url"] || !item["url"].IsScalar()) {
      return InvalidArgument(fmt::format("{}: each webhook needs a 'url'", pos), "webhooks");
    }
    WebhookConfig w;
    for (const auto& kv : item) {
      std::string k = kv.first.as<std::string>();
      if (k == "url" && kv.second.IsScalar()) {
        w.url = kv.second.Scalar();
      } else if (k == "secret" && kv.second.IsScalar()) {
        w.secret = kv.second.Scalar();
      } else if (k == "events" && kv.second.IsSequence()) {
        for (const auto& e : kv.second) w.events.push_back(e.Scalar());
      } else {
        return InvalidArgument(fmt::format("{}: unknown or malformed webhook key '{}'", pos, k),
                               "webhooks");
      }
    }
    if (w.url.rfind("http://", 0) != 0 && w.url.rfind("https://", 0) != 0) {
      return InvalidArgument(
          fmt::format("{}: webhook url must start with http:// or https://", pos), "webhooks");
    }
    cfg.webhooks.push_back(std::move(w));
  }
  return Status::Ok();
}

// `shown_prefix` ("" = `prefix`) is how errors name the keys: a profile is
// parsed with the `llm.` table but its keys are `llm_profiles.<name>.…`.
Status ApplyYamlMap(Config& cfg, const YAML::Node& map, const std::string& prefix,
                    const std::string& path, const std::string& shown_prefix) {
  const std::string& shown = shown_prefix.empty() ? prefix : shown_prefix;
  if (!map.IsMap()) {
    return InvalidArgument(fmt::format("{}: expected a mapping{}", YamlPosition(path, map),
                                       prefix.empty() ? "" : " for '" + prefix + "'"));
  }
  const auto children = ChildKeys(prefix);
  for (const auto& kv : map) {
    std::string name = kv.first.as<std::string>();
    std::string key = prefix + name;
    std::string pos = YamlPosition(path, kv.first);
    if (key == "llm.headers") {
      MAESTRO_RETURN_IF_ERROR(ApplyHeaders(cfg.llm, kv.second, path));
      continue;
    }
    if (key == "telemetry.headers") {
      MAESTRO_RETURN_IF_ERROR(ApplyTelemetryHeaders(cfg.telemetry, kv.second, path));
      continue;
    }
    if (key == "llm.price") {
      MAESTRO_RETURN_IF_ERROR(ApplyPrice(cfg.llm, kv.second, path, shown + name));
      continue;
    }
    if (key == "context_storage") {
      if (!kv.second.IsMap()) {
        return InvalidArgument(fmt::format("{}: context_storage must be a mapping", pos), key);
      }
      cfg.context_storage = YamlToJson(kv.second);
      cfg.context_storage_where = pos;
      continue;
    }
    if (key == "packages") {
      if (!kv.second.IsMap()) {
        return InvalidArgument(fmt::format("{}: packages must be a mapping", pos), key);
      }
      cfg.packages = YamlToJson(kv.second);
      cfg.packages_where = pos;
      continue;
    }
    if (key == "browser") {
      if (!kv.second.IsMap()) {
        return InvalidArgument(fmt::format("{}: browser must be a mapping", pos), key);
      }
      cfg.browser = YamlToJson(kv.second);
      cfg.browser_where = pos;
      continue;
    }
    if (key == "sandbox") {
      if (!kv.second.IsMap()) {
        return InvalidArgument(fmt::format("{}: sandbox must be a mapping", pos), key);
      }
      cfg.sandbox = YamlToJson(kv.second);
      cfg.sandbox_where = pos;
      continue;
    }
    if (key == "budgets" || key == "quotas") {  // validated by store/budget.h
      if (!kv.second.IsMap()) {
        return InvalidArgument(fmt::format("{}: {} must be a mapping", pos, key), key);
      }
      (key == "budgets" ? cfg.budgets : cfg.quotas) = YamlToJson(kv.second);
      (key == "budgets" ? cfg.budgets_where : cfg.quotas_where) = pos;
      continue;
    }
    if (key == "mcp_servers") {
      cfg.mcp_servers = YamlToJson(kv.second);
      cfg.mcp_servers_where = pos;
      continue;
    }
    if (key == "egress") {  // validated by core/egress.h
      if (!kv.second.IsMap()) {
        return InvalidArgument(fmt::format("{}: egress must be a mapping", pos), key);
      }
      cfg.egress = YamlToJson(kv.second);
      cfg.egress_where = pos;
      continue;
    }
    if (key == "llm_profiles") {
      MAESTRO_RETURN_IF_ERROR(ApplyProfiles(cfg, kv.second, path));
      continue;
    }
    if (key == "webhooks") {
      MAESTRO_RETURN_IF_ERROR(ApplyWebhooks(cfg, kv.second, path));
      continue;
    }
    if (key == "spaces") {
      MAESTRO_RETURN_IF_ERROR(config_internal::ApplySpaces(cfg, kv.second, path));
      continue;
    }
    auto it = Keys().find(key);
    if (it != Keys().end()) {
      const std::string shown_key = shown + name;
      if (!kv.second.IsScalar()) {
        return InvalidArgument(fmt::format("{}: '{}' must be a scalar value", pos, shown_key),
                               shown_key);
      }
      Status st = it->second(cfg, kv.second.Scalar(), shown_key);
      if (!st.ok()) return InvalidArgument(fmt::format("{}: {}", pos, st.message()), shown_key);
      continue;
    }
    if (std::find(children.begin(), children.end(), name) != children.end()) {
      MAESTRO_RETURN_IF_ERROR(ApplyYamlMap(cfg, kv.second, key + ".", path, shown + name + "."));
      continue;
    }
    std::string hint = NearestWord(name, children);
    return InvalidArgument(
        fmt::format("{}: unknown key '{}'{}", pos, shown + name,
                    hint.empty() ? "" : "; did you mean '" + shown + hint + "'?"),
        shown + name);
  }
  return Status::Ok();
}

}  // namespace

const std::vector<SettingInfo>& Settings() { return SettingsTable(); }

std::string SettingsHelp() {
  const Config defaults;
  std::string out = "Settings (maestro.yaml key, environment variable, default):\n";
  for (const SettingInfo& s : Settings()) {
    std::string def = s.default_of ? s.default_of(defaults) : "";
    out += fmt::format("  {:<26} {:<36} {}\n", s.key.empty() ? "-" : s.key,
                       s.env.empty() ? "-" : s.env, def.empty() ? "\"\"" : def);
    out += fmt::format("      {}\n", s.help);
  }
  out += "Every key of maestro.yaml: docs/operations.md.\n";
  return out;
}

Status ParseListen(const std::string& value, std::string* host, int* port) {
  auto colon = value.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return InvalidArgument(fmt::format("expected host:port, got '{}'", value), "listen");
  }
  int64_t p;
  MAESTRO_RETURN_IF_ERROR(ParseInt(value.substr(colon + 1), "listen port", 0, &p));
  if (p > 65535) return InvalidArgument("listen port must be <= 65535", "listen");
  *host = value.substr(0, colon);
  *port = static_cast<int>(p);
  return Status::Ok();
}

EnvMap MaestroEnvFromProcess() {
  EnvMap env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    if (kv.rfind("MAESTRO_", 0) != 0) continue;
    auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

Result<Config> LoadConfig(const std::optional<std::string>& path, const EnvMap& env) {
  Config cfg;
  if (path) {
    auto doc = LoadYamlFile(*path);
    if (!doc.ok()) return doc.status();
    if (!doc->IsNull()) MAESTRO_RETURN_IF_ERROR(ApplyYamlMap(cfg, *doc, "", *path));
  }
  for (const auto& [name, value] : env) {
    auto it = EnvKeys().find(name);
    if (it == EnvKeys().end()) {
      cfg.warnings.push_back(fmt::format("ignoring unknown environment variable {}", name));
      continue;
    }
    if (it->second.empty()) continue;  // a client variable (MAESTRO_SERVER, MAESTRO_TOKEN)
    MAESTRO_RETURN_IF_ERROR(Keys().at(it->second)(cfg, value, name));
  }
  if (cfg.jobs.heartbeat_ms >= cfg.jobs.lease_ms) {
    return InvalidArgument(
        fmt::format("jobs.heartbeat_ms ({}) must be shorter than jobs.lease_ms ({})",
                    cfg.jobs.heartbeat_ms, cfg.jobs.lease_ms),
        "jobs.heartbeat_ms");
  }
  if (cfg.data_dir.empty()) return InvalidArgument("data_dir must not be empty", "data_dir");
  return cfg;
}

}  // namespace maestro
