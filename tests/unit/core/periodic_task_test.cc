// PeriodicTask: runs its function repeatedly, first at once or after one
// interval, and Stop() wakes a sleeping loop instead of waiting it out.
#include "core/periodic_task.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace maestro {
namespace {

using namespace std::chrono_literals;

bool WaitFor(const std::atomic<int>& count, int at_least) {
  for (int i = 0; i < 500 && count.load() < at_least; ++i) std::this_thread::sleep_for(10ms);
  return count.load() >= at_least;
}

TEST(PeriodicTaskTest, RunsAgainAndAgainUntilStopped) {
  std::atomic<int> runs{0};
  PeriodicTask task;
  task.Start(1ms, PeriodicTask::FirstRun::kImmediately, [&] { ++runs; });
  EXPECT_TRUE(WaitFor(runs, 3));
  task.Stop();
  const int after_stop = runs.load();
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(runs.load(), after_stop) << "ran after Stop()";
}

TEST(PeriodicTaskTest, StopWakesALongSleepAndFirstRunIsHonoured) {
  std::atomic<int> immediate{0};
  std::atomic<int> delayed{0};
  PeriodicTask a;
  PeriodicTask b;
  a.Start(1h, PeriodicTask::FirstRun::kImmediately, [&] { ++immediate; });
  b.Start(1h, PeriodicTask::FirstRun::kAfterInterval, [&] { ++delayed; });
  b.Start(1ms, PeriodicTask::FirstRun::kImmediately, [&] { delayed += 100; });  // no-op: running
  EXPECT_TRUE(WaitFor(immediate, 1));
  // Both loops now sleep for an hour; Stop must not wait for it (the test's
  // own timeout would fail it).
  a.Stop();
  b.Stop();
  EXPECT_EQ(immediate.load(), 1);
  EXPECT_EQ(delayed.load(), 0);
  // Stopped tasks may start again.
  a.Start(1ms, PeriodicTask::FirstRun::kImmediately, [&] { ++immediate; });
  EXPECT_TRUE(WaitFor(immediate, 2));
}

}  // namespace
}  // namespace maestro
