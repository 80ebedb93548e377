// Sandbox: how RunCommand (and the package installer) confines a command —
// bubblewrap (`bwrap`) plus resource limits.
//
// Where it sits: RunCommand asks the Sandbox to wrap the user's command line
// and hands the result to RunProcess. Inside (docs/security.md lists it all):
// - a minimal filesystem: /usr and the merged-/usr symlinks (/bin, /sbin,
//   /lib*) read-only; a SYNTHESIZED /etc (passwd/group with only root and
//   nobody, hosts, nsswitch.conf) plus a few host files bound one by one
//   (ld.so.*, ssl certs, alternatives, localtime; resolv.conf only with
//   network) — no shadow, gshadow, sudoers, ssh keys, machine-id; a private
//   /tmp; a fresh /proc of the sandbox's own pid namespace; bwrap's minimal
//   /dev; no /sys, /home, /root, /opt, /var, /run. The workspace is bound
//   read-write at its own path (the working directory), extra paths (the
//   task's installed packages) read-only;
// - new user/pid/ipc/uts/cgroup namespaces, all capabilities dropped, the
//   command runs as uid/gid 65534 (nobody) inside its own user namespace,
//   and — unless the policy allows the network — a new, empty network
//   namespace (only its own loopback);
// - SandboxLimits applied with prlimit(1) INSIDE the namespaces, right
//   before the shell starts, and a pids cgroup where one can be created
//   (see PidsCgroup in sandbox.cc).
// `--die-with-parent` plus the pid namespace guarantee that killing the
// process group of bwrap leaves no process behind.
//
// bwrap needs to create namespaces. Probe() checks that once at startup; when
// it cannot (no bwrap, user namespaces disabled, a seccomp'ed container) the
// Sandbox is unavailable and RunCommand answers with an error saying so —
// it never falls back to running the command unconfined.
//
// Thread safety: immutable after Probe()/SetLimits() (call those before
// sharing); any thread may call Wrap() and LimitsFor().
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/json.h"
#include "core/status.h"

namespace maestro::tools {

// Per-command resource limits (setrlimit via prlimit inside the sandbox).
// 0 means "no limit" except for cpu_seconds, where 0 means "the command's
// wall timeout, rounded up".
struct SandboxLimits {
  int64_t cpu_seconds = 0;
  int64_t address_space_bytes = int64_t{2} << 30;  // RLIMIT_AS, 2 GiB
  int64_t file_size_bytes = int64_t{1} << 30;      // RLIMIT_FSIZE, 1 GiB
  int64_t open_files = 1024;                       // RLIMIT_NOFILE
  int64_t processes = 512;                         // RLIMIT_NPROC (+ pids.max)

  // {"cpu_seconds", "address_space_bytes", "file_size_bytes", "open_files",
  //  "processes"}: every key optional, applied over `base`; non-negative
  // integers; unknown keys are errors naming the key.
  static Result<SandboxLimits> FromJson(const Json& j, const SandboxLimits& base,
                                        const std::string& where);
  Json ToJson() const;
};

// One command to confine.
struct SandboxCommand {
  std::string workspace;  // bound read-write, the working directory
  // Where `workspace` appears inside the sandbox; "" = at its own path.
  // RunCommand uses kWorkspaceMount (workspace/workspace_path.h).
  std::string mount_at;
  bool network = false;
  std::string command;                      // run as `/bin/sh -c <command>`
  std::vector<std::string> readonly_paths;  // host paths bound read-only (when present)
  SandboxLimits limits;
  std::chrono::milliseconds timeout{60'000};  // sets cpu_seconds when that is 0
  std::string cgroup_dir;  // a PidsCgroup's dir to join before bwrap starts, "" = none
};

class Sandbox {
 public:
  // Runs `bwrap <the same confinement> -- true` once.
  // `env` starts the probe and writes the synthesized /etc; it must outlive
  // the Sandbox and its copies.
  static Sandbox Probe(const std::string& bwrap_path = "bwrap", Env* env = Env::Default());
  // A sandbox reported unavailable with `reason` (tests, or a config that
  // disables RunCommand).
  static Sandbox Unavailable(std::string reason);

  bool available() const { return available_; }
  // Why it is unavailable (bwrap's own message), "" when available.
  const std::string& unavailable_reason() const { return reason_; }
  // How the limits are enforced here, e.g. that no pids cgroup could be made
  // (logged at startup).
  const std::string& limits_report() const { return limits_report_; }
  bool cgroups_available() const { return !cgroup_base_.empty(); }

  // The global defaults and per-space overrides, keyed by the space's
  // canonical root: a workspace at or under a root gets that space's limits.
  void SetLimits(SandboxLimits defaults, std::map<std::string, SandboxLimits> by_root);
  SandboxLimits LimitsFor(const std::string& workspace) const;

  // argv that runs `/bin/sh -c <command>` confined as described above.
  std::vector<std::string> Wrap(const SandboxCommand& c) const;
  // Shorthand with the default limits.
  std::vector<std::string> Wrap(const std::string& workspace, bool network,
                                const std::string& command) const;

  // The parent dir for per-command pids cgroups, "" when none can be made.
  const std::string& cgroup_base() const { return cgroup_base_; }
  Env& env() const { return *env_; }

  struct EtcDir;  // the synthesized /etc files, removed with the last copy

 private:
  bool available_ = false;
  Env* env_ = Env::Default();
  std::string bwrap_ = "bwrap";
  std::string reason_;
  std::string limits_report_;
  std::string cgroup_base_;
  std::shared_ptr<const EtcDir> etc_;
  SandboxLimits defaults_;
  std::map<std::string, SandboxLimits> by_root_;
};

// A pids cgroup for one command (cgroup v2, or the v1 pids hierarchy):
// pids.max = the process limit, counted for the whole sandbox whatever the
// uid. Needed because RLIMIT_NPROC is not enforced for host root (kuid 0)
// even inside a user namespace. Destruction kills what is left in it and
// removes it.
class PidsCgroup {
 public:
  // nullptr when `base` is empty or the cgroup cannot be made.
  static std::unique_ptr<PidsCgroup> Create(Env& env, const std::string& base, int64_t max_pids);
  ~PidsCgroup();
  PidsCgroup(const PidsCgroup&) = delete;
  PidsCgroup& operator=(const PidsCgroup&) = delete;

  const std::string& dir() const { return dir_; }
  // Forks refused because pids.max was reached (pids.events "max").
  int64_t RefusedForks() const;

 private:
  PidsCgroup(Env& env, std::string dir) : env_(env), dir_(std::move(dir)) {}
  Env& env_;
  std::string dir_;
};

}  // namespace maestro::tools
