// DirSwapper: the hostile agent of issue 44's races. A thread exchanges two
// names (renameat2 RENAME_EXCHANGE, atomic) in a tight loop — a workspace
// directory and a symlink to an outside directory — so that whatever the
// host resolves sees one or the other at any instant. Stopped and joined by
// the destructor.
#pragma once

#include <fcntl.h>
#include <stdio.h>

#include <atomic>
#include <string>
#include <thread>

namespace maestro::testing {

class DirSwapper {
 public:
  DirSwapper(std::string a, std::string b) : a_(std::move(a)), b_(std::move(b)) {
    thread_ = std::thread([this] {
      while (!stop_.load(std::memory_order_relaxed)) {
        if (::renameat2(AT_FDCWD, a_.c_str(), AT_FDCWD, b_.c_str(), RENAME_EXCHANGE) == 0) {
          swaps_.fetch_add(1, std::memory_order_relaxed);
        }
      }
    });
  }
  ~DirSwapper() { Stop(); }
  DirSwapper(const DirSwapper&) = delete;
  DirSwapper& operator=(const DirSwapper&) = delete;

  // Stops swapping (after an even number of swaps the names are back where
  // they started; callers should not rely on it).
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  long swaps() const { return swaps_.load(); }

 private:
  const std::string a_;
  const std::string b_;
  std::atomic<bool> stop_{false};
  std::atomic<long> swaps_{0};
  std::thread thread_;
};

}  // namespace maestro::testing
