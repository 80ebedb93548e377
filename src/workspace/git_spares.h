// GitSpares: empty git repositories made ahead of need (core/spare_dirs.h),
// so that a new ephemeral workspace's repository is one rename of a ready
// task directory holding only `git/`, a bare git directory, to
// <data>/tasks/<task> (its repository <data>/tasks/<task>/git,
// GitRepo::OpenExternal: outside every sandbox) instead of a mkdir and a
// libgit2 init on the path from claim to the first LLM request. git_repository_init
// creates ~20 directory entries and rewrites its config four times (lock +
// rename each): 6 ms p50 on this project's 2-core VM, more than the rest of
// a task's setup (bench/git/workspace_git_bench).
//
// Each spare is a copy of one template repository (bare) that libgit2
// initialized once per process (<root>/template-<uuid>): 2 files and 9 directories
// created, nothing renamed or deleted, where an init of its own creates ~16
// entries and deletes 6 (its config rewritten through config.lock four
// times, a symlink probe). On an ext4 without a journal each deleted inode
// slows every later creation in its block group for minutes
// (recently_deleted), which showed as most of a busy server's CPU. A spare's
// config holds no path (git init probes the filesystem it is on, which is
// the workspaces' one).
//
// Where it sits: owned by EngineSetup in processes that run a worker pool
// (`serve`, `worker`) and handed to PrepareWorkspace through
// WorkspaceOptions. `maestro run` (one task) has none and inits inline.
// Layout: <data>/tasks/.git-spares/<uuid>/git/ (a bare git directory; on
// the filesystem of <data>/tasks/, so the take is one rename).
//
// Thread safety: TakeAs is thread-safe (the worker threads call it); the
// spares' filler thread does the copies.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "core/env.h"
#include "core/spare_dirs.h"

namespace maestro::tools {

class GitSpares {
 public:
  // Keeps `keep` spares ready under <data_dir>/tasks/.git-spares.
  GitSpares(Env* env, const std::string& data_dir, size_t keep);
  ~GitSpares();  // stops the filler and removes this process's spares
  GitSpares(const GitSpares&) = delete;
  GitSpares& operator=(const GitSpares&) = delete;

  // Renames a ready spare to `task_dir` (which then holds `git/`); it must
  // not exist (its parent must). false when no spare is ready or the move
  // failed.
  bool TakeAs(const std::string& task_dir) { return spares_->TakeAs(task_dir); }

  // For tests and the bench: blocks until `keep` spares are ready (or the
  // filler gave up after an error). Returns how many are ready.
  size_t WaitFilled() { return spares_->WaitFilled(); }

 private:
  // Fills a spare (filler thread): a copy of the template, which is made on
  // first use and again when it vanished.
  Status Make(const std::string& dir);
  Status CopyTemplate(const std::string& dir);

  Env* env_;
  const std::string root_;
  std::string template_;  // the filler thread's (and the destructor's, after it)
  std::unique_ptr<SpareDirs> spares_;
};

}  // namespace maestro::tools
