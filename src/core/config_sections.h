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

}  // namespace maestro::config_internal
