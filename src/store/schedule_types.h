// Value types of scheduled tasks (issue 20): a Schedule row — a cron
// expression in an IANA time zone plus the task it starts — and one claimed
// fire time. The store keeps them (Store::CreateSchedule ... FireSchedule);
// the cron maths and the loop that fires them live in src/schedule/. Plain
// data; no thread-safety concerns.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/json.h"

namespace maestro {

// What a fire does while the schedule's previous task is still active (not
// succeeded/failed/cancelled): kSkip creates no task (the fire is recorded
// as skipped); kQueue holds the fire and creates its task once the previous
// one ends — at most one fire is held, later ones are skipped, so a slow task
// never builds a backlog; kAllow creates the task at once (they run side by
// side).
enum class ScheduleOverlap { kSkip, kQueue, kAllow };
// What a fire time missed while no scheduler ran (a downtime, a pause does
// not count: enabling restarts the count) does: kNone skips it (only a fire
// that is due "now" runs), kOne runs the latest missed one once.
enum class ScheduleCatchUp { kNone, kOne };

inline std::string_view ScheduleOverlapName(ScheduleOverlap o) {
  switch (o) {
    case ScheduleOverlap::kSkip:
      return "skip";
    case ScheduleOverlap::kQueue:
      return "queue";
    case ScheduleOverlap::kAllow:
      return "allow";
  }
  return "skip";
}
inline std::optional<ScheduleOverlap> ParseScheduleOverlap(std::string_view s) {
  for (auto o : {ScheduleOverlap::kSkip, ScheduleOverlap::kQueue, ScheduleOverlap::kAllow}) {
    if (ScheduleOverlapName(o) == s) return o;
  }
  return std::nullopt;
}
inline std::string_view ScheduleCatchUpName(ScheduleCatchUp c) {
  return c == ScheduleCatchUp::kOne ? "one" : "none";
}
inline std::optional<ScheduleCatchUp> ParseScheduleCatchUp(std::string_view s) {
  if (s == "none") return ScheduleCatchUp::kNone;
  if (s == "one") return ScheduleCatchUp::kOne;
  return std::nullopt;
}

struct Schedule {
  std::string id;  // UUID
  std::string name;
  std::string cron;              // 5 fields or @daily etc. (schedule/cron.h)
  std::string timezone = "UTC";  // IANA name the cron fields are read in
  std::string instruction;       // of every task it creates
  std::string piece = "chat";
  std::string space;
  std::string profile;
  std::string visibility = "private";  // private | shared, as tasks
  std::string owner;
  bool enabled = true;
  ScheduleOverlap overlap = ScheduleOverlap::kSkip;
  ScheduleCatchUp catch_up = ScheduleCatchUp::kNone;
  // The budget limits its tasks get (store/budget.h LimitsJson), resolved
  // from the config's defaults when the schedule is saved, as a task create
  // resolves them.
  Json budget = Json::object();
  // Fire times after max(anchor_at, last_fire_at) are due. anchor_at is set
  // at create and again when the schedule is re-enabled or its cron or
  // timezone changes, so those never fire for the time before.
  TimeMs anchor_at = 0;
  TimeMs last_fire_at = 0;   // the newest claimed cron fire time (0: none)
  std::string last_task_id;  // the task of the newest fire that made one
  TimeMs held_fire_at = 0;   // overlap queue: the fire waiting (0: none)
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
};

// What FireSchedule / a held fire did with one fire time.
enum class FireOutcome {
  kCreated,       // the task was created
  kSkipped,       // overlap skip (or a queue that already holds one)
  kHeld,          // overlap queue: waits for the previous task to end
  kAlreadyFired,  // another scheduler (or an earlier run) claimed this time
  kQuota,         // the owner's daily quota was reached: no task (issue 44)
};

struct ScheduleFire {
  std::string schedule_id;
  TimeMs fire_at = 0;
  bool manual = false;  // "run now"
  FireOutcome outcome = FireOutcome::kCreated;
  std::string task_id;  // when a task was created
  TimeMs created_at = 0;
};

inline std::string_view FireOutcomeName(FireOutcome o) {
  switch (o) {
    case FireOutcome::kCreated:
      return "created";
    case FireOutcome::kSkipped:
      return "skipped";
    case FireOutcome::kHeld:
      return "held";
    case FireOutcome::kAlreadyFired:
      return "already_fired";
    case FireOutcome::kQuota:
      return "quota";
  }
  return "created";
}

}  // namespace maestro
