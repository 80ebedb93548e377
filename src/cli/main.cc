// maestro — command-line entry point. Parses arguments and wires the
// libraries together; all behaviour lives in src/{core,store,worker,api}.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>

#include "cli/client.h"
#include "cli/run.h"
#include "cli/runtime.h"
#include "cli/serve.h"
#include "core/config.h"
#include "engine/piece_catalog.h"
#include "engine/piece_commands.h"
#include "store/sqlite/migrations.h"
#include "store/sqlite/sqlite_store.h"

#ifndef MAESTRO_VERSION
#define MAESTRO_VERSION "0.0.0"
#endif

namespace maestro {
namespace {

using cli::Fail;
using cli::LoadEffectiveConfig;

// Opens the store for a one-shot command (no workers in this process).
Result<std::unique_ptr<SqlStore>> OpenForCommand(const std::string& config_path) {
  auto cfg = LoadEffectiveConfig(config_path);
  if (!cfg.ok()) return cfg.status();
  spdlog::set_level(spdlog::level::warn);
  return cli::OpenStore(*cfg, nullptr);
}

void PrintJson(const Json& j) { std::cout << j.dump(2) << "\n"; }

Json JobSummary(const Job& j) {
  return {{"id", j.id},
          {"status", JobStatusName(j.status)},
          {"attempt", j.attempt},
          {"wait_reason", j.wait_reason},
          {"error", j.error_message},
          {"parent_job_id", j.parent_job_id}};
}

int TaskCreate(const std::string& cfg, const NewTask& in) {
  auto config = LoadEffectiveConfig(cfg);
  if (!config.ok()) return Fail(config.status());
  // The API's piece check, before the task is written.
  if (Status st = CheckPieceName(*config, in.piece); !st.ok()) return Fail(st);
  auto store = OpenForCommand(cfg);
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
  int workers_flag = -1;
  for (auto* c : {serve, worker}) {
    c->add_option("--workers", workers_flag,
                  "Worker threads in this process (default: config `workers`; serve --workers 0 "
                  "is API only)")
        ->check(CLI::NonNegativeNumber);
  }

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
  task_create->add_option("--priority", new_task.priority, "Higher runs first among queued jobs")
      ->check(CLI::Range(kMinPriority, kMaxPriority));
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
    c->add_option("--server", server_flag,
                  "Server URL (default $MAESTRO_SERVER or "
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

  if (*serve) return cli::Serve(config, /*with_api=*/true, workers_flag);
  if (*worker) return cli::Serve(config, /*with_api=*/false, workers_flag);
  unblock();
  if (*run) return cli::RunInForeground(config, run_piece, run_instruction);
  if (!server_flag.empty()) remote.server = server_flag;
  if (!token_flag.empty()) remote.token = token_flag;
  // create/list/show/cancel go through the server when one is named, else
  // straight to the local store.
  bool via_server = !server_flag.empty() || std::getenv("MAESTRO_SERVER") != nullptr;
  if (*task_create) {
    return via_server ? cli::TaskCreateRemote(remote, new_task.instruction, new_task.piece,
                                              new_task.title, new_task.priority)
                      : TaskCreate(config, new_task);
  }
  if (*task_list) {
    return via_server ? cli::TaskListRemote(remote, list_status) : TaskList(config, list_status);
  }
  if (*task_show)
    return via_server ? cli::TaskShowRemote(remote, task_id) : TaskShow(config, task_id);
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
    std::cout << "maestro " << MAESTRO_VERSION << " (schema " << sqlite::LatestSchemaVersion()
              << ")\n";
    return 0;
  }
  return 0;
}
