// ScheduleRecords: the schedules role of the Store (store/store.h; issue 20,
// sql_schedules.cc) — schedule rows, and the fire claim that makes a fire
// time's task exactly once (the types: store/schedule_types.h).
//
// Who uses it: the scheduler loop lists schedules and fires, releases or
// skips their due times (schedule/scheduler.h); the API's schedule routes
// keep them and "run now" (api/).
//
// Not pure, so other Store implementations (test fakes) need not provide
// them; the defaults answer kUnimplemented.
//
// Thread safety: every method may be called from any thread concurrently.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "store/schedule_types.h"
#include "store/task_records.h"
#include "store/unsupported.h"

namespace maestro {

class ScheduleRecords {
 public:
  virtual ~ScheduleRecords() = default;

  // ---- schedules (issue 20; sql_schedules.cc, the loop: schedule/scheduler.h)
  // Creates `s`: id, anchor_at (= now) and the times are assigned, the fire
  // state (last_fire_at, last_task_id, held_fire_at) starts empty.
  virtual Result<Schedule> CreateSchedule(const Schedule& /*s*/) { return NotSupportedByStore(); }
  // kNotFound "schedule <id> not found" when absent.
  virtual Result<Schedule> GetSchedule(const std::string& /*id*/) { return NotSupportedByStore(); }
  // Oldest first. `visible_to` set: only what that user may see — shared,
  // unowned or its own, the rule tasks follow (api::Authenticator::Visible);
  // unset: every schedule (the scheduler).
  virtual Result<std::vector<Schedule>> ListSchedules(
      const std::optional<std::string>& /*visible_to*/) {
    return NotSupportedByStore();
  }
  // Replaces the editable fields (name … catch_up, budget) of schedule `s.id`; sets
  // anchor_at = now when it is re-enabled or its cron or timezone changes (the
  // time before never fires). kNotFound when absent.
  virtual Result<Schedule> UpdateSchedule(const Schedule& /*s*/) { return NotSupportedByStore(); }
  // Deletes the schedule and its fire rows; the tasks it created stay.
  virtual Status DeleteSchedule(const std::string& /*id*/) { return NotSupportedByStore(); }
  // Claims (schedule_id, fire_at) and acts on it in ONE transaction, so a
  // fire time makes at most one task across restarts and processes: a time
  // already claimed is kAlreadyFired and writes nothing. A cron fire
  // (`manual` false) applies the overlap rule against the previous task
  // (kCreated / kSkipped / kHeld) and moves last_fire_at; "run now"
  // (`manual`) always creates the task and leaves last_fire_at alone. The
  // task takes the schedule's instruction, piece, space, profile, owner,
  // visibility and budget, and its name as title. kNotFound when the schedule is gone.
  struct FireResult {
    ScheduleFire fire;
    std::optional<TaskRecords::CreatedTask> created;  // when fire.outcome is kCreated
  };
  virtual Result<FireResult> FireSchedule(const std::string& /*schedule_id*/, TimeMs /*fire_at*/,
                                          bool /*manual*/) {
    return NotSupportedByStore();
  }
  // Overlap queue: when the schedule holds a fire (held_fire_at) and its
  // previous task has ended, creates the held fire's task — one transaction,
  // so once. nullopt when nothing was released.
  virtual Result<std::optional<TaskRecords::CreatedTask>> ReleaseHeldFire(
      const std::string& /*schedule_id*/) {
    return NotSupportedByStore();
  }
  // A cron fire refused by the owner's daily quota (issue 44): claims
  // (schedule_id, fire_at) with outcome kQuota, creates no task and moves
  // last_fire_at on, so that time is not fired again — one transaction. The
  // fire's outcome is kAlreadyFired when the time was claimed before;
  // kNotFound when the schedule is gone. (The refusal's text is the
  // quota.refused event's, store/quota_gate.h.)
  virtual Result<ScheduleFire> SkipFireForQuota(const std::string& /*schedule_id*/,
                                                TimeMs /*fire_at*/) {
    return NotSupportedByStore();
  }
  // The schedule's fires, newest fire time first.
  virtual Result<std::vector<ScheduleFire>> ListScheduleFires(const std::string& /*schedule_id*/,
                                                              int /*limit*/) {
    return NotSupportedByStore();
  }
};

}  // namespace maestro
