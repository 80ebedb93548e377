// PackageInstaller: installs the package of an APPROVED package request
// (RequestPackage, seed 001 WAITING_HUMAN_PACKAGE_REQUEST) with the installer
// command configured for its ecosystem, isolated under the task's runtime dir
// (<data>/tasks/<task>/packages/<ecosystem>), and records the outcome.
//
// Where it sits: the decide route only flips the request to `approved` and
// requeues the parked job (one store transaction, so the HTTP call never
// waits for an installer). The job resumes in the same movement on a worker;
// the model re-issues RequestPackage; CheckReentry finds the approved request
// and the engine calls ResolveApproved() on the JOB's worker thread. That
// runs the installer (bubblewrap: only the target dir writable, the network
// shared — the installer is the one place a package download is allowed —
// the job's CancelToken and a timeout), appends a `package.install` event
// {request_id, status installed|failed, dir, exit_code, output (capped)} and
// returns the tool result: "… installed at <dir>" or "Error: … failed …".
// A later re-entry (another resume, a retry after a crash) finds that event
// and answers from it without installing again; a crash during the install
// leaves no event, so the retried job simply installs again (installers are
// idempotent).
//
// Thread safety: immutable after construction; ResolveApproved may run on
// several worker threads at once (different jobs).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/cancel.h"
#include "core/json.h"
#include "core/status.h"
#include "sandbox/sandbox.h"
#include "store/store.h"
#include "tools/tool.h"

namespace maestro::tools {

// The `packages` config section:
//   packages:
//     installers: {pip: "pip install --target {target} {name}{version_spec}", ...}
//     readonly_paths: [/opt/maestro/installers]   # host paths the installer may read
//     timeout_seconds: 600
//     output_cap_bytes: 16384
// Placeholders: {name}, {version}, {target}, {ecosystem}; {version_spec} is
// "==<version>" (pip), "@<version>" (npm), "" without a version — the values
// are single-quoted for the shell, so a package name cannot inject commands.
struct PackageInstallerConfig {
  std::map<std::string, std::string> installers;  // ecosystem -> command template
  std::vector<std::string> readonly_paths;
  std::chrono::milliseconds timeout{600'000};
  size_t output_cap = 16 * 1024;
};

// Validates the section; errors name `where` (file:line:col) and the key.
Result<PackageInstallerConfig> PackageInstallerConfigFrom(const Json& section,
                                                          const std::string& where);

struct InstallOutcome {
  bool installed = false;
  std::string dir;  // the target dir
  int exit_code = -1;
  std::string output;  // capped installer output, or why it did not run
};

// <data>/tasks/<task>/packages: one subdirectory per ecosystem is an
// installer's {target}; RunCommand sees the whole directory read-only.
std::string TaskPackagesDir(const std::string& data_dir, const std::string& task_id);

class PackageInstaller {
 public:
  PackageInstaller(PackageInstallerConfig config, std::string data_dir,
                   std::shared_ptr<const Sandbox> sandbox);

  // <data>/tasks/<task_id>/packages/<ecosystem>
  std::string TargetDir(const std::string& task_id, const std::string& ecosystem) const;

  // The shell command for `request` (kind package, args {ecosystem, name,
  // version}); kInvalidArgument for a bad name/version, kNotFound when no
  // installer is configured for the ecosystem.
  Result<std::string> CommandFor(const Request& request) const;

  // Runs the installer now (blocking; stops on cancel or timeout).
  InstallOutcome Install(const Request& request, CancelToken* cancel) const;

  // The tool result of a re-issued RequestPackage whose request is approved:
  // the recorded outcome if there is one, else Install() + record it.
  ToolResult ResolveApproved(EventRecords& store, const Request& request,
                             CancelToken* cancel) const;

 private:
  PackageInstallerConfig config_;
  std::string data_dir_;
  std::shared_ptr<const Sandbox> sandbox_;
};

// The recorded `package.install` outcome of `request_id`, if any.
Result<std::optional<Json>> FindInstallOutcome(EventRecords& store, const std::string& task_id,
                                               const std::string& request_id);

// The tool result text for an outcome payload (installed → Ok, failed → Error).
ToolResult InstallResultFor(const Request& request, const Json& outcome);

}  // namespace maestro::tools
