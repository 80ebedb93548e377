// The shape of an SSH host a space allows (SshHostConfig, `spaces.<name>.ssh`).
//
// Where it sits: the config parser (config_space_ssh.cc) refuses a bad entry
// at start naming file:line:col, and RunRemote (tools/run_remote.h) checks
// every entry again when it is registered, so an entry built in code gets the
// same rules. What reaches the `ssh` command line is only what passes here:
// a host is a DNS name or a canonical IP literal (never an option such as
// `-oProxyCommand=…`, never `user@host`, `host:port` or a bracket), a user is
// a portable user name, a pinned host key is a known key type with a blob
// that says the same type.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/config.h"
#include "core/status.h"

namespace maestro {

// A DNS name (letters, digits, '-', '.'; no label starting or ending with
// '-'), an IPv4 address in dotted decimal without leading zeros, or an IPv6
// address without brackets or zone.
bool ValidSshHostName(std::string_view host);
// A portable user name: [A-Za-z0-9_][A-Za-z0-9_.-]*, at most 32.
bool ValidSshUser(std::string_view user);
// What the model names: [A-Za-z0-9_][A-Za-z0-9_.:-]*, at most 64.
bool ValidSshEntryName(std::string_view name);
// `$VARIABLE` or an absolute path.
bool ValidSshKeySecret(std::string_view key);
// One known_hosts / ssh-keyscan line ("[host]:port type base64 comment",
// "type base64") as "type base64"; nullopt when it is not one (a marker such
// as @cert-authority, an unknown type, a blob of another type).
std::optional<std::string> PinnedHostKey(std::string_view line);

// Every rule above for one entry; the message names `field`'s sub-key
// (`<field>.host`, ...) and what is wrong, never the key's value.
Status ValidateSshHost(const SshHostConfig& h, const std::string& field);

// The host pattern ssh looks a pinned key up by: "host" on port 22,
// "[host]:port" otherwise.
std::string SshKnownHostsPattern(const SshHostConfig& h);

}  // namespace maestro
