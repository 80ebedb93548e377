#include "tools/sandbox.h"

#include <filesystem>

#include "tools/process_runner.h"

namespace maestro::tools {

namespace {

// System directories bound read-only when present (merged-/usr systems have
// /bin etc. as symlinks; --ro-bind of a symlink would fail, so those are
// recreated as symlinks instead).
void AddSystemBinds(std::vector<std::string>& a) {
  namespace fs = std::filesystem;
  for (const char* dir : {"/usr", "/etc", "/opt"}) {
    if (fs::exists(dir)) a.insert(a.end(), {"--ro-bind", dir, dir});
  }
  // Root inside the sandbox could read these through the /etc bind.
  for (const char* secret : {"/etc/shadow", "/etc/gshadow", "/etc/sudoers"}) {
    std::error_code ec;
    if (fs::exists(secret, ec)) a.insert(a.end(), {"--ro-bind", "/dev/null", secret});
  }
  for (const char* dir : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(dir, ec))) {
      a.insert(a.end(), {"--symlink", fs::read_symlink(dir, ec).string(), dir});
    } else if (fs::exists(dir, ec)) {
      a.insert(a.end(), {"--ro-bind", dir, dir});
    }
  }
}

}  // namespace

std::vector<std::string> Sandbox::Wrap(const std::string& workspace, bool network,
                                       const std::string& command) const {
  std::vector<std::string> a = {bwrap_,          "--die-with-parent", "--new-session",
                                "--unshare-all", "--cap-drop",        "ALL"};
  if (network) a.push_back("--share-net");
  AddSystemBinds(a);
  a.insert(a.end(), {"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"});
  a.insert(a.end(), {"--bind", workspace, workspace, "--chdir", workspace});
  a.insert(a.end(), {"--", "/bin/sh", "-c", command});
  return a;
}

Sandbox Sandbox::Probe(const std::string& bwrap_path) {
  Sandbox s;
  s.bwrap_ = bwrap_path;
  ProcessSpec spec;
  spec.argv = s.Wrap("/tmp", false, "true");
  spec.timeout = std::chrono::seconds(10);
  spec.output_cap = 4096;
  auto r = RunProcess(spec);
  if (!r.ok()) {
    s.reason_ = "bubblewrap is not installed (" + r.status().message() +
                "); install the Debian package 'bubblewrap' (scripts/setup.sh)";
  } else if (r->exit_code != 0) {
    s.reason_ = "bubblewrap cannot create namespaces here (exit " + std::to_string(r->exit_code) +
                "): " + r->output;
  } else {
    s.available_ = true;
  }
  return s;
}

Sandbox Sandbox::Unavailable(std::string reason) {
  Sandbox s;
  s.reason_ = std::move(reason);
  return s;
}

}  // namespace maestro::tools
