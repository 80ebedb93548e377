// JSON and YAML helpers shared by every module.
//
// nlohmann::json is the in-memory JSON type; yaml-cpp parses YAML. These
// helpers turn their exceptions into Status values with positions, so config
// and piece loaders can report `file:line:col: message`.
#pragma once

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace maestro {

using Json = nlohmann::json;

// Serializes `value` compactly; invalid UTF-8 in a string (untrusted text
// that slipped past ValidUtf8) becomes U+FFFD instead of throwing.
std::string DumpJson(const Json& value);

// Parses `text`; the error names the byte offset.
Result<Json> ParseJson(std::string_view text);

// Loads a YAML file; a syntax error becomes "path:line:col: message".
Result<YAML::Node> LoadYamlFile(const std::string& path);
Result<YAML::Node> ParseYaml(const std::string& text, const std::string& source_name);

// 1-based "path:line:col" for a node.
std::string YamlPosition(const std::string& source_name, const YAML::Node& node);

// Converts YAML scalars/sequences/maps to JSON. Scalars that parse as
// integers, floats or booleans become those types; others stay strings.
Json YamlToJson(const YAML::Node& node);

// The candidate nearest to `word` by edit distance, or "" when none is close
// enough to be a plausible typo. Used for "unknown key 'worker'; did you mean 'workers'?".
std::string NearestWord(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace maestro
