#include "context/new_dir_env.h"

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

Status NewDirEnv::SyncDir(const std::string& dir) {
  MAESTRO_RETURN_IF_ERROR(BeforeSyncAt(dir));
  return base()->SyncDir(dir);
}

Status NewDirEnv::TruncateFile(const std::string& path, uint64_t size) {
  MAESTRO_RETURN_IF_ERROR(BeforeSyncAt(path));
  return base()->TruncateFile(path, size);
}

}  // namespace maestro::context
