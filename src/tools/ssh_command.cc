#include "tools/ssh_command.h"

#include <fmt/format.h>

#include <cstdlib>

#include "core/ssh_host.h"

namespace maestro::tools {

namespace {

constexpr uint64_t kMaxKeyBytes = 64 * 1024;  // an RSA-16384 key is under 13 KiB

// The refusal for a key that is not one: names where it came from only.
Status NotAKey(const std::string& where) {
  return InvalidArgument(fmt::format("the SSH key in {} is not an unencrypted OpenSSH/PEM private "
                                     "key (-----BEGIN ... PRIVATE KEY-----)",
                                     where),
                         "key");
}

}  // namespace

SecretLookup ProcessEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
  };
}

Result<std::string> ReadSshPrivateKey(Env& env, const SshHostConfig& host,
                                      const SecretLookup& lookup) {
  std::string key, where;
  if (host.key.size() > 1 && host.key.front() == '$') {
    const std::string var = host.key.substr(1);
    where = "the environment variable " + var;
    std::optional<std::string> v = lookup ? lookup(var) : std::nullopt;
    if (!v) {
      return Unavailable(fmt::format(
          "the SSH key of host {} is not set: the administrator sets the environment variable {} "
          "of the maestro server",
          host.name, var));
    }
    key = std::move(*v);
  } else {
    where = "the file " + host.key;
    auto info = env.GetFileInfo(host.key);
    if (!info.ok()) {
      return Unavailable(fmt::format("the SSH key file of host {} cannot be read ({}): {}",
                                     host.name, host.key, info.status().message()));
    }
    if (info->type != DirEntry::Type::kFile || info->size > kMaxKeyBytes) return NotAKey(where);
    auto text = ReadFileToString(env, host.key);
    if (!text.ok()) {
      return Unavailable(fmt::format("the SSH key file of host {} cannot be read ({}): {}",
                                     host.name, host.key, text.status().message()));
    }
    key = std::move(*text);
  }
  if (key.size() > kMaxKeyBytes || key.find("-----BEGIN ") == std::string::npos ||
      key.find("PRIVATE KEY-----") == std::string::npos ||
      key.find("ENCRYPTED") != std::string::npos) {
    return NotAKey(where);
  }
  if (key.back() != '\n') key += '\n';  // ssh refuses a key without its last newline
  return key;
}

std::string PinnedKnownHosts(const SshHostConfig& host) {
  const std::string pattern = SshKnownHostsPattern(host);
  std::string out;
  for (const std::string& line : host.known_hosts) {
    if (auto key = PinnedHostKey(line)) out += pattern + " " + *key + "\n";
  }
  return out;
}

Result<SshCallDir> SshCallDir::Create(Env& env, const std::string& parent,
                                      const SshHostConfig& host, const std::string& private_key) {
  auto made = env.CreateTempDir(parent, "maestro-ssh-");
  if (!made.ok()) {
    return Internal("cannot create the call's private directory in " + parent + ": " +
                    made.status().message());
  }
  SshCallDir call(&env, *made);  // removed on every return below
  MAESTRO_RETURN_IF_ERROR(env.SetPermissions(call.dir(), 0700));
  {
    MAESTRO_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> f,
                             env.NewWritableFile(call.key_file(), 0600, false));
    MAESTRO_RETURN_IF_ERROR(f->Append(private_key));
    MAESTRO_RETURN_IF_ERROR(f->Close());
  }
  // Created 0600 already; set again in case a umask or an existing file
  // left it wider: ssh refuses a key others can read.
  MAESTRO_RETURN_IF_ERROR(env.SetPermissions(call.key_file(), 0600));
  MAESTRO_RETURN_IF_ERROR(
      WriteStringToFile(env, call.known_hosts_file(), PinnedKnownHosts(host), 0600));
  return call;
}

SshCallDir::SshCallDir(SshCallDir&& other) noexcept
    : env_(other.env_), dir_(std::move(other.dir_)) {
  other.dir_.clear();
}

SshCallDir::~SshCallDir() {
  // A failure leaves a 0700 directory only maestro's user can read.
  if (!dir_.empty()) env_->RemoveAll(dir_).IgnoreError();
}

std::vector<std::string> SshArgv(const SshHostConfig& host, const std::string& command,
                                 const SshInvocation& how) {
  std::vector<std::string> argv = {how.program, "-F", "/dev/null"};
  // Every option the user's or the system's ssh_config could set that would
  // widen what this call does, pinned to its safe value.
  const std::vector<std::string> options = {
      "BatchMode=yes",
      "StrictHostKeyChecking=yes",
      "UserKnownHostsFile=" + how.known_hosts_file,
      "GlobalKnownHostsFile=/dev/null",
      "UpdateHostKeys=no",
      "CheckHostIP=no",
      "HashKnownHosts=no",
      "IdentitiesOnly=yes",
      "IdentityFile=" + how.key_file,
      "IdentityAgent=none",
      "PreferredAuthentications=publickey",
      "PasswordAuthentication=no",
      "KbdInteractiveAuthentication=no",
      "ForwardAgent=no",
      "ForwardX11=no",
      "ClearAllForwardings=yes",
      "PermitLocalCommand=no",
      "ProxyCommand=none",
      "ProxyJump=none",
      "ControlMaster=no",
      "ControlPath=none",
      "Tunnel=no",
      "RequestTTY=no",
      "EscapeChar=none",
      "ServerAliveInterval=15",
      "ServerAliveCountMax=3",
      "ConnectionAttempts=1",
      fmt::format("ConnectTimeout={}", how.connect_timeout_seconds),
      "LogLevel=ERROR",
  };
  for (const std::string& o : options) {
    argv.push_back("-o");
    argv.push_back(o);
  }
  argv.insert(argv.end(), {"-n", "-T", "-p", std::to_string(host.port), "-l", host.user, "--",
                           host.host, command});
  return argv;
}

}  // namespace maestro::tools
