#include "support/fault_injection_env.h"

#include <fmt/format.h>

#include <filesystem>
#include <thread>

namespace maestro::testing {
namespace {

std::string Norm(const std::string& path) {
  return std::filesystem::path(path).lexically_normal().string();
}

std::string Parent(const std::string& path) {
  return std::filesystem::path(path).parent_path().string();
}

bool IsUnder(const std::string& path, const std::string& root) {
  return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                          path[root.size()] == '/');
}

}  // namespace

// A WritableFile whose every write goes through the env's fault and
// durability bookkeeping.
class FaultInjectionEnv::File final : public WritableFile {
 public:
  File(FaultInjectionEnv* env, std::unique_ptr<WritableFile> base, std::string path,
       int64_t generation)
      : env_(env), base_(std::move(base)), path_(std::move(path)), generation_(generation) {}
  Status Append(std::string_view data) override {
    return env_->AppendToFile(path_, *base_, data, generation_);
  }
  Status Sync() override { return env_->SyncFile(path_, *base_, generation_); }
  Status Close() override { return base_->Close(); }
  const std::string& path() const override { return path_; }

 private:
  FaultInjectionEnv* env_;
  std::unique_ptr<WritableFile> base_;
  std::string path_;
  int64_t generation_;
};

void FaultInjectionEnv::FailFromOp(int64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_from_ = n;
}

void FaultInjectionEnv::FailOnlyOp(int64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_only_ = n;
}

void FaultInjectionEnv::SetSpaceLimit(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  space_left_ = bytes;
}

void FaultInjectionEnv::SetSyncDelay(std::chrono::milliseconds d) {
  std::lock_guard<std::mutex> lock(mu_);
  sync_delay_ = d;
}

int64_t FaultInjectionEnv::ops() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ops_;
}

void FaultInjectionEnv::Delay() const {
  std::chrono::milliseconds d;
  {
    std::lock_guard<std::mutex> lock(mu_);
    d = sync_delay_;
  }
  if (d.count() > 0) std::this_thread::sleep_for(d);
}

Status FaultInjectionEnv::NextOp(const std::string& what, const std::string& path) {
  ++ops_;
  if (ops_ == fail_only_ || (fail_from_ > 0 && ops_ >= fail_from_)) {
    return Internal(fmt::format("{} {}: injected fault (write op {})", what, path, ops_));
  }
  return Status::Ok();
}

Result<std::unique_ptr<WritableFile>> FaultInjectionEnv::Open(const std::string& path,
                                                              bool truncate, unsigned mode,
                                                              bool follow_symlinks) {
  const std::string p = Norm(path);
  const bool existed = base()->FileExists(p);
  uint64_t size = 0;
  if (existed) {
    if (auto info = base()->GetFileInfo(p); info.ok()) size = info->size;
  }
  auto opened =
      truncate ? base()->NewWritableFile(p, mode, follow_symlinks) : base()->NewAppendableFile(p);
  if (!opened.ok()) return opened.status();
  if (!existed) created_.insert(p);
  auto [it, fresh] = files_.try_emplace(p, FileState{size});
  if (truncate) it->second.synced_size = 0;  // the truncation is not durable either
  (void)fresh;
  return std::unique_ptr<WritableFile>(new File(this, std::move(*opened), p, generation_));
}

Result<std::unique_ptr<WritableFile>> FaultInjectionEnv::NewAppendableFile(
    const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  return Open(path, /*truncate=*/false, 0644, /*follow_symlinks=*/true);
}

Result<std::unique_ptr<WritableFile>> FaultInjectionEnv::NewWritableFile(const std::string& path,
                                                                         unsigned mode,
                                                                         bool follow_symlinks) {
  std::lock_guard<std::mutex> lock(mu_);
  return Open(path, /*truncate=*/true, mode, follow_symlinks);
}

Status FaultInjectionEnv::AppendToFile(const std::string& path, WritableFile& base_file,
                                       std::string_view data, int64_t generation) {
  std::lock_guard<std::mutex> lock(mu_);
  if (generation != generation_) return Internal("write " + path + ": opened before the crash");
  if (Status st = NextOp("write", path); !st.ok()) {
    (void)base_file.Append(data.substr(0, data.size() / 2));  // a torn write
    return st;
  }
  if (space_left_ && data.size() > *space_left_) {
    (void)base_file.Append(data.substr(0, static_cast<size_t>(*space_left_)));
    space_left_ = 0;
    return Internal("write " + path + ": No space left on device");
  }
  if (space_left_) *space_left_ -= data.size();
  return base_file.Append(data);
}

Status FaultInjectionEnv::SyncFile(const std::string& path, WritableFile& base_file,
                                   int64_t generation) {
  Delay();
  std::lock_guard<std::mutex> lock(mu_);
  if (generation != generation_) return Internal("sync " + path + ": opened before the crash");
  MAESTRO_RETURN_IF_ERROR(NextOp("fdatasync", path));
  MAESTRO_RETURN_IF_ERROR(base_file.Sync());
  MAESTRO_ASSIGN_OR_RETURN(FileInfo info, base()->GetFileInfo(path));
  files_[path].synced_size = info.size;
  return Status::Ok();
}

Status FaultInjectionEnv::TruncateFile(const std::string& path, uint64_t size) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string p = Norm(path);
  MAESTRO_RETURN_IF_ERROR(NextOp("truncate", p));
  MAESTRO_RETURN_IF_ERROR(base()->TruncateFile(p, size));  // fsyncs
  files_[p].synced_size = size;
  return Status::Ok();
}

void FaultInjectionEnv::MoveState(const std::string& from, const std::string& to) {
  for (auto it = files_.begin(); it != files_.end();) {
    it = IsUnder(it->first, to) ? files_.erase(it) : std::next(it);
  }
  std::map<std::string, FileState> moved;
  for (auto it = files_.begin(); it != files_.end();) {
    if (IsUnder(it->first, from)) {
      moved[to + it->first.substr(from.size())] = it->second;
      it = files_.erase(it);
    } else {
      ++it;
    }
  }
  files_.merge(moved);
  std::set<std::string> created;
  for (auto it = created_.begin(); it != created_.end();) {
    if (IsUnder(*it, from)) {
      created.insert(to + it->substr(from.size()));
      it = created_.erase(it);
    } else {
      ++it;
    }
  }
  created_.merge(created);
}

Status FaultInjectionEnv::RenameFile(const std::string& from, const std::string& to) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string f = Norm(from), t = Norm(to);
  MAESTRO_RETURN_IF_ERROR(NextOp("rename", f + " -> " + t));
  PendingRename pending{f, t, std::nullopt, std::nullopt};
  if (auto info = base()->GetFileInfo(t); info.ok() && info->type == DirEntry::Type::kFile) {
    auto old = ReadFileToString(*base(), t);
    if (old.ok()) pending.old_target = std::move(*old);
    auto st = files_.find(t);
    pending.old_target_state = st != files_.end() ? st->second : FileState{info->size};
  }
  MAESTRO_RETURN_IF_ERROR(base()->RenameFile(f, t));
  MoveState(f, t);
  renames_.push_back(std::move(pending));
  return Status::Ok();
}

Status FaultInjectionEnv::RemoveFile(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string p = Norm(path);
  MAESTRO_RETURN_IF_ERROR(base()->RemoveFile(p));
  files_.erase(p);
  created_.erase(p);
  return Status::Ok();
}

Status FaultInjectionEnv::RemoveAll(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string p = Norm(path);
  MAESTRO_RETURN_IF_ERROR(base()->RemoveAll(p));
  std::erase_if(files_, [&](const auto& e) { return IsUnder(e.first, p); });
  std::erase_if(created_, [&](const std::string& c) { return IsUnder(c, p); });
  return Status::Ok();
}

Status FaultInjectionEnv::SyncDir(const std::string& dir) {
  Delay();
  std::lock_guard<std::mutex> lock(mu_);
  const std::string d = Norm(dir);
  MAESTRO_RETURN_IF_ERROR(NextOp("fsync dir", d));
  MAESTRO_RETURN_IF_ERROR(base()->SyncDir(d));
  std::erase_if(created_, [&](const std::string& c) { return Parent(c) == d; });
  std::erase_if(renames_, [&](const PendingRename& r) { return Parent(r.to) == d; });
  return Status::Ok();
}

Status FaultInjectionEnv::SimulateCrash(Crash mode) {
  std::lock_guard<std::mutex> lock(mu_);
  ++generation_;
  fail_from_ = fail_only_ = 0;
  space_left_.reset();
  sync_delay_ = std::chrono::milliseconds(0);
  if (mode == Crash::kPowerLoss) {
    for (auto r = renames_.rbegin(); r != renames_.rend(); ++r) {
      if (base()->FileExists(r->to)) MAESTRO_RETURN_IF_ERROR(base()->RenameFile(r->to, r->from));
      MoveState(r->to, r->from);
      if (r->old_target) {
        MAESTRO_RETURN_IF_ERROR(WriteStringToFile(*base(), r->to, *r->old_target));
        files_[r->to] = *r->old_target_state;
      }
    }
    for (const std::string& c : created_) {
      MAESTRO_RETURN_IF_ERROR(base()->RemoveFile(c));
      files_.erase(c);
    }
    for (const auto& [path, state] : files_) {
      auto info = base()->GetFileInfo(path);
      if (info.ok() && info->size > state.synced_size) {
        MAESTRO_RETURN_IF_ERROR(base()->TruncateFile(path, state.synced_size));
      }
    }
  }
  // What is on disk now is what the restarted process finds: durable.
  renames_.clear();
  created_.clear();
  for (auto it = files_.begin(); it != files_.end();) {
    auto info = base()->GetFileInfo(it->first);
    if (!info.ok()) {
      it = files_.erase(it);
      continue;
    }
    it->second.synced_size = info->size;
    ++it;
  }
  return Status::Ok();
}

}  // namespace maestro::testing
