#include "schedule/cron.h"

#include <date/tz.h>
#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <chrono>
#include <stdexcept>

#include "core/mutex.h"
#include "core/strings.h"

namespace maestro::schedule {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;

// date's tz database is a function-local static built on the first lookup.
// That is thread-safe, but the guard check is inlined in the uninstrumented
// libdate-tz, so ThreadSanitizer sees two threads' first lookups (two
// schedulers, or a scheduler and an API handler) as a race on the zone
// names. One mutex around the lookup makes the ordering visible; the found
// zone's own lazy load is a std::call_once, which TSan does see.
const date::time_zone* LocateZone(const std::string& name) {
  static Mutex mu;
  MutexLock lock(&mu);
  return date::locate_zone(name);
}

// One of the five fields: its name in messages, its range, and the names
// it accepts for values (month and weekday names, "jan" = 1, "sun" = 0).
struct FieldSpec {
  const char* name;
  int min;
  int max;
  const char* const* names;  // indexed from `names_from`, or nullptr
  int names_from;
  int names_count;
};

constexpr const char* kMonthNames[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                       "jul", "aug", "sep", "oct", "nov", "dec"};
constexpr const char* kWeekdayNames[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

constexpr FieldSpec kFields[] = {
    {"minute", 0, 59, nullptr, 0, 0},           {"hour", 0, 23, nullptr, 0, 0},
    {"day-of-month", 1, 31, nullptr, 0, 0},     {"month", 1, 12, kMonthNames, 1, 12},
    {"day-of-week", 0, 7, kWeekdayNames, 0, 7},  // 7 is Sunday too
};

Status FieldError(const FieldSpec& f, const std::string& what) {
  return InvalidArgument(fmt::format("cron {}: {}", f.name, what), "cron");
}

Result<int> ParseValue(const FieldSpec& f, std::string_view text) {
  if (text.empty()) return FieldError(f, "a value is missing");
  int v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc() && p == text.data() + text.size()) {
    if (v < f.min || v > f.max) {
      return FieldError(f, fmt::format("{} is out of range {}-{}", v, f.min, f.max));
    }
    return v;
  }
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (int i = 0; f.names && i < f.names_count; ++i) {
    if (lower == f.names[i]) return f.names_from + i;
  }
  return FieldError(
      f, fmt::format("'{}' is not a number{}", std::string(text), f.names ? " or a name" : ""));
}

// A field: a comma list of `*`, `v`, `a-b`, each optionally `/step`.
Result<uint64_t> ParseField(const FieldSpec& f, std::string_view text) {
  uint64_t bits = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view item = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    start = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    if (item.empty()) return FieldError(f, "empty list item");
    int step = 1;
    const bool stepped = item.find('/') != std::string_view::npos;
    if (size_t slash = item.find('/'); slash != std::string_view::npos) {
      std::string_view s = item.substr(slash + 1);
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), step);
      if (s.empty() || ec != std::errc() || p != s.data() + s.size() || step < 1) {
        return FieldError(f, fmt::format("step '{}' must be a positive number", std::string(s)));
      }
      item = item.substr(0, slash);
    }
    int lo = f.min, hi = f.max;
    if (item == "*") {
      // the whole range
    } else if (size_t dash = item.find('-'); dash != std::string_view::npos) {
      MAESTRO_ASSIGN_OR_RETURN(lo, ParseValue(f, item.substr(0, dash)));
      MAESTRO_ASSIGN_OR_RETURN(hi, ParseValue(f, item.substr(dash + 1)));
      if (lo > hi) return FieldError(f, fmt::format("range {}-{} runs backwards", lo, hi));
    } else {
      MAESTRO_ASSIGN_OR_RETURN(lo, ParseValue(f, item));
      // `a/n` is a through the end by n; a bare value is itself.
      hi = stepped ? f.max : lo;
    }
    for (int v = lo; v <= hi; v += step) bits |= uint64_t{1} << v;
  }
  return bits;
}

// The macros, as their 5-field meaning.
Result<std::string_view> ExpandMacro(std::string_view m) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kMacros = {{
      {"@yearly", "0 0 1 1 *"},
      {"@annually", "0 0 1 1 *"},
      {"@monthly", "0 0 1 * *"},
      {"@weekly", "0 0 * * 0"},
      {"@daily", "0 0 * * *"},
      {"@midnight", "0 0 * * *"},
      {"@hourly", "0 * * * *"},
  }};
  for (const auto& [name, fields] : kMacros) {
    if (m == name) return fields;
  }
  return InvalidArgument(
      fmt::format("cron: unknown macro '{}'; known: @yearly @annually @monthly @weekly @daily "
                  "@midnight @hourly",
                  std::string(m)),
      "cron");
}

bool DayMatches(const CronFields& f, const date::year_month_day& ymd, date::weekday wd) {
  const bool dom = f.days[unsigned(ymd.day())];
  const bool dow = f.weekdays[wd.c_encoding()];
  if (f.day_star || f.weekday_star) return dom && dow;
  return dom || dow;
}

}  // namespace

Result<CronFields> ParseCron(std::string_view expr) {
  expr = Trim(expr);
  if (!expr.empty() && expr.front() == '@') {
    MAESTRO_ASSIGN_OR_RETURN(expr, ExpandMacro(expr));
  }
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i < expr.size()) {
    while (i < expr.size() && std::isspace(static_cast<unsigned char>(expr[i]))) ++i;
    size_t j = i;
    while (j < expr.size() && !std::isspace(static_cast<unsigned char>(expr[j]))) ++j;
    if (j > i) parts.push_back(expr.substr(i, j - i));
    i = j;
  }
  if (parts.size() != 5) {
    return InvalidArgument(
        fmt::format("cron: expected 5 fields (minute hour day-of-month month day-of-week) or a "
                    "macro such as @daily, got {}",
                    parts.size()),
        "cron");
  }
  CronFields out;
  uint64_t bits[5];
  for (int k = 0; k < 5; ++k) {
    MAESTRO_ASSIGN_OR_RETURN(bits[k], ParseField(kFields[k], parts[k]));
  }
  out.minutes = std::bitset<60>(bits[0]);
  out.hours = std::bitset<24>(bits[1]);
  out.days = std::bitset<32>(bits[2]);
  out.months = std::bitset<13>(bits[3]);
  if (bits[4] & (uint64_t{1} << 7)) bits[4] |= 1;  // 7 = Sunday = 0
  out.weekdays = std::bitset<7>(bits[4] & 0x7f);
  out.day_star = parts[2].front() == '*';
  out.weekday_star = parts[4].front() == '*';
  return out;
}

Result<CronRule> CronRule::Make(std::string_view cron, std::string_view timezone) {
  MAESTRO_ASSIGN_OR_RETURN(CronFields fields, ParseCron(cron));
  const date::time_zone* zone = nullptr;
  try {
    zone = LocateZone(std::string(timezone));
  } catch (const std::exception&) {
    return InvalidArgument(
        fmt::format("timezone: '{}' is not an IANA time zone (e.g. UTC, Europe/Berlin)",
                    std::string(timezone)),
        "timezone");
  }
  CronRule rule(fields, zone);
  // Five years from 2000-01-01 (a leap year) hold every date a rule can
  // name; one that fires in none of them (30 February) never fires.
  constexpr TimeMs kProbe = 946'684'800'000;
  if (!rule.NextAfter(kProbe))
    return InvalidArgument("cron: the rule never fires (no such date)", "cron");
  return rule;
}

std::optional<TimeMs> CronRule::NextAfter(TimeMs after) const {
  using namespace date;
  const sys_time<milliseconds> t{milliseconds(after)};
  local_time<minutes> m = floor<minutes>(zone_->to_local(t)) + minutes(1);
  const local_time<minutes> limit = m + days(5 * 366);
  while (m < limit) {
    const local_days d = floor<days>(m);
    const year_month_day ymd{d};
    if (!fields_.months[unsigned(ymd.month())]) {
      year_month ym = ymd.year() / ymd.month();
      ym += months(1);
      m = local_days{ym / 1};
      continue;
    }
    if (!DayMatches(fields_, ymd, weekday{d})) {
      m = d + days(1);
      continue;
    }
    const auto hour = std::chrono::duration_cast<std::chrono::hours>(m - d);
    if (!fields_.hours[hour.count()]) {
      m = d + hour + std::chrono::hours(1);
      continue;
    }
    const auto minute = (m - d - hour).count();
    if (!fields_.minutes[minute]) {
      m += minutes(1);
      continue;
    }
    // A skipped local time maps to the end of the gap; a repeated one to
    // its first occurrence. Either may fall at or before `after` (the
    // second pass of a repeated hour, the minutes of a gap already fired):
    // then look on.
    const auto s = zone_->to_sys(m, choose::earliest);
    if (s > t) return std::chrono::duration_cast<milliseconds>(s.time_since_epoch()).count();
    m += minutes(1);
  }
  return std::nullopt;
}

std::optional<TimeMs> CronRule::LatestIn(TimeMs after, TimeMs upto) const {
  // Look back in growing windows so a long downtime costs a few steps, not
  // one per missed fire.
  constexpr TimeMs kMinute = 60'000;
  for (TimeMs window : {60 * kMinute, 1440 * kMinute, 32 * 1440 * kMinute, 367 * 1440 * kMinute,
                        5 * 367 * 1440 * kMinute}) {
    const TimeMs from = std::max(after, upto - window);
    std::optional<TimeMs> latest;
    for (auto next = NextAfter(from); next && *next <= upto; next = NextAfter(*next)) {
      latest = next;
    }
    if (latest || from == after) return latest;
  }
  return std::nullopt;
}

std::vector<TimeMs> CronRule::Next(TimeMs after, int n) const {
  std::vector<TimeMs> out;
  for (auto next = NextAfter(after); next && static_cast<int>(out.size()) < n;
       next = NextAfter(*next)) {
    out.push_back(*next);
  }
  return out;
}

}  // namespace maestro::schedule
