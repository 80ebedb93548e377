// SandboxCheck: the startup check that a process which runs jobs can confine
// them — RunCommand's bubblewrap (tools::Sandbox::Probe) and, with `browser:`,
// BrowseWeb's Chromium in its own sandbox — and the one startup error that
// names what failed, why, and the fixes.
//
// Where it sits: cli wiring, called by MakeEngineSetup (engine_setup.cc)
// when workers > 0. With `sandbox.required: true` (the default) a failed
// check stops the start (exit 1) instead of serving on without RunCommand or
// BrowseWeb; with `false` the engine logs a warning and leaves the tool out.
// The container settings live in ONE place, docs/operations.md "The sandbox
// in a container", which the error names.
//
// Thread safety: free functions, called on the main thread at startup.
#pragma once

#include <string>

#include "browser/browser_service.h"
#include "core/env.h"
#include "core/status.h"

namespace maestro {

// Where the error sends an operator for the container settings.
inline constexpr const char* kSandboxDocsAnchor = "docs/operations.md#the-sandbox-in-a-container";

// Starts Chromium the way BrowserService does, cheaply: `<chromium>
// --version` inside the same bubblewrap command (the host read-only, a
// private /tmp, a profile dir bound, new pid, ipc and network namespaces;
// socat, the network bridge, must be there) — or bare with
// `browser.sandbox: none`. Not a full headless launch (that takes seconds):
// it proves the namespaces can be made and the executable runs in them.
// OK when it ran and exited 0; otherwise kUnavailable saying what happened.
Status ProbeChromium(const browser::BrowserConfig& config, Env& env);

// The startup error: `what` ("RunCommand's sandbox (bubblewrap)") cannot run
// because `reason`; `host_fix` is what to install or allow on a host. Adds
// the container settings' docs anchor and `sandbox.required: false`.
// kUnavailable, field "sandbox.required".
Status SandboxUnavailable(const std::string& what, const std::string& reason,
                          const std::string& host_fix);

// The host fixes of the two checks.
inline constexpr const char* kBwrapHostFix =
    "install bubblewrap (Debian: apt-get install bubblewrap, or scripts/setup.sh) and allow "
    "unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 where the kernel "
    "has that switch, and user.max_user_namespaces above 0)";
inline constexpr const char* kChromiumHostFix =
    "install chromium and socat (Debian packages; scripts/setup.sh), or point browser.chromium "
    "at the browser, and allow unprivileged user namespaces as bubblewrap needs them";

}  // namespace maestro
