// GitSpares: empty git repositories initialized ahead of need, so that a new
// ephemeral workspace is made by one rename of a ready work tree (a
// directory holding only its `.git`) instead of a mkdir and a libgit2 init
// on the path from claim to the first LLM request. git_repository_init
// creates ~20 directory entries and rewrites its config four times (lock +
// rename each): 6 ms p50 on this project's 2-core VM, more than the rest of
// a task's setup (bench/git/workspace_git_bench).
//
// Where it sits: owned by EngineSetup in processes that run a worker pool
// (`serve`, `worker`) and handed to PrepareWorkspace through
// WorkspaceOptions. `maestro run` (one task) has none and inits inline.
//
// Each spare is a copy of one template repository that libgit2 initialized
// once per process (<root>/template-<uuid>): 2 files and 9 directories
// created, nothing renamed or deleted, where an init of its own creates ~16
// entries and deletes 6 (its config rewritten through config.lock four
// times, a symlink probe). On an ext4 without a journal each deleted inode
// slows every later creation in its block group for minutes
// (recently_deleted), which showed as most of a busy server's CPU.
//
// Layout: <data>/workspaces/.git-spares/<uuid>/.git. A spare is listed as
// ready only after its init returned, and a process takes only the spares it
// made (kept in memory), so two processes on one data dir never race for
// one. Spares are disposable: on start a process removes entries older than
// a day (left by processes that died), a take that fails (the spare vanished)
// returns false, and the caller then inits inline; nothing depends on them.
// Same filesystem as the workspaces, so the move is a single rename. A spare's
// config holds no path (git init probes the filesystem it is on, which is
// the workspaces' one).
//
// Thread safety: TakeAs is thread-safe (the worker threads call it); one
// filler thread of its own does the inits.
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <thread>

#include "core/env.h"
#include "core/mutex.h"

namespace maestro::tools {

class GitSpares {
 public:
  // Keeps `keep` spares ready under <data_dir>/workspaces/.git-spares.
  GitSpares(Env* env, const std::string& data_dir, size_t keep);
  ~GitSpares();  // stops the filler and removes this process's spares
  GitSpares(const GitSpares&) = delete;
  GitSpares& operator=(const GitSpares&) = delete;

  // Renames a ready spare to `workspace`, which must not exist (its parent
  // must). false when no spare is ready or the move failed.
  bool TakeAs(const std::string& workspace);

  // For tests and the bench: blocks until `keep` spares are ready (or the
  // filler gave up after an error). Returns how many are ready.
  size_t WaitFilled();

 private:
  void Fill();
  void RemoveStale();
  // The filler's template repository, made on first use.
  Status MakeTemplate();

  Env* env_;
  const std::string root_;
  const size_t keep_;
  Mutex mu_;
  CondVar cv_;
  // Spare directories whose init returned.
  std::deque<std::string> ready_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  // The last init failed: WaitFilled stops waiting.
  bool failing_ GUARDED_BY(mu_) = false;
  std::string template_;  // the filler thread's (and the destructor's, after it)
  std::thread filler_;
};

}  // namespace maestro::tools
