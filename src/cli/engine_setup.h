// EngineSetup: the objects a process needs to execute jobs with the piece
// engine — piece catalog, tool registry, spaces and the PieceExecutor — built
// from the config. `maestro serve`, `worker` and `run` share it.
//
// With no LLM base URL configured the executor is EngineUnavailableExecutor,
// which fails jobs with a message naming MAESTRO_LLM_BASE_URL.
//
// Thread safety: built once at startup; the executor is thread-safe.
#pragma once

#include <memory>

#include "api/task_service.h"
#include "api/task_validation.h"
#include "browser/browser_service.h"
#include "core/config.h"
#include "core/spare_dirs.h"
#include "engine/loop/movement_runner.h"
#include "engine/piece/piece_catalog.h"
#include "sandbox/package_installer.h"
#include "store/store.h"
#include "telemetry/tracer.h"
#include "tools/registry.h"
#include "worker/executor.h"
#include "workspace/workspace.h"

namespace maestro {

struct EngineSetup {
  std::unique_ptr<engine::PieceCatalog> catalog;
  std::unique_ptr<tools::ToolRegistry> registry;
  std::unique_ptr<tools::SpaceRegistry> spaces;
  std::unique_ptr<tools::PackageInstaller> packages;  // approved RequestPackage installs
  // The job spans' tracer (`telemetry:`; no-op when off), borrowed by the
  // executor: shut down after the workers stop (Runtime::Stop).
  std::unique_ptr<telemetry::Tracer> tracer;
  // The jobs' browsers (`browser:` configured; else null), borrowed by the
  // executor and the API's live view.
  std::unique_ptr<browser::BrowserService> browsers;
  // Borrowed by the executor's PrepareWorkspace (null when not kept).
  std::unique_ptr<tools::GitSpares> git_spares;
  // Borrowed by the executor's ContextDirs (null when not kept).
  std::unique_ptr<SpareDirs> context_spares;
  std::unique_ptr<JobExecutor> executor;
  bool llm_configured = false;
};

// `git_spares`: keep cfg.workers ready repositories for new ephemeral
// workspaces (workspace/git_spares.h) and as many new context directories
// (ContextDirs::NewSpares).
// `on_run_start`: see PieceExecutorOptions (may be empty).
Result<EngineSetup> MakeEngineSetup(
    const Config& cfg, Store& store, engine::DeltaFn on_delta, bool git_spares,
    std::function<void(const std::string&, int64_t)> on_run_start = {});

// The pieces (re-read from the piece directories on each call, like GET
// /api/pieces), registered spaces and configured LLM profiles a task may
// name through the API.
api::TaskChoices MakeTaskChoices(const Config& cfg, const tools::SpaceRegistry& spaces);

// The TaskService (api/task_service.h) of a command that creates a task
// without a server — `maestro run`, `maestro task create --db`: the
// config's pieces and profiles, budgets, quotas and prices, the data dir;
// no spaces (these commands name none). Its config errors name the key.
Result<api::TaskServiceOptions> LocalTaskServiceOptions(const Config& cfg);

}  // namespace maestro
