// Runtime: the long-running half of a maestro process — the store, the task
// context janitor and the worker pool with its lease sweeper — and the small
// startup helpers `serve`, `worker` and `run` share (config loading, error
// exit). Where it sits: cli wiring only; every behaviour lives in the
// libraries it starts.
//
// Startup is two steps so `serve` can claim its port between them:
// OpenRuntime (store + context directories, nothing runs yet), then
// StartWorkers (engine, pool, sweeper — jobs start being claimed).
//
// Thread safety: built, started and stopped on the main thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "api/event_signal.h"
#include "context/context_startup.h"
#include "core/config.h"
#include "core/status.h"
#include "engine_setup.h"
#include "notify/job_stream.h"
#include "notify/push_dispatcher.h"
#include "notify/webhooks.h"
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

// Opens (and migrates) the store: PostgreSQL when database_url is set, else
// data_dir/maestro.db. `wake` runs after a commit that made a job
// claimable, `on_commit` after every commit with its events (on PostgreSQL
// also for commits of other processes, through LISTEN/NOTIFY).
using CommitFn = std::function<void(const std::vector<CommittedEvent>&)>;
Result<std::unique_ptr<SqlStore>> OpenStore(const Config& cfg, std::function<void()> wake,
                                            CommitFn on_commit = nullptr,
                                            DataDirRole role = DataDirRole::kOwner);

// Objects created after the store that its hooks must reach.
struct Hooks {
  std::atomic<WorkerPool*> pool{nullptr};
  std::atomic<api::EventSignal*> signal{nullptr};
  std::atomic<WebhookDispatcher*> webhooks{nullptr};
  std::atomic<PushDispatcher*> push{nullptr};               // Web Push (push.enabled)
  std::atomic<JobStreamHub*> streams{nullptr};              // the API's live job streams
  std::atomic<browser::BrowserService*> browsers{nullptr};  // the jobs' browsers (live view)
};

struct Runtime {
  std::unique_ptr<SqlStore> store;
  EngineSetup engine;
  std::unique_ptr<WorkerPool> pool;  // null until StartWorkers
  std::unique_ptr<LeaseSweeper> sweeper;
  std::unique_ptr<context::ContextJanitor> janitor;

  // Stops the workers (grace, then release), the sweeper and the janitor.
  void Stop();
};

// The store with its hooks wired, the context directories reconciled with it
// and the janitor started. No job is claimed yet.
Result<Runtime> OpenRuntime(const Config& cfg, std::shared_ptr<Hooks> hooks,
                            DataDirRole role = DataDirRole::kOwner);

// Builds the engine from `cfg` (its llm.base_url is read here, once) and
// starts the worker pool and the lease sweeper. `git_spares`: keep ready
// repositories for new ephemeral workspaces (tools/git_spares.h); off for
// `maestro run`, which runs one task.
Status StartWorkers(Runtime& rt, const Config& cfg, std::shared_ptr<Hooks> hooks,
                    engine::DeltaFn on_delta, bool git_spares = true);

}  // namespace maestro::cli
