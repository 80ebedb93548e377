// RunCommand: a shell command inside the bubblewrap sandbox.
//
// The result always states the exit code (or that the command was killed),
// then the merged, capped output. A sandbox that cannot start is an error
// result naming the reason — the command is never run unconfined.
#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>

#include "core/env.h"
#include "core/process.h"
#include "tools/tool_names.h"
#include "tools/workspace_tools.h"
#include "workspace/workspace_path.h"

namespace maestro::tools {

namespace {

constexpr int kDefaultTimeoutSeconds = 120;
constexpr int kMaxTimeoutSeconds = 600;
constexpr size_t kCommandOutputCap = 32 * 1024;

// Packages approved and installed for this task (RequestPackage) are visible
// to commands read-only at their real path, with the usual search paths set
// for the layouts the documented installers produce (pip --target, npm
// --prefix). The sandbox stays otherwise unchanged: nothing outside the
// workspace becomes writable.
void ExposePackages(const std::string& dir, SandboxCommand& sc, ProcessSpec& spec) {
  std::error_code ec;
  if (dir.empty() || !std::filesystem::is_directory(dir, ec)) return;
  sc.readonly_paths.push_back(dir);
  auto& env = *spec.env;
  env["MAESTRO_PACKAGES_DIR"] = dir;
  env["PATH"] = dir + "/pip/bin:" + dir + "/npm/node_modules/.bin:" + env["PATH"];
  env["PYTHONPATH"] = dir + "/pip";
  env["NODE_PATH"] = dir + "/npm/node_modules";
}

std::string Bytes(int64_t n) {
  if (n > 0 && n % (int64_t{1} << 30) == 0) return fmt::format("{} GiB", n >> 30);
  if (n > 0 && n % (int64_t{1} << 20) == 0) return fmt::format("{} MiB", n >> 20);
  return fmt::format("{} bytes", n);
}

bool Has(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

// A limit the command ran into, as an "Error: ..." line for the model ("" if
// none shows). The shell and the usual runtimes say so in their output; the
// signals (SIGXCPU, SIGXFSZ) and the pids cgroup say so without output.
std::string LimitDiagnosis(const ProcessResult& r, const SandboxLimits& l, int64_t cpu_seconds,
                           int64_t refused_forks) {
  // The shell's own reports of a limit count whatever the exit code; other
  // text is a hint only when the command failed (a log that mentions "out of
  // memory" is not an error).
  const std::string& all = r.output;
  const std::string o = r.timed_out || r.exit_code != 0 ? r.output : std::string();
  if (refused_forks > 0 || Has(all, "Cannot fork") || Has(all, "fork: Resource temporarily") ||
      Has(all, "fork: retry") || Has(o, "can't fork") || Has(o, "BlockingIOError")) {
    return fmt::format(
        "Error: the command reached the process limit ({} processes per command); run fewer "
        "processes at once\n",
        l.processes);
  }
  if (r.exit_code == 128 + SIGXCPU || Has(all, "CPU time limit exceeded")) {
    return fmt::format("Error: the command reached the CPU time limit ({} s)\n", cpu_seconds);
  }
  if (r.exit_code == 128 + SIGXFSZ || Has(all, "File size limit exceeded") ||
      Has(o, "File too large")) {
    return fmt::format("Error: the command reached the file size limit ({} per file)\n",
                       Bytes(l.file_size_bytes));
  }
  if (Has(o, "MemoryError") || Has(o, "Cannot allocate memory") || Has(o, "std::bad_alloc") ||
      Has(o, "out of memory") || Has(o, "memory exhausted")) {
    return fmt::format(
        "Error: the command ran out of memory (address space limit {} per process)\n",
        Bytes(l.address_space_bytes));
  }
  if (Has(o, "Too many open files")) {
    return fmt::format("Error: the command reached the open files limit ({} per process)\n",
                       l.open_files);
  }
  return "";
}

ToolResult RunCommandTool(const Sandbox& sandbox, const Json& args, const ToolContext& ctx) {
  if (!sandbox.available()) {
    return ToolResult::Error("RunCommand is unavailable: the sandbox cannot run here (" +
                             sandbox.unavailable_reason() + ")");
  }
  const bool network = args.value("network", false);
  if (network && !ctx.network_allowed) {
    return ToolResult::Error(
        "network access is not allowed in this workspace; ask with RequestTool");
  }
  ProcessSpec spec;
  spec.cwd = ctx.workspace_root;
  spec.env = std::map<std::string, std::string>{
      {"PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"},
      {"HOME", kWorkspaceMount},
      {"LANG", "C.UTF-8"},
      {"TERM", "dumb"},
      {"MAESTRO_IDEMPOTENCY_KEY", ctx.key.ToString()},
  };
  auto limit = std::chrono::seconds(args.value("timeout_seconds", kDefaultTimeoutSeconds));
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      ctx.deadline - std::chrono::steady_clock::now());
  spec.timeout = std::min<std::chrono::milliseconds>(limit, left);
  SandboxCommand sc;
  sc.workspace = ctx.workspace_root;
  sc.mount_at = kWorkspaceMount;
  sc.network = network;
  sc.command = args["command"].get<std::string>();
  sc.limits = sandbox.LimitsFor(ctx.workspace_root);
  sc.timeout = spec.timeout;
  ExposePackages(ctx.packages_dir, sc, spec);
  // Killed (what is left) and removed when this call returns.
  auto cgroup = PidsCgroup::Create(*ctx.env, sandbox.cgroup_base(), sc.limits.processes);
  if (cgroup) sc.cgroup_dir = cgroup->dir();
  spec.argv = sandbox.Wrap(sc);
  spec.output_cap = kCommandOutputCap;
  spec.cancel = ctx.cancel;
  auto r = ctx.env->RunProcess(spec);
  if (!r.ok()) return ToolResult::Error(r.status().message());
  std::string head;
  if (r->cancelled) {
    head = "[cancelled: the command was killed]\n";
  } else if (r->timed_out) {
    head = fmt::format("[timed out after {} ms: the command was killed]\n", spec.timeout.count());
  } else {
    head = fmt::format("[exit code {}]\n", r->exit_code);
  }
  const int64_t cpu = sc.limits.cpu_seconds > 0
                          ? sc.limits.cpu_seconds
                          : std::max<int64_t>(1, (spec.timeout.count() + 999) / 1000);
  const std::string diagnosis =
      r->cancelled ? "" : LimitDiagnosis(*r, sc.limits, cpu, cgroup ? cgroup->RefusedForks() : 0);
  ToolResult out = ToolResult::Ok(diagnosis + head + r->output);
  // A killed or failing command is still a normal answer the model must
  // read; only the cancel and a resource limit are errors.
  out.is_error = r->cancelled || !diagnosis.empty();
  return out;
}

}  // namespace

Status RegisterRunCommand(ToolRegistry& registry, std::shared_ptr<const Sandbox> sandbox) {
  Json params = {
      {"type", "object"},
      {"properties",
       {{"command",
         {{"type", "string"},
          {"minLength", 1},
          {"description", "a /bin/sh command line, run in the workspace root"}}},
        {"timeout_seconds", {{"type", "integer"}, {"minimum", 1}, {"maximum", kMaxTimeoutSeconds}}},
        {"network",
         {{"type", "boolean"},
          {"description", "needs network access (only if the workspace allows it)"}}}}},
      {"required", {"command"}},
      {"additionalProperties", false}};
  ToolSpec spec{
      kRunCommand,
      "Run a shell command in the workspace, sandboxed: the workspace is writable, the system "
      "read-only, no network unless allowed. Returns the exit code and the output (long output "
      "keeps its head and tail).",
      std::move(params),
      false,
      ToolClass::kShell,
      std::chrono::seconds(kMaxTimeoutSeconds + 10),
      kCommandOutputCap + 1024};
  return registry.Register(std::move(spec), [sandbox](const Json& args, const ToolContext& ctx) {
    return RunCommandTool(*sandbox, args, ctx);
  });
}

}  // namespace maestro::tools
