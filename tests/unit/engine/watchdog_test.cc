// The watchdog's rules (seed 000 §3 "watchdog"), table-driven: each case is
// a sequence of iterations and the verdict expected after each one.
#include "engine/loop/watchdog.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace maestro::engine {
namespace {

using Kind = WatchdogVerdict::Kind;

// One step of a case: what the iteration did, and the verdict of the Check()
// that follows it.
struct Step {
  std::string calls;                // "" = a text-only reply; else the batch signature
  std::vector<std::string> errors;  // "Tool:text" errors returned by the calls
  int64_t at_ms = 0;                // the time of the Check
  Kind expect = Kind::kOk;
  std::string rule = "";  // expected rule when not kOk
};

struct Case {
  const char* name;
  WatchdogLimits limits;
  std::vector<Step> steps;
};

WatchdogLimits Limits(int errors, int cycles, int64_t time_ms = 0, int64_t grace_ms = 0) {
  WatchdogLimits l;
  l.error_repeat_limit = errors;
  l.error_window = 6;
  l.cycle_repeats = cycles;
  l.max_cycle_period = 3;
  l.movement_time_limit_ms = time_ms;
  l.movement_time_grace_ms = grace_ms;
  return l;
}

Step S(std::string calls, std::vector<std::string> errors = {}, Kind k = Kind::kOk,
       std::string rule = "", int64_t at = 0) {
  return Step{std::move(calls), std::move(errors), at, k, std::move(rule)};
}

std::vector<WatchdogError> Errors(const std::vector<std::string>& specs) {
  std::vector<WatchdogError> out;
  for (const auto& s : specs) {
    size_t colon = s.find(':');
    out.push_back({s.substr(0, colon), s.substr(colon + 1)});
  }
  return out;
}

const std::string kEditFail = "EditFile:Error: old text not found in a.cc";

class WatchdogTable : public ::testing::TestWithParam<Case> {};

TEST_P(WatchdogTable, VerdictAfterEachIteration) {
  const Case& c = GetParam();
  Watchdog wd(c.limits, 0);
  for (size_t i = 0; i < c.steps.size(); ++i) {
    const Step& s = c.steps[i];
    if (s.calls.empty()) {
      wd.RecordNoCalls();
    } else {
      wd.Record(s.calls, Errors(s.errors));
    }
    WatchdogVerdict v = wd.Check(s.at_ms);
    EXPECT_EQ(static_cast<int>(v.kind), static_cast<int>(s.expect)) << c.name << " step " << i;
    if (s.expect != Kind::kOk) {
      EXPECT_EQ(v.rule, s.rule) << c.name << " step " << i;
      EXPECT_FALSE(v.message.empty());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rules, WatchdogTable,
    ::testing::Values(
        Case{"same_error_three_times_warns_then_aborts",
             Limits(3, 0),
             {S("E1", {kEditFail}), S("E2", {kEditFail}),
              S("E3", {kEditFail}, Kind::kWarn, "repeated_error"),
              // history cleared by the warning: three more are needed
              S("E4", {kEditFail}), S("E5", {kEditFail}),
              S("E6", {kEditFail}, Kind::kAbort, "repeated_error")}},
        Case{"different_errors_do_not_add_up",
             Limits(3, 0),
             {S("E1", {"EditFile:Error: a"}), S("E2", {"EditFile:Error: b"}),
              S("E3", {"EditFile:Error: c"}), S("E4", {"ReadFile:Error: a"})}},
        Case{"same_text_from_another_tool_is_another_error",
             Limits(3, 0),
             {S("E1", {"EditFile:Error: x"}), S("E2", {"WriteFile:Error: x"}),
              S("E3", {"EditFile:Error: x"})}},
        Case{"errors_outside_the_window_are_forgotten",
             Limits(3, 0),
             {S("E1", {kEditFail}), S("R1"), S("R2"), S("R3"), S("R4"), S("E2", {kEditFail}),
              S("R5"), S("E3", {kEditFail})}},
        Case{"interleaved_reads_do_not_hide_a_repeating_error",
             Limits(3, 0),
             {S("E1", {kEditFail}), S("R1"), S("E2", {kEditFail}), S("R2"),
              S("E3", {kEditFail}, Kind::kWarn, "repeated_error")}},
        Case{"ab_cycle_warns_after_three_cycles_then_aborts",
             Limits(0, 3),
             {S("A"), S("B"), S("A"), S("B"), S("A"), S("B", {}, Kind::kWarn, "call_cycle"), S("A"),
              S("B"), S("A"), S("B"), S("A"), S("B", {}, Kind::kAbort, "call_cycle")}},
        Case{"abc_cycle_is_found_too",
             Limits(0, 2),
             {S("A"), S("B"), S("C"), S("A"), S("B"), S("C", {}, Kind::kWarn, "call_cycle")}},
        Case{"a_broken_cycle_is_progress",
             Limits(0, 3),
             {S("A"), S("B"), S("A"), S("B"), S("C"), S("A"), S("B"), S("A")}},
        Case{"identical_batches_are_the_loop_guards_not_a_cycle",
             Limits(0, 3),
             {S("A"), S("A"), S("A"), S("A"), S("A"), S("A"), S("A")}},
        Case{"a_text_only_reply_breaks_the_cycle",
             Limits(0, 3),
             {S("A"), S("B"), S("A"), S("B"), S(""), S("A"), S("B")}},
        Case{"movement_time_warns_at_the_limit_then_aborts_after_the_grace",
             Limits(0, 0, 1000, 500),
             {S("A", {}, Kind::kOk, "", 999), S("B", {}, Kind::kWarn, "movement_time", 1000),
              S("C", {}, Kind::kOk, "", 1499), S("D", {}, Kind::kAbort, "movement_time", 1500)}},
        Case{"rules_off_never_fire",
             Limits(0, 0, 0, 0),
             {S("A", {kEditFail}), S("B", {kEditFail}), S("A", {kEditFail}), S("B", {kEditFail}),
              S("A", {kEditFail}), S("B", {kEditFail}, Kind::kOk, "", 1'000'000'000)}}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

TEST(Watchdog, MessagesNameTheRuleAndTheEvidence) {
  Watchdog wd(Limits(2, 0), 0);
  wd.Record("E", Errors({kEditFail}));
  wd.Record("E2", Errors({kEditFail}));
  WatchdogVerdict warn = wd.Check(0);
  ASSERT_EQ(warn.kind, Kind::kWarn);
  EXPECT_NE(warn.message.find("[maestro watchdog]"), std::string::npos);
  EXPECT_NE(warn.message.find("EditFile"), std::string::npos);
  EXPECT_NE(warn.message.find("old text not found"), std::string::npos);
  wd.Record("E3", Errors({kEditFail}));
  wd.Record("E4", Errors({kEditFail}));
  WatchdogVerdict abort = wd.Check(0);
  ASSERT_EQ(abort.kind, Kind::kAbort);
  EXPECT_NE(abort.message.find("no progress after a watchdog warning (repeated_error)"),
            std::string::npos);
}

TEST(Watchdog, CycleMessageNamesTheToolsOfTheCycle) {
  Watchdog wd(Limits(0, 2), 0);
  std::string a = std::string("ReadFile\x1f{\"path\":\"a\"}\x1e");
  std::string b = std::string("EditFile\x1f{\"path\":\"a\"}\x1e");
  for (int i = 0; i < 2; ++i) {
    wd.Record(a, {});
    wd.Record(b, {});
  }
  WatchdogVerdict v = wd.Check(0);
  ASSERT_EQ(v.kind, Kind::kWarn);
  EXPECT_NE(v.message.find("ReadFile -> EditFile"), std::string::npos) << v.message;
}

}  // namespace
}  // namespace maestro::engine
