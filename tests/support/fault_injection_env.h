// FaultInjectionEnv: an Env (core/env.h) for tests that wraps another one
// (normally Env::Default() on a temp dir) and injects the faults that lose
// data: a failing write, a full disk, a slow fsync, and a crash — after which
// the test reopens the files with the code's normal open path and checks
// that nothing acknowledged is lost and nothing half-written is read.
//
// Where it sits: handed to the stores through their deps/options (`Env*`)
// by tests/unit/context/fault_injection_test.cc; after that it passes every
// call through to the wrapped Env, tracking what the OS would have made
// durable (after leveldb's FaultInjectionTestEnv).
//
// What it models:
//  - Write operations are Append, Sync, RenameFile, SyncDir, TruncateFile,
//    numbered 1, 2, … across the whole env. FailFromOp(n) makes op n and
//    every later one fail (the process died there); a failing Append first
//    writes the first half of its data, so a torn record reaches the disk.
//    FailOnlyOp(n) fails op n alone (a transient I/O error).
//  - SetSpaceLimit(bytes): appends beyond `bytes` more bytes write what fits
//    and fail with "No space left on device" (ENOSPC).
//  - SetSyncDelay(d): every Sync / SyncDir sleeps `d` first.
//  - SimulateCrash(kProcess): the process dies, the OS lives: every byte
//    written stays. SimulateCrash(kPowerLoss): the machine dies: each file is
//    cut to its size at its last Sync (or TruncateFile, or when this env
//    first saw it: data written before the test is durable); renames not
//    followed by a SyncDir of the target's directory are undone (the target
//    gets its old content back, the source name its new one); files created
//    since the last SyncDir of their directory are deleted. In that order:
//    so a temp file renamed over a target without a directory fsync leaves
//    the old target and no temp file.
// What it does not model: directory creation and removals are durable at
// once; a sync of a renamed directory's old parent is not required; data
// is lost only at whole-file granularity beyond the synced size (no
// reordering of unsynced writes inside a file). Handles opened before a
// crash fail afterwards; the faults are cleared by the crash.
//
// Thread safety: every method may be called from any thread (one mutex).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/env_wrapper.h"

namespace maestro::testing {

class FaultInjectionEnv final : public EnvWrapper {
 public:
  // `base` is not owned and must outlive this env.
  explicit FaultInjectionEnv(Env* base = Env::Default()) : EnvWrapper(base) {}

  // ---- faults (see above). n is 1-based and counts from the env's start.
  void FailFromOp(int64_t n);
  void FailOnlyOp(int64_t n);
  void SetSpaceLimit(uint64_t bytes);
  void SetSyncDelay(std::chrono::milliseconds d);
  // Write operations so far.
  int64_t ops() const;

  enum class Crash { kProcess, kPowerLoss };
  // Applies the crash to the files on the wrapped Env, invalidates every open
  // handle and clears the faults, so the test can reopen through this env.
  Status SimulateCrash(Crash mode);

  // ---- Env: the calls that can lose data; the rest pass through
  // (EnvWrapper).
  Result<std::unique_ptr<WritableFile>> NewAppendableFile(const std::string& path) override;
  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path,
                                                        unsigned mode = 0644,
                                                        bool follow_symlinks = true) override;
  Status TruncateFile(const std::string& path, uint64_t size) override;
  Status RenameFile(const std::string& from, const std::string& to) override;
  Status RemoveFile(const std::string& path) override;
  Status RemoveAll(const std::string& path) override;
  Status SyncDir(const std::string& dir) override;

 private:
  class File;
  friend class File;

  // What the disk holds durably of one file.
  struct FileState {
    uint64_t synced_size = 0;
  };
  struct PendingRename {
    std::string from, to;
    std::optional<std::string> old_target;      // the target's content before
    std::optional<FileState> old_target_state;  // and its durable size
  };

  // REQUIRES: mu_ held. The fault for the next write op (ok = none).
  Status NextOp(const std::string& what, const std::string& path);
  // REQUIRES: mu_ held.
  Result<std::unique_ptr<WritableFile>> Open(const std::string& path, bool truncate, unsigned mode,
                                             bool follow_symlinks);
  Status AppendToFile(const std::string& path, WritableFile& base_file, std::string_view data,
                      int64_t generation);
  Status SyncFile(const std::string& path, WritableFile& base_file, int64_t generation);
  // REQUIRES: mu_ held. Moves every tracked path under `from` to `to`.
  void MoveState(const std::string& from, const std::string& to);
  void Delay() const;

  mutable std::mutex mu_;
  int64_t ops_ = 0;                          // GUARDED_BY(mu_)
  int64_t fail_from_ = 0;                    // GUARDED_BY(mu_)
  int64_t fail_only_ = 0;                    // GUARDED_BY(mu_)
  std::optional<uint64_t> space_left_;       // GUARDED_BY(mu_)
  std::chrono::milliseconds sync_delay_{0};  // GUARDED_BY(mu_)
  int64_t generation_ = 0;                   // GUARDED_BY(mu_): bumped by a crash
  std::map<std::string, FileState> files_;   // GUARDED_BY(mu_)
  std::set<std::string> created_;            // GUARDED_BY(mu_): dir not synced since
  std::vector<PendingRename> renames_;       // GUARDED_BY(mu_): dir not synced since
};

}  // namespace maestro::testing
