// RunCommand: a shell command inside the bubblewrap sandbox.
//
// The result always states the exit code (or that the command was killed),
// then the merged, capped output. A sandbox that cannot start is an error
// result naming the reason — the command is never run unconfined.
#include <filesystem>

#include <fmt/format.h>

#include "tools/process_runner.h"
#include "tools/workspace_tools.h"

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
void ExposePackages(const std::string& dir, ProcessSpec& spec) {
  std::error_code ec;
  if (dir.empty() || !std::filesystem::is_directory(dir, ec)) return;
  auto dashdash = spec.argv.end() - 4;  // Wrap ends with "--", "/bin/sh", "-c", command
  spec.argv.insert(dashdash, {"--ro-bind", dir, dir});
  auto& env = *spec.env;
  env["MAESTRO_PACKAGES_DIR"] = dir;
  env["PATH"] = dir + "/pip/bin:" + dir + "/npm/node_modules/.bin:" + env["PATH"];
  env["PYTHONPATH"] = dir + "/pip";
  env["NODE_PATH"] = dir + "/npm/node_modules";
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
  spec.argv = sandbox.Wrap(ctx.workspace_root, network, args["command"].get<std::string>());
  spec.cwd = ctx.workspace_root;
  spec.env = std::map<std::string, std::string>{
      {"PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"},
      {"HOME", ctx.workspace_root},
      {"LANG", "C.UTF-8"},
      {"TERM", "dumb"},
      {"MAESTRO_IDEMPOTENCY_KEY", ctx.key.ToString()},
  };
  ExposePackages(ctx.packages_dir, spec);
  auto limit = std::chrono::seconds(args.value("timeout_seconds", kDefaultTimeoutSeconds));
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      ctx.deadline - std::chrono::steady_clock::now());
  spec.timeout = std::min<std::chrono::milliseconds>(limit, left);
  spec.output_cap = kCommandOutputCap;
  spec.cancel = ctx.cancel;
  auto r = RunProcess(spec);
  if (!r.ok()) return ToolResult::Error(r.status().message());
  std::string head;
  if (r->cancelled) {
    head = "[cancelled: the command was killed]\n";
  } else if (r->timed_out) {
    head = fmt::format("[timed out after {} ms: the command was killed]\n", spec.timeout.count());
  } else {
    head = fmt::format("[exit code {}]\n", r->exit_code);
  }
  ToolResult out = ToolResult::Ok(head + r->output);
  // A killed or failing command is still a normal answer the model must
  // read; only the cancel is an error (the job is stopping).
  out.is_error = r->cancelled;
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
      "RunCommand",
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
