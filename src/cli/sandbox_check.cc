#include "cli/sandbox_check.h"

#include <fmt/format.h>

#include <chrono>

#include "browser/browser_session.h"
#include "core/process.h"

namespace maestro {
namespace {

// Inside the sandbox: the bridge's socat must be there (BrowserSession's
// bridge script needs it), then the browser runs and prints its version.
// $0 is the browser command.
constexpr const char* kProbeScript =
    "command -v socat >/dev/null 2>&1 || { echo 'socat is not installed (the browser network "
    "bridge)' >&2; exit 127; }\n"
    "command -v \"$0\" >/dev/null 2>&1 || { echo \"$0: not found\" >&2; exit 127; }\n"
    "exec \"$0\" --version\n";

// A child's output in one line for the error: whitespace runs collapsed,
// at most `cap` bytes.
std::string OneLine(const std::string& text, size_t cap = 600) {
  std::string out;
  for (char c : text) {
    const bool space = c == '\n' || c == '\r' || c == '\t' || c == ' ';
    if (space) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
    if (out.size() >= cap) {
      out += "…";
      break;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace

Status ProbeChromium(const browser::BrowserConfig& config, Env& env) {
  ProcessSpec spec;
  spec.timeout = std::chrono::seconds(15);
  spec.output_cap = 4096;
  std::string profile;
  const bool bwrap = config.sandbox == "bwrap";
  if (bwrap) {
    auto dir = env.CreateTempDir("/tmp", "maestro-chromium-probe-");
    if (!dir.ok()) return dir.status();
    profile = *dir;
    const browser::BrowserCommand cmd = browser::CommandFor(config, profile);
    spec.argv = cmd.bwrap;
    spec.argv.insert(spec.argv.end(),
                     {"--unshare-net", "--", "sh", "-c", kProbeScript, cmd.chromium});
  } else {
    spec.argv = {config.chromium, "--version"};
  }
  auto r = env.RunProcess(spec);
  if (!profile.empty()) env.RemoveAll(profile).IgnoreError();
  const std::string how =
      bwrap ? "in bubblewrap (browser.sandbox: bwrap)" : "bare (browser.sandbox: none)";
  if (!r.ok()) {
    return Status(StatusCode::kUnavailable,
                  bwrap ? fmt::format("bubblewrap is not installed ({})", r.status().message())
                        : fmt::format("cannot start '{}' {}: {}", config.chromium, how,
                                      r.status().message()));
  }
  if (r->timed_out) {
    return Status(StatusCode::kUnavailable,
                  fmt::format("'{} --version' {} did not finish in 15 s", config.chromium, how));
  }
  if (r->exit_code != 0) {
    return Status(StatusCode::kUnavailable,
                  fmt::format("'{} --version' {} exited {}: {}", config.chromium, how, r->exit_code,
                              OneLine(r->output)));
  }
  return Status::Ok();
}

Status SandboxUnavailable(const std::string& what, const std::string& reason,
                          const std::string& host_fix) {
  return Status(
      StatusCode::kUnavailable,
      fmt::format("{} cannot run here: {}\n"
                  "maestro: jobs are not run without it (sandbox.required: true). Fix one of:\n"
                  "  - on a host: {};\n"
                  "  - in a container: the runtime must let maestro create user, pid, mount and "
                  "network namespaces (seccomp and AppArmor allow unshare/clone with "
                  "CLONE_NEWUSER) — the podman, docker and Kubernetes settings: {};\n"
                  "  - or start without it: sandbox.required: false "
                  "(MAESTRO_SANDBOX_REQUIRED=false) — what cannot run is then left out, with a "
                  "warning; `serve --workers 0` runs no job and checks nothing.",
                  what, OneLine(reason), host_fix, kSandboxDocsAnchor),
      "sandbox.required");
}

}  // namespace maestro
