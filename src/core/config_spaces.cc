#include <fmt/format.h>

#include "core/config_sections.h"

namespace maestro::config_internal {
namespace {

const std::vector<std::string>& SpaceKeys() {
  static const std::vector<std::string> keys = {
      "path",   "description", "tools", "edit_allowed", "shell_allowed", "network_allowed",
      "limits", "mcp_servers", "piece", "grounded",     "ssh",           "team"};
  return keys;
}

// Names become the `space` value of the API and of SpinOffTask: keep them to
// characters that need no quoting anywhere.
bool ValidSpaceName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

Status Bool(const YAML::Node& v, const std::string& pos, const std::string& key, bool* out) {
  if (v.IsScalar() && (v.Scalar() == "true" || v.Scalar() == "false")) {
    *out = v.Scalar() == "true";
    return Status::Ok();
  }
  return InvalidArgument(fmt::format("{}: '{}' must be true or false", pos, key), key);
}

Status ApplySpaceKey(SpaceConfig& s, const std::string& name, const YAML::Node& v,
                     const std::string& pos, const std::string& key, const std::string& path) {
  if (name == "path" || name == "description" || name == "piece" || name == "team") {
    if (!v.IsScalar())
      return InvalidArgument(fmt::format("{}: '{}' must be a string", pos, key), key);
    (name == "path"    ? s.path
     : name == "piece" ? s.piece
     : name == "team"  ? s.team
                       : s.description) = v.Scalar();
    return Status::Ok();
  }
  if (name == "grounded") return Bool(v, pos, key, &s.grounded);
  if (name == "tools") {
    if (!v.IsSequence()) {
      return InvalidArgument(fmt::format("{}: '{}' must be a list of tool names", pos, key), key);
    }
    for (const auto& t : v) {
      if (!t.IsScalar() || t.Scalar().empty()) {
        return InvalidArgument(fmt::format("{}: '{}' must be a list of tool names", pos, key), key);
      }
      s.tools.push_back(t.Scalar());
    }
    return Status::Ok();
  }
  if (name == "mcp_servers") {
    if (!v.IsSequence()) {
      return InvalidArgument(fmt::format("{}: '{}' must be a list of MCP server names", pos, key),
                             key);
    }
    s.mcp_servers.emplace();
    for (const auto& t : v) {
      if (!t.IsScalar() || t.Scalar().empty()) {
        return InvalidArgument(fmt::format("{}: '{}' must be a list of MCP server names", pos, key),
                               key);
      }
      s.mcp_servers->push_back(t.Scalar());
    }
    return Status::Ok();
  }
  if (name == "limits") {
    if (!v.IsMap()) {
      return InvalidArgument(
          fmt::format("{}: '{}' must be a mapping of sandbox limits (docs/security.md)", pos, key),
          key);
    }
    s.limits = YamlToJson(v);
    return Status::Ok();
  }
  if (name == "ssh") {  // RunRemote's hosts (config_space_ssh.cc)
    MAESTRO_ASSIGN_OR_RETURN(s.ssh, ParseSpaceSsh(v, path, key));
    return Status::Ok();
  }
  if (name == "edit_allowed") return Bool(v, pos, key, &s.edit_allowed);
  if (name == "shell_allowed") return Bool(v, pos, key, &s.shell_allowed);
  if (name == "network_allowed") return Bool(v, pos, key, &s.network_allowed);
  std::string hint = NearestWord(name, SpaceKeys());
  return InvalidArgument(fmt::format("{}: unknown key '{}'{}", pos, key,
                                     hint.empty() ? "" : "; did you mean '" + hint + "'?"),
                         key);
}

Result<SpaceConfig> ParseSpace(const std::string& name, const YAML::Node& node,
                               const std::string& path) {
  const std::string prefix = "spaces." + name;
  const std::string pos = YamlPosition(path, node);
  if (!ValidSpaceName(name)) {
    return InvalidArgument(
        fmt::format("{}: space name '{}' may use only letters, digits, '-', '_' and '.'", pos,
                    name),
        prefix);
  }
  if (!node.IsMap()) {
    return InvalidArgument(
        fmt::format("{}: '{}' must be a mapping with at least 'path'", pos, prefix), prefix);
  }
  SpaceConfig s;
  s.name = name;
  s.where = pos;
  for (const auto& kv : node) {
    const std::string key_name = kv.first.as<std::string>();
    MAESTRO_RETURN_IF_ERROR(ApplySpaceKey(s, key_name, kv.second, YamlPosition(path, kv.first),
                                          prefix + "." + key_name, path));
  }
  // Relative paths would depend on the directory serve was started from.
  if (s.path.empty() || s.path.front() != '/') {
    return InvalidArgument(
        fmt::format("{}: '{}.path' must be an absolute directory path", pos, prefix),
        prefix + ".path");
  }
  if (s.network_allowed && !s.shell_allowed) {
    return InvalidArgument(
        fmt::format("{}: '{}.network_allowed' needs shell_allowed: true (only RunCommand uses "
                    "the network)",
                    pos, prefix),
        prefix + ".network_allowed");
  }
  MAESTRO_RETURN_IF_ERROR(CheckSpaceSsh(s));
  if (s.grounded && s.piece.empty()) {
    return InvalidArgument(
        fmt::format("{}: '{}.grounded' needs the piece it fixes ('{}.piece')", pos, prefix, prefix),
        prefix + ".grounded");
  }
  return s;
}

}  // namespace

Status ApplySpaces(Config& cfg, const YAML::Node& node, const std::string& path) {
  if (!node.IsMap()) {
    return InvalidArgument(
        fmt::format("{}: spaces must map names to {{path: ...}}", YamlPosition(path, node)),
        "spaces");
  }
  for (const auto& kv : node) {
    const std::string name = kv.first.as<std::string>();
    MAESTRO_ASSIGN_OR_RETURN(SpaceConfig s, ParseSpace(name, kv.second, path));
    cfg.spaces[name] = std::move(s);
  }
  return Status::Ok();
}

}  // namespace maestro::config_internal
