// NewDirEnv: the Env a new context directory's stores write through, which
// makes the directory's own entry durable only when something inside it is
// first made durable: before the first SyncDir, TruncateFile or file Sync at
// or under it.
//
// A new task's directory used to have its parent (contexts/running/) fsynced
// the moment it was made (0.9 of the 1.0 ms p50 its creation took, traced
// through serve), for a directory whose files may never be synced (a short
// task's first seed is not, see MessageStore::SeedThread, and the job's end
// moves the directory with both parents synced). A synced record inside it — an archive seed or
// summary, a side-effecting tools ledger record, a handoff file — reaches
// the disk through SyncDir of its own directory (its first synced append, or
// a durable ReplaceFile): NewDirEnv runs the parent's fsync, once, before
// the first SyncDir or TruncateFile at or under the new directory. So that
// record survives a power loss with its file's name and the directory's.
//
// Everything else is forwarded to the wrapped Env unchanged.
//
// Thread safety: as thread-safe as `base`; the once-flag is locked (the tools
// ledger is written from parallel tool calls).
#pragma once

#include <memory>
#include <string>

#include "core/env_wrapper.h"
#include "core/mutex.h"

namespace maestro::context {

class NewDirEnv final : public EnvWrapper {
 public:
  // `dir` was just created inside `parent` whose fsync is still owed; `base`
  // (not owned) outlives this object.
  NewDirEnv(Env* base, std::string dir, std::string parent);

  // True once the parent's fsync has run.
  bool entry_durable();

  Status SyncDir(const std::string& dir) override;
  Status TruncateFile(const std::string& path, uint64_t size) override;
  // Files whose Sync runs the parent's fsync first (when inside the new
  // directory): one the directory came with is synced without a SyncDir.
  Result<std::unique_ptr<WritableFile>> NewAppendableFile(const std::string& path) override;
  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path,
                                                        unsigned mode = 0644,
                                                        bool follow_symlinks = true) override;

 private:
  Result<std::unique_ptr<WritableFile>> Owing(Result<std::unique_ptr<WritableFile>> file);
  // The parent's fsync, once, when `path` is `dir_` or under it.
  Status BeforeSyncAt(const std::string& path);

  const std::string dir_, parent_;
  Mutex mu_;
  bool entry_durable_ GUARDED_BY(mu_) = false;
};

}  // namespace maestro::context
