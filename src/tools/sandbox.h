// Sandbox: how RunCommand confines a command — bubblewrap (`bwrap`).
//
// Where it sits: RunCommand asks the Sandbox to wrap the user's command line
// and hands the result to RunProcess. Inside: the workspace is bound
// read-write at its own path (the working directory), the system (/usr,
// /bin, /lib*, /sbin, /etc) read-only, a private /tmp, /proc and /dev, new
// pid/ipc/uts/cgroup namespaces and — unless the policy allows the network —
// a new, empty network namespace (only its own loopback). The data dir,
// other workspaces and the rest of the host filesystem are simply absent.
// `--die-with-parent` plus the pid namespace guarantee that killing the
// process group of bwrap leaves no process behind.
//
// bwrap needs to create namespaces. Probe() checks that once at startup; when
// it cannot (no bwrap, user namespaces disabled, a seccomp'ed container) the
// Sandbox is unavailable and RunCommand answers with an error saying so —
// it never falls back to running the command unconfined.
//
// Thread safety: immutable after Probe(); any thread may call Wrap().
#pragma once

#include <string>
#include <vector>

namespace maestro::tools {

class Sandbox {
 public:
  // Runs `bwrap <the same confinement> -- true` once.
  static Sandbox Probe(const std::string& bwrap_path = "bwrap");
  // A sandbox reported unavailable with `reason` (tests, or a config that
  // disables RunCommand).
  static Sandbox Unavailable(std::string reason);

  bool available() const { return available_; }
  // Why it is unavailable (bwrap's own message), "" when available.
  const std::string& unavailable_reason() const { return reason_; }

  // argv that runs `/bin/sh -c <command>` confined to `workspace`.
  std::vector<std::string> Wrap(const std::string& workspace, bool network,
                                const std::string& command) const;

 private:
  bool available_ = false;
  std::string bwrap_ = "bwrap";
  std::string reason_;
};

}  // namespace maestro::tools
