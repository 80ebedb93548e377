// maestro — command-line entry point. Parses arguments and wires the
// libraries together; all behaviour lives in src/{core,store,worker,api}.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "api/api_server.h"
#include "context/context_startup.h"
#include "cli/client.h"
#include "cli/demo_mode.h"
#include "core/config.h"
#include "core/log.h"
#include "engine/piece_catalog.h"
#include "engine/piece_commands.h"
#include "engine_setup.h"
#include "notify/webhooks.h"
#include "store/sqlite/migrations.h"
#include "store/sqlite/sqlite_store.h"
#include "worker/lease_sweeper.h"
#include "worker/worker_pool.h"

#ifndef MAESTRO_VERSION
#define MAESTRO_VERSION "0.0.0"
#endif

namespace maestro {
namespace {

int Fail(const Status& st) {
  // Input errors already say where (file:line:col or the variable); others
  // keep their code for bug reports.
  std::cerr << "maestro: "
            << (st.code() == StatusCode::kInvalidArgument ? st.message() : st.ToString()) << "\n";
  return st.code() == StatusCode::kInvalidArgument ? 2 : 1;
}

std::string Hostname() {
  char buf[256] = {0};
  gethostname(buf, sizeof(buf) - 1);
  return buf;
}

// Loads the config: --config, else ./maestro.yaml when present.
Result<Config> LoadEffectiveConfig(const std::string& flag) {
  std::optional<std::string> path;
  if (!flag.empty()) path = flag;
  else if (std::filesystem::exists("maestro.yaml")) path = "maestro.yaml";
  auto cfg = LoadConfig(path, MaestroEnvFromProcess());
  if (!cfg.ok()) return cfg;
  for (const auto& w : cfg->warnings) std::cerr << "maestro: warning: " << w << "\n";
  return cfg;
}

// The pieces a long-running process needs: store, worker pool, sweeper.
struct Runtime {
  std::unique_ptr<SqliteStore> store;
  EngineSetup engine;
  std::unique_ptr<WorkerPool> pool;
  std::unique_ptr<LeaseSweeper> sweeper;
  std::unique_ptr<context::ContextJanitor> janitor;
};

Result<std::unique_ptr<SqliteStore>> OpenStore(const Config& cfg, std::function<void()> wake,
                                               std::function<void()> on_commit = nullptr) {
  std::error_code ec;
  std::filesystem::create_directories(cfg.data_dir, ec);
  if (ec) return InvalidArgument("cannot create data_dir " + cfg.data_dir + ": " + ec.message());
  StoreOptions so;
  so.default_max_attempts = cfg.jobs.retry.max_attempts;
  so.on_job_available = std::move(wake);
  so.on_commit = std::move(on_commit);
  return SqliteStore::Open(cfg.data_dir + "/maestro.db", so);
}

// Objects created after the store that its hooks must reach.
struct Hooks {
  std::atomic<WorkerPool*> pool{nullptr};
  std::atomic<api::EventSignal*> signal{nullptr};
  std::atomic<WebhookDispatcher*> webhooks{nullptr};
  std::atomic<JobStreamHub*> streams{nullptr};  // the API's live job streams
};

Result<Runtime> StartRuntime(const Config& cfg, std::shared_ptr<Hooks> hooks,
                             engine::DeltaFn on_delta = nullptr) {
  Runtime rt;
  auto store = OpenStore(
      cfg,
      [hooks] {
        if (WorkerPool* p = hooks->pool) p->Notify();
      },
      [hooks] {
        if (api::EventSignal* s = hooks->signal) s->Notify();
        if (WebhookDispatcher* w = hooks->webhooks) w->Notify();
      });
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
  auto engine = MakeEngineSetup(cfg, *rt.store, std::move(on_delta));
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
  hooks->pool = rt.pool.get();
  rt.sweeper = std::make_unique<LeaseSweeper>(*rt.store, RetryPolicy(cfg.jobs.retry),
                                              cfg.jobs.sweep_interval_ms);
  rt.pool->Start();
  rt.sweeper->Start();
  return rt;
}

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

int Serve(const std::string& config_path, bool with_api) {
  auto cfg = LoadEffectiveConfig(config_path);
  if (!cfg.ok()) return Fail(cfg.status());
  if (Status st = InitLogging(cfg->log_level, cfg->log_format); !st.ok()) return Fail(st);
  // Demo mode: no LLM server configured → the bundled scripted model.
  std::unique_ptr<cli::DemoLlm> demo;
  if (with_api) {
    auto started = cli::MaybeStartDemo(*cfg);
    if (!started.ok()) return Fail(started.status());
    demo = std::move(started).value();
  }
  auto hooks = std::make_shared<Hooks>();
  // Engine deltas (text, tool calls, retries...) go to the API's live job
  // stream once the API exists; `maestro worker` has none and drops them.
  // Each delta is stamped with its wall-clock time (`at`, ms) so the UI can
  // show tool durations even for deltas replayed after a reload.
  auto rt = StartRuntime(*cfg, hooks, [hooks](const std::string& job_id, const Json& delta) {
    JobStreamHub* h = hooks->streams;
    if (!h) return;
    Json stamped = delta;
    if (stamped.is_object()) {
      stamped["at"] = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
    }
    h->Publish(job_id, stamped);
  });
  if (!rt.ok()) return Fail(rt.status());
  std::unique_ptr<ApiServer> api;
  std::unique_ptr<WebhookDispatcher> webhooks;
  if (with_api) {
    if (cfg->admin_token.empty()) {
      auto created = api::EnsureAdminToken(*rt->store, cfg->data_dir);
      if (!created.ok()) return Fail(created.status());
      // Printed once, on stdout only (never logged): later starts reuse it.
      if (created->has_value()) {
        std::cout << "maestro: admin token (also in " << cfg->data_dir
                  << "/admin_token, mode 0600): " << **created << std::endl;
      }
    }
    if (!cfg->webhooks.empty()) {
      WebhookOptions wo;
      wo.hooks = cfg->webhooks;
      webhooks = std::make_unique<WebhookDispatcher>(*rt->store, wo);
      hooks->webhooks = webhooks.get();
      webhooks->Start();
    }
    ApiOptions ao;
    ao.host = cfg->listen_host;
    ao.port = cfg->listen_port;
    ao.admin_token = cfg->admin_token;
    ao.version = MAESTRO_VERSION;
    ao.schema_version = rt->store->SchemaVersion().ok() ? *rt->store->SchemaVersion() : 0;
    ao.workers = cfg->workers;
    ao.demo = demo != nullptr;
    ao.model = cfg->llm.model;
    ao.ui_dir = cli::FindUiDir(*cfg);
    WorkerPool* pool = rt->pool.get();
    ao.cancel_running = [pool](const std::string& job_id) { pool->CancelRunning(job_id); };
    std::string data_dir = cfg->data_dir;
    ao.pieces_json = [data_dir] {
      engine::PieceCatalogOptions po;
      po.user_dirs = engine::DefaultUserPieceDirs(data_dir);
      return engine::PieceCatalogJson(engine::PieceCatalog::Load(po));
    };
    ao.choices = MakeTaskChoices(*cfg, *rt->engine.spaces);
    api = std::make_unique<ApiServer>(*rt->store, ao);
    hooks->signal = &api->signal();
    hooks->streams = &api->job_streams();
    auto port = api->Start();
    if (!port.ok()) return Fail(port.status());
    spdlog::info("maestro serve: listening on http://{}:{} data_dir={} workers={} ui={}{}",
                 cfg->listen_host, *port, cfg->data_dir, cfg->workers,
                 ao.ui_dir.empty() ? "(not built: run scripts/ui.sh)" : ao.ui_dir,
                 demo ? " DEMO MODEL" : "");
  } else {
    spdlog::info("maestro worker: data_dir={} workers={}", cfg->data_dir, cfg->workers);
  }
  int sig = WaitForSignal();
  spdlog::info("received signal {}; stopping (grace {} ms)", sig, cfg->jobs.shutdown_grace_ms);
  if (api) api->Stop();
  hooks->signal = nullptr;
  hooks->webhooks = nullptr;
  hooks->streams = nullptr;
  if (webhooks) webhooks->Stop();
  rt->pool->Shutdown();
  rt->sweeper->Stop();
  rt->janitor->Stop();
  demo.reset();  // the demo model outlives the workers that call it
  spdlog::info("stopped");
  return 0;
}

// Opens the store for a one-shot command (no workers in this process).
Result<std::unique_ptr<SqliteStore>> OpenForCommand(const std::string& config_path) {
  auto cfg = LoadEffectiveConfig(config_path);
  if (!cfg.ok()) return cfg.status();
  spdlog::set_level(spdlog::level::warn);
  return OpenStore(*cfg, nullptr);
}

void PrintJson(const Json& j) { std::cout << j.dump(2) << "\n"; }

Json JobSummary(const Job& j) {
  return {{"id", j.id},         {"status", JobStatusName(j.status)},
          {"attempt", j.attempt}, {"wait_reason", j.wait_reason},
          {"error", j.error_message}, {"parent_job_id", j.parent_job_id}};
}

int TaskCreate(const std::string& cfg, const NewTask& in) {
  auto config = LoadEffectiveConfig(cfg);
  if (!config.ok()) return Fail(config.status());
  if (Status st = CheckPieceName(*config, in.piece); !st.ok()) return Fail(st);
  spdlog::set_level(spdlog::level::warn);
  auto store = OpenStore(*config, nullptr);
  if (!store.ok()) return Fail(store.status());
  auto created = (*store)->CreateTask(in);
  if (!created.ok()) return Fail(created.status());
  PrintJson({{"task_id", created->task.id}, {"job", JobSummary(created->job)}});
  return 0;
}

int TaskList(const std::string& cfg, const std::string& status) {
  auto store = OpenForCommand(cfg);
  if (!store.ok()) return Fail(store.status());
  auto tasks = (*store)->ListTasks(status, 100);
  if (!tasks.ok()) return Fail(tasks.status());
  for (const auto& t : *tasks) {
    std::cout << fmt::format("{}  {:<16} {:<8} {}\n", t.id, t.status, t.piece,
                             t.title.empty() ? t.instruction.substr(0, 60) : t.title);
  }
  return 0;
}

int TaskShow(const std::string& cfg, const std::string& id) {
  auto store = OpenForCommand(cfg);
  if (!store.ok()) return Fail(store.status());
  auto task = (*store)->GetTask(id);
  if (!task.ok()) return Fail(task.status());
  auto jobs = (*store)->ListJobs(id);
  if (!jobs.ok()) return Fail(jobs.status());
  Json js = Json::array();
  for (const auto& j : *jobs) js.push_back(JobSummary(j));
  PrintJson({{"id", task->id},
             {"status", task->status},
             {"piece", task->piece},
             {"instruction", task->instruction},
             {"error_message", task->error_message},
             {"jobs", js}});
  return 0;
}

int TaskCancel(const std::string& cfg, const std::string& id) {
  auto store = OpenForCommand(cfg);
  if (!store.ok()) return Fail(store.status());
  auto jobs = (*store)->ListJobs(id);
  if (!jobs.ok()) return Fail(jobs.status());
  if (jobs->empty()) return Fail(NotFound("task " + id + " has no jobs"));
  CancelReport total;
  for (const auto& j : *jobs) {
    auto r = (*store)->RequestCancel(j.id);
    if (!r.ok()) return Fail(r.status());
    total.cancelled += r->cancelled;
    total.flagged += r->flagged;
  }
  PrintJson({{"cancelled", total.cancelled}, {"stopping", total.flagged}});
  return 0;
}

// `maestro run`: one task, one in-process worker, live text on stdout.
int RunInForeground(const std::string& config_path, const std::string& piece,
                    const std::string& instruction) {
  auto cfg = LoadEffectiveConfig(config_path);
  if (!cfg.ok()) return Fail(cfg.status());
  if (cfg->llm.base_url.empty()) {
    return Fail(InvalidArgument("maestro run needs an LLM server: set MAESTRO_LLM_BASE_URL"));
  }
  if (Status st = InitLogging("warn", cfg->log_format); !st.ok()) return Fail(st);
  // Before anything starts: an unknown piece writes no task.
  if (Status st = CheckPieceName(*cfg, piece); !st.ok()) return Fail(st);
  cfg->workers = 1;
  auto on_delta = [](const std::string&, const Json& d) {
    const std::string type = d.value("type", "");
    if (type == "text") std::cout << d.value("text", "") << std::flush;
    if (type == "movement") std::cerr << "\n[movement " << d.value("movement", "") << "]\n";
    if (type == "tool_result") std::cerr << "\n[" << d.value("name", "") << "]\n";
  };
  auto hooks = std::make_shared<Hooks>();
  auto rt = StartRuntime(*cfg, hooks, on_delta);
  if (!rt.ok()) return Fail(rt.status());
  NewTask t;
  t.instruction = instruction;
  t.piece = piece;
  t.title = instruction.substr(0, 60);
  auto created = rt->store->CreateTask(t);
  if (!created.ok()) return Fail(created.status());
  rt->pool->Notify();
  Job job = created->job;
  while (job.status == JobStatus::kQueued || job.status == JobStatus::kRunning ||
         job.status == JobStatus::kRetry) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto j = rt->store->GetJob(job.id);
    if (!j.ok()) return Fail(j.status());
    job = *j;
  }
  rt->pool->Shutdown();
  rt->sweeper->Stop();
  std::cout << "\n";
  if (job.status == JobStatus::kSucceeded) {
    std::cout << job.result << "\n";
    return 0;
  }
  auto comments = rt->store->ListComments(job.task_id);
  std::string last = comments.ok() && !comments->empty() ? comments->back().body : "";
  std::cerr << fmt::format("maestro: task {} job {} ended {}{}{}\n", job.task_id, job.id,
                           JobStatusName(job.status),
                           job.error_message.empty() ? "" : ": " + job.error_message,
                           last.empty() ? "" : "\n" + last);
  return job.status == JobStatus::kWaitingHuman ? 4 : 1;
}

}  // namespace
}  // namespace maestro

int main(int argc, char** argv) {
  using namespace maestro;
  // Block the stop signals in every thread; serve/worker collect them with sigwait.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  // Restore default handling for one-shot commands so Ctrl-C works.
  auto unblock = [&] { pthread_sigmask(SIG_UNBLOCK, &set, nullptr); };

  CLI::App app{"maestro — a self-hosted server that executes tasks with LLM agents"};
  app.require_subcommand(1);
  std::string config;
  app.add_option("--config", config, "YAML config file (default: ./maestro.yaml if present)");

  auto* serve = app.add_subcommand("serve", "Run the API server and worker threads");
  auto* worker = app.add_subcommand("worker", "Run worker threads only (shares the database)");

  auto* run = app.add_subcommand("run", "Run one task in the foreground and print its result");
  std::string run_instruction;
  run->add_option("instruction", run_instruction, "What to do")->required();
  std::string run_piece = "chat";
  run->add_option("--piece", run_piece, "Piece to run")->capture_default_str();

  auto* task = app.add_subcommand("task", "Create and inspect tasks");
  task->require_subcommand(1);
  NewTask new_task;
  auto* task_create = task->add_subcommand("create", "Create a task and queue its first job");
  task_create->add_option("instruction", new_task.instruction, "What to do")->required();
  task_create->add_option("--piece", new_task.piece, "Piece to run")->capture_default_str();
  task_create->add_option("--title", new_task.title, "Title");
  std::string list_status;
  auto* task_list = task->add_subcommand("list", "List tasks, newest first");
  task_list->add_option("--status", list_status, "Only tasks with this status");
  std::string task_id;
  auto* task_show = task->add_subcommand("show", "Show a task and its jobs");
  task_show->add_option("id", task_id, "Task id")->required();
  auto* task_cancel = task->add_subcommand("cancel", "Cancel a task's jobs (and their children)");
  task_cancel->add_option("id", task_id, "Task id")->required();

  // Client commands against a running server (src/cli/client.cc).
  cli::ClientOptions remote;
  if (const char* s = std::getenv("MAESTRO_SERVER")) remote.server = s;
  if (const char* t = std::getenv("MAESTRO_TOKEN")) remote.token = t;
  std::string server_flag, token_flag, text, piece_name, note, kind = "tool", request_id, scope;
  auto remote_flags = [&](CLI::App* c) {
    c->add_option("--server", server_flag, "Server URL (default $MAESTRO_SERVER or "
                                           "http://127.0.0.1:8080)");
    c->add_option("--token", token_flag, "Bearer token (default $MAESTRO_TOKEN)");
  };
  for (auto* c : {task_cancel, task_create, task_list, task_show}) remote_flags(c);
  auto* task_comment = task->add_subcommand("comment", "Post a comment (the write gate)");
  task_comment->add_option("id", task_id, "Task id")->required();
  task_comment->add_option("body", text, "Comment text")->required();
  remote_flags(task_comment);
  auto* task_continue = task->add_subcommand("continue", "Continue a finished task");
  task_continue->add_option("id", task_id, "Task id")->required();
  task_continue->add_option("--piece", piece_name, "Piece for the new job");
  task_continue->add_option("--note", note, "Handoff note");
  remote_flags(task_continue);
  auto* task_approve = task->add_subcommand("approve", "Approve a pending request");
  auto* task_deny = task->add_subcommand("deny", "Deny a pending request");
  for (auto* c : {task_approve, task_deny}) {
    c->add_option("id", task_id, "Task id")->required();
    c->add_option("request_id", request_id, "Request id")->required();
    c->add_option("--kind", kind, "tool | package | spawn")->capture_default_str();
    c->add_option("--scope", scope, "Grant scope: once | task");
    remote_flags(c);
  }
  bool no_follow = false;
  auto* task_watch = task->add_subcommand("watch", "Print the task's events as they happen");
  task_watch->add_option("id", task_id, "Task id")->required();
  task_watch->add_flag("--no-follow", no_follow, "Print the backlog and exit");
  remote_flags(task_watch);

  auto* piece = app.add_subcommand("piece", "Work with pieces");
  piece->require_subcommand(1);
  std::string piece_file;
  auto* piece_lint = piece->add_subcommand("lint", "Check a piece YAML file");
  piece_lint->add_option("file", piece_file, "Piece file")->required();
  std::vector<std::string> piece_dirs;
  auto* piece_list = piece->add_subcommand("list", "List builtin and user pieces");
  piece_list->add_option("--dir", piece_dirs, "Extra piece directory (repeatable)");

  app.add_subcommand("version", "Print the version");

  CLI11_PARSE(app, argc, argv);

  if (*serve) return Serve(config, /*with_api=*/true);
  if (*worker) return Serve(config, /*with_api=*/false);
  unblock();
  if (*run) return RunInForeground(config, run_piece, run_instruction);
  if (!server_flag.empty()) remote.server = server_flag;
  if (!token_flag.empty()) remote.token = token_flag;
  // create/list/show/cancel go through the server when one is named, else
  // straight to the local store.
  bool via_server = !server_flag.empty() || std::getenv("MAESTRO_SERVER") != nullptr;
  if (*task_create) {
    return via_server ? cli::TaskCreateRemote(remote, new_task.instruction, new_task.piece,
                                              new_task.title)
                      : TaskCreate(config, new_task);
  }
  if (*task_list) {
    return via_server ? cli::TaskListRemote(remote, list_status) : TaskList(config, list_status);
  }
  if (*task_show) return via_server ? cli::TaskShowRemote(remote, task_id) : TaskShow(config, task_id);
  if (*task_cancel) {
    return via_server ? cli::TaskCancelRemote(remote, task_id) : TaskCancel(config, task_id);
  }
  if (*task_comment) return cli::TaskComment(remote, task_id, text);
  if (*task_continue) return cli::TaskContinue(remote, task_id, piece_name, note);
  if (*task_approve) return cli::TaskDecide(remote, task_id, kind, request_id, "approve", scope);
  if (*task_deny) return cli::TaskDecide(remote, task_id, kind, request_id, "deny", scope);
  if (*task_watch) return cli::TaskWatch(remote, task_id, !no_follow, std::cout);
  if (*piece_lint) return engine::RunPieceLint(piece_file, std::cout, std::cerr);
  if (*piece_list) {
    auto cfg = LoadEffectiveConfig(config);
    if (!cfg.ok()) return Fail(cfg.status());
    engine::PieceCatalogOptions po;
    po.user_dirs = engine::DefaultUserPieceDirs(cfg->data_dir);
    po.user_dirs.insert(po.user_dirs.end(), piece_dirs.begin(), piece_dirs.end());
    return engine::RunPieceList(po, std::cout, std::cerr);
  }
  if (app.got_subcommand("version")) {
    std::cout << "maestro " << MAESTRO_VERSION << " (schema "
              << sqlite::LatestSchemaVersion() << ")\n";
    return 0;
  }
  return 0;
}
