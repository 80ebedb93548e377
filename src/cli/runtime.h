// Runtime: the long-running half of a maestro process — the Notifier, the
// store, the task context janitor and the worker pool with its lease
// sweeper — and the small startup helpers `serve`, `worker` and `run` share
// (config loading, error exit). Where it sits: cli wiring only; every
// behaviour lives in the libraries it starts.
//
// Startup is two steps so `serve` can claim its port between them:
// OpenRuntime (Notifier, then the store bound to it, context directories;
// nothing runs yet), then StartWorkers (engine, pool — subscribed to the
// Notifier's job wake-ups — and sweeper: jobs start being claimed).
//
// Thread safety: built, started and stopped on the main thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "api/readiness.h"
#include "browser/browser_call_servicer.h"
#include "context/context_startup.h"
#include "core/config.h"
#include "core/status.h"
#include "engine_setup.h"
#include "notify/notifier.h"
#include "store/sql/sql_store.h"
#include "worker/lease_sweeper.h"
#include "worker/worker_pool.h"

namespace maestro::cli {

// Prints `st` as "maestro: …" and returns the exit code: 2 for input errors
// (kInvalidArgument), 1 otherwise.
int Fail(const Status& st);

// The config: --config, else ./maestro.yaml when present; warnings printed.
Result<Config> LoadEffectiveConfig(const std::string& flag);

// Who opens the store: the API's process owns the data dir (it records the
// PostgreSQL database's id there); a `maestro worker` must find that record
// (cli/shared_data_dir.h). SQLite ignores the role.
enum class DataDirRole { kOwner, kWorker };

// How long OpenStore waits for what it needs (cli/startup_wait.h): a
// PostgreSQL that does not accept connections yet, and for a worker the
// data dir's marker `serve` has not written yet. The default fails at once
// (the one-shot commands); serve and worker wait `startup_wait_ms`.
struct StartupWaiting {
  std::chrono::milliseconds max_wait{0};
  // Told what is awaited now ("database", "data_dir marker <path>"), for
  // /api/ready; may be null.
  api::StartupState* state = nullptr;
};

// Opens (and migrates) the store: PostgreSQL when database_url is set, else
// data_dir/maestro.db, its commit hooks bound to `notifier` (which must
// outlive it; on PostgreSQL it also hears other processes' commits, through
// LISTEN/NOTIFY, unless `database.notify: false`). A null `notifier`: no
// hooks (the one-shot `--db` commands, nothing to wake). Waits as `waiting`
// says; a stop signal during the wait returns kCancelled.
Result<std::unique_ptr<SqlStore>> OpenStore(const Config& cfg, notify::Notifier* notifier,
                                            DataDirRole role = DataDirRole::kOwner,
                                            const StartupWaiting& waiting = {});

struct Runtime {
  Runtime() = default;
  Runtime(Runtime&&) = default;
  Runtime& operator=(Runtime&&) = delete;
  ~Runtime();  // stops the Notifier's dispatchers before the store goes

  // First in, last out: the store's hooks point at it until the store goes.
  std::unique_ptr<notify::Notifier> notifier;
  std::unique_ptr<SqlStore> store;
  EngineSetup engine;
  std::unique_ptr<WorkerPool> pool;          // null until StartWorkers
  notify::Notifier::Subscription pool_wake;  // on_job_available → pool->Notify()
  std::unique_ptr<LeaseSweeper> sweeper;
  // Serves the live view of this process's browsers to API processes
  // elsewhere (browser/browser_call_servicer.h); null without browsers.
  std::unique_ptr<browser::BrowserCallServicer> browser_calls;
  std::unique_ptr<context::ContextJanitor> janitor;

  // Stops the Notifier's dispatchers, the workers (grace, then release), the
  // sweeper and the janitor.
  void Stop();
};

// The Notifier, the store with its hooks bound to it, the context directories
// reconciled with it and the janitor started. No job is claimed yet. The
// owner (`serve`) on PostgreSQL with `database.notify` hears other
// processes' relayed deltas (NotifierOptions::hear_deltas).
Result<Runtime> OpenRuntime(const Config& cfg, DataDirRole role = DataDirRole::kOwner,
                            const StartupWaiting& waiting = {});

// Builds the engine from `cfg` (its llm.base_url is read here, once) and
// starts the worker pool and the lease sweeper. `git_spares`: keep ready
// repositories for new ephemeral workspaces (workspace/git_spares.h); off for
// `maestro run`, which runs one task.
//
// On PostgreSQL with `database.notify`, `relay` = true also starts the
// Notifier's delta relay (notify/delta_relay.h) before the first claim: the
// deltas `on_delta` publishes through Notifier::PublishDelta reach the
// API processes of other hosts, numbered per run (on_run_start).
Status StartWorkers(Runtime& rt, const Config& cfg, engine::DeltaFn on_delta,
                    bool git_spares = true, bool relay = false);

}  // namespace maestro::cli
