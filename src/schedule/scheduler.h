// Scheduler: the loop that turns due schedule fire times into tasks (issue
// 20). Runs inside `maestro serve` (src/cli/serve.cc; `schedules.enabled`,
// `schedules.tick_ms`) on a PeriodicTask thread.
//
// Each tick, for every enabled schedule: a held fire (overlap queue) whose
// previous task has ended is released; then the latest fire time due since
// max(anchor_at, last_fire_at) is fired through Store::FireSchedule —
//   catch_up none: only a fire due "now" (at most `on_time_ms` ago), so a
//                  downtime's missed fires are skipped;
//   catch_up one:  the latest missed one, once, however old.
// Never more than one fire per schedule per tick: the fires between are
// skipped. Exactly-once is the store's: FireSchedule claims (schedule,
// fire_at) and creates the task in one transaction, so any number of
// schedulers — a restarted one, another `maestro serve` on the same
// database — may tick the same schedule; one creates the task, the others
// get kAlreadyFired.
//
// A fire is a task create like any other (issue 44): before it, the owner's
// daily quota is checked by the one gate every create path uses
// (store/quota_gate.h). A cron fire over the quota creates no task: it is
// claimed with outcome kQuota (Store::SkipFireForQuota; the schedule's
// history shows "quota") and a quota.refused event {user, message, via:
// "schedule"} is logged. A held fire over the quota stays held.
//
// Thread safety: Start/Stop from one owning thread. Tick may be called
// directly (tests) from any one thread at a time per Scheduler; the Store
// is shared and thread-safe.
#pragma once

#include <chrono>

#include "core/clock.h"
#include "core/periodic_task.h"
#include "store/budget.h"
#include "store/store.h"

namespace maestro::schedule {

struct SchedulerOptions {
  Store* store = nullptr;
  Clock* clock = SystemClock::Default();
  std::chrono::milliseconds tick{1000};
  // catch_up none: a fire up to this late still counts as "now" (it covers
  // the time between two ticks and a slow one).
  TimeMs on_time_ms = 60'000;
  // The daily quotas of the schedules' owners (the config's `quotas:`); the
  // day is the UTC day of clock->NowMs().
  budget::Quotas quotas;
};

class Scheduler {
 public:
  explicit Scheduler(SchedulerOptions options) : options_(options) {}
  ~Scheduler() { Stop(); }
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Ticks every options.tick on a background thread, the first at once.
  void Start();
  void Stop();

  // What one tick did, summed over the schedules.
  struct TickReport {
    int created = 0;        // tasks created (fires and released held fires)
    int skipped = 0;        // overlap skip
    int held = 0;           // overlap queue: held for the previous task
    int already_fired = 0;  // claimed by another scheduler first
    int quota = 0;          // refused by the owner's daily quota (no task)
    int errors = 0;         // logged; the schedule is tried again next tick
  };
  // One pass at clock->NowMs().
  TickReport Tick();

 private:
  // Fires `due` of `s`, or records it refused by the owner's quota.
  void Fire(const Schedule& s, TimeMs due, TickReport& report);
  // Whether the owner's daily quota refuses one more task now; `record`:
  // log the refusal (a quota.refused event).
  Result<bool> OverQuota(const Schedule& s, bool record);

  SchedulerOptions options_;
  PeriodicTask loop_;
};

}  // namespace maestro::schedule
