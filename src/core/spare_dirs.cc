#include "core/spare_dirs.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/ids.h"

namespace maestro {
namespace {

// Older spares belong to a process that died (a live one's are renewed as
// they are taken, and it removes its own on exit); younger ones may belong
// to a live process and are left alone.
constexpr TimeMs kStaleMs = 24 * 3600 * 1000;
// After a failed make the filler waits this long before trying again.
constexpr auto kRetryDelay = std::chrono::seconds(30);

}  // namespace

SpareDirs::SpareDirs(Env* env, std::string root, size_t keep, std::string what, MakeFn make)
    : env_(env),
      root_(std::move(root)),
      keep_(keep),
      what_(std::move(what)),
      make_(std::move(make)) {
  RemoveStale();
  filler_ = std::thread([this] { Fill(); });
}

SpareDirs::~SpareDirs() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  filler_.join();
  MutexLock lock(&mu_);
  for (const std::string& dir : ready_) (void)env_->RemoveAll(dir);
}

void SpareDirs::RemoveStale() {
  auto entries = env_->ListDir(root_);
  if (!entries.ok()) return;                     // none yet
  const TimeMs now = env_->WallClock().NowMs();  // the Env's clock, as its files' mtimes
  for (const DirEntry& e : *entries) {
    const std::string dir = root_ + "/" + e.name;
    auto info = env_->GetFileInfo(dir);
    if (info.ok() && now - info->modified_ms > kStaleMs) (void)env_->RemoveAll(dir);
  }
}

bool SpareDirs::TakeAs(const std::string& path) {
  std::string spare;
  {
    MutexLock lock(&mu_);
    if (ready_.empty()) return false;
    spare = std::move(ready_.front());
    ready_.pop_front();
  }
  cv_.SignalAll();  // the filler makes the next one
  Status moved = env_->RenameFile(spare, path);
  if (!moved.ok()) {
    spdlog::warn("{} spare: {} (created in place)", what_, moved.ToString());
    (void)env_->RemoveAll(spare);
  }
  return moved.ok();
}

size_t SpareDirs::WaitFilled() {
  MutexLock lock(&mu_);
  cv_.Wait(&mu_, [this]() REQUIRES(mu_) { return stop_ || failing_ || ready_.size() >= keep_; });
  return ready_.size();
}

void SpareDirs::Fill() {
  // Spares are made in the CPU time nothing else wants: a take wakes the
  // filler just as the taking worker is on its way to the first LLM
  // request, and on two cores the filler's file creations (kernel time,
  // 0.2-0.5 ms each) delayed that path by more than the take saved. At nice
  // 19 the scheduler runs the worker first; under load that never leaves
  // the CPU idle the spares come slower and a take finds none and creates
  // in place, as without spares.
  if (setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19) != 0) {
    spdlog::debug("{} spares: the filler keeps the default priority", what_);
  }
  MutexLock lock(&mu_);
  while (true) {
    cv_.Wait(&mu_, [this]() REQUIRES(mu_) { return stop_ || ready_.size() < keep_; });
    if (stop_) return;
    lock.Unlock();
    const std::string dir = root_ + "/" + NewUuid();
    Status made = env_->CreateDirs(dir);
    if (made.ok()) made = make_(dir);
    if (!made.ok()) {
      (void)env_->RemoveAll(dir);
      spdlog::warn("{} spare: {} (created in place meanwhile)", what_, made.ToString());
    }
    lock.Lock();
    failing_ = !made.ok();
    if (made.ok()) ready_.push_back(dir);
    cv_.SignalAll();
    if (failing_) cv_.WaitFor(&mu_, kRetryDelay, [this]() REQUIRES(mu_) { return stop_; });
  }
}

}  // namespace maestro
