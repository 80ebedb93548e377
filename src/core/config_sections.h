// Parsers of config sections too large to sit in config.cc's key table.
// Internal to src/core: config.cc's ApplyYamlMap calls them for their key.
#pragma once

#include <string>

#include "core/config.h"
#include "core/json.h"

namespace maestro::config_internal {

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
