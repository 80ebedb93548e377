#include "context/context_dirs.h"

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "context/durable_file.h"
#include "core/ids.h"

namespace fs = std::filesystem;

namespace maestro::context {
namespace {

constexpr Placement kAll[] = {Placement::kRunning, Placement::kPaused, Placement::kCompleted};

Status FsError(const std::string& what, const std::error_code& ec) {
  return Internal(what + ": " + ec.message());
}

}  // namespace

std::string_view PlacementName(Placement p) {
  switch (p) {
    case Placement::kRunning:
      return "running";
    case Placement::kPaused:
      return "paused";
    case Placement::kCompleted:
      return "completed";
  }
  return "paused";
}

Placement PlacementFor(JobStatus s) {
  if (s == JobStatus::kRunning) return Placement::kRunning;
  if (IsTerminal(s)) return Placement::kCompleted;
  return Placement::kPaused;  // queued, retry, waiting_human, waiting_subtasks
}

ContextDirs::ContextDirs(std::string data_dir) : root_(std::move(data_dir) + "/contexts") {}

Status ContextDirs::Init() const {
  for (Placement p : kAll) {
    std::error_code ec;
    fs::create_directories(root_ + "/" + std::string(PlacementName(p)), ec);
    if (ec) return FsError("create " + root_, ec);
  }
  return Status::Ok();
}

std::string ContextDirs::PathOf(Placement p, const std::string& task_id) const {
  return root_ + "/" + std::string(PlacementName(p)) + "/" + task_id;
}

std::optional<Placement> ContextDirs::Find(const std::string& task_id) const {
  for (Placement p : kAll) {
    std::error_code ec;
    if (fs::is_directory(PathOf(p, task_id), ec)) return p;
  }
  return std::nullopt;
}

Result<std::string> ContextDirs::Locate(const std::string& task_id) const {
  auto p = Find(task_id);
  if (!p) return NotFound("no context directory for task " + task_id);
  return PathOf(*p, task_id);
}

Result<std::string> ContextDirs::Ensure(const std::string& task_id, Placement p) const {
  if (!IsUuid(task_id)) return InvalidArgument("task id is not a UUID: " + task_id, "task_id");
  if (Find(task_id)) return MoveTo(task_id, p);
  MAESTRO_RETURN_IF_ERROR(Init());
  std::string dir = PathOf(p, task_id);
  std::error_code ec;
  fs::create_directories(dir + "/handoffs", ec);
  if (!ec) fs::create_directories(dir + "/planning", ec);
  if (ec) return FsError("create " + dir, ec);
  MAESTRO_RETURN_IF_ERROR(SyncDir(fs::path(dir).parent_path().string()));
  return dir;
}

Result<std::string> ContextDirs::MoveTo(const std::string& task_id, Placement p) const {
  const std::string to = PathOf(p, task_id);
  // A few tries: another process sharing the data dir (a worker's startup
  // reconcile) may move the directory between Find and rename.
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto from = Find(task_id);
    if (!from) return NotFound("no context directory for task " + task_id);
    if (*from == p) return to;
    MAESTRO_RETURN_IF_ERROR(Init());
    std::string src = PathOf(*from, task_id);
    // rename(2) is atomic: the directory is in the old place or the new one.
    if (std::rename(src.c_str(), to.c_str()) != 0) {
      if (errno == ENOENT) continue;
      return Internal("rename " + src + " -> " + to + ": " + std::strerror(errno));
    }
    MAESTRO_RETURN_IF_ERROR(SyncDir(fs::path(to).parent_path().string()));
    MAESTRO_RETURN_IF_ERROR(SyncDir(fs::path(src).parent_path().string()));
    return to;
  }
  return Unavailable("context directory of task " + task_id + " kept moving");
}

std::vector<std::string> ContextDirs::ListIn(Placement p) const {
  std::vector<std::string> ids;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root_ + "/" + std::string(PlacementName(p)), ec)) {
    if (e.is_directory(ec) && IsUuid(e.path().filename().string())) {
      ids.push_back(e.path().filename().string());
    }
  }
  return ids;
}

Result<ReconcileReport> ContextDirs::Reconcile(Store& store) const {
  MAESTRO_RETURN_IF_ERROR(Init());
  ReconcileReport report;
  for (Placement p : kAll) {
    for (const std::string& id : ListIn(p)) {
      auto task = store.GetTask(id);
      if (!task.ok()) {
        if (task.status().code() != StatusCode::kNotFound) return task.status();
        report.orphans.push_back(id);
        continue;
      }
      const Placement want = PlacementFor(task->status);
      if (want == p) continue;
      std::string target = PathOf(want, id);
      std::error_code ec;
      if (fs::exists(target, ec)) {
        // A crash can't leave two copies (moves are renames), but an operator
        // copy can: the copy in the right place wins, the stale one goes.
        fs::remove_all(PathOf(p, id), ec);
        report.duplicates_removed.push_back(id);
        continue;
      }
      std::string src = PathOf(p, id);
      if (std::rename(src.c_str(), target.c_str()) != 0) {
        // Another process sharing the data dir (a `maestro worker`) moved it
        // since it was listed: it is where that process's job put it.
        if (errno == ENOENT) continue;
        return Internal("rename " + src + " -> " + target + ": " + std::strerror(errno));
      }
      report.moved.emplace_back(id, want);
    }
  }
  for (Placement p : kAll)
    MAESTRO_RETURN_IF_ERROR(SyncDir(root_ + "/" + std::string(PlacementName(p))));
  MAESTRO_ASSIGN_OR_RETURN(std::vector<Task> tasks, store.ListTasks(std::nullopt, 1'000'000'000));
  for (const Task& t : tasks) {
    if (t.started_at != 0 && !Find(t.id)) report.missing.push_back(t.id);
  }
  return report;
}

Result<std::vector<std::string>> ContextDirs::Cleanup(Store& store, int cleanup_days,
                                                      TimeMs now) const {
  std::vector<std::string> removed;
  if (cleanup_days <= 0) return removed;
  const TimeMs cutoff = now - static_cast<TimeMs>(cleanup_days) * 86'400'000;
  for (const std::string& id : ListIn(Placement::kCompleted)) {
    std::string dir = PathOf(Placement::kCompleted, id);
    TimeMs done = 0;
    auto task = store.GetTask(id);
    if (task.ok()) {
      if (PlacementFor(task->status) != Placement::kCompleted)
        continue;  // reopened (Continue): keep
      done = task->completed_at;
    } else if (task.status().code() != StatusCode::kNotFound) {
      return task.status();
    }
    if (done == 0) {
      struct stat st {};
      if (::stat(dir.c_str(), &st) != 0) continue;
      done = static_cast<TimeMs>(st.st_mtim.tv_sec) * 1000;
    }
    if (done >= cutoff) continue;
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (ec) return FsError("remove " + dir, ec);
    removed.push_back(id);
  }
  return removed;
}

}  // namespace maestro::context
