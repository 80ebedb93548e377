#include "context/new_dir_env.h"

#include <functional>
#include <utility>

namespace maestro::context {

NewDirEnv::NewDirEnv(Env* base, std::string dir, std::string parent)
    : EnvWrapper(base), dir_(std::move(dir)), parent_(std::move(parent)) {}

bool NewDirEnv::entry_durable() {
  MutexLock lock(&mu_);
  return entry_durable_;
}

Status NewDirEnv::BeforeSyncAt(const std::string& path) {
  const bool inside = path.compare(0, dir_.size(), dir_) == 0 &&
                      (path.size() == dir_.size() || path[dir_.size()] == '/');
  if (!inside) return Status::Ok();
  MutexLock lock(&mu_);
  if (entry_durable_) return Status::Ok();
  MAESTRO_RETURN_IF_ERROR(base()->SyncDir(parent_));
  entry_durable_ = true;
  return Status::Ok();
}

namespace {

// A file inside the new directory whose Sync owes the directory's entry
// first: a file the directory was made with (a spare's, ContextDirs) is
// synced without any SyncDir of its own directory.
class EntryOwingFile final : public WritableFile {
 public:
  EntryOwingFile(std::unique_ptr<WritableFile> file, std::function<Status()> before_sync)
      : file_(std::move(file)), before_sync_(std::move(before_sync)) {}
  Status Append(std::string_view data) override { return file_->Append(data); }
  Status Sync() override {
    MAESTRO_RETURN_IF_ERROR(before_sync_());
    return file_->Sync();
  }
  Status Close() override { return file_->Close(); }
  const std::string& path() const override { return file_->path(); }

 private:
  std::unique_ptr<WritableFile> file_;
  std::function<Status()> before_sync_;
};

}  // namespace

Result<std::unique_ptr<WritableFile>> NewDirEnv::Owing(Result<std::unique_ptr<WritableFile>> file) {
  if (!file.ok()) return file;
  std::string path = (*file)->path();
  return std::unique_ptr<WritableFile>(std::make_unique<EntryOwingFile>(
      std::move(file).value(), [this, path] { return BeforeSyncAt(path); }));
}

Result<std::unique_ptr<WritableFile>> NewDirEnv::NewAppendableFile(const std::string& path) {
  return Owing(base()->NewAppendableFile(path));
}

Result<std::unique_ptr<WritableFile>> NewDirEnv::NewWritableFile(const std::string& path,
                                                                 unsigned mode,
                                                                 bool follow_symlinks) {
  return Owing(base()->NewWritableFile(path, mode, follow_symlinks));
}

Status NewDirEnv::SyncDir(const std::string& dir) {
  MAESTRO_RETURN_IF_ERROR(BeforeSyncAt(dir));
  return base()->SyncDir(dir);
}

Status NewDirEnv::TruncateFile(const std::string& path, uint64_t size) {
  MAESTRO_RETURN_IF_ERROR(BeforeSyncAt(path));
  return base()->TruncateFile(path, size);
}

}  // namespace maestro::context
