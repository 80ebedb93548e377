// JobStatusCache: a job's status as read from the store at most once per
// `max_age`, shared by every stream watching that job. A thousand viewers
// of one job that poll its status (to end when another process finished
// it) then cost one read per interval, not a thousand.
//
// Thread safety: all methods may be called from any thread.
#pragma once

#include <chrono>
#include <string>
#include <unordered_map>

#include "core/mutex.h"
#include "store/store.h"

namespace maestro::api {

class JobStatusCache {
 public:
  using Clock = std::chrono::steady_clock;

  struct Entry {
    bool found = false;
    JobStatus status = JobStatus::kQueued;
  };

  // The job's status, fresh when `fresh` or older than `max_age`.
  Entry Get(JobRecords& store, const std::string& job_id, Clock::duration max_age, bool fresh) {
    const auto now = Clock::now();
    {
      MutexLock lock(&mu_);
      auto it = entries_.find(job_id);
      if (!fresh && it != entries_.end() && now - it->second.at < max_age) return it->second.entry;
    }
    Entry e;
    if (auto job = store.GetJob(job_id); job.ok()) {
      e.found = true;
      e.status = job->status;
    }
    MutexLock lock(&mu_);
    if (entries_.size() > kMaxEntries) entries_.clear();  // bounded; refilled on demand
    entries_[job_id] = Timed{e, now};
    return e;
  }

 private:
  static constexpr size_t kMaxEntries = 4096;
  struct Timed {
    Entry entry;
    Clock::time_point at;
  };
  Mutex mu_;
  std::unordered_map<std::string, Timed> entries_ GUARDED_BY(mu_);
};

}  // namespace maestro::api
