// LoadConfig's plumbing: the YAML walk, the environment, the help, and the
// parsers of the mapping/list keys. Which keys exist, how each is read, its
// variable and its help row: the one table of config_keys.cc
// (config_sections.h KeyTable).
#include "core/config.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>

#include "core/config_sections.h"
#include "core/json.h"

extern char** environ;

namespace maestro::config_internal {
namespace {

// The keys the file may hold (a setter or a section parser), by dotted name.
// Sorted: ChildKeys relies on a section's keys being adjacent.
const std::map<std::string, const KeyDef*>& Keys() {
  static const std::map<std::string, const KeyDef*> keys = [] {
    std::map<std::string, const KeyDef*> m;
    for (const KeyDef& k : KeyTable()) {
      if (k.value.set || k.value.section) m[k.key] = &k;
    }
    return m;
  }();
  return keys;
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

}  // namespace

// `price: {input, cached_input?, output}` in USD per million tokens: numbers
// >= 0; cached_input defaults to input. `name` is the key errors name
// ("llm.price", "llm_profiles.fast.price").
Status ApplyPrice(ModelProfile& llm, const YAML::Node& node, const std::string& path,
                  const std::string& name) {
  if (!node.IsMap()) {
    return InvalidArgument(
        fmt::format("{}: {} must be a mapping of input, cached_input, cache_write, output (USD "
                    "per million tokens)",
                    YamlPosition(path, node), name),
        name);
  }
  LlmPrice price;
  std::optional<double> input, cached, write, output;
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    const std::string field = name + "." + key;
    std::optional<double>* slot = key == "input"          ? &input
                                  : key == "cached_input" ? &cached
                                  : key == "cache_write"  ? &write
                                  : key == "output"       ? &output
                                                          : nullptr;
    if (!slot) {
      return InvalidArgument(fmt::format("{}: unknown key '{}'; {} has input, cached_input, "
                                         "cache_write, output",
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
  price.cache_write = write ? *write : *input;
  llm.price = price;
  return Status::Ok();
}

Status ApplyHeaders(ModelProfile& llm, const YAML::Node& node, const std::string& path) {
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
    llm.extra_headers[h.first.as<std::string>()] = h.second.Scalar();
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
    scratch.llm.name = name;
    cfg.llm_profiles[name] = std::move(scratch.llm);
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
    const std::string shown_key = shown + name;
    auto it = Keys().find(key);
    if (it != Keys().end() && it->second->value.section) {
      MAESTRO_RETURN_IF_ERROR(it->second->value.section(cfg, kv.second, path, pos, shown_key));
      continue;
    }
    if (it != Keys().end()) {
      if (!kv.second.IsScalar()) {
        return InvalidArgument(fmt::format("{}: '{}' must be a scalar value", pos, shown_key),
                               shown_key);
      }
      Status st = it->second->value.set(cfg, kv.second.Scalar(), shown_key);
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

}  // namespace maestro::config_internal

namespace maestro {
namespace {

// Environment variable -> dotted key ("" for a client-only variable).
const std::map<std::string, std::string>& EnvKeys() {
  static const std::map<std::string, std::string> env = [] {
    std::map<std::string, std::string> m;
    for (const config_internal::KeyDef& k : config_internal::KeyTable()) {
      if (!k.env.empty()) m[k.env] = k.key;
    }
    return m;
  }();
  return env;
}

// A variable's setter (every variable's key is a scalar key of the table).
const config_internal::Setter& SetterOf(const std::string& key) {
  static const std::map<std::string, config_internal::Setter> setters = [] {
    std::map<std::string, config_internal::Setter> m;
    for (const config_internal::KeyDef& k : config_internal::KeyTable()) {
      if (k.value.set) m[k.key] = k.value.set;
    }
    return m;
  }();
  return setters.at(key);
}

}  // namespace

// The documented rows of the key table, in its order.
const std::vector<SettingInfo>& Settings() {
  static const std::vector<SettingInfo> rows = [] {
    std::vector<SettingInfo> out;
    for (const config_internal::KeyDef& k : config_internal::KeyTable()) {
      if (!k.help.empty()) out.push_back({k.key, k.env, k.help, k.value.show});
    }
    return out;
  }();
  return rows;
}

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
  MAESTRO_RETURN_IF_ERROR(config_internal::ParseInt(value.substr(colon + 1), "listen port", 0, &p));
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
    if (!doc->IsNull())
      MAESTRO_RETURN_IF_ERROR(config_internal::ApplyYamlMap(cfg, *doc, "", *path));
  }
  for (const auto& [name, value] : env) {
    auto it = EnvKeys().find(name);
    if (it == EnvKeys().end()) {
      cfg.warnings.push_back(fmt::format("ignoring unknown environment variable {}", name));
      continue;
    }
    if (it->second.empty()) continue;  // a client variable (MAESTRO_SERVER, MAESTRO_TOKEN)
    MAESTRO_RETURN_IF_ERROR(SetterOf(it->second)(cfg, value, name));
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
