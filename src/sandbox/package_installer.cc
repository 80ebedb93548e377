#include "sandbox/package_installer.h"

#include <fmt/format.h>

#include <filesystem>
#include <regex>

#include "core/env.h"
#include "core/output_cap.h"
#include "core/process.h"

namespace maestro::tools {

namespace {

// What a recorded outcome keeps of the installer's output (the event is
// streamed to clients and webhooks; the full capped output is in the result).
constexpr size_t kEventOutputCap = 4096;
constexpr int kEventPage = 500;

// Shell single quotes: 'it'\''s' — nothing inside is interpreted.
std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string VersionSpec(const std::string& ecosystem, const std::string& version) {
  if (version.empty()) return "";
  if (ecosystem == "npm") return "@" + version;
  return "==" + version;
}

std::string Substitute(std::string tmpl, const std::map<std::string, std::string>& values) {
  for (const auto& [key, value] : values) {
    const std::string ph = "{" + key + "}";
    for (size_t at = tmpl.find(ph); at != std::string::npos;
         at = tmpl.find(ph, at + value.size())) {
      tmpl.replace(at, ph.size(), value);
    }
  }
  return tmpl;
}

Status CheckInstallers(const Json& installers, const std::string& where,
                       PackageInstallerConfig* out) {
  static const std::regex kEcosystem("[a-z0-9][a-z0-9_-]{0,31}");
  if (!installers.is_object()) {
    return InvalidArgument(where + ": packages.installers must be a mapping",
                           "packages.installers");
  }
  for (const auto& [eco, cmd] : installers.items()) {
    if (!std::regex_match(eco, kEcosystem)) {
      return InvalidArgument(where + ": packages.installers: bad ecosystem name '" + eco + "'",
                             "packages.installers");
    }
    if (!cmd.is_string() || cmd.get<std::string>().empty()) {
      return InvalidArgument(where + ": packages.installers." + eco + " must be a command string",
                             "packages.installers");
    }
    out->installers[eco] = cmd.get<std::string>();
  }
  return Status::Ok();
}

}  // namespace

Result<PackageInstallerConfig> PackageInstallerConfigFrom(const Json& section,
                                                          const std::string& where) {
  PackageInstallerConfig c;
  if (section.is_null() || section.empty()) return c;
  for (const auto& [key, value] : section.items()) {
    if (key == "installers") {
      MAESTRO_RETURN_IF_ERROR(CheckInstallers(value, where, &c));
    } else if (key == "readonly_paths") {
      if (!value.is_array()) {
        return InvalidArgument(where + ": packages.readonly_paths must be a list", key);
      }
      for (const auto& p : value) {
        if (!p.is_string() || p.get<std::string>().empty() || p.get<std::string>()[0] != '/') {
          return InvalidArgument(where + ": packages.readonly_paths needs absolute paths", key);
        }
        c.readonly_paths.push_back(p.get<std::string>());
      }
    } else if (key == "timeout_seconds" && value.is_number_integer() && value.get<int64_t>() > 0) {
      c.timeout = std::chrono::seconds(value.get<int64_t>());
    } else if (key == "output_cap_bytes" && value.is_number_integer() &&
               value.get<int64_t>() >= 256) {
      c.output_cap = value.get<size_t>();
    } else {
      return InvalidArgument(
          fmt::format("{}: packages.{}: unknown key or bad value (installers, readonly_paths, "
                      "timeout_seconds > 0, output_cap_bytes >= 256)",
                      where, key),
          "packages." + key);
    }
  }
  return c;
}

PackageInstaller::PackageInstaller(PackageInstallerConfig config, std::string data_dir,
                                   std::shared_ptr<const Sandbox> sandbox)
    : config_(std::move(config)), data_dir_(std::move(data_dir)), sandbox_(std::move(sandbox)) {}

std::string TaskPackagesDir(const std::string& data_dir, const std::string& task_id) {
  return (std::filesystem::path(data_dir) / "tasks" / task_id / "packages").string();
}

std::string PackageInstaller::TargetDir(const std::string& task_id,
                                        const std::string& ecosystem) const {
  return (std::filesystem::path(TaskPackagesDir(data_dir_, task_id)) / ecosystem).string();
}

Result<std::string> PackageInstaller::CommandFor(const Request& r) const {
  // Names and versions come from the model: keep them to what package
  // registries use, and quote them anyway.
  static const std::regex kName("[A-Za-z0-9@][A-Za-z0-9@._/+-]{0,213}");
  static const std::regex kVersion("[A-Za-z0-9._+~^<>=!*,-]{0,64}");
  std::string eco = r.args.value("ecosystem", ""), name = r.args.value("name", "");
  std::string version = r.args.value("version", "");
  if (!std::regex_match(name, kName) || name.find("..") != std::string::npos) {
    return InvalidArgument("the package name '" + name + "' is not a valid package name", "name");
  }
  if (!std::regex_match(version, kVersion)) {
    return InvalidArgument("the version '" + version + "' is not a valid version", "version");
  }
  auto it = config_.installers.find(eco);
  if (it == config_.installers.end()) {
    return NotFound("no installer is configured for the ecosystem '" + eco +
                    "' (config packages.installers)");
  }
  return Substitute(it->second, {{"name", ShellQuote(name)},
                                 {"version", ShellQuote(version)},
                                 {"version_spec", ShellQuote(VersionSpec(eco, version))},
                                 {"ecosystem", ShellQuote(eco)},
                                 {"target", ShellQuote(TargetDir(r.task_id, eco))}});
}

InstallOutcome PackageInstaller::Install(const Request& r, CancelToken* cancel) const {
  InstallOutcome out;
  out.dir = TargetDir(r.task_id, r.args.value("ecosystem", ""));
  auto cmd = CommandFor(r);
  if (!cmd.ok()) {
    out.output = cmd.status().message();
    return out;
  }
  if (!sandbox_ || !sandbox_->available()) {
    out.output = "the installer cannot run: the sandbox is unavailable (" +
                 (sandbox_ ? sandbox_->unavailable_reason() : std::string("none")) + ")";
    return out;
  }
  Env& env = sandbox_->env();
  if (Status st = env.CreateDirs(out.dir); !st.ok()) {
    out.output = "cannot create " + out.dir + ": " + st.message();
    return out;
  }
  ProcessSpec spec;
  // Only the target dir is writable; the network is shared (downloads).
  SandboxCommand sc;
  sc.workspace = out.dir;
  sc.network = true;
  sc.command = *cmd;
  sc.readonly_paths = config_.readonly_paths;
  sc.limits = sandbox_->LimitsFor(out.dir);
  sc.timeout = config_.timeout;
  auto cgroup = PidsCgroup::Create(env, sandbox_->cgroup_base(), sc.limits.processes);
  if (cgroup) sc.cgroup_dir = cgroup->dir();
  spec.argv = sandbox_->Wrap(sc);
  spec.cwd = out.dir;
  spec.env =
      std::map<std::string, std::string>{{"PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"},
                                         {"HOME", out.dir},
                                         {"LANG", "C.UTF-8"},
                                         {"MAESTRO_PACKAGE_DIR", out.dir}};
  spec.timeout = config_.timeout;
  spec.output_cap = config_.output_cap;
  spec.cancel = cancel;
  auto run = env.RunProcess(spec);
  if (!run.ok()) {
    out.output = run.status().message();
    return out;
  }
  out.exit_code = run->exit_code;
  out.output = run->output;
  if (run->cancelled) out.output = "[cancelled]\n" + out.output;
  if (run->timed_out) {
    out.output =
        fmt::format("[timed out after {} s]\n", config_.timeout.count() / 1000) + out.output;
  }
  out.installed = !run->cancelled && !run->timed_out && run->exit_code == 0;
  return out;
}

Result<std::optional<Json>> FindInstallOutcome(EventRecords& store, const std::string& task_id,
                                               const std::string& request_id) {
  std::string after;
  while (true) {
    MAESTRO_ASSIGN_OR_RETURN(auto events, store.ListEvents(task_id, after, kEventPage));
    for (const auto& e : events) {
      if (e.type == "package.install" && e.payload.value("request_id", "") == request_id) {
        return std::optional<Json>(e.payload);
      }
    }
    if (events.size() < static_cast<size_t>(kEventPage)) return std::optional<Json>();
    after = events.back().id;
  }
}

ToolResult InstallResultFor(const Request& r, const Json& o) {
  if (o.value("status", "") == "installed") {
    return ToolResult::Ok(fmt::format(
        "Approved (request {}): the package {} is installed at {} (outside the workspace).", r.id,
        r.name, o.value("dir", "")));
  }
  return ToolResult::Error(fmt::format(
      "the package {} was approved (request {}) but its installation failed (exit code {}):\n{}\n"
      "Do not ask again for the same package; continue without it or finish with "
      "complete(status=error).",
      r.name, r.id, o.value("exit_code", -1), o.value("output", "")));
}

ToolResult PackageInstaller::ResolveApproved(EventRecords& store, const Request& r,
                                             CancelToken* cancel) const {
  auto recorded = FindInstallOutcome(store, r.task_id, r.id);
  if (recorded.ok() && recorded->has_value()) return InstallResultFor(r, **recorded);
  InstallOutcome o = Install(r, cancel);
  if (cancel && cancel->IsCancelled()) {
    // Not an outcome: the job is stopping; a later run installs again.
    return ToolResult::Error("the installation of " + r.name + " was cancelled");
  }
  Json payload = {{"request_id", r.id},
                  {"ecosystem", r.args.value("ecosystem", "")},
                  {"name", r.args.value("name", "")},
                  {"version", r.args.value("version", "")},
                  {"status", o.installed ? "installed" : "failed"},
                  {"dir", o.dir},
                  {"exit_code", o.exit_code},
                  {"output", CapOutput(o.output, kEventOutputCap)}};
  Event e;
  e.task_id = r.task_id;
  e.job_id = r.job_id;
  e.type = "package.install";
  e.payload = payload;
  (void)store.AppendEvent(e);  // best effort: without it a re-entry installs again
  payload["output"] = o.output;
  return InstallResultFor(r, payload);
}

}  // namespace maestro::tools
