// Cron: the time rule of a schedule (issue 20) — a 5-field cron expression
// (minute hour day-of-month month day-of-week; lists, ranges, steps, month
// and weekday names) or a macro (@yearly @annually @monthly @weekly @daily
// @midnight @hourly), read in an IANA time zone, and the fire times it
// gives.
//
// Where it sits: the API checks a schedule's cron and timezone with
// CronRule::Make and shows its next fires; the Scheduler asks it which fire
// time is due. Time-zone rules come from Howard Hinnant's date/tz over the
// system's zoneinfo (USE_OS_TZDB); only the field parser is ours.
//
// Daylight saving time (the rule cronie and Vixie cron follow for
// fixed-time jobs): fire times are matched on the local wall clock.
//   - A local time that does not exist (the hour skipped when clocks spring
//     forward) fires at the first instant after the gap, once: 02:30 on the
//     Berlin spring-forward day fires at 03:00 CEST, and every skipped
//     minute of `*/5 * * * *` collapses into that one fire.
//   - A local time that occurs twice (the hour repeated when clocks fall
//     back) fires once, at its first occurrence.
// Day-of-month and day-of-week: when both are restricted (neither starts
// with `*`) a day matches if either does, as in every cron.
//
// Thread safety: a CronRule is immutable; any thread may use it.
#pragma once

#include <bitset>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/status.h"

namespace date {
class time_zone;
}

namespace maestro::schedule {

// The parsed fields: bit i set = value i matches.
struct CronFields {
  std::bitset<60> minutes;
  std::bitset<24> hours;
  std::bitset<32> days;       // 1..31
  std::bitset<13> months;     // 1..12
  std::bitset<7> weekdays;    // 0 = Sunday (7 is read as 0)
  bool day_star = false;      // day-of-month field starts with '*'
  bool weekday_star = false;  // day-of-week field starts with '*'
};

// kInvalidArgument (field "cron") naming the cron field at fault, e.g.
// "cron hour: 24 is out of range 0-23".
Result<CronFields> ParseCron(std::string_view expr);

class CronRule {
 public:
  // Parses `cron` and looks up `timezone` (an IANA name such as
  // "Europe/Berlin"; "UTC"). Errors are kInvalidArgument naming "cron" or
  // "timezone"; a rule that never fires (30 February) is refused naming
  // "cron".
  static Result<CronRule> Make(std::string_view cron, std::string_view timezone);

  // The first fire time strictly after `after` (ms since the epoch, UTC;
  // fire times are whole minutes), or nullopt when none comes within five
  // years.
  std::optional<TimeMs> NextAfter(TimeMs after) const;
  // The latest fire time in (after, upto], if any.
  std::optional<TimeMs> LatestIn(TimeMs after, TimeMs upto) const;
  // The next `n` fire times after `after`.
  std::vector<TimeMs> Next(TimeMs after, int n) const;

 private:
  CronRule(CronFields fields, const date::time_zone* zone) : fields_(fields), zone_(zone) {}

  CronFields fields_;
  const date::time_zone* zone_;  // owned by the process-wide tz database
};

}  // namespace maestro::schedule
