// SpareDirs: directories filled ahead of need by a filler thread, so that a
// path that needs a new one (a task's first job: its workspace, its context
// directory) takes it by one rename instead of creating its entries. On the
// ext4 this project runs on, one file or directory creation costs 0.2-0.5 ms
// (the inode allocator skips every recently deleted inode of its block
// group), several times the rest of a task's setup; the filler pays it off
// the path from claim to the first LLM request.
//
// Where it sits: owned by EngineSetup in processes that run a worker pool
// (`serve`, `worker`): the workspace spares (tools::GitSpares) and the
// context directory spares (context::ContextDirs). `maestro run` has none.
//
// Layout: <root>/<uuid>/. A spare is listed as ready only after `make`
// returned, and a process takes only the spares it made (kept in memory), so
// two processes on one data dir never race for one. Spares are disposable:
// on start a process removes entries of <root> older than a day (left by
// processes that died), a take that fails (the spare vanished) returns false
// and the caller creates its directory itself; nothing depends on them. The
// root must be on the filesystem of the directories taken as, so the move is
// a single rename.
//
// Thread safety: TakeAs and WaitFilled are thread-safe; `make` runs on the
// filler thread only.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <thread>

#include "core/env.h"
#include "core/mutex.h"

namespace maestro {

class SpareDirs {
 public:
  // Fills the new, empty directory `dir`.
  using MakeFn = std::function<Status(const std::string& dir)>;
  // Keeps `keep` spares ready under `root`; `what` names them in logs.
  SpareDirs(Env* env, std::string root, size_t keep, std::string what, MakeFn make);
  ~SpareDirs();  // stops the filler and removes this process's spares
  SpareDirs(const SpareDirs&) = delete;
  SpareDirs& operator=(const SpareDirs&) = delete;

  // Renames a ready spare to `path`, which must not exist (its parent must).
  // false when no spare is ready or the move failed.
  bool TakeAs(const std::string& path);

  // For tests and the bench: blocks until `keep` spares are ready (or the
  // filler gave up after an error). Returns how many are ready.
  size_t WaitFilled();

  const std::string& root() const { return root_; }

 private:
  void Fill();
  void RemoveStale();

  Env* env_;
  const std::string root_;
  const size_t keep_;
  const std::string what_;
  const MakeFn make_;
  Mutex mu_;
  CondVar cv_;
  // Spare directories whose make returned.
  std::deque<std::string> ready_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  // The last make failed: WaitFilled stops waiting.
  bool failing_ GUARDED_BY(mu_) = false;
  std::thread filler_;
};

}  // namespace maestro
