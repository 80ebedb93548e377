#include "context/context_dirs.h"

#include <filesystem>

#include "core/ids.h"

namespace fs = std::filesystem;  // path arithmetic only; I/O goes through Env

namespace maestro::context {
namespace {

constexpr Placement kAll[] = {Placement::kRunning, Placement::kPaused, Placement::kCompleted};

std::string Parent(const std::string& path) { return fs::path(path).parent_path().string(); }

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

ContextDirs::ContextDirs(std::string data_dir, Env* env, SpareDirs* spares)
    : root_(std::move(data_dir) + "/contexts"), env_(env), spares_(spares) {}

std::unique_ptr<SpareDirs> ContextDirs::NewSpares(const std::string& data_dir, Env* env,
                                                  size_t keep) {
  return std::make_unique<SpareDirs>(
      env, data_dir + "/contexts/.spares", keep, "context", [env](const std::string& dir) {
        // TaskContext::Start (metadata.json through its temp file, the
        // session_started event), MessageStore's seed, the executor's
        // tools.json; the logs most tasks never write stay uncreated.
        for (const char* name : {"metadata.json.tmp", "events.jsonl", "messages.jsonl",
                                 "current.jsonl", "transcript.jsonl", "tools.json"}) {
          MAESTRO_RETURN_IF_ERROR(WriteStringToFile(*env, dir + "/" + name, ""));
        }
        return env->SyncDir(dir);
      });
}

Status ContextDirs::Init() const {
  for (Placement p : kAll) {
    MAESTRO_RETURN_IF_ERROR(env_->CreateDirs(root_ + "/" + std::string(PlacementName(p))));
  }
  return Status::Ok();
}

bool ContextDirs::IsDir(const std::string& path) const {
  auto info = env_->GetFileInfo(path);
  return info.ok() && info->type == DirEntry::Type::kDir;
}

std::string ContextDirs::PathOf(Placement p, const std::string& task_id) const {
  return root_ + "/" + std::string(PlacementName(p)) + "/" + task_id;
}

std::optional<Placement> ContextDirs::Find(const std::string& task_id) const {
  for (Placement p : kAll) {
    if (IsDir(PathOf(p, task_id))) return p;
  }
  return std::nullopt;
}

Result<std::string> ContextDirs::Locate(const std::string& task_id) const {
  auto p = Find(task_id);
  if (!p) return NotFound("no context directory for task " + task_id);
  return PathOf(*p, task_id);
}

Result<std::string> ContextDirs::Ensure(const std::string& task_id, Placement p) const {
  bool entry_unsynced = false;
  MAESTRO_ASSIGN_OR_RETURN(std::string dir, EnsureUnsynced(task_id, p, &entry_unsynced));
  if (entry_unsynced) MAESTRO_RETURN_IF_ERROR(env_->SyncDir(Parent(dir)));
  return dir;
}

Result<std::string> ContextDirs::EnsureUnsynced(const std::string& task_id, Placement p,
                                                bool* entry_unsynced) const {
  *entry_unsynced = false;
  if (!IsUuid(task_id)) return InvalidArgument("task id is not a UUID: " + task_id, "task_id");
  if (Find(task_id)) return MoveTo(task_id, p);
  MAESTRO_RETURN_IF_ERROR(Init());
  std::string dir = PathOf(p, task_id);
  if (spares_ == nullptr || !spares_->TakeAs(dir)) MAESTRO_RETURN_IF_ERROR(env_->CreateDirs(dir));
  *entry_unsynced = true;
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
    // A rename is atomic: the directory is in the old place or the new one.
    if (Status st = env_->RenameFile(src, to); !st.ok()) {
      if (st.code() == StatusCode::kNotFound) continue;
      return st;
    }
    MAESTRO_RETURN_IF_ERROR(env_->SyncDir(Parent(to)));
    MAESTRO_RETURN_IF_ERROR(env_->SyncDir(Parent(src)));
    return to;
  }
  return Unavailable("context directory of task " + task_id + " kept moving");
}

Result<bool> ContextDirs::MoveIfIn(const std::string& task_id, Placement from, Placement to) const {
  if (!IsUuid(task_id)) return InvalidArgument("task id is not a UUID: " + task_id, "task_id");
  if (from == to) return IsDir(PathOf(from, task_id));
  const std::string src = PathOf(from, task_id);
  const std::string dst = PathOf(to, task_id);
  MAESTRO_RETURN_IF_ERROR(Init());
  if (Status st = env_->RenameFile(src, dst); !st.ok()) {
    if (st.code() == StatusCode::kNotFound) return false;  // not there (any more)
    return st;
  }
  MAESTRO_RETURN_IF_ERROR(env_->SyncDir(Parent(dst)));
  MAESTRO_RETURN_IF_ERROR(env_->SyncDir(Parent(src)));
  return true;
}

std::vector<std::string> ContextDirs::ListIn(Placement p) const {
  std::vector<std::string> ids;
  auto entries = env_->ListDir(root_ + "/" + std::string(PlacementName(p)));
  if (!entries.ok()) return ids;  // no such placement yet: nothing in it
  for (const DirEntry& e : *entries) {
    if (e.type == DirEntry::Type::kDir && IsUuid(e.name)) ids.push_back(e.name);
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
      if (env_->FileExists(target)) {
        // A crash can't leave two copies (moves are renames), but an operator
        // copy can: the copy in the right place wins, the stale one goes.
        (void)env_->RemoveAll(PathOf(p, id));  // best effort: retried at the next start
        report.duplicates_removed.push_back(id);
        continue;
      }
      std::string src = PathOf(p, id);
      if (Status st = env_->RenameFile(src, target); !st.ok()) {
        // Another process sharing the data dir (a `maestro worker`) moved it
        // since it was listed: it is where that process's job put it.
        if (st.code() == StatusCode::kNotFound) continue;
        return st;
      }
      report.moved.emplace_back(id, want);
    }
  }
  for (Placement p : kAll)
    MAESTRO_RETURN_IF_ERROR(env_->SyncDir(root_ + "/" + std::string(PlacementName(p))));
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
      auto info = env_->GetFileInfo(dir);
      if (!info.ok()) continue;
      done = info->modified_ms;
    }
    if (done >= cutoff) continue;
    MAESTRO_RETURN_IF_ERROR(env_->RemoveAll(dir));
    removed.push_back(id);
  }
  return removed;
}

}  // namespace maestro::context
