// EnvWrapper: an Env that forwards every call to another one, for Envs that
// change a few calls and pass the rest through (context/new_dir_env.h, the
// tests' FaultInjectionEnv and call recorders). Subclasses override what
// they change.
//
// Thread safety: as thread-safe as the wrapped Env.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/env.h"

namespace maestro {

class EnvWrapper : public Env {
 public:
  // `base` (not owned) outlives this object.
  explicit EnvWrapper(Env* base) : base_(base) {}
  Env* base() const { return base_; }

  Result<std::unique_ptr<WritableFile>> NewAppendableFile(const std::string& path) override {
    return base_->NewAppendableFile(path);
  }
  // The defaults are Env's, so a call through a subclass reads the same.
  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path,
                                                        unsigned mode = 0644,
                                                        bool follow_symlinks = true) override {
    return base_->NewWritableFile(path, mode, follow_symlinks);
  }
  Result<std::unique_ptr<ReadableFile>> NewReadableFile(const std::string& path,
                                                        bool follow_symlinks = true) override {
    return base_->NewReadableFile(path, follow_symlinks);
  }
  Status TruncateFile(const std::string& path, uint64_t size) override {
    return base_->TruncateFile(path, size);
  }
  Status RenameFile(const std::string& from, const std::string& to) override {
    return base_->RenameFile(from, to);
  }
  Status RemoveFile(const std::string& path) override { return base_->RemoveFile(path); }
  Status RemoveAll(const std::string& path) override { return base_->RemoveAll(path); }
  Status CreateDirs(const std::string& path) override { return base_->CreateDirs(path); }
  Result<std::string> CreateTempDir(const std::string& parent, const std::string& prefix) override {
    return base_->CreateTempDir(parent, prefix);
  }
  Status SyncDir(const std::string& dir) override { return base_->SyncDir(dir); }
  Status SetPermissions(const std::string& path, unsigned mode) override {
    return base_->SetPermissions(path, mode);
  }
  Status CreateSymlink(const std::string& target, const std::string& link) override {
    return base_->CreateSymlink(target, link);
  }
  bool FileExists(const std::string& path) override { return base_->FileExists(path); }
  Result<FileInfo> GetFileInfo(const std::string& path) override {
    return base_->GetFileInfo(path);
  }
  Result<std::vector<DirEntry>> ListDir(const std::string& dir) override {
    return base_->ListDir(dir);
  }
  Result<ProcessResult> RunProcess(const ProcessSpec& spec) override {
    return base_->RunProcess(spec);
  }
  Result<int> SpawnChild(const ChildSpec& spec) override { return base_->SpawnChild(spec); }
  const Clock& WallClock() override { return base_->WallClock(); }
  int64_t MonotonicMs() override { return base_->MonotonicMs(); }

 private:
  Env* const base_;
};

}  // namespace maestro
