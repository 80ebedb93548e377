// The cron rule: field parsing with errors naming the field, macros, names,
// the day-of-month/day-of-week rule, and fire times across daylight saving
// time in Europe/Berlin (spring forward 2026-03-29 02:00 CET → 03:00 CEST,
// fall back 2026-10-25 03:00 CEST → 02:00 CET) and America/New_York.
#include "schedule/cron.h"

#include <gtest/gtest.h>

#include "utc_time.h"

namespace maestro::schedule {
namespace {

CronRule Rule(const char* cron, const char* tz = "UTC") {
  auto r = CronRule::Make(cron, tz);
  EXPECT_TRUE(r.ok()) << cron << ": " << r.status().ToString();
  return r.ok() ? *r : *CronRule::Make("* * * * *", "UTC");
}

std::string ErrorOf(const char* cron, const char* tz = "UTC") {
  auto r = CronRule::Make(cron, tz);
  EXPECT_FALSE(r.ok()) << cron;
  return r.ok() ? "" : r.status().field() + ": " + r.status().message();
}

TEST(CronTest, ErrorsNameTheField) {
  EXPECT_EQ(ErrorOf("60 * * * *"), "cron: cron minute: 60 is out of range 0-59");
  EXPECT_EQ(ErrorOf("* 24 * * *"), "cron: cron hour: 24 is out of range 0-23");
  EXPECT_EQ(ErrorOf("* * 0 * *"), "cron: cron day-of-month: 0 is out of range 1-31");
  EXPECT_EQ(ErrorOf("* * * foo *"), "cron: cron month: 'foo' is not a number or a name");
  EXPECT_EQ(ErrorOf("* * * * 8"), "cron: cron day-of-week: 8 is out of range 0-7");
  EXPECT_EQ(ErrorOf("*/0 * * * *"), "cron: cron minute: step '0' must be a positive number");
  EXPECT_EQ(ErrorOf("5-1 * * * *"), "cron: cron minute: range 5-1 runs backwards");
  EXPECT_EQ(ErrorOf("1,,2 * * * *"), "cron: cron minute: empty list item");
  EXPECT_NE(ErrorOf("* * * *").find("expected 5 fields"), std::string::npos);
  EXPECT_NE(ErrorOf("* * * * * *").find("got 6"), std::string::npos);
  EXPECT_NE(ErrorOf("@sometimes").find("unknown macro '@sometimes'"), std::string::npos);
  EXPECT_EQ(ErrorOf("0 0 30 2 *"), "cron: cron: the rule never fires (no such date)");
  EXPECT_NE(ErrorOf("* * * * *", "Mars/Olympus").find("timezone: 'Mars/Olympus'"),
            std::string::npos);
}

TEST(CronTest, ListsRangesStepsAndNames) {
  auto f = ParseCron("1,5-7,*/20 9-17/4 * jan,JUL-aug mon-fri");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  for (int m : {0, 1, 5, 6, 7, 20, 40}) EXPECT_TRUE(f->minutes[m]) << m;
  EXPECT_EQ(f->minutes.count(), 7u);
  EXPECT_EQ(f->hours.count(), 3u);  // 9, 13, 17
  EXPECT_TRUE(f->hours[13]);
  EXPECT_TRUE(f->months[1] && f->months[7] && f->months[8]);
  EXPECT_EQ(f->months.count(), 3u);
  EXPECT_EQ(f->weekdays.count(), 5u);
  EXPECT_FALSE(f->weekdays[0]);
  EXPECT_TRUE(ParseCron("0 0 * * 7")->weekdays[0]) << "7 is Sunday";
  auto start = ParseCron("10/15 * * * *");  // 10 through 59 by 15
  EXPECT_EQ(start->minutes.count(), 4u);
  EXPECT_TRUE(start->minutes[55]);
}

TEST(CronTest, NextFiresInUtc) {
  auto r = Rule("*/15 * * * *");
  EXPECT_EQ(r.Next(Utc(2026, 1, 10, 10, 7), 3),
            (std::vector<TimeMs>{Utc(2026, 1, 10, 10, 15), Utc(2026, 1, 10, 10, 30),
                                 Utc(2026, 1, 10, 10, 45)}));
  EXPECT_EQ(*r.NextAfter(Utc(2026, 1, 10, 10, 15)), Utc(2026, 1, 10, 10, 30)) << "strictly after";
  EXPECT_EQ(*Rule("@hourly").NextAfter(Utc(2026, 1, 10, 10, 7)), Utc(2026, 1, 10, 11));
  EXPECT_EQ(*Rule("@yearly").NextAfter(Utc(2026, 1, 10)), Utc(2027, 1, 1));
  EXPECT_EQ(*Rule("@annually").NextAfter(Utc(2026, 1, 10)), Utc(2027, 1, 1));
  EXPECT_EQ(*Rule("@monthly").NextAfter(Utc(2026, 1, 10)), Utc(2026, 2, 1));
  EXPECT_EQ(*Rule("@weekly").NextAfter(Utc(2026, 1, 10)), Utc(2026, 1, 11)) << "a Sunday";
  EXPECT_EQ(*Rule("@daily").NextAfter(Utc(2026, 1, 10, 5)), Utc(2026, 1, 11));
  EXPECT_EQ(*Rule("@midnight").NextAfter(Utc(2026, 1, 10, 5)), Utc(2026, 1, 11));
  EXPECT_EQ(*Rule("0 0 29 2 *").NextAfter(Utc(2026, 1, 1)), Utc(2028, 2, 29));
}

TEST(CronTest, DayOfMonthOrDayOfWeekWhenBothAreRestricted) {
  // The 13th, or any Friday (2026-02-06 is a Friday, the 13th is one too).
  auto r = Rule("0 0 13 * fri");
  EXPECT_EQ(r.Next(Utc(2026, 2, 1), 3),
            (std::vector<TimeMs>{Utc(2026, 2, 6), Utc(2026, 2, 13), Utc(2026, 2, 20)}));
  // Only the day of month restricted: every 13th.
  EXPECT_EQ(*Rule("0 0 13 * *").NextAfter(Utc(2026, 2, 14)), Utc(2026, 3, 13));
  // Only the weekday: Mondays (2026-02-02 is a Monday).
  EXPECT_EQ(*Rule("0 0 * * mon").NextAfter(Utc(2026, 2, 1)), Utc(2026, 2, 2));
}

TEST(CronTest, LocalTimeInAZone) {
  // Midnight in Berlin is 23:00 UTC in winter, 22:00 UTC in summer.
  auto r = Rule("@daily", "Europe/Berlin");
  EXPECT_EQ(*r.NextAfter(Utc(2026, 1, 10, 12)), Utc(2026, 1, 10, 23));
  EXPECT_EQ(*r.NextAfter(Utc(2026, 7, 10, 12)), Utc(2026, 7, 10, 22));
}

TEST(CronTest, SpringForwardSkippedTimeFiresOnceAfterTheGap) {
  auto r = Rule("30 2 * * *", "Europe/Berlin");
  EXPECT_EQ(r.Next(Utc(2026, 3, 27, 12), 4),
            (std::vector<TimeMs>{
                Utc(2026, 3, 28, 1, 30),  // 02:30 CET
                Utc(2026, 3, 29, 1, 0),   // 02:30 does not exist: 03:00 CEST, the gap's end
                Utc(2026, 3, 30, 0, 30),  // 02:30 CEST
                Utc(2026, 3, 31, 0, 30),
            }));
  // Every minute of the skipped hour collapses into one fire at the gap's end.
  auto q = Rule("*/15 * * * *", "Europe/Berlin");
  EXPECT_EQ(q.Next(Utc(2026, 3, 29, 0, 40), 4),
            (std::vector<TimeMs>{Utc(2026, 3, 29, 0, 45),  // 01:45 CET
                                 Utc(2026, 3, 29, 1, 0),   // 02:00-02:45 and 03:00 CEST
                                 Utc(2026, 3, 29, 1, 15), Utc(2026, 3, 29, 1, 30)}));
  // New York: 2026-03-08 02:00 EST → 03:00 EDT (07:00 UTC).
  EXPECT_EQ(*Rule("30 2 * * *", "America/New_York").NextAfter(Utc(2026, 3, 8)), Utc(2026, 3, 8, 7));
}

TEST(CronTest, FallBackRepeatedTimeFiresOnce) {
  auto r = Rule("30 2 * * *", "Europe/Berlin");
  EXPECT_EQ(r.Next(Utc(2026, 10, 24, 12), 2),
            (std::vector<TimeMs>{Utc(2026, 10, 25, 0, 30),  // first 02:30 (CEST) only
                                 Utc(2026, 10, 26, 1, 30)}));
  auto h = Rule("*/30 * * * *", "Europe/Berlin");
  EXPECT_EQ(h.Next(Utc(2026, 10, 24, 23, 40), 4),
            (std::vector<TimeMs>{Utc(2026, 10, 25, 0, 0),   // 02:00 CEST
                                 Utc(2026, 10, 25, 0, 30),  // 02:30 CEST
                                 // 02:00 and 02:30 CET (01:00Z, 01:30Z) are not repeated
                                 Utc(2026, 10, 25, 2, 0),  // 03:00 CET
                                 Utc(2026, 10, 25, 2, 30)}));
  // From inside the repeated hour's second pass, the next fire is after it.
  EXPECT_EQ(*h.NextAfter(Utc(2026, 10, 25, 1, 10)), Utc(2026, 10, 25, 2, 0));
}

TEST(CronTest, LatestInAWindow) {
  auto r = Rule("0 * * * *");
  EXPECT_EQ(*r.LatestIn(Utc(2026, 1, 1), Utc(2026, 1, 3, 5, 10)), Utc(2026, 1, 3, 5));
  EXPECT_EQ(*r.LatestIn(Utc(2026, 1, 1), Utc(2026, 1, 1, 1)), Utc(2026, 1, 1, 1)) << "upto counts";
  EXPECT_FALSE(r.LatestIn(Utc(2026, 1, 1, 1), Utc(2026, 1, 1, 1, 59))) << "after does not";
  EXPECT_EQ(*Rule("@yearly").LatestIn(Utc(2020, 6, 1), Utc(2026, 6, 1)), Utc(2026, 1, 1));
}

}  // namespace
}  // namespace maestro::schedule
