// maestro — command-line entry point. Parses arguments and dispatches to
// src/cli (serve, run, the task client, the --db local commands); all
// behaviour lives there and in src/{core,store,worker,api}.
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>

#include "cli/backup.h"
#include "cli/client.h"
#include "cli/local_commands.h"
#include "cli/run.h"
#include "cli/runtime.h"
#include "cli/serve.h"
#include "cli/task_watch.h"
#include "core/config.h"
#include "engine/piece/piece_catalog.h"
#include "engine/piece/piece_commands.h"
#include "store/sqlite/migrations.h"

#ifndef MAESTRO_VERSION
#define MAESTRO_VERSION "0.0.0"
#endif

int main(int argc, char** argv) {
  using namespace maestro;
  using cli::Fail;
  using cli::LoadEffectiveConfig;
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
  const std::string version = std::string("maestro ") + MAESTRO_VERSION + " (schema " +
                              std::to_string(sqlite::LatestSchemaVersion()) + ")";
  app.set_version_flag("--version", version, "Print the version and exit");
  std::string config;
  app.add_option("--config", config, "YAML config file (default: ./maestro.yaml if present)");

  auto* serve = app.add_subcommand("serve", "Run the API server and worker threads");
  auto* worker = app.add_subcommand("worker", "Run worker threads only (shares the database)");
  // The settings come from the one table LoadConfig reads (core/config.h).
  for (auto* c : {serve, worker}) c->footer(SettingsHelp());
  int workers_flag = -1;
  for (auto* c : {serve, worker}) {
    c->add_option("--workers", workers_flag,
                  "Worker threads in this process (default: config `workers`; serve --workers 0 "
                  "is API only)")
        ->check(CLI::NonNegativeNumber);
  }

  std::string health_listen;
  worker->add_option("--health-listen", health_listen,
                     "HOST:PORT serving /api/live and /api/ready for probes, from before the "
                     "store wait (default: config `health_listen`; empty: none)");

  auto* run = app.add_subcommand("run", "Run one task in the foreground and print its result");
  std::string run_instruction;
  run->add_option("instruction", run_instruction, "What to do")->required();
  std::string run_piece = "chat";
  run->add_option("--piece", run_piece, "Piece to run")->capture_default_str();

  auto* task = app.add_subcommand(
      "task", "Create, inspect and steer tasks on a running server (see docs/cli.md)");
  task->require_subcommand(1);
  NewTask new_task;
  auto* task_create = task->add_subcommand("create", "Create a task and queue its first job");
  task_create->add_option("instruction", new_task.instruction, "What to do")->required();
  task_create->add_option("--piece", new_task.piece, "Piece to run")->capture_default_str();
  task_create->add_option("--title", new_task.title, "Title");
  task_create->add_option("--priority", new_task.priority, "Higher runs first among queued jobs")
      ->check(CLI::Range(kMinPriority, kMaxPriority));
  // The task's budget (docs/api.md "Budgets"); the server validates it.
  std::optional<int64_t> max_tokens, max_llm_calls;
  std::optional<double> max_cost, max_wall_s;
  task_create->add_option("--max-tokens", max_tokens, "Budget: tokens (prompt + completion)");
  task_create->add_option("--max-cost", max_cost, "Budget: USD, by the price table");
  task_create->add_option("--max-llm-calls", max_llm_calls, "Budget: LLM calls");
  task_create->add_option("--max-wall-s", max_wall_s, "Budget: seconds since the task started");
  std::string list_status;
  auto* task_list = task->add_subcommand("list", "List tasks, newest first");
  task_list->add_option("--status", list_status, "Only tasks with this status");
  std::string task_id;
  auto* task_show = task->add_subcommand("show", "Show a task, its jobs and what it waits for");
  task_show->add_option("id", task_id, "Task id")->required();
  auto* task_cancel = task->add_subcommand("cancel", "Cancel a task's jobs (and their children)");
  task_cancel->add_option("id", task_id, "Task id")->required();
  // create/list/show/cancel can also work on a data dir directly (no server).
  std::string db_dir;
  for (auto* c : {task_create, task_list, task_show, task_cancel}) {
    c->add_option("--db", db_dir,
                  "Work on this data dir's database directly instead of a server (JSON output)");
  }

  std::string server_flag, token_flag, text, piece_name, note, kind = "tool", request_id, scope;
  bool json = false;
  auto remote_flags = [&](CLI::App* c) {
    c->add_option(
        "--server", server_flag,
        std::string("Server URL (default $MAESTRO_SERVER, else ") + cli::kDefaultServer + ")");
    c->add_option("--token", token_flag,
                  "Bearer token (default $MAESTRO_TOKEN, else the data dir's admin_token file)");
    c->add_flag("--json", json, "Print the server's JSON unchanged");
  };
  for (auto* c : {task_cancel, task_create, task_list, task_show}) remote_flags(c);
  auto* task_comment = task->add_subcommand("comment", "Post a comment (answers a question)");
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
  cli::WatchOptions watch;
  bool no_follow = false;
  auto* task_watch = task->add_subcommand(
      "watch", "Follow a task across its jobs until it ends, with the commands to answer");
  task_watch->add_option("id", task_id, "Task id")->required();
  task_watch->add_flag("--no-follow", no_follow, "Print what happened so far and exit");
  task_watch->add_flag("--until-wait", watch.until_wait,
                       "Exit (code 0) at the first question or request, after its hints");
  remote_flags(task_watch);

  auto* piece = app.add_subcommand("piece", "Work with pieces");
  piece->require_subcommand(1);
  std::string piece_file;
  auto* piece_lint = piece->add_subcommand("lint", "Check a piece YAML file");
  piece_lint->add_option("file", piece_file, "Piece file")->required();
  std::vector<std::string> piece_dirs;
  auto* piece_list = piece->add_subcommand("list", "List builtin and user pieces");
  piece_list->add_option("--dir", piece_dirs, "Extra piece directory (repeatable)");

  // The SQLite database to a file and back (cli/backup.h).
  std::string backup_path;
  bool force_replace = false;
  auto* backup = app.add_subcommand(
      "backup", "Online backup of the SQLite database to a file (serve may keep running)");
  backup->add_option("OUT", backup_path, "File to write (temp file beside it, then renamed)")
      ->required();
  auto* restore = app.add_subcommand(
      "restore", "Replace the data dir's SQLite database with a backup (stop maestro first)");
  restore->add_option("FILE", backup_path, "A file written by `maestro backup`")->required();
  backup->add_flag("--force", force_replace, "Replace OUT if it exists");
  restore->add_flag("--force", force_replace, "Replace a database that holds tasks");

  app.add_subcommand("version", "Print the version");

  CLI11_PARSE(app, argc, argv);

  if (*serve) return cli::Serve(config, /*with_api=*/true, workers_flag);
  if (*worker) return cli::Serve(config, /*with_api=*/false, workers_flag, health_listen);
  unblock();
  if (*run) return cli::RunInForeground(config, run_piece, run_instruction);
  if (*backup) return cli::Backup(config, backup_path, force_replace);
  if (*restore) return cli::Restore(config, backup_path, force_replace);
  // --db: the local database, no server.
  if (!db_dir.empty()) {
    if (*task_create) return cli::LocalTaskCreate(config, db_dir, new_task);
    if (*task_list) return cli::LocalTaskList(config, db_dir, list_status);
    if (*task_show) return cli::LocalTaskShow(config, db_dir, task_id);
    if (*task_cancel) return cli::LocalTaskCancel(config, db_dir, task_id);
  }
  if (*task) {
    auto remote = cli::ResolveClientOptions(server_flag, token_flag, config);
    if (!remote.ok()) return Fail(remote.status());
    remote->json = json;
    const cli::ClientOptions& o = *remote;
    if (*task_create) {
      Json budget = Json::object();
      if (max_tokens) budget["max_tokens"] = *max_tokens;
      if (max_cost) budget["max_cost"] = *max_cost;
      if (max_llm_calls) budget["max_llm_calls"] = *max_llm_calls;
      if (max_wall_s) budget["max_wall_s"] = *max_wall_s;
      return cli::TaskCreateRemote(o, new_task.instruction, new_task.piece, new_task.title,
                                   new_task.priority, budget);
    }
    if (*task_list) return cli::TaskListRemote(o, list_status);
    if (*task_show) return cli::TaskShowRemote(o, task_id);
    if (*task_cancel) return cli::TaskCancelRemote(o, task_id);
    if (*task_comment) return cli::TaskComment(o, task_id, text);
    if (*task_continue) return cli::TaskContinue(o, task_id, piece_name, note);
    if (*task_approve) return cli::TaskDecide(o, task_id, kind, request_id, "approve", scope);
    if (*task_deny) return cli::TaskDecide(o, task_id, kind, request_id, "deny", scope);
    if (*task_watch) {
      watch.follow = !no_follow;
      return cli::TaskWatch(o, task_id, watch, std::cout);
    }
  }
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
    std::cout << version << "\n";
    return 0;
  }
  return 0;
}
