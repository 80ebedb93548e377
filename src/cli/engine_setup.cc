#include "engine_setup.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>

#include "cli/sandbox_check.h"
#include "context/context_startup.h"
#include "core/egress.h"
#include "core/mutex.h"
#include "engine/job/piece_executor.h"
#include "llm/llm_client.h"
#include "sandbox/sandbox.h"
#include "store/budget.h"
#include "telemetry/telemetry.h"
#include "tools/builtin.h"
#include "tools/tool_names.h"

namespace maestro {

namespace {

// `sandbox.limits` over the defaults, then each space's `limits` over those,
// keyed by the space's canonical root (where its tasks run).
Status ConfigureSandboxLimits(const Config& cfg, const tools::SpaceRegistry& spaces,
                              tools::Sandbox& sandbox) {
  for (const auto& [k, v] : cfg.sandbox.items()) {
    if (k != "limits") {
      return InvalidArgument(
          cfg.sandbox_where + ": unknown key 'sandbox." + k + "' (known: sandbox.limits)",
          "sandbox." + k);
    }
  }
  MAESTRO_ASSIGN_OR_RETURN(
      tools::SandboxLimits defaults,
      tools::SandboxLimits::FromJson(cfg.sandbox.value("limits", Json()), tools::SandboxLimits{},
                                     cfg.sandbox_where + ": sandbox.limits"));
  std::map<std::string, tools::SandboxLimits> by_root;
  for (const auto& [name, sc] : cfg.spaces) {
    if (sc.limits.is_null()) continue;
    const tools::Space* space = spaces.Find(name);
    if (space == nullptr) continue;
    MAESTRO_ASSIGN_OR_RETURN(by_root[space->root],
                             tools::SandboxLimits::FromJson(
                                 sc.limits, defaults, sc.where + ": spaces." + name + ".limits"));
  }
  sandbox.SetLimits(defaults, std::move(by_root));
  return Status::Ok();
}

}  // namespace

Result<EngineSetup> MakeEngineSetup(const Config& cfg, Store& store, engine::DeltaFn on_delta,
                                    bool git_spares,
                                    std::function<void(const std::string&, int64_t)> on_run_start) {
  EngineSetup s;
  // The one place the engine's OS is chosen: the real one (tests build the
  // executor with their own Env).
  Env* env = Env::Default();
  // Spaces first: the API lists and validates them even without an LLM.
  s.spaces = std::make_unique<tools::SpaceRegistry>();
  std::vector<std::string> created;
  MAESTRO_RETURN_IF_ERROR(
      tools::RegisterConfiguredSpaces(*env, cfg.spaces, s.spaces.get(), &created));
  for (const auto& dir : created) spdlog::info("space directory {} did not exist: created", dir);
  s.llm_configured = !cfg.llm.base_url.empty();
  if (!s.llm_configured) {
    spdlog::warn(
        "no LLM server configured (MAESTRO_LLM_BASE_URL / llm.base_url): jobs will fail with a "
        "message saying so");
    s.executor = std::make_unique<EngineUnavailableExecutor>();
    return s;
  }
  s.tracer = telemetry::MakeTracer(cfg.telemetry, MAESTRO_VERSION);
  engine::PieceCatalogOptions po;
  po.user_dirs = engine::DefaultUserPieceDirs(cfg.data_dir);
  s.catalog = std::make_unique<engine::PieceCatalog>(engine::PieceCatalog::Load(po));
  for (const auto& p : s.catalog->problems()) spdlog::warn("piece skipped: {}", p.ToString());

  auto sandbox = std::make_shared<tools::Sandbox>(tools::Sandbox::Probe("bwrap", env));
  bool shell = sandbox->available();
  // A process that runs jobs does not serve on without its sandbox unless
  // told to (sandbox.required: false); `serve --workers 0` runs none.
  const bool runs_jobs = cfg.workers > 0;
  if (!shell && runs_jobs && cfg.sandbox_required) {
    return SandboxUnavailable("RunCommand's sandbox (bubblewrap)", sandbox->unavailable_reason(),
                              kBwrapHostFix);
  }
  if (!shell) {
    spdlog::warn("RunCommand disabled: {}{}", sandbox->unavailable_reason(),
                 runs_jobs ? fmt::format(" (sandbox.required: false; {})", kSandboxDocsAnchor)
                           : std::string());
  }
  MAESTRO_RETURN_IF_ERROR(ConfigureSandboxLimits(cfg, *s.spaces, *sandbox));
  if (shell) spdlog::info("{}", sandbox->limits_report());
  MAESTRO_ASSIGN_OR_RETURN(s.registry, tools::NewBuiltinRegistry(sandbox));
  MAESTRO_ASSIGN_OR_RETURN(auto pkg_cfg,
                           tools::PackageInstallerConfigFrom(cfg.packages, cfg.packages_where));
  s.packages = std::make_unique<tools::PackageInstaller>(std::move(pkg_cfg), cfg.data_dir, sandbox);

  engine::PieceExecutorOptions o;
  o.store = &store;
  o.catalog = s.catalog.get();
  o.registry = s.registry.get();
  o.spaces = s.spaces.get();
  o.env = env;
  o.workspace.env = env;
  o.workspace.data_dir = cfg.data_dir;
  if (git_spares && cfg.workers > 0) {  // `serve --workers 0` runs no job
    s.git_spares =
        std::make_unique<tools::GitSpares>(env, cfg.data_dir, static_cast<size_t>(cfg.workers));
    o.workspace.git_spares = s.git_spares.get();
    s.context_spares =
        context::ContextDirs::NewSpares(cfg.data_dir, env, static_cast<size_t>(cfg.workers));
    o.context_spares = s.context_spares.get();
  }
  // Ephemeral workspaces are the task's own scratch repository: reading and
  // editing are allowed; the shell only inside the sandbox, without network.
  // The agent tools (subtasks, delegate) need no more than that.
  o.workspace.ephemeral_policy.allowed_tools = {
      tools::kReadFile, tools::kWriteFile, tools::kEditFile,    tools::kListDir,    tools::kGlob,
      tools::kGrep,     tools::kDelegate,  tools::kSpinOffTask, tools::kWaitSubTask};
  if (shell) o.workspace.ephemeral_policy.allowed_tools.insert(tools::kRunCommand);
  o.workspace.ephemeral_policy.edit_allowed = true;
  o.workspace.ephemeral_policy.shell_allowed = shell;
  o.data_dir = cfg.data_dir;
  // context_storage (checked at start): the jobs' thresholds, summary prompt, request.json.
  MAESTRO_ASSIGN_OR_RETURN(o.context, context::ContextConfigFromConfig(cfg));
  o.llm_factory = engine::OpenAiFactory(cfg);
  o.prices = budget::PricesFromConfig(cfg);
  if (auto b = budget::SettingsFromConfig(cfg); b.ok()) o.budgets = *b;  // checked by serve
  o.limits.max_delegate_depth = cfg.jobs.delegate_max_depth;
  o.on_delta = std::move(on_delta);
  o.on_run_start = std::move(on_run_start);
  o.packages = s.packages.get();
  MAESTRO_ASSIGN_OR_RETURN(o.mcp_servers,
                           mcp::ServersFromConfig(cfg.mcp_servers, cfg.mcp_servers_where));
  {  // Streamable-HTTP servers are reached through the egress policy (core/egress.h).
    MAESTRO_ASSIGN_OR_RETURN(EgressPolicy egress, EgressPolicyFrom(cfg.egress, cfg.egress_where));
    auto shared = std::make_shared<const EgressPolicy>(std::move(egress));
    for (auto& [name, server] : o.mcp_servers) server.egress = shared;
  }
  o.sandbox = sandbox;
  for (const auto& [space, sc] : cfg.spaces) {
    if (!sc.mcp_servers) continue;
    auto& allowed = o.mcp_servers_by_space[space];
    for (const auto& name : *sc.mcp_servers) {
      if (!o.mcp_servers.count(name)) {
        return InvalidArgument(sc.where + ": spaces." + space +
                                   ".mcp_servers: unknown MCP server '" + name +
                                   "' (not under mcp_servers)",
                               "spaces." + space + ".mcp_servers");
      }
      allowed.insert(name);
    }
  }
  o.tracer = s.tracer.get();
  if (!cfg.browser.is_null()) {
    MAESTRO_ASSIGN_OR_RETURN(auto bc, browser::BrowserConfigFrom(cfg.browser, cfg.browser_where));
    // Chromium starts lazily, on a job's first BrowseWeb call: checked here,
    // cheaply (sandbox_check.h), so a missing one stops the start instead.
    Status chromium = runs_jobs ? ProbeChromium(bc, *env) : Status::Ok();
    if (!chromium.ok() && cfg.sandbox_required) {
      return SandboxUnavailable("BrowseWeb's Chromium", chromium.message(), kChromiumHostFix);
    }
    if (!chromium.ok()) {
      spdlog::warn("BrowseWeb disabled: {} (sandbox.required: false; {})", chromium.message(),
                   kSandboxDocsAnchor);
    } else {
      // A browser whose job ended while parked (cancelled) is closed by the sweep.
      auto active = [&store](const std::string& job_id) {
        auto job = store.GetJob(job_id);
        return job.ok() && !IsTerminal(job->status);
      };
      s.browsers = std::make_unique<browser::BrowserService>(std::move(bc), cfg.data_dir, env,
                                                             std::move(active));
      o.browsers = s.browsers.get();
    }
  }
  const JudgementConfig& j = cfg.judgement;
  o.policies_dir = j.auto_prompter_dir.empty() ? cfg.data_dir + "/policies" : j.auto_prompter_dir;
  o.skills_dir = j.skills_dir.empty() ? cfg.data_dir + "/skills" : j.skills_dir;
  o.memory = j.memory;
  o.reflection = j.reflection;
  o.default_piece = j.default_piece;
  s.executor = std::make_unique<engine::PieceExecutor>(std::move(o));
  return s;
}

namespace {

// The piece names a new task may name. Re-parsing every piece (built-in and
// user YAML) took 1–2 ms of each POST /tasks, so the names are kept until a
// user piece directory changes (a file added, removed, resized or touched).
class PieceNames {
 public:
  explicit PieceNames(const std::string& data_dir)
      : dirs_(engine::DefaultUserPieceDirs(data_dir)) {}

  std::vector<std::string> Get() {
    std::string signature = Signature();
    MutexLock lock(&mu_);
    if (!loaded_ || signature != signature_) {
      engine::PieceCatalogOptions po;
      po.user_dirs = dirs_;
      const engine::PieceCatalog catalog = engine::PieceCatalog::Load(po);
      names_.clear();
      for (const auto& e : catalog.entries()) names_.push_back(e.piece.name);
      signature_ = std::move(signature);
      loaded_ = true;
    }
    return names_;
  }

 private:
  std::string Signature() const {
    Env* env = Env::Default();
    std::string sig;
    for (const std::string& dir : dirs_) {
      auto entries = env->ListDir(dir);
      if (!entries.ok()) continue;  // missing: no user pieces there
      std::sort(entries->begin(), entries->end(),
                [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
      for (const DirEntry& e : *entries) {
        auto info = env->GetFileInfo(dir + "/" + e.name);
        if (!info.ok()) continue;
        sig += fmt::format("{}/{}:{}:{}\n", dir, e.name, info->size, info->modified_ms);
      }
    }
    return sig;
  }

  const std::vector<std::string> dirs_;
  Mutex mu_;
  bool loaded_ GUARDED_BY(mu_) = false;
  std::string signature_ GUARDED_BY(mu_);
  std::vector<std::string> names_ GUARDED_BY(mu_);
};

}  // namespace

api::TaskChoices MakeTaskChoices(const Config& cfg, const tools::SpaceRegistry& spaces) {
  api::TaskChoices c;
  std::string data_dir = cfg.data_dir;
  auto names = std::make_shared<PieceNames>(data_dir);
  c.piece_names = [names] { return names->Get(); };
  for (const tools::Space* s : spaces.List()) {
    api::SpaceView v;
    v.name = s->name;
    v.description = s->description;
    v.path = s->root;
    v.network_allowed = s->policy.network_allowed;
    v.edit_allowed = s->policy.edit_allowed;
    v.shell_allowed = s->policy.shell_allowed;
    v.tools.assign(s->policy.allowed_tools.begin(), s->policy.allowed_tools.end());
    c.spaces.push_back(std::move(v));
  }
  c.default_piece = cfg.judgement.default_piece;
  c.route_by_llm = cfg.judgement.router == "llm";
  for (const auto& [name, sc] : cfg.spaces) {
    if (!sc.piece.empty()) c.space_pieces[name] = {sc.piece, sc.grounded};
  }
  // "default" first: a bare `model` maps onto it when it serves that model.
  auto profiles = llm::ProfilesFromConfig(cfg);
  if (auto d = profiles.find("default"); d != profiles.end()) {
    c.profiles.push_back({d->first, d->second.model});
  }
  for (const auto& [name, p] : profiles) {
    if (name != "default") c.profiles.push_back({name, p.model});
  }
  return c;
}

Result<api::TaskServiceOptions> LocalTaskServiceOptions(const Config& cfg) {
  api::TaskServiceOptions o;
  auto budgets = budget::SettingsFromConfig(cfg);
  if (!budgets.ok()) return budgets.status();
  o.budgets = *budgets;
  o.prices = budget::PricesFromConfig(cfg);
  o.choices = MakeTaskChoices(cfg, tools::SpaceRegistry());
  o.data_dir = cfg.data_dir;
  o.via = "cli";
  return o;
}

}  // namespace maestro
