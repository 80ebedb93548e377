// EventSignal: tells the live streams that the store committed something
// for them, so they read instead of polling.
//
// Where it sits: owned by the Notifier (notify/notifier.h), which the store's
// StoreOptions::on_commit reaches with the events each commit wrote. A task's
// event stream watches its task id and is woken by any event of that task; a
// job's delta stream watches its job id and is woken by that job's
// `job.status` events (it must end once the job is terminal). Nothing is
// carried in memory: a woken stream reads the database, which stays the only
// source of truth.
//
// Whose commits arrive: this process's always (SqlStore fires on_commit after
// each local commit). On PostgreSQL with `database.notify` (the default) other
// processes' commits arrive too: each commit sends `NOTIFY maestro_events`
// with its events and the store's LISTEN thread calls on_commit with them
// (store/postgres/pg_engine.h; this process's own commits then arrive twice,
// which is harmless: a wake-up is idempotent). On SQLite, and on PostgreSQL
// with `database.notify: false` (PgBouncer), another process's commits are not
// seen here; streams re-read on their keep-alive tick.
//
// Thread safety: all methods may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "notify/wakers.h"
#include "store/store.h"

namespace maestro::notify {

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

}  // namespace maestro::notify
