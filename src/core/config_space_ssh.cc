// `spaces.<name>.ssh`: the hosts a space's RunRemote may reach (docs/operations.md
// "Spaces", docs/security.md "SSH from a space"). Errors name file:line:col
// and the key, like every other config error; the shape rules are
// core/ssh_host.h's.
#include <fmt/format.h>

#include <filesystem>
#include <set>

#include "core/config_sections.h"
#include "core/ssh_host.h"

namespace maestro::config_internal {
namespace {

const std::vector<std::string>& SshKeys() {
  static const std::vector<std::string> keys = {"name", "host", "port",
                                                "user", "key",  "known_hosts"};
  return keys;
}

Status Bad(const std::string& pos, const std::string& field, const std::string& why) {
  return InvalidArgument(fmt::format("{}: '{}' {}", pos, field, why), field);
}

// `known_hosts:` one string of lines (a pasted ssh-keyscan output) or a list
// of lines; '#' comments and blank lines are skipped.
Status KnownHosts(const YAML::Node& v, const std::string& pos, const std::string& field,
                  std::vector<std::string>* out) {
  std::vector<std::string> lines;
  auto add_text = [&](const std::string& text) {
    size_t start = 0;
    while (start <= text.size()) {
      size_t nl = text.find('\n', start);
      if (nl == std::string::npos) nl = text.size();
      std::string line = text.substr(start, nl - start);
      const size_t first = line.find_first_not_of(" \t\r");
      if (first != std::string::npos && line[first] != '#') lines.push_back(line);
      start = nl + 1;
    }
  };
  if (v.IsScalar()) {
    add_text(v.Scalar());
  } else if (v.IsSequence()) {
    for (const auto& item : v) {
      if (!item.IsScalar()) return Bad(pos, field, "must be host key lines (strings)");
      add_text(item.Scalar());
    }
  } else {
    return Bad(pos, field, "must be the pinned host key line(s): a string or a list of strings");
  }
  for (const std::string& line : lines) {
    std::optional<std::string> key = PinnedHostKey(line);
    if (!key) {
      return Bad(pos, field,
                 "has a line that is not a host key ('[host]:port <type> <base64>' as "
                 "ssh-keyscan prints it, or '<type> <base64>'; no @cert-authority/@revoked)");
    }
    out->push_back(*key);
  }
  if (out->empty()) return Bad(pos, field, "must pin at least one host key");
  return Status::Ok();
}

Status ApplySshKey(SshHostConfig& h, const std::string& name, const YAML::Node& v,
                   const std::string& pos, const std::string& field) {
  if (name == "known_hosts") return KnownHosts(v, pos, field, &h.known_hosts);
  if (!v.IsScalar()) return Bad(pos, field, "must be a single value");
  const std::string& s = v.Scalar();
  if (name == "port") {
    int port = 0;
    for (char c : s) {
      if (c < '0' || c > '9' || port > 65535) return Bad(pos, field, "must be 1 to 65535");
      port = port * 10 + (c - '0');
    }
    if (port < 1 || port > 65535) return Bad(pos, field, "must be 1 to 65535");
    h.port = port;
    return Status::Ok();
  }
  if (name == "name") {
    if (!ValidSshEntryName(s)) {
      return Bad(pos, field, "may use letters, digits, '_', '.', ':', '-' (at most 64)");
    }
    h.name = s;
  } else if (name == "host") {
    if (!ValidSshHostName(s)) {
      return Bad(pos, field,
                 "must be a DNS name or an IP address (no user@, port, brackets, options or "
                 "spaces; IPv4 in dotted decimal)");
    }
    h.host = s;
  } else if (name == "user") {
    if (!ValidSshUser(s)) return Bad(pos, field, "must be a user name (at most 32 characters)");
    h.user = s;
  } else if (name == "key") {
    if (!ValidSshKeySecret(s)) {
      return Bad(pos, field,
                 "must name where the private key is: $VARIABLE (maestro's environment) or an "
                 "absolute file path — never the key itself");
    }
    h.key = s;
  } else {
    std::string hint = NearestWord(name, SshKeys());
    return InvalidArgument(fmt::format("{}: unknown key '{}'{}", pos, field,
                                       hint.empty() ? "" : "; did you mean '" + hint + "'?"),
                           field);
  }
  return Status::Ok();
}

Result<SshHostConfig> ParseHost(const YAML::Node& node, const std::string& path,
                                const std::string& field) {
  const std::string pos = YamlPosition(path, node);
  if (!node.IsMap()) {
    return Bad(pos, field, "must be a mapping {host, port?, user, key, known_hosts}");
  }
  SshHostConfig h;
  h.where = pos;
  for (const auto& kv : node) {
    const std::string name = kv.first.as<std::string>();
    MAESTRO_RETURN_IF_ERROR(
        ApplySshKey(h, name, kv.second, YamlPosition(path, kv.first), field + "." + name));
  }
  for (const auto& [name, value] : {std::pair<const char*, const std::string*>{"host", &h.host},
                                    {"user", &h.user},
                                    {"key", &h.key}}) {
    if (value->empty()) return Bad(pos, field + "." + name, "is required");
  }
  if (h.known_hosts.empty()) {
    return Bad(pos, field + ".known_hosts",
               "is required: the host key(s) to pin (ssh-keyscan -p <port> <host>)");
  }
  if (h.name.empty()) h.name = h.host;
  return h;
}

}  // namespace

Result<std::vector<SshHostConfig>> ParseSpaceSsh(const YAML::Node& node, const std::string& path,
                                                 const std::string& key) {
  if (!node.IsSequence()) {
    return Bad(YamlPosition(path, node), key,
               "must be a list of hosts [{host, port?, user, key, known_hosts}]");
  }
  std::vector<SshHostConfig> hosts;
  for (size_t i = 0; i < node.size(); ++i) {
    MAESTRO_ASSIGN_OR_RETURN(SshHostConfig h,
                             ParseHost(node[i], path, fmt::format("{}[{}]", key, i)));
    hosts.push_back(std::move(h));
  }
  return hosts;
}

namespace {

// `path` is `root` or below it (both lexically normal; a trailing '/' of
// root is an empty last component).
bool Inside(const std::filesystem::path& root, const std::filesystem::path& path) {
  auto r = root.begin();
  for (auto p = path.begin(); r != root.end() && p != path.end(); ++r, ++p) {
    if (*r != *p) return r->empty() && std::next(r) == root.end();
  }
  return r == root.end() || (r->empty() && std::next(r) == root.end());
}

}  // namespace

Status CheckSpaceSsh(const SpaceConfig& space) {
  namespace fs = std::filesystem;
  std::set<std::string> names;
  const fs::path root = fs::path(space.path).lexically_normal();
  for (size_t i = 0; i < space.ssh.size(); ++i) {
    const SshHostConfig& h = space.ssh[i];
    const std::string field = fmt::format("spaces.{}.ssh[{}]", space.name, i);
    if (!names.insert(h.name).second) {
      return Bad(h.where, field + ".name",
                 "repeats a host name of this space: give each entry its own `name`");
    }
    if (h.key.front() == '/' && Inside(root, fs::path(h.key).lexically_normal())) {
      return Bad(h.where, field + ".key",
                 "is a file inside the space's directory, which its agents read: keep the key "
                 "outside it");
    }
  }
  return Status::Ok();
}

}  // namespace maestro::config_internal
