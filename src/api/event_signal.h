// EventSignal: tells the live streams that the store committed something
// for them, so they read instead of polling.
//
// The store calls Notify() after each commit with the events it wrote
// (StoreOptions::on_commit). A task's event stream watches its task id and
// is woken by any event of that task; a job's delta stream watches its job
// id and is woken by that job's `job.status` events (it must end once the
// job is terminal). Nothing is carried in memory: a woken stream reads the
// database, which stays the only source of truth. Commits made by another
// process are not seen here; streams re-read on their keep-alive tick.
//
// Thread safety: all methods may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "notify/wakers.h"
#include "store/store.h"

namespace maestro::api {

class EventSignal {
 public:
  uint64_t WatchTask(const std::string& task_id, Wakers::Fn wake) {
    return wakers_.Add("task:" + task_id, std::move(wake));
  }
  uint64_t WatchJobStatus(const std::string& job_id, Wakers::Fn wake) {
    return wakers_.Add("job:" + job_id, std::move(wake));
  }
  void Unwatch(uint64_t id) { wakers_.Remove(id); }

  void Notify(const std::vector<CommittedEvent>& events) {
    const std::string* last_task = nullptr;
    for (const auto& e : events) {
      // A commit usually writes several events of one task: wake it once.
      if (!last_task || *last_task != e.task_id) wakers_.Wake("task:" + e.task_id);
      last_task = &e.task_id;
      if (e.type == "job.status" && !e.job_id.empty()) wakers_.Wake("job:" + e.job_id);
    }
  }
  size_t watchers() const { return wakers_.size(); }

 private:
  Wakers wakers_;
};

}  // namespace maestro::api
