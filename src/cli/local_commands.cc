#include "cli/local_commands.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <iostream>

#include "api/http_util.h"
#include "api/task_service.h"
#include "cli/engine_setup.h"
#include "cli/runtime.h"

namespace maestro::cli {
namespace {

Result<Config> LocalConfig(const std::string& config_path, const std::string& db_dir) {
  auto cfg = LoadEffectiveConfig(config_path);
  if (!cfg.ok()) return cfg;
  cfg->data_dir = db_dir;
  return cfg;
}

// Opens the store for a one-shot command (no workers in this process).
Result<std::unique_ptr<SqlStore>> OpenForCommand(const Config& cfg) {
  spdlog::set_level(spdlog::level::warn);
  return OpenStore(cfg, nullptr);
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

}  // namespace

int LocalTaskCreate(const std::string& config_path, const std::string& db_dir, const NewTask& in) {
  auto cfg = LocalConfig(config_path, db_dir);
  if (!cfg.ok()) return Fail(cfg.status());
  auto task_options = LocalTaskServiceOptions(*cfg);
  if (!task_options.ok()) return Fail(task_options.status());
  // The API's checks: an unknown piece is refused before the store is even
  // opened; Create runs them all (and the quota) before the task is written.
  NewTask checked = in;
  if (Status st = api::TaskService::CheckChoices(task_options->choices, &checked); !st.ok()) {
    return Fail(st);
  }
  auto store = OpenForCommand(*cfg);
  if (!store.ok()) return Fail(store.status());
  api::TaskService tasks(**store, *std::move(task_options));
  auto created = tasks.Create(in, /*asked=*/{}, /*user=*/"", /*files=*/{});
  if (!created.ok()) return Fail(created.status());
  PrintJson({{"task_id", created->task.id}, {"job", JobSummary(created->job)}});
  return 0;
}

int LocalTaskList(const std::string& config_path, const std::string& db_dir,
                  const std::string& status) {
  auto cfg = LocalConfig(config_path, db_dir);
  if (!cfg.ok()) return Fail(cfg.status());
  auto store = OpenForCommand(*cfg);
  if (!store.ok()) return Fail(store.status());
  auto filter = api::ParseStatusFilter(status);
  if (!filter.ok()) return Fail(filter.status());
  auto tasks = (*store)->ListTasks(*filter, 100);
  if (!tasks.ok()) return Fail(tasks.status());
  for (const auto& t : *tasks) {
    std::cout << fmt::format("{}  {:<16} {:<8} {}\n", t.id, JobStatusName(t.status), t.piece,
                             t.title.empty() ? t.instruction.substr(0, 60) : t.title);
  }
  return 0;
}

int LocalTaskShow(const std::string& config_path, const std::string& db_dir,
                  const std::string& task_id) {
  auto cfg = LocalConfig(config_path, db_dir);
  if (!cfg.ok()) return Fail(cfg.status());
  auto store = OpenForCommand(*cfg);
  if (!store.ok()) return Fail(store.status());
  auto task = (*store)->GetTask(task_id);
  if (!task.ok()) return Fail(task.status());
  auto jobs = (*store)->ListJobs(task_id);
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

int LocalTaskCancel(const std::string& config_path, const std::string& db_dir,
                    const std::string& task_id) {
  auto cfg = LocalConfig(config_path, db_dir);
  if (!cfg.ok()) return Fail(cfg.status());
  auto store = OpenForCommand(*cfg);
  if (!store.ok()) return Fail(store.status());
  auto jobs = (*store)->ListJobs(task_id);
  if (!jobs.ok()) return Fail(jobs.status());
  if (jobs->empty()) return Fail(NotFound("task " + task_id + " has no jobs"));
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

}  // namespace maestro::cli
