// RunRemote: one command on a host the space's Tool Policy allows, over SSH
// (seed 000 §2 M: "SSH access is resolved from the Tool Policy").
//
// Where it sits: PieceExecutor registers it into a job's copy of the
// registry when the job's workspace policy has `ssh_hosts` (spaces.<name>.ssh,
// core/config.h SshHostConfig); a space without them has no RunRemote, so the
// model is never offered it and a call is "unknown tool". The schema's `host`
// is an enum of the space's host names; the Dispatcher validates, authorizes
// (the name in allowed_tools, or a grant) and records the call in the ledger
// like RunCommand's, then the handler:
//  1. finds the entry whose name is the argument byte for byte — no trimming,
//     no case folding, no user@/port/option spelling; anything else is refused
//     before any process starts;
//  2. reads the private key from the secret the entry names (environment
//     variable or host file, never the prompt or the workspace) and writes
//     it 0600 with the pinned host keys into a private per-call directory
//     outside every workspace (ssh_command.h), removed when the call ends;
//  3. runs Debian's `ssh` host-side (not in the sandbox: the sandbox has no
//     network, and the key must stay out of the agent's reach) with the
//     command as ONE argument after `--`, strict host key checking against
//     the pinned keys only, a timeout (the call's, at most 600 s) and the
//     output capped like RunCommand's (head and tail kept);
//  4. answers "[exit code N]" and the output; a host key that does not
//     match the pin, or a login the host refuses, is an "Error:" result.
// The key's text is cut out of any output that would carry it.
//
// Thread safety: the handler may run concurrently (each call has its own
// directory and process); the options are copied at registration.
#pragma once

#include <string>
#include <vector>

#include "core/config.h"
#include "core/status.h"
#include "tools/registry.h"
#include "tools/ssh_command.h"

namespace maestro::tools {

struct RunRemoteOptions {
  std::vector<SshHostConfig> hosts;  // the space's, in its order
  std::string temp_parent;           // where call directories go; "" = the system temp dir
  SecretLookup secrets;              // environment lookups; null = ProcessEnvironment()
  std::string ssh_program = "ssh";   // tests put a recording wrapper here
};

// kInvalidArgument when there is no host, a host breaks core/ssh_host.h's
// rules or two share a name; kConflict when RunRemote is registered already.
Status RegisterRunRemote(ToolRegistry& registry, RunRemoteOptions options);

}  // namespace maestro::tools
