// The pieces of one RunRemote call that touch ssh: the private per-call
// directory with the key and the pinned host keys, and the `ssh` command line.
//
// Where it sits: RunRemote (run_remote.h) resolves the space's entry, then
// SshCallDir::Create reads the key from where the admin put it (an
// environment variable or a file of maestro's host), writes it 0600 with a
// known_hosts file of only the pinned keys into a fresh 0700 directory
// outside every workspace, and the destructor removes the directory — the
// key never reaches the prompt, a workspace, a tool result or a log. SshArgv
// builds Debian's OpenSSH client command line: no config file, no agent, no
// forwarding, no proxy, no multiplexing, strict checking against the pinned
// keys only, publickey with that one key, and the remote command as ONE
// argument after `--` and the host (ssh parses no option after `--`; no
// local shell ever sees the command).
//
// Thread safety: an SshCallDir belongs to one call; the functions are pure.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/env.h"
#include "core/status.h"

namespace maestro::tools {

// Reads one environment variable ("" and unset are both nullopt).
using SecretLookup = std::function<std::optional<std::string>(const std::string&)>;
// std::getenv, for production.
SecretLookup ProcessEnvironment();

// The private key `host.key` names. Errors name the variable or the file and
// what is wrong, never any byte of the key.
Result<std::string> ReadSshPrivateKey(Env& env, const SshHostConfig& host,
                                      const SecretLookup& lookup);

// The known_hosts text of `host`: one "<pattern> <type> <base64>" line per
// pinned key, the pattern ssh looks the host up by.
std::string PinnedKnownHosts(const SshHostConfig& host);

// A 0700 directory `<parent>/maestro-ssh-XXXXXX` with `id` (the key, 0600)
// and `known_hosts`; removed (RemoveAll) when the object dies. Move-only.
class SshCallDir {
 public:
  static Result<SshCallDir> Create(Env& env, const std::string& parent, const SshHostConfig& host,
                                   const std::string& private_key);
  SshCallDir(SshCallDir&& other) noexcept;
  SshCallDir& operator=(SshCallDir&&) = delete;
  SshCallDir(const SshCallDir&) = delete;
  ~SshCallDir();

  const std::string& dir() const { return dir_; }
  std::string key_file() const { return dir_ + "/id"; }
  std::string known_hosts_file() const { return dir_ + "/known_hosts"; }

 private:
  SshCallDir(Env* env, std::string dir) : env_(env), dir_(std::move(dir)) {}
  Env* env_;
  std::string dir_;  // "" once moved from
};

struct SshInvocation {
  std::string program = "ssh";  // looked up in PATH
  std::string key_file;
  std::string known_hosts_file;
  int connect_timeout_seconds = 10;
};

// The argv of `ssh` running `command` on `host` (see the header comment).
std::vector<std::string> SshArgv(const SshHostConfig& host, const std::string& command,
                                 const SshInvocation& how);

}  // namespace maestro::tools
