#include "schedule/scheduler.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "schedule/cron.h"
#include "store/quota_gate.h"

namespace maestro::schedule {

void Scheduler::Start() {
  loop_.Start(options_.tick, PeriodicTask::FirstRun::kImmediately, [this] { Tick(); });
}

void Scheduler::Stop() { loop_.Stop(); }

Result<bool> Scheduler::OverQuota(const Schedule& s, bool record) {
  Status st = budget::CheckDailyQuota(*options_.store, options_.quotas, options_.clock->NowMs(),
                                      s.owner, "schedule", record);
  if (st.ok()) return false;
  if (st.code() == StatusCode::kResourceExhausted) return true;
  return st;
}

void Scheduler::Fire(const Schedule& s, TimeMs due, TickReport& report) {
  auto over = OverQuota(s, /*record=*/true);
  if (!over.ok()) {
    // A store error: the fire is not lost, it is tried again next tick.
    spdlog::warn("scheduler: schedule {}: quota check: {}", s.id, over.status().ToString());
    ++report.errors;
    return;
  }
  if (*over) {
    auto skipped = options_.store->SkipFireForQuota(s.id, due);
    if (!skipped.ok()) {
      if (skipped.status().code() == StatusCode::kNotFound) return;
      spdlog::warn("scheduler: schedule {} at {}: {}", s.id, FormatIso8601(due),
                   skipped.status().ToString());
      ++report.errors;
    } else if (skipped->outcome == FireOutcome::kAlreadyFired) {
      ++report.already_fired;
    } else {
      ++report.quota;
      spdlog::info("scheduler: schedule {} ({}) at {}: no task, the daily quota of {} is reached",
                   s.id, s.name, FormatIso8601(due), s.owner);
    }
    return;
  }
  auto fired = options_.store->FireSchedule(s.id, due, /*manual=*/false);
  if (!fired.ok()) {
    // Deleted between the list and the fire: nothing to do.
    if (fired.status().code() == StatusCode::kNotFound) return;
    spdlog::warn("scheduler: schedule {} at {}: {}", s.id, FormatIso8601(due),
                 fired.status().ToString());
    ++report.errors;
    return;
  }
  switch (fired->fire.outcome) {
    case FireOutcome::kCreated:
      ++report.created;
      spdlog::info("scheduler: schedule {} ({}) fired for {}: task {}", s.id, s.name,
                   FormatIso8601(due), fired->fire.task_id);
      break;
    case FireOutcome::kSkipped:
      ++report.skipped;
      break;
    case FireOutcome::kHeld:
      ++report.held;
      break;
    case FireOutcome::kAlreadyFired:
      ++report.already_fired;
      break;
    case FireOutcome::kQuota:
      ++report.quota;
      break;
  }
}

Scheduler::TickReport Scheduler::Tick() {
  TickReport report;
  auto schedules = options_.store->ListSchedules(std::nullopt);
  if (!schedules.ok()) {
    spdlog::warn("scheduler: listing schedules: {}", schedules.status().ToString());
    ++report.errors;
    return report;
  }
  const TimeMs now = options_.clock->NowMs();
  for (const Schedule& s : *schedules) {
    if (!s.enabled) continue;
    // A held fire over the quota stays held (checked quietly: it is
    // looked at every tick).
    auto held_over = s.held_fire_at != 0 ? OverQuota(s, /*record=*/false) : Result<bool>(false);
    if (s.held_fire_at != 0 && held_over.ok() && !*held_over) {
      auto released = options_.store->ReleaseHeldFire(s.id);
      if (!released.ok()) {
        spdlog::warn("scheduler: schedule {}: {}", s.id, released.status().ToString());
        ++report.errors;
      } else if (released->has_value()) {
        ++report.created;
      }
    }
    // Checked when it was saved; a rule that no longer parses (a time zone
    // gone from the system's database) is reported, not fired.
    auto rule = CronRule::Make(s.cron, s.timezone);
    if (!rule.ok()) {
      spdlog::warn("scheduler: schedule {}: {}", s.id, rule.status().message());
      ++report.errors;
      continue;
    }
    TimeMs since = std::max(s.anchor_at, s.last_fire_at);
    if (s.catch_up == ScheduleCatchUp::kNone) since = std::max(since, now - options_.on_time_ms);
    const std::optional<TimeMs> due = rule->LatestIn(since, now);
    if (!due) continue;
    Fire(s, *due, report);
  }
  return report;
}

}  // namespace maestro::schedule
