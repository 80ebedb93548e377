#include "cli/serve.h"

#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "api/access_config.h"
#include "api/api_server.h"
#include "api/audit.h"
#include "api/push_notice.h"
#include "api/readiness.h"
#include "cli/demo_mode.h"
#include "cli/engine_setup.h"
#include "cli/runtime.h"
#include "core/egress.h"
#include "core/hash.h"
#include "core/log.h"
#include "engine/piece/piece_catalog.h"
#include "notify/delta_stamp.h"
#include "schedule/file_clock.h"
#include "schedule/scheduler.h"
#include "store/budget.h"
#include "store/postgres/pg_migrations.h"
#include "store/sqlite/migrations.h"

#ifndef MAESTRO_VERSION
#define MAESTRO_VERSION "0.0.0"
#endif

namespace maestro::cli {
namespace {

// Blocks until SIGTERM or SIGINT. The signals were blocked in main() before
// any thread started, so only this sigwait receives them.
int WaitForSignal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

// Engine deltas (text, tool calls, retries...) go to the Notifier's live job
// streams, stamped (notify/delta_stamp.h): the API of this process reads
// them there, and on PostgreSQL the relay carries them to the API processes
// of other hosts (a `maestro worker` has no API of its own).
engine::DeltaFn PublishToStreams(notify::Notifier* notifier) {
  return [notifier](const std::string& job_id, const Json& delta) {
    notifier->PublishDelta(job_id, StampDelta(delta, SystemClock::Default()->NowMs()));
  };
}

// `auth:` and `teams:` (api/access_config.h), the client secret possibly
// from MAESTRO_OIDC_CLIENT_SECRET.
Result<api::AccessSettings> AccessSettingsOf(const Config& cfg) {
  const char* secret = std::getenv("MAESTRO_OIDC_CLIENT_SECRET");
  return api::AccessSettingsFrom(cfg, secret ? secret : "");
}

// Audits a change of the config file since the last start (config.change:
// the old and new SHA-256 of its bytes), so who-changed-what shows the
// operator's edits beside the users' actions. The file's first start is a
// change from "".
void AuditConfigChange(Store& store, const std::string& config_path) {
  if (config_path.empty()) return;
  auto bytes = ReadFileToString(*Env::Default(), config_path);
  if (!bytes.ok()) return;
  const std::string now_sha = Sha256Hex(*bytes);
  AuditFilter f;
  f.action = "config.change";
  f.limit = 1;
  auto last = store.ListAudit(f);
  std::string before;
  if (last.ok() && !last->empty()) {
    Json d = Json::parse((*last)[0].detail, nullptr, /*allow_exceptions=*/false);
    if (d.is_object()) before = d.value("new_sha256", "");
  }
  if (before == now_sha) return;
  api::AuditLog(store, SystemClock::Default())
      .Record("system", "config.change", "", "",
              {{"path", config_path}, {"old_sha256", before}, {"new_sha256", now_sha}});
}

ApiOptions MakeApiOptions(const Config& cfg, Runtime& rt, const std::string& ui_dir) {
  SqlStore& store = *rt.store;
  ApiOptions ao;
  // Validated by Serve before the API is made.
  if (auto a = AccessSettingsOf(cfg); a.ok()) {
    ao.session_ttl_s = a->session_ttl_s;
    if (a->oidc) {
      ao.oidc = std::make_shared<identity::OidcClient>(*a->oidc);
      // Early and loud, but not fatal: the provider may start after maestro
      // (start in any order); a sign-in reads discovery again.
      if (Status st = ao.oidc->Discover(); !st.ok()) {
        spdlog::warn("auth.oidc: {} (a sign-in tries again)", st.message());
      }
    }
    ao.access = std::make_shared<const api::Access>(*std::move(a), &store);
  }
  ao.http.host = cfg.listen_host;
  ao.http.port = cfg.listen_port;
  ao.http.io_threads = cfg.http.io_threads;
  ao.http.handler_threads = cfg.http.handler_threads;
  ao.http.max_connections = static_cast<size_t>(cfg.http.max_connections);
  ao.http.max_streams_per_key = static_cast<size_t>(cfg.http.max_streams_per_token);
  ao.http.max_body_bytes = static_cast<size_t>(cfg.http.max_body_bytes);
  ao.http.header_timeout = std::chrono::milliseconds(cfg.http.header_timeout_ms);
  ao.http.body_timeout = std::chrono::milliseconds(cfg.http.body_timeout_ms);
  ao.http.idle_timeout = std::chrono::milliseconds(cfg.http.idle_timeout_ms);
  ao.http.write_timeout = std::chrono::milliseconds(cfg.http.write_timeout_ms);
  ao.admin_token = cfg.admin_token;
  ao.version = MAESTRO_VERSION;
  ao.schema_version = store.SchemaVersion().ok() ? *store.SchemaVersion() : 0;
  ao.backend = cfg.database.url.empty() ? "sqlite" : "postgres";
  ao.prices = budget::PricesFromConfig(cfg);
  // Validated by Serve before the API is made.
  if (auto b = budget::SettingsFromConfig(cfg); b.ok()) ao.budgets = *b;
  ao.workers = cfg.workers;
  ao.demo = DemoWanted(cfg);
  ao.model = cfg.llm.model;
  ao.ui_dir = ui_dir;
  ao.data_dir = cfg.data_dir;  // workspaces and tools.jsonl for the workspace routes
  ao.attachments = cfg.attachments;
  // Validated by Serve before the API is made.
  if (auto e = EgressPolicyFrom(cfg.egress, cfg.egress_where); e.ok()) {
    ao.egress = std::make_shared<const EgressPolicy>(*e);
  }
  // The pool and the browsers are made by StartWorkers, after the API is
  // bound but before it serves (ApiServer::Start), so a handler that runs
  // finds them; they live until the Runtime goes, after the API stopped.
  Runtime* runtime = &rt;
  ao.cancel_running = [runtime](const std::string& job_id) {
    if (runtime->pool) runtime->pool->CancelRunning(job_id);
  };
  ao.browsers = [runtime] { return runtime->engine.browsers.get(); };
  std::string data_dir = cfg.data_dir;
  ao.pieces_json = [data_dir] {
    engine::PieceCatalogOptions po;
    po.user_dirs = engine::DefaultUserPieceDirs(data_dir);
    return engine::PieceCatalogJson(engine::PieceCatalog::Load(po));
  };
  // What a task may name (pieces, spaces, profiles). The spaces are read
  // here from the config as the engine will register them; a bad entry is
  // reported by the engine setup (StartWorkers), which stops the start.
  tools::SpaceRegistry spaces;
  std::vector<std::string> created;
  (void)tools::RegisterConfiguredSpaces(*Env::Default(), cfg.spaces, &spaces, &created);
  ao.choices = MakeTaskChoices(cfg, spaces);
  return ao;
}

// The address is taken: say which setting chooses another.
int FailBind(const Config& cfg, const Status& st) {
  std::cerr << fmt::format(
      "maestro: {}\nmaestro: is another maestro serve running there? Stop it, or choose a "
      "free address with MAESTRO_LISTEN=HOST:PORT (config key `listen`; now {}:{}).\n",
      st.message(), cfg.listen_host, cfg.listen_port);
  return 1;
}

// The health address is taken (or malformed): say which setting chooses it.
int FailHealthBind(const std::string& address, const Status& st) {
  std::cerr << fmt::format(
      "maestro: {}\nmaestro: the worker's probes cannot listen on {}: choose a free address "
      "with --health-listen HOST:PORT (MAESTRO_HEALTH_LISTEN, config key `health_listen`).\n",
      st.message(), address);
  return 1;
}

// The probes of a worker (--health-listen), answering from before the
// store wait; null when none is configured.
Result<std::unique_ptr<api::HealthServer>> StartHealthServer(
    const std::string& address, std::shared_ptr<const api::StartupState> state,
    const api::ReadinessOptions& ro) {
  if (address.empty()) return std::unique_ptr<api::HealthServer>();
  std::string host;
  int port = 0;
  MAESTRO_RETURN_IF_ERROR(ParseListen(address, &host, &port));
  auto server = std::make_unique<api::HealthServer>(host, port, std::move(state), ro);
  auto bound = server->Start();
  if (!bound.ok()) return bound.status();
  spdlog::info("maestro worker: probes on http://{}:{}/api/ready and /api/live", host, *bound);
  return server;
}

// Stops the probe server before the store its readiness probe reads goes
// (declared after the Runtime, so destroyed before it).
struct StopBeforeStore {
  api::HealthServer* health;
  ~StopBeforeStore() {
    if (health) health->Stop();
  }
};

// Prints the admin token once, on its first creation (never logged).
Status EnsureAdmin(const Config& cfg, Store& store) {
  if (!cfg.admin_token.empty()) return Status::Ok();
  auto created = api::EnsureAdminToken(*Env::Default(), store, cfg.data_dir);
  if (!created.ok()) return created.status();
  if (created->has_value()) {
    std::cout << "maestro: admin token (also in " << cfg.data_dir
              << "/admin_token, mode 0600): " << **created << std::endl;
  }
  return Status::Ok();
}

}  // namespace

int Serve(const std::string& config_path, bool with_api, int workers_override,
          const std::string& health_listen_override) {
  auto cfg = LoadEffectiveConfig(config_path);
  if (!cfg.ok()) return Fail(cfg.status());
  if (workers_override >= 0) cfg->workers = workers_override;
  if (auto b = budget::SettingsFromConfig(*cfg); !b.ok()) return Fail(b.status());
  auto egress = EgressPolicyFrom(cfg->egress, cfg->egress_where);
  if (!egress.ok()) return Fail(egress.status());
  if (auto a = AccessSettingsOf(*cfg); !a.ok()) return Fail(a.status());
  if (Status st = InitLogging(cfg->log_level, cfg->log_format); !st.ok()) return Fail(st);
  // What /api/ready reports (api/readiness.h): the startup's waits, the
  // store's schema against this binary's, the worker pool.
  auto startup = std::make_shared<api::StartupState>();
  api::ReadinessOptions readiness;
  readiness.workers_configured = cfg->workers;
  readiness.latest_schema_version =
      cfg->database.url.empty() ? sqlite::LatestSchemaVersion() : postgres::LatestPgSchemaVersion();
  std::unique_ptr<api::HealthServer> health;
  if (!with_api) {
    const std::string address =
        health_listen_override.empty() ? cfg->health_listen : health_listen_override;
    auto started = StartHealthServer(address, startup, readiness);
    if (!started.ok()) return FailHealthBind(address, started.status());
    health = std::move(started).value();
  }
  StartupWaiting waiting;
  waiting.max_wait = std::chrono::milliseconds(cfg->startup_wait_ms);
  waiting.state = startup.get();
  auto rt = OpenRuntime(*cfg, with_api ? DataDirRole::kOwner : DataDirRole::kWorker, waiting);
  if (!rt.ok() && rt.status().code() == StatusCode::kCancelled) {
    spdlog::info("{}; stopped", rt.status().message());  // SIGTERM while waiting: a clean stop
    return 0;
  }
  if (!rt.ok()) return Fail(rt.status());
  StopBeforeStore stop_health{health.get()};
  startup->SetSchemaProbe([sql = rt->store.get()] { return sql->SchemaVersion(); });
  std::unique_ptr<ApiServer> api;
  std::unique_ptr<cli::DemoLlm> demo;
  std::shared_ptr<const push::VapidKey> push_key;
  std::unique_ptr<schedule::FileClock> drill_clock;  // outlives the scheduler
  std::unique_ptr<schedule::Scheduler> scheduler;
  const std::string ui_dir = with_api ? FindUiDir(*cfg) : "";
  if (with_api) {
    // Web Push: maestro's VAPID key, made on first start (push_dispatcher.h).
    if (cfg->push.enabled) {
      const std::string key_file =
          cfg->push.key_file.empty() ? cfg->data_dir + "/vapid_key.pem" : cfg->push.key_file;
      auto key = push::LoadOrCreateVapidKey(*Env::Default(), key_file);
      if (!key.ok()) return Fail(key.status());
      push_key = std::make_shared<const push::VapidKey>(std::move(key).value());
    }
    ApiOptions ao = MakeApiOptions(*cfg, *rt, ui_dir);
    ao.startup = startup;
    ao.latest_schema_version = readiness.latest_schema_version;
    ao.push_public_key = push_key ? push_key->PublicKeyB64() : "";
    ao.push_max_subscriptions = cfg->push.max_subscriptions_per_user;
    api = std::make_unique<ApiServer>(*rt->store, *rt->notifier, std::move(ao));
    if (auto bound = api->Bind(); !bound.ok()) return FailBind(*cfg, bound.status());
    if (Status st = EnsureAdmin(*cfg, *rt->store); !st.ok()) return Fail(st);
    AuditConfigChange(*rt->store, config_path);
    // Demo mode: no LLM server configured → the bundled scripted model.
    auto started = cli::MaybeStartDemo(*cfg);
    if (!started.ok()) return Fail(started.status());
    demo = std::move(started).value();
  }
  if (Status st = StartWorkers(*rt, *cfg, PublishToStreams(rt->notifier.get()),
                               /*git_spares=*/true, /*relay=*/true);
      !st.ok()) {
    return Fail(st);
  }
  startup->SetWorkersRunning(true);
  if (with_api) {
    if (!cfg->webhooks.empty()) {
      WebhookOptions wo;
      wo.hooks = cfg->webhooks;
      wo.egress = std::make_shared<const EgressPolicy>(*egress);
      rt->notifier->StartWebhooks(*rt->store, std::move(wo));
    }
    if (push_key) {
      PushOptions po;
      po.key = push_key;
      po.subject = cfg->push.subject;
      po.egress = std::make_shared<const EgressPolicy>(*egress);
      Store* store = rt->store.get();
      po.compose = [store](const Event& e) { return api::ComposePushNotice(*store, e); };
      rt->notifier->StartPush(*rt->store, std::move(po));
    }
    auto port = api->Start();
    if (!port.ok()) return Fail(port.status());
    // Due schedules become tasks here; any number of serves may run one
    // (the fire claim makes each fire once), `schedules.enabled: false`
    // leaves it to the others.
    if (cfg->schedules.enabled) {
      schedule::SchedulerOptions so;
      so.store = rt->store.get();
      if (!cfg->schedules.clock_file.empty()) {
        auto clock = schedule::FileClock::Open(*Env::Default(), cfg->schedules.clock_file);
        if (!clock.ok()) return Fail(clock.status());
        drill_clock = std::move(clock).value();
        so.clock = drill_clock.get();
        spdlog::warn("scheduler: time from {} (a drill clock, not the system clock)",
                     cfg->schedules.clock_file);
      }
      so.tick = std::chrono::milliseconds(cfg->schedules.tick_ms);
      so.on_time_ms = std::max<TimeMs>(60'000, 2 * cfg->schedules.tick_ms);
      // Validated above: a fire counts toward its owner's daily quota.
      if (auto b = budget::SettingsFromConfig(*cfg); b.ok()) so.quotas = b->quotas;
      scheduler = std::make_unique<schedule::Scheduler>(so);
      scheduler->Start();
    }
    spdlog::info("maestro serve: listening on http://{}:{} data_dir={} workers={} ui={}{}",
                 cfg->listen_host, *port, cfg->data_dir, cfg->workers,
                 ui_dir.empty() ? "(not built: run scripts/ui.sh)" : ui_dir,
                 demo ? " DEMO MODEL" : "");
  } else {
    spdlog::info("maestro worker: data_dir={} workers={}", cfg->data_dir, cfg->workers);
  }
  int sig = WaitForSignal();
  spdlog::info("received signal {}; stopping (grace {} ms)", sig, cfg->jobs.shutdown_grace_ms);
  startup->SetStopping();            // not ready while draining
  if (scheduler) scheduler->Stop();  // no new task while the rest stops
  if (api) api->Stop();
  rt->Stop();  // the webhook and push dispatchers first, then the workers
  startup->SetWorkersRunning(false);
  demo.reset();  // the demo model outlives the workers that call it
  spdlog::info("stopped");
  return 0;
}

}  // namespace maestro::cli
