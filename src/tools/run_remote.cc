#include "tools/run_remote.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>

#include "core/env.h"
#include "core/process.h"
#include "core/ssh_host.h"
#include "tools/tool_names.h"

namespace maestro::tools {

namespace {

constexpr int kRemoteDefaultTimeoutSeconds = 120;
constexpr int kRemoteMaxTimeoutSeconds = 600;
constexpr int kRemoteConnectTimeoutSeconds = 10;
constexpr size_t kRemoteOutputCap = 32 * 1024;
constexpr size_t kRemoteMaxCommandBytes = 64 * 1024;

std::string HostNames(const std::vector<SshHostConfig>& hosts) {
  std::string out;
  for (const auto& h : hosts) out += (out.empty() ? "" : ", ") + h.name;
  return out;
}

// Cuts every line of the key (and the key whole) out of `text`: output that
// should never carry it — a remote command reading the call's directory on a
// host that is maestro's own — still does not.
std::string Redacted(std::string text, const std::string& key) {
  std::vector<std::string> pieces = {key};
  size_t start = 0;
  while (start < key.size()) {
    size_t nl = key.find('\n', start);
    if (nl == std::string::npos) nl = key.size();
    std::string line = key.substr(start, nl - start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.size() >= 16 && line.rfind("-----", 0) != 0) pieces.push_back(line);
    start = nl + 1;
  }
  for (const std::string& p : pieces) {
    for (size_t at = text.find(p); at != std::string::npos; at = text.find(p, at)) {
      text.replace(at, p.size(), "[redacted]");
    }
  }
  return text;
}

struct RemoteHosts {
  RunRemoteOptions options;
};

// The result's first line(s): the exit code, or why there is none. ssh exits
// 255 for its own failures; a pin mismatch is named (nothing ran on the host).
std::string Verdict(const ProcessResult& r, const std::string& output, const SshHostConfig& host,
                    std::chrono::milliseconds timeout) {
  if (r.cancelled) return "[cancelled: ssh was killed]\n";
  if (r.timed_out) {
    return fmt::format("[timed out after {} ms: ssh was killed]\n", timeout.count());
  }
  if (r.exit_code == 255 && output.find("Host key verification failed") != std::string::npos) {
    return fmt::format(
        "Error: the host key of {} does not match the key pinned for it (spaces' ssh "
        "known_hosts); the connection was closed and nothing was run\n[exit code 255]\n",
        host.name);
  }
  if (r.exit_code == 255) {
    return fmt::format(
        "Error: ssh to {} failed (exit code 255: the connection or the login failed, or the "
        "command itself exited 255)\n[exit code 255]\n",
        host.name);
  }
  return fmt::format("[exit code {}]\n", r.exit_code);
}

ToolResult RunRemoteTool(const RemoteHosts& shared, const Json& args, const ToolContext& ctx) {
  const std::string wanted = args.value("host", "");
  const auto& hosts = shared.options.hosts;
  auto it = std::find_if(hosts.begin(), hosts.end(),
                         [&](const SshHostConfig& h) { return h.name == wanted; });
  if (it == hosts.end()) {
    return ToolResult::Error(
        fmt::format("host {} is not one this space allows (allowed: {}); nothing was run",
                    Json(wanted).dump(), HostNames(hosts)));
  }
  const SshHostConfig& host = *it;
  const std::string command = args.value("command", "");
  if (command.empty() || command.find('\0') != std::string::npos) {
    return ToolResult::Error("command must be non-empty text without NUL bytes; nothing was run");
  }
  auto key = ReadSshPrivateKey(*ctx.env, host, shared.options.secrets);
  if (!key.ok()) return ToolResult::Error(key.status().message() + "; nothing was run");
  std::string parent = shared.options.temp_parent;
  if (parent.empty()) {
    std::error_code ec;
    parent = std::filesystem::temp_directory_path(ec).string();
    if (ec || parent.empty()) parent = "/tmp";
  }
  auto call = SshCallDir::Create(*ctx.env, parent, host, *key);
  if (!call.ok()) return ToolResult::Error(call.status().message() + "; nothing was run");

  ProcessSpec spec;
  auto limit = std::chrono::seconds(args.value("timeout_seconds", kRemoteDefaultTimeoutSeconds));
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      ctx.deadline - std::chrono::steady_clock::now());
  spec.timeout = std::min<std::chrono::milliseconds>(limit, left);
  SshInvocation how;
  how.program = shared.options.ssh_program;
  how.key_file = call->key_file();
  how.known_hosts_file = call->known_hosts_file();
  how.connect_timeout_seconds = static_cast<int>(std::clamp<int64_t>(
      (spec.timeout.count() + 999) / 1000, 1, int64_t{kRemoteConnectTimeoutSeconds}));
  spec.argv = SshArgv(host, command, how);
  spec.cwd = call->dir();
  // No agent socket, no inherited variables: the one key is the file above.
  spec.env = std::map<std::string, std::string>{
      {"PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"},
      {"HOME", call->dir()},
      {"LANG", "C.UTF-8"},
  };
  spec.output_cap = kRemoteOutputCap;
  spec.cancel = ctx.cancel;
  auto r = ctx.env->RunProcess(spec);
  if (!r.ok()) return ToolResult::Error("ssh could not start: " + r.status().message());
  const std::string output = Redacted(r->output, *key);
  ToolResult out = ToolResult::Ok(Verdict(*r, output, host, spec.timeout) + output);
  out.is_error = r->cancelled || (!r->timed_out && r->exit_code == 255);
  return out;
}

}  // namespace

Status RegisterRunRemote(ToolRegistry& registry, RunRemoteOptions options) {
  if (options.hosts.empty()) return InvalidArgument("RunRemote needs at least one host", "ssh");
  std::set<std::string> names;
  Json enum_names = Json::array();
  for (size_t i = 0; i < options.hosts.size(); ++i) {
    const SshHostConfig& h = options.hosts[i];
    MAESTRO_RETURN_IF_ERROR(ValidateSshHost(h, fmt::format("ssh[{}]", i)));
    if (!names.insert(h.name).second) {
      return InvalidArgument("RunRemote: two hosts are named " + h.name, "ssh");
    }
    enum_names.push_back(h.name);
  }
  if (!options.secrets) options.secrets = ProcessEnvironment();
  Json params = {
      {"type", "object"},
      {"properties",
       {{"host",
         {{"type", "string"},
          {"enum", enum_names},
          {"description", "the host to run on: one of the hosts this workspace allows"}}},
        {"command",
         {{"type", "string"},
          {"minLength", 1},
          {"maxLength", kRemoteMaxCommandBytes},
          {"description", "one command line, run by the remote user's shell on that host"}}},
        {"timeout_seconds",
         {{"type", "integer"}, {"minimum", 1}, {"maximum", kRemoteMaxTimeoutSeconds}}}}},
      {"required", {"host", "command"}},
      {"additionalProperties", false}};
  ToolSpec spec{
      kRunRemote,
      "Run one command on a remote host this workspace allows, over SSH (the login and the "
      "host's identity are set by the administrator). Returns the exit code and the output "
      "(long output keeps its head and tail). Files in the workspace are not on the host.",
      std::move(params),
      false,
      ToolClass::kRead,  // the name must be allowed (the space's ssh:) or granted
      std::chrono::seconds(kRemoteMaxTimeoutSeconds + 10),
      kRemoteOutputCap + 1024};
  auto shared = std::make_shared<const RemoteHosts>(RemoteHosts{std::move(options)});
  return registry.Register(std::move(spec), [shared](const Json& args, const ToolContext& ctx) {
    return RunRemoteTool(*shared, args, ctx);
  });
}

}  // namespace maestro::tools
