// Loop monitors: warn at the threshold, exceed one cycle later, max_movements.
#include "engine/job/loop_monitor.h"

#include <gtest/gtest.h>

#include "engine_test_util.h"

namespace maestro::engine {
namespace {

using K = LoopMonitorVerdict::Kind;

TEST(LoopMonitor, CodingReviewFixLoopWarnsThenAborts) {
  Piece coding = test::Builtin("coding");  // cycle [review, fix], threshold 3, ABORT
  LoopMonitorTracker t(coding);
  for (const char* m : {"plan", "implement", "review"}) EXPECT_EQ(t.Enter(m).kind, K::kNone);
  EXPECT_EQ(t.Enter("fix").kind, K::kNone);  // cycle 1
  EXPECT_EQ(t.Enter("review").kind, K::kNone);
  EXPECT_EQ(t.Enter("fix").kind, K::kNone);  // cycle 2
  EXPECT_EQ(t.Enter("review").kind, K::kNone);
  LoopMonitorVerdict warn = t.Enter("fix");  // cycle 3 = threshold
  EXPECT_EQ(warn.kind, K::kWarn);
  EXPECT_EQ(warn.cycles, 3);
  EXPECT_EQ(warn.message, coding.loop_monitors[0].warning);
  EXPECT_EQ(t.Enter("review").kind, K::kNone);
  LoopMonitorVerdict over = t.Enter("fix");  // cycle 4
  EXPECT_EQ(over.kind, K::kExceeded);
  EXPECT_EQ(over.on_exceed, "ABORT");
}

TEST(LoopMonitor, DefaultWarningAndJumpTarget) {
  Piece research = test::Builtin("research");  // [investigate, report], 3, on_exceed report
  LoopMonitorTracker t(research);
  LoopMonitorVerdict v;
  for (int i = 0; i < 3; ++i) {
    t.Enter("investigate");
    v = t.Enter("report");
  }
  EXPECT_EQ(v.kind, K::kWarn);
  EXPECT_EQ(v.message,
            "Loop warning: the movements investigate -> report have repeated 3 times. Finish "
            "what blocks the task now; one more round ends it.");
  t.Enter("investigate");
  v = t.Enter("report");
  EXPECT_EQ(v.kind, K::kExceeded);
  EXPECT_EQ(v.on_exceed, "report");
  // The count restarted: the jump itself does not trip the monitor again.
  EXPECT_EQ(t.Enter("investigate").kind, K::kNone);
  EXPECT_EQ(t.Enter("report").kind, K::kNone);
}

TEST(LoopMonitor, CountsEntriesAgainstMaxMovements) {
  Piece chat = test::Builtin("chat");  // max_movements 5
  LoopMonitorTracker t(chat);
  for (int i = 0; i < 5; ++i) t.Enter("chat");
  EXPECT_FALSE(t.OverMaxMovements());
  t.Enter("chat");
  EXPECT_TRUE(t.OverMaxMovements());
  EXPECT_EQ(t.entries(), 6);
}

}  // namespace
}  // namespace maestro::engine
