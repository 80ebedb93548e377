// The Scheduler over a real store driven by a FakeClock: catch-up after a
// downtime, overlap, DST, and issue 20's "done when" — a `*/1 * * * *`
// schedule over a simulated day, with a restart at noon and two schedulers
// on their own store connections ticking concurrently: exactly 1,440 tasks,
// none doubled. On SQLite and PostgreSQL (the conformance fixture).
#include "schedule/scheduler.h"

#include <barrier>
#include <set>
#include <thread>

#include "support/store_fixture.h"
#include "utc_time.h"

namespace maestro::schedule {
namespace {

using maestro::testing::StoreConformance;

constexpr TimeMs kMinute = 60'000;

class SchedulerTest : public StoreConformance {
 protected:
  Schedule Create(const std::string& cron, ScheduleOverlap overlap = ScheduleOverlap::kAllow,
                  ScheduleCatchUp catch_up = ScheduleCatchUp::kNone, const std::string& tz = "UTC",
                  const std::string& owner = "") {
    Schedule s;
    s.owner = owner;
    s.name = "every minute";
    s.cron = cron;
    s.timezone = tz;
    s.instruction = "tick";
    s.piece = "ok";
    s.overlap = overlap;
    s.catch_up = catch_up;
    auto c = store_->CreateSchedule(s);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : Schedule{};
  }

  SchedulerOptions Options(Store* store) {
    SchedulerOptions o;
    o.store = store;
    o.clock = &clock_;
    return o;
  }

  size_t Tasks() { return store_->ListTasks(std::nullopt, 100'000)->size(); }

  std::vector<TimeMs> FireTimes(const std::string& id) {
    std::vector<TimeMs> out;
    auto fires = store_->ListScheduleFires(id, 100'000);
    for (const auto& f : *fires) out.insert(out.begin(), f.fire_at);
    return out;
  }
};

TEST_P(SchedulerTest, EveryMinuteForADayAcrossARestartWithTwoSchedulersExactlyOnce) {
  clock_.Set(Utc(2026, 6, 1));
  const Schedule s = Create("*/1 * * * *");
  int created = 0, already = 0;
  int minute = 0;
  for (int phase = 0; phase < 2; ++phase) {
    // A restart between the phases: the first store and both schedulers go,
    // new ones open the same database.
    if (phase == 1) Reopen();
    StoreOptions o;
    o.clock = &clock_;
    auto other = OpenAnother(o);
    ASSERT_TRUE(other.ok()) << other.status().ToString();
    Scheduler a(Options(store_.get())), b(Options(other->get()));
    std::barrier sync(3);
    std::atomic<int> phase_created{0}, phase_already{0};
    auto run = [&](Scheduler* sch) {
      for (int i = 0; i < 720; ++i) {
        sync.arrive_and_wait();  // the clock has moved on
        auto r = sch->Tick();
        EXPECT_EQ(r.errors, 0);
        phase_created += r.created;
        phase_already += r.already_fired;
        sync.arrive_and_wait();  // both ticked
      }
    };
    std::thread ta(run, &a), tb(run, &b);
    for (int i = 0; i < 720; ++i, ++minute) {
      clock_.Advance(kMinute);
      sync.arrive_and_wait();
      sync.arrive_and_wait();
      // Both ticked this minute: one of them created its task.
      EXPECT_EQ(phase_created.load(), i + 1) << "minute " << minute;
    }
    ta.join();
    tb.join();
    created += phase_created;
    already += phase_already;
  }
  EXPECT_EQ(minute, 1440);
  EXPECT_EQ(created, 1440);
  // The other one lost the claim, or listed the schedule after the commit
  // and found nothing due.
  EXPECT_LE(already, 1440);
  EXPECT_EQ(Tasks(), 1440u);
  auto fires = store_->ListScheduleFires(s.id, 100'000);
  ASSERT_EQ(fires->size(), 1440u);
  std::set<TimeMs> times;
  std::set<std::string> tasks;
  for (const auto& f : *fires) {
    times.insert(f.fire_at);
    tasks.insert(f.task_id);
    EXPECT_EQ(f.outcome, FireOutcome::kCreated);
  }
  EXPECT_EQ(times.size(), 1440u);
  EXPECT_EQ(tasks.size(), 1440u) << "no task doubled";
  EXPECT_EQ(*times.begin(), Utc(2026, 6, 1, 0, 1));
  EXPECT_EQ(*times.rbegin(), Utc(2026, 6, 2));
}

TEST_P(SchedulerTest, CatchUpNoneSkipsADowntimeCatchUpOneFiresItOnce) {
  clock_.Set(Utc(2026, 6, 1));
  const Schedule none = Create("0 * * * *", ScheduleOverlap::kAllow, ScheduleCatchUp::kNone);
  const Schedule one = Create("0 * * * *", ScheduleOverlap::kAllow, ScheduleCatchUp::kOne);
  Scheduler sch(Options(store_.get()));
  clock_.Set(Utc(2026, 6, 1, 5, 10));  // down from 00:00 to 05:10: five fires missed
  EXPECT_EQ(sch.Tick().created, 1);
  EXPECT_EQ(sch.Tick().created, 0) << "once";
  EXPECT_TRUE(FireTimes(none.id).empty());
  EXPECT_EQ(FireTimes(one.id), (std::vector<TimeMs>{Utc(2026, 6, 1, 5)})) << "the latest missed";

  clock_.Set(Utc(2026, 6, 1, 6, 0) + 30'000);  // on time (within a minute): both fire
  EXPECT_EQ(sch.Tick().created, 2);
  EXPECT_EQ(FireTimes(none.id), (std::vector<TimeMs>{Utc(2026, 6, 1, 6)}));
}

TEST_P(SchedulerTest, PausedSchedulesDoNotFireAndResumingDoesNotCatchUp) {
  clock_.Set(Utc(2026, 6, 1));
  Schedule s = Create("*/1 * * * *", ScheduleOverlap::kAllow, ScheduleCatchUp::kOne);
  Scheduler sch(Options(store_.get()));
  s.enabled = false;
  ASSERT_TRUE(store_->UpdateSchedule(s).ok());
  clock_.Advance(10 * kMinute);
  EXPECT_EQ(sch.Tick().created, 0);
  s.enabled = true;
  ASSERT_TRUE(store_->UpdateSchedule(s).ok());
  EXPECT_EQ(sch.Tick().created, 0) << "the paused time is not missed time";
  clock_.Advance(kMinute);
  EXPECT_EQ(sch.Tick().created, 1);
}

TEST_P(SchedulerTest, OverlapSkipAndQueue) {
  clock_.Set(Utc(2026, 6, 1));
  const Schedule skip = Create("*/1 * * * *", ScheduleOverlap::kSkip);
  const Schedule queue = Create("*/1 * * * *", ScheduleOverlap::kQueue);
  Scheduler sch(Options(store_.get()));
  clock_.Advance(kMinute);
  EXPECT_EQ(sch.Tick().created, 2);
  clock_.Advance(kMinute);
  auto r = sch.Tick();
  EXPECT_EQ(r.skipped, 1);
  EXPECT_EQ(r.held, 1);
  clock_.Advance(kMinute);
  EXPECT_EQ(sch.Tick().skipped, 2) << "the queue holds one fire at most";
  // The first tasks end: the held fire's task comes at the next tick.
  auto open = store_->ListTasks(std::nullopt, 10);
  for (const auto& t : *open) {
    ASSERT_TRUE(store_->RequestCancel(store_->ListJobs(t.id)->back().id).ok());
  }
  clock_.Advance(10'000);
  r = sch.Tick();
  EXPECT_EQ(r.created, 1);
  auto fires = store_->ListScheduleFires(queue.id, 10);
  ASSERT_EQ(fires->size(), 3u);
  EXPECT_EQ((*fires)[1].outcome, FireOutcome::kCreated);  // the held 00:02 fire
  EXPECT_EQ(Tasks(), 3u);
  EXPECT_EQ(FireTimes(skip.id).size(), 3u);
}

TEST_P(SchedulerTest, DaylightSavingTimeInBerlin) {
  // 02:30 every day across both 2026 changes, ticking every minute.
  const Schedule s = [&] {
    clock_.Set(Utc(2026, 3, 28));
    return Create("30 2 * * *", ScheduleOverlap::kAllow, ScheduleCatchUp::kNone, "Europe/Berlin");
  }();
  Scheduler sch(Options(store_.get()));
  auto tick_until = [&](TimeMs end) {
    while (clock_.NowMs() < end) {
      clock_.Advance(kMinute);
      EXPECT_EQ(sch.Tick().errors, 0);
    }
  };
  tick_until(Utc(2026, 3, 31));
  EXPECT_EQ(FireTimes(s.id), (std::vector<TimeMs>{Utc(2026, 3, 28, 1, 30), Utc(2026, 3, 29, 1, 0),
                                                  Utc(2026, 3, 30, 0, 30)}))
      << "the skipped 02:30 fires once, at 03:00 CEST";
  clock_.Set(Utc(2026, 10, 24, 12));
  tick_until(Utc(2026, 10, 26, 12));
  const auto times = FireTimes(s.id);
  ASSERT_EQ(times.size(), 5u);
  EXPECT_EQ(times[3], Utc(2026, 10, 25, 0, 30)) << "the repeated 02:30 fires once";
  EXPECT_EQ(times[4], Utc(2026, 10, 26, 1, 30));
}

// Issue 44: 500 every-minute schedules made 500 tasks for a user whose own
// creates a quota of 5 refused. A fire counts toward its owner's quota: over
// it, no task, and the fire is in the history as "quota".
TEST_P(SchedulerTest, FiresOverTheOwnersDailyQuotaCreateNoTask) {
  clock_.Set(Utc(2026, 6, 1, 23, 50));
  std::vector<Schedule> alices;
  for (int i = 0; i < 6; ++i) {
    alices.push_back(
        Create("* * * * *", ScheduleOverlap::kAllow, ScheduleCatchUp::kNone, "UTC", "alice"));
  }
  const Schedule bobs =
      Create("* * * * *", ScheduleOverlap::kAllow, ScheduleCatchUp::kNone, "UTC", "bob");
  SchedulerOptions o = Options(store_.get());
  o.quotas.users["alice"].max_tasks_per_day = 2;
  Scheduler sch(o);
  int created = 0, refused = 0;
  for (int minute = 0; minute < 3; ++minute) {
    clock_.Advance(kMinute);
    auto r = sch.Tick();
    EXPECT_EQ(r.errors, 0);
    created += r.created;
    refused += r.quota;
  }
  // Alice's 2 of the day and bob's 3 (no quota); alice's other 16 refused.
  EXPECT_EQ(created, 5);
  EXPECT_EQ(refused, 16);
  int alice_tasks = 0;
  const auto tasks = store_->ListTasks(std::nullopt, 1000);
  ASSERT_TRUE(tasks.ok());
  for (const Task& t : *tasks) alice_tasks += t.owner == "alice";
  EXPECT_EQ(alice_tasks, 2);
  int quota_fires = 0;
  for (const Schedule& s : alices) {
    auto fires = store_->ListScheduleFires(s.id, 100);
    ASSERT_EQ(fires->size(), 3u) << "every due time is claimed, none tried again";
    for (const auto& f : *fires) {
      if (f.outcome == FireOutcome::kQuota) {
        ++quota_fires;
        EXPECT_TRUE(f.task_id.empty());
      }
    }
  }
  EXPECT_EQ(quota_fires, 16);
  EXPECT_EQ(store_->ListScheduleFires(bobs.id, 100)->size(), 3u);
  EXPECT_EQ(store_->ComputeApiMetrics()->quota_refusals, 16) << "each refusal logged once";
  // A new UTC day: alice's quota starts again.
  clock_.Set(Utc(2026, 6, 2, 0, 5));
  auto r = sch.Tick();
  EXPECT_EQ(r.created, 3);  // alice's first two schedules and bob's
  EXPECT_EQ(r.quota, 4);
}

MAESTRO_STORE_CONFORMANCE(SchedulerTest);

}  // namespace
}  // namespace maestro::schedule
