#include "cli/runtime.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>

#include "cli/shared_data_dir.h"
#include "cli/startup_wait.h"
#include "core/env.h"
#include "store/postgres/pg_store.h"
#include "store/sqlite/sqlite_store.h"

namespace maestro::cli {
namespace {

std::string Hostname() {
  char buf[256] = {0};
  gethostname(buf, sizeof(buf) - 1);
  return buf;
}

}  // namespace

int Fail(const Status& st) {
  // Input errors already say where (file:line:col or the variable); others
  // keep their code for bug reports.
  std::cerr << "maestro: "
            << (st.code() == StatusCode::kInvalidArgument ? st.message() : st.ToString()) << "\n";
  return st.code() == StatusCode::kInvalidArgument ? 2 : 1;
}

Result<Config> LoadEffectiveConfig(const std::string& flag) {
  std::optional<std::string> path;
  if (!flag.empty()) {
    path = flag;
  } else if (std::filesystem::exists("maestro.yaml")) {
    path = "maestro.yaml";
  }
  auto cfg = LoadConfig(path, MaestroEnvFromProcess());
  if (!cfg.ok()) return cfg;
  for (const auto& w : cfg->warnings) std::cerr << "maestro: warning: " << w << "\n";
  return cfg;
}

Result<std::unique_ptr<SqlStore>> OpenStore(const Config& cfg, notify::Notifier* notifier,
                                            DataDirRole role, const StartupWaiting& waiting) {
  if (Status st = Env::Default()->CreateDirs(cfg.data_dir); !st.ok()) {
    return InvalidArgument("cannot create data_dir: " + st.message());
  }
  StoreOptions so;
  so.default_max_attempts = cfg.jobs.retry.max_attempts;
  so.retry = cfg.jobs.retry;  // the store decides retry or failed at each job's end
  if (notifier) notifier->Bind(so);
  if (cfg.database.url.empty()) {
    auto s = SqliteStore::Open(cfg.data_dir + "/maestro.db", so);
    if (!s.ok()) return s.status();
    return std::unique_ptr<SqlStore>(std::move(s).value());
  }
  PgStoreOptions po;
  po.url = WithConnectTimeout(cfg.database.url, 10);
  po.pool_size = cfg.database.pool_size;
  po.notify = cfg.database.notify;
  // One budget for both waits: the database, then (a worker) the marker.
  const TimeMs start = SystemClock::Default()->NowMs();
  auto set_waiting = [&](std::string what) {
    if (waiting.state) waiting.state->SetWaitingFor(std::move(what));
  };
  StartupWaitOptions wo;
  wo.max_wait = waiting.max_wait;
  wo.what = "the database at " + DatabaseAddress(cfg.database.url);  // no user or password
  set_waiting("database");
  std::unique_ptr<PgStore> pg;
  std::string database_id;
  MAESTRO_RETURN_IF_ERROR(WaitFor(
      [&]() -> Status {
        auto opened = PgStore::Open(po, so);
        if (!opened.ok()) return opened.status();
        auto id = (*opened)->DatabaseId();
        if (!id.ok()) return id.status();
        pg = std::move(opened).value();
        database_id = *id;
        return Status::Ok();
      },
      IsDatabaseStarting, wo));
  if (role == DataDirRole::kOwner) {
    MAESTRO_RETURN_IF_ERROR(ClaimSharedDataDir(cfg.data_dir, database_id));
  } else {
    // serve writes the marker once it has the database: a worker started
    // first waits for it; one naming another database fails at once.
    const std::string marker = cfg.data_dir + "/" + kDatabaseIdFile;
    set_waiting("data_dir marker " + marker);
    const TimeMs spent = SystemClock::Default()->NowMs() - start;
    wo.max_wait = waiting.max_wait.count() > 0
                      ? std::max(std::chrono::milliseconds(1),
                                 waiting.max_wait - std::chrono::milliseconds(spent))
                      : waiting.max_wait;
    wo.what = "the data dir marker " + marker + " (written by `maestro serve`)";
    MAESTRO_RETURN_IF_ERROR(WaitFor([&] { return CheckSharedDataDir(cfg.data_dir, database_id); },
                                    IsMarkerMissing, wo));
  }
  set_waiting("");
  return std::unique_ptr<SqlStore>(std::move(pg));
}

Runtime::~Runtime() {
  // The dispatchers read the store: they stop before it goes, also when a
  // start failed before Stop() was called.
  if (notifier) notifier->StopDispatchers();
}

void Runtime::Stop() {
  if (notifier) notifier->StopDispatchers();
  if (pool) pool->Shutdown();
  if (browser_calls) browser_calls->Stop();
  // The job spans ended with the jobs: send them, waiting a bounded time.
  if (engine.tracer) engine.tracer->Shutdown(std::chrono::milliseconds(3000));
  if (sweeper) sweeper->Stop();
  if (janitor) janitor->Stop();
}

Result<Runtime> OpenRuntime(const Config& cfg, DataDirRole role, const StartupWaiting& waiting) {
  Runtime rt;
  // Before the store: its hooks point at the Notifier from the first commit.
  notify::NotifierOptions no;
  no.hear_deltas = role == DataDirRole::kOwner && !cfg.database.url.empty() && cfg.database.notify;
  // A worker serves no stream: its hub only numbers the deltas it relays.
  if (role == DataDirRole::kWorker) no.job_stream_buffer = 1;
  rt.notifier = std::make_unique<notify::Notifier>(no);
  auto store = OpenStore(cfg, rt.notifier.get(), role, waiting);
  if (!store.ok()) return store.status();
  rt.store = std::move(store).value();
  // Task context files (seed 002): settings checked, directories put where
  // the database says, old completed ones removed daily.
  auto ctx_cfg = context::ContextConfigFromConfig(cfg);
  if (!ctx_cfg.ok()) return ctx_cfg.status();
  MAESTRO_RETURN_IF_ERROR(context::ReconcileContextsAtStart(cfg.data_dir, *rt.store));
  rt.janitor = std::make_unique<context::ContextJanitor>(cfg.data_dir, *rt.store,
                                                         ctx_cfg->cleanup_days, 24 * 3600 * 1000);
  rt.janitor->Start();
  return rt;
}

Status StartWorkers(Runtime& rt, const Config& cfg, engine::DeltaFn on_delta, bool git_spares,
                    bool relay) {
  std::function<void(const std::string&, int64_t)> on_run_start;
  auto* pg = dynamic_cast<PgStore*>(rt.store.get());
  if (relay && pg && cfg.database.notify && cfg.workers > 0) {
    rt.notifier->StartDeltaRelay([pg](const std::vector<std::string>& payloads) {
      return pg->Notify(notify::kDeltasChannel, payloads);
    });
  }
  if (relay) {
    on_run_start = [n = rt.notifier.get()](const std::string& job_id, int64_t token) {
      n->BeginRun(job_id, token);
    };
  }
  auto engine =
      MakeEngineSetup(cfg, *rt.store, std::move(on_delta), git_spares, std::move(on_run_start));
  if (!engine.ok()) return engine.status();
  rt.engine = std::move(engine).value();
  WorkerPoolOptions wo;
  wo.threads = cfg.workers;
  wo.hostname = Hostname();
  wo.process_id = getpid();
  wo.worker_id_prefix = fmt::format("{}:{}", wo.hostname, wo.process_id);
  // No model/profile claim filter: a job is claimed by any worker, and one
  // whose profile or model this process does not serve fails at once naming
  // it (PieceExecutor), instead of sitting queued where no worker looks.
  wo.jobs = cfg.jobs;
  rt.pool = std::make_unique<WorkerPool>(*rt.store, *rt.engine.executor, wo);
  rt.pool_wake = rt.notifier->Subscribe(notify::Notifier::Topic::kJobAvailable,
                                        [pool = rt.pool.get()] { pool->Notify(); });
  rt.sweeper =
      std::make_unique<LeaseSweeper>(*rt.store, cfg.jobs.sweep_interval_ms, rt.store.get());
  rt.pool->Start();
  rt.sweeper->Start();
  if (rt.engine.browsers && cfg.workers > 0) {
    rt.browser_calls = std::make_unique<browser::BrowserCallServicer>(
        *rt.store, *rt.engine.browsers, wo.worker_id_prefix);
    rt.browser_calls->Start();
  }
  return Status::Ok();
}

}  // namespace maestro::cli
