// The inside of LoadConfig: the one key table and the parsers of config
// sections too large for a line of it. Internal to src/core.
//
// Every key of maestro.yaml is one KeyDef of KeyTable() (config_keys.cc):
// how its value is read (a scalar setter, or a parser for a mapping/list),
// its MAESTRO_* variable and its help row. config.cc derives from that one
// table the YAML walk's key set (unknown keys, nearest-key hints), the
// variables LoadConfig reads and Settings() / `maestro serve --help`; so a
// key is added in one place and cannot be settable but undocumented-as-known
// or documented but unread.
//
// Thread safety: the table is built once (a function-local static) and is
// read-only afterwards.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/json.h"

namespace maestro::config_internal {

// A scalar key's setter: `value` comes from the file or the environment;
// `where` is how errors name it (the dotted key, or the variable).
using Setter = std::function<Status(Config&, const std::string& value, const std::string& where)>;
// A mapping or list key's parser (llm.price, spaces, ...): `node` is its value
// in the file `path`, `pos` the key's file:line:col, `name` how errors name
// the key (a profile's price is `llm_profiles.<name>.price`).
using SectionParser = std::function<Status(Config&, const YAML::Node& node, const std::string& path,
                                           const std::string& pos, const std::string& name)>;
// The key's value in a Config, as the help shows it (of a default Config: the
// default).
using Shown = std::function<std::string(const Config&)>;

// How one key is read and shown: `set` (scalars, also from the environment)
// or `section` (mappings and lists, file only); neither for a row that only
// documents (a client variable, `spaces.<name>.ssh`).
struct KeyValue {
  Setter set;
  SectionParser section;
  Shown show;
};

// One key: its dotted name ("" for a client-only variable), how it is read,
// its environment variable ("" = none) and its help row ("" = not listed by
// Settings()).
struct KeyDef {
  KeyDef(std::string key, KeyValue value, std::string env = "", std::string help = "")
      : key(std::move(key)), value(std::move(value)), env(std::move(env)), help(std::move(help)) {}
  std::string key;
  KeyValue value;
  std::string env;
  std::string help;
};

// Every key, in the order `maestro serve --help` lists the documented ones.
const std::vector<KeyDef>& KeyTable();

// Parses "123" into *out, >= min; errors name `where`.
Status ParseInt(const std::string& value, const std::string& where, int64_t min, int64_t* out);

// The YAML walk (config.cc): applies the keys of `map` under `prefix`
// ("jobs."); `shown_prefix` ("" = `prefix`) is how errors name them (a
// profile is read with the `llm.` keys but named `llm_profiles.<name>.`).
Status ApplyYamlMap(Config& cfg, const YAML::Node& map, const std::string& prefix,
                    const std::string& path, const std::string& shown_prefix = "");

// `price: {input, cached_input?, output}` in USD per million tokens: numbers
// >= 0; cached_input defaults to input. `name` is the key errors name
// ("llm.price", "llm_profiles.fast.price").
Status ApplyPrice(ModelProfile& llm, const YAML::Node& node, const std::string& path,
                  const std::string& name);
// `llm.headers: {name: value}`: extra HTTP headers of a profile's calls.
Status ApplyHeaders(ModelProfile& llm, const YAML::Node& node, const std::string& path);
// `telemetry.headers: {name: value}`: sent with every OTLP export.
Status ApplyTelemetryHeaders(TelemetryConfig& t, const YAML::Node& node, const std::string& path);
// `llm_profiles: {name: {<llm keys>}}`: each profile is read with the `llm.`
// keys of the table into a ModelProfile named `name`.
Status ApplyProfiles(Config& cfg, const YAML::Node& node, const std::string& path);
// `webhooks: [{url, secret, events?: [type...]}]`.
Status ApplyWebhooks(Config& cfg, const YAML::Node& list, const std::string& path);

// `spaces: {name: {path, description?, tools?, edit_allowed?, shell_allowed?,
// network_allowed?}}`. Errors name file:line:col and the key
// (`spaces.<name>.<key>`).
Status ApplySpaces(Config& cfg, const YAML::Node& node, const std::string& path);

// A space's `ssh: [{name?, host, port?, user, key, known_hosts}]`
// (config_space_ssh.cc); `key` is `spaces.<name>.ssh`, the field errors name.
Result<std::vector<SshHostConfig>> ParseSpaceSsh(const YAML::Node& node, const std::string& path,
                                                 const std::string& key);
// The rules that need the whole space: host names unique, a key file not
// inside the space's directory (the agent reads that).
Status CheckSpaceSsh(const SpaceConfig& space);

}  // namespace maestro::config_internal
