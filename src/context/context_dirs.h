// ContextDirs: where each task's context directory lives (DESIGN.md §4):
//   {data_dir}/contexts/{running,paused,completed}/{task_uuid}/
//
// Where it sits: the worker creates a task's directory when a job of the
// task first runs, and moves it whenever the job's status changes — running
// while a worker executes the job; paused while it is queued, waiting for a
// retry, or parked (waiting_human / waiting_subtasks); completed once it is
// succeeded, failed or cancelled. A move is one atomic rename plus fsync of both
// parents, so after a crash the directory is in exactly one place. At start
// Reconcile() puts every directory where the database says it belongs and
// reports tasks whose directory is missing; Cleanup() is the janitor that
// deletes completed directories older than `cleanup_days` (0 keeps them).
//
// REQUIRES for moves: no TaskContext of that task is open (the job's session
// ended), since open stores cache paths.
//
// Every file operation goes through the Env given at construction.
//
// Thread safety: stateless apart from the root path and the Env; different tasks may be
// moved concurrently, one task by one thread at a time.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/env.h"
#include "core/spare_dirs.h"
#include "core/status.h"
#include "store/store.h"
#include "store/types.h"

namespace maestro::context {

enum class Placement { kRunning, kPaused, kCompleted };
std::string_view PlacementName(Placement p);
Placement PlacementFor(JobStatus s);

struct ReconcileReport {
  std::vector<std::pair<std::string, Placement>> moved;  // task id, new place
  std::vector<std::string> missing;                      // started tasks without a directory
  std::vector<std::string> orphans;                      // directories of tasks not in the database
  std::vector<std::string> duplicates_removed;           // stale copies in a second place
};

class ContextDirs {
 public:
  // `env` and `spares` (not owned; null: none) outlive this object. New
  // directories are taken from `spares` while one is ready (NewSpares).
  explicit ContextDirs(std::string data_dir, Env* env = Env::Default(),
                       SpareDirs* spares = nullptr);

  // Keeps `keep` new context directories ready under contexts/.spares, each
  // with the files a new context writes before its first LLM request
  // created empty and the directory synced (so their names are as durable
  // as if their first append had created them): a task's start renames one
  // instead of creating them on its path to the first request.
  static std::unique_ptr<SpareDirs> NewSpares(const std::string& data_dir, Env* env, size_t keep);

  // Creates contexts/{running,paused,completed}/.
  Status Init() const;

  const std::string& root() const { return root_; }
  std::string PathOf(Placement p, const std::string& task_id) const;
  // Where the task's directory is now, if anywhere.
  std::optional<Placement> Find(const std::string& task_id) const;
  // The directory path, or kNotFound.
  Result<std::string> Locate(const std::string& task_id) const;

  // Creates the directory in `p` (its handoffs/ comes with the first
  // handoff, SaveHandoffFile) or, if it exists elsewhere, moves it there.
  // Returns its path.
  Result<std::string> Ensure(const std::string& task_id, Placement p) const;
  // Ensure, except that a directory it creates does not get its parent
  // fsynced: `*entry_unsynced` is then true and the caller owes that fsync
  // before anything inside is made durable (TaskContext: NewDirEnv).
  Result<std::string> EnsureUnsynced(const std::string& task_id, Placement p,
                                     bool* entry_unsynced) const;

  // Moves an existing directory to `p` (no-op when already there).
  Result<std::string> MoveTo(const std::string& task_id, Placement p) const;
  Result<std::string> FollowJobStatus(const std::string& task_id, JobStatus s) const {
    return MoveTo(task_id, PlacementFor(s));
  }
  // Moves the directory from `from` to `to` only if it is in `from` now;
  // false, and nothing moved, when it is not. Unlike MoveTo it never chases
  // the directory: after a job's end is committed another job of the task
  // may already have taken it to running/, and pulling it from under that
  // job's open session would break it. One rename plus fsync of both parents.
  Result<bool> MoveIfIn(const std::string& task_id, Placement from, Placement to) const;

  Result<ReconcileReport> Reconcile(Store& store) const;

  // Removes completed directories whose task completed more than
  // `cleanup_days` ago (directory mtime when the task row is gone).
  // cleanup_days <= 0 keeps everything. Returns the removed task ids.
  Result<std::vector<std::string>> Cleanup(Store& store, int cleanup_days, TimeMs now) const;

 private:
  std::vector<std::string> ListIn(Placement p) const;
  bool IsDir(const std::string& path) const;
  std::string root_;
  Env* env_;
  SpareDirs* spares_;
};

}  // namespace maestro::context
