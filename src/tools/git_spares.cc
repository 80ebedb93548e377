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
  for (const std::string& dir : taken_) (void)env_->RemoveAll(dir);
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

bool GitSpares::TakeInto(const std::string& workspace) {
  std::string spare;
  {
    MutexLock lock(&mu_);
    if (ready_.empty()) return false;
    spare = std::move(ready_.front());
    ready_.pop_front();
  }
  cv_.SignalAll();  // the filler makes the next one
  Status moved = env_->RenameFile(spare + "/.git", workspace + "/.git");
  // The emptied directory is the filler's business, off this path.
  {
    MutexLock lock(&mu_);
    taken_.push_back(std::move(spare));
  }
  if (!moved.ok()) spdlog::warn("git spare: {} (initializing in place)", moved.ToString());
  return moved.ok();
}

size_t GitSpares::WaitFilled() {
  MutexLock lock(&mu_);
  cv_.Wait(&mu_, [this]() REQUIRES(mu_) { return stop_ || failing_ || ready_.size() >= keep_; });
  return ready_.size();
}

void GitSpares::Fill() {
  MutexLock lock(&mu_);
  while (true) {
    cv_.Wait(&mu_,
             [this]() REQUIRES(mu_) { return stop_ || ready_.size() < keep_ || !taken_.empty(); });
    if (stop_) return;
    std::deque<std::string> emptied;
    emptied.swap(taken_);
    const bool make = ready_.size() < keep_;
    lock.Unlock();
    // A taken spare's directory is empty: the next init reuses it (one
    // mkdir and one rmdir fewer); any others go.
    std::string dir;
    if (make && !emptied.empty()) {
      dir = std::move(emptied.front());
      emptied.pop_front();
    }
    for (const std::string& d : emptied) (void)env_->RemoveAll(d);
    Status made = Status::Ok();
    if (make) {
      if (dir.empty()) dir = root_ + "/" + NewUuid();
      made = env_->CreateDirs(dir);
      if (made.ok()) made = GitRepo::Init(dir).status();
      if (!made.ok()) {
        (void)env_->RemoveAll(dir);
        spdlog::warn("git spare: {} (workspaces are initialized in place)", made.ToString());
      }
    }
    lock.Lock();
    if (!make) continue;
    failing_ = !made.ok();
    if (made.ok()) ready_.push_back(std::move(dir));
    cv_.SignalAll();
    if (failing_) cv_.WaitFor(&mu_, kRetryDelay, [this]() REQUIRES(mu_) { return stop_; });
  }
}

}  // namespace maestro::tools
