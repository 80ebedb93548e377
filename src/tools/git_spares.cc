#include "tools/git_spares.h"

#include <spdlog/spdlog.h>

#include "core/clock.h"
#include "core/ids.h"
#include "tools/git_repo.h"

namespace maestro::tools {
namespace {

// Older spares belong to a process that died (a live one's are renewed as
// they are taken, and it removes its own on exit); younger ones may belong
// to a live process and are left alone.
constexpr TimeMs kStaleMs = 24 * 3600 * 1000;
// After a failed init the filler waits this long before trying again.
constexpr auto kRetryDelay = std::chrono::seconds(30);

// Copies the directory tree `from` (directories and regular files only: a
// repository libgit2 has just initialized) to `to`.
Status CopyTree(Env& env, const std::string& from, const std::string& to) {
  MAESTRO_RETURN_IF_ERROR(env.CreateDirs(to));
  MAESTRO_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, env.ListDir(from));
  for (const DirEntry& e : entries) {
    const std::string src = from + "/" + e.name, dst = to + "/" + e.name;
    if (e.type == DirEntry::Type::kDir) {
      MAESTRO_RETURN_IF_ERROR(CopyTree(env, src, dst));
    } else if (e.type == DirEntry::Type::kFile) {
      MAESTRO_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(env, src));
      MAESTRO_RETURN_IF_ERROR(WriteStringToFile(env, dst, bytes));
    } else {
      return Internal("unexpected entry in the template repository: " + src);
    }
  }
  return Status::Ok();
}

}  // namespace

GitSpares::GitSpares(Env* env, const std::string& data_dir, size_t keep)
    : env_(env), root_(data_dir + "/workspaces/.git-spares"), keep_(keep) {
  RemoveStale();
  filler_ = std::thread([this] { Fill(); });
}

GitSpares::~GitSpares() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  filler_.join();
  MutexLock lock(&mu_);
  for (const std::string& dir : ready_) (void)env_->RemoveAll(dir);
  if (!template_.empty()) (void)env_->RemoveAll(template_);
}

void GitSpares::RemoveStale() {
  auto entries = env_->ListDir(root_);
  if (!entries.ok()) return;  // none yet
  const TimeMs now = SystemClock::Default()->NowMs();
  for (const DirEntry& e : *entries) {
    const std::string dir = root_ + "/" + e.name;
    auto info = env_->GetFileInfo(dir);
    if (info.ok() && now - info->modified_ms > kStaleMs) (void)env_->RemoveAll(dir);
  }
}

bool GitSpares::TakeAs(const std::string& workspace) {
  std::string spare;
  {
    MutexLock lock(&mu_);
    if (ready_.empty()) return false;
    spare = std::move(ready_.front());
    ready_.pop_front();
  }
  cv_.SignalAll();  // the filler makes the next one
  Status moved = env_->RenameFile(spare, workspace);
  if (!moved.ok()) {
    spdlog::warn("git spare: {} (initializing in place)", moved.ToString());
    (void)env_->RemoveAll(spare);
  }
  return moved.ok();
}

size_t GitSpares::WaitFilled() {
  MutexLock lock(&mu_);
  cv_.Wait(&mu_, [this]() REQUIRES(mu_) { return stop_ || failing_ || ready_.size() >= keep_; });
  return ready_.size();
}

Status GitSpares::MakeTemplate() {
  if (!template_.empty()) return Status::Ok();
  const std::string dir = root_ + "/template-" + NewUuid();
  Status made = env_->CreateDirs(dir);
  if (made.ok()) made = GitRepo::Init(dir).status();
  if (!made.ok()) {
    (void)env_->RemoveAll(dir);
    return made;
  }
  template_ = dir;
  return made;
}

void GitSpares::Fill() {
  MutexLock lock(&mu_);
  while (true) {
    cv_.Wait(&mu_, [this]() REQUIRES(mu_) { return stop_ || ready_.size() < keep_; });
    if (stop_) return;
    lock.Unlock();
    const std::string dir = root_ + "/" + NewUuid();
    Status made = MakeTemplate();
    if (made.ok()) made = CopyTree(*env_, template_ + "/.git", dir + "/.git");
    if (!made.ok()) {
      (void)env_->RemoveAll(dir);
      spdlog::warn("git spare: {} (workspaces are initialized in place)", made.ToString());
    }
    lock.Lock();
    failing_ = !made.ok();
    if (made.ok()) ready_.push_back(dir);
    cv_.SignalAll();
    if (failing_) cv_.WaitFor(&mu_, kRetryDelay, [this]() REQUIRES(mu_) { return stop_; });
  }
}

}  // namespace maestro::tools
