#include "context/context_startup.h"

#include <spdlog/spdlog.h>

#include "context/context_dirs.h"

namespace maestro::context {

Result<ContextConfig> ContextConfigFromConfig(const Config& cfg) {
  ContextConfig base;
  base.context_length = cfg.llm.context_length;
  auto parsed = ParseContextConfig(cfg.context_storage, base);
  if (!parsed.ok()) {
    std::string where =
        cfg.context_storage_where.empty() ? "context_storage" : cfg.context_storage_where;
    return InvalidArgument(where + ": context_storage: " + parsed.status().message(),
                           "context_storage");
  }
  return parsed;
}

Status ReconcileContextsAtStart(const std::string& data_dir, Store& store, Env* env) {
  ContextDirs dirs(data_dir, env);
  MAESTRO_RETURN_IF_ERROR(dirs.Init());
  auto report = dirs.Reconcile(store);
  if (!report.ok()) return report.status();
  for (const auto& [task, place] : report->moved) {
    spdlog::warn("contexts: moved task {} to {}", task, PlacementName(place));
  }
  for (const auto& task : report->missing) {
    spdlog::warn("contexts: task {} has no context directory", task);
  }
  for (const auto& dir : report->orphans) {
    spdlog::warn("contexts: directory {} belongs to no task in the database", dir);
  }
  return Status::Ok();
}

ContextJanitor::ContextJanitor(std::string data_dir, Store& store, int cleanup_days,
                               int64_t interval_ms, Clock* clock, Env* env)
    : data_dir_(std::move(data_dir)),
      store_(store),
      cleanup_days_(cleanup_days),
      interval_ms_(interval_ms),
      clock_(clock),
      env_(env) {}

ContextJanitor::~ContextJanitor() { Stop(); }

Result<int> ContextJanitor::RunOnce() {
  auto removed = ContextDirs(data_dir_, env_).Cleanup(store_, cleanup_days_, clock_->NowMs());
  if (!removed.ok()) return removed.status();
  for (const auto& task : *removed) spdlog::info("janitor: removed context of task {}", task);
  return static_cast<int>(removed->size());
}

void ContextJanitor::Start() {
  if (cleanup_days_ <= 0) return;  // 0 keeps everything
  loop_.Start(std::chrono::milliseconds(interval_ms_), PeriodicTask::FirstRun::kImmediately,
              [this] {
                if (auto n = RunOnce(); !n.ok()) spdlog::warn("janitor: {}", n.status().ToString());
              });
}

void ContextJanitor::Stop() { loop_.Stop(); }

}  // namespace maestro::context
