#include "core/ssh_host.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <vector>

#include "core/base64.h"

namespace maestro {
namespace {

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The key types OpenSSH 9 pins (DSA is off by default there).
bool KnownKeyType(std::string_view t) {
  static constexpr std::array<std::string_view, 7> kTypes = {"ssh-ed25519",
                                                             "ssh-rsa",
                                                             "ecdsa-sha2-nistp256",
                                                             "ecdsa-sha2-nistp384",
                                                             "ecdsa-sha2-nistp521",
                                                             "sk-ssh-ed25519@openssh.com",
                                                             "sk-ecdsa-sha2-nistp256@openssh.com"};
  for (std::string_view k : kTypes) {
    if (k == t) return true;
  }
  return false;
}

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

// The key blob starts with the type as an SSH string (uint32 length, bytes).
bool BlobHasType(std::string_view b64, std::string_view type) {
  std::optional<std::string> blob = Base64Decode(b64);
  if (!blob || blob->size() < 4 + type.size()) return false;
  const auto* u = reinterpret_cast<const unsigned char*>(blob->data());
  const uint32_t len =
      (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | u[3];
  return len == type.size() && blob->compare(4, len, type) == 0;
}

bool CanonicalIpv4(std::string_view host) {
  in_addr a{};
  const std::string s(host);
  if (inet_pton(AF_INET, s.c_str(), &a) != 1) return false;
  char back[INET_ADDRSTRLEN] = {};
  return inet_ntop(AF_INET, &a, back, sizeof back) != nullptr && s == back;
}

}  // namespace

bool ValidSshHostName(std::string_view host) {
  if (host.empty() || host.size() > 253 || host.front() == '-') return false;
  if (host.find(':') != std::string_view::npos) {  // IPv6: no brackets, no zone
    for (char c : host) {
      if (!(IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' || c == '.'))
        return false;
    }
    in6_addr a{};
    return inet_pton(AF_INET6, std::string(host).c_str(), &a) == 1;
  }
  // A last label of digits only is an IPv4 address, and then only in its
  // one canonical spelling (no 127.1, 0177.0.0.1, 127.000.0.1).
  const std::string_view last = host.substr(host.rfind('.') + 1);
  bool numeric = !last.empty();
  for (char c : last) numeric = numeric && IsDigit(c);
  if (numeric) return CanonicalIpv4(host);
  size_t start = 0;
  while (start <= host.size()) {
    size_t dot = host.find('.', start);
    if (dot == std::string_view::npos) dot = host.size();
    std::string_view label = host.substr(start, dot - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-')
      return false;
    for (char c : label) {
      if (!IsAlnum(c) && c != '-') return false;
    }
    start = dot + 1;
  }
  return true;
}

bool ValidSshUser(std::string_view user) {
  if (user.empty() || user.size() > 32 || user.front() == '-' || user.front() == '.') return false;
  for (char c : user) {
    if (!IsAlnum(c) && c != '_' && c != '.' && c != '-') return false;
  }
  return true;
}

bool ValidSshEntryName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  if (!IsAlnum(name.front()) && name.front() != '_') return false;
  for (char c : name) {
    if (!IsAlnum(c) && c != '_' && c != '.' && c != '-' && c != ':') return false;
  }
  return true;
}

bool ValidSshKeySecret(std::string_view key) {
  if (key.size() >= 2 && key.front() == '$') {
    const std::string_view var = key.substr(1);
    if (IsDigit(var.front())) return false;
    for (char c : var) {
      if (!IsAlnum(c) && c != '_') return false;
    }
    return true;
  }
  if (key.size() < 2 || key.front() != '/') return false;
  for (char c : key) {
    if (static_cast<unsigned char>(c) < 0x20) return false;
  }
  return true;
}

std::optional<std::string> PinnedHostKey(std::string_view line) {
  std::vector<std::string_view> f = Fields(line);
  if (f.empty() || f[0].front() == '@') return std::nullopt;  // no markers
  const size_t at = KnownKeyType(f[0]) ? 0 : 1;               // a host pattern first, or not
  if (f.size() < at + 2 || !KnownKeyType(f[at]) || !BlobHasType(f[at + 1], f[at])) {
    return std::nullopt;
  }
  return std::string(f[at]) + " " + std::string(f[at + 1]);
}

Status ValidateSshHost(const SshHostConfig& h, const std::string& field) {
  auto bad = [&](const std::string& key, const std::string& why) {
    return InvalidArgument(
        fmt::format("{}{}'{}.{}' {}", h.where, h.where.empty() ? "" : ": ", field, key, why),
        field + "." + key);
  };
  if (!ValidSshHostName(h.host)) {
    return bad("host",
               "must be a DNS name or an IP address (no user@, port, brackets, options or "
               "spaces; an IPv4 address in dotted decimal)");
  }
  if (!ValidSshEntryName(h.name)) {
    return bad("name", "may use letters, digits, '_', '.', ':', '-' (at most 64, not first '-')");
  }
  if (h.port < 1 || h.port > 65535) return bad("port", "must be a port number, 1 to 65535");
  if (!ValidSshUser(h.user)) {
    return bad("user", "must be a user name: letters, digits, '_', '.', '-' (at most 32)");
  }
  if (!ValidSshKeySecret(h.key)) {
    return bad("key",
               "must name where the private key is: $VARIABLE (maestro's environment) or an "
               "absolute file path");
  }
  if (h.known_hosts.empty()) {
    return bad("known_hosts", "must pin at least one host key (a line of ssh-keyscan's output)");
  }
  for (const std::string& k : h.known_hosts) {
    if (!PinnedHostKey(k)) {
      return bad("known_hosts",
                 "has a line that is not a host key ('<type> <base64>', optionally after the "
                 "host; no @markers)");
    }
  }
  return Status::Ok();
}

std::string SshKnownHostsPattern(const SshHostConfig& h) {
  // As ssh itself spells it (put_host_port), on the name it lower-cases.
  std::string host = h.host;
  for (char& c : host) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  if (h.port == 22) return host;
  return fmt::format("[{}]:{}", host, h.port);
}

}  // namespace maestro
