// The schedule rows and the fire claim (Store::CreateSchedule …
// FireSchedule, issue 20) on both backends: a fire time makes at most one
// task, the overlap rule is decided in the claim's transaction, a held fire
// is released once, schedules are owned and visible like tasks, and a fire
// refused by the owner's quota is claimed without a task (issue 44).
#include <set>
#include <thread>

#include "support/store_fixture.h"

namespace maestro {
namespace {

using testing::StoreConformance;

class SchedulesTest : public StoreConformance {
 protected:
  Schedule Make(const std::string& owner, const std::string& visibility,
                ScheduleOverlap overlap = ScheduleOverlap::kAllow) {
    Schedule s;
    s.name = "nightly report";
    s.cron = "0 3 * * *";
    s.timezone = "Europe/Berlin";
    s.instruction = "write the report";
    s.piece = "ok";
    s.owner = owner;
    s.visibility = visibility;
    s.overlap = overlap;
    auto c = store_->CreateSchedule(s);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : Schedule{};
  }

  Store::FireResult Fire(const std::string& id, TimeMs at, bool manual = false) {
    auto r = store_->FireSchedule(id, at, manual);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : Store::FireResult{};
  }

  void EndTask(const Store::FireResult& r) {
    ASSERT_TRUE(r.created.has_value());
    ASSERT_TRUE(store_->RequestCancel(r.created->job.id).ok());
  }
};

TEST_P(SchedulesTest, CreateGetUpdateDelete) {
  Schedule s = Make("alice", "private");
  EXPECT_FALSE(s.id.empty());
  EXPECT_EQ(s.anchor_at, clock_.NowMs());
  EXPECT_EQ(s.timezone, "Europe/Berlin");
  EXPECT_TRUE(s.enabled);
  EXPECT_EQ(s.last_fire_at, 0);

  clock_.Advance(1000);
  s.name = "renamed";
  s.enabled = false;
  auto u = store_->UpdateSchedule(s);
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->name, "renamed");
  EXPECT_FALSE(u->enabled);
  EXPECT_EQ(u->anchor_at, s.anchor_at) << "pausing keeps the anchor";

  clock_.Advance(1000);
  u->enabled = true;
  auto resumed = store_->UpdateSchedule(*u);
  ASSERT_TRUE(resumed.ok());
  EXPECT_EQ(resumed->anchor_at, clock_.NowMs()) << "resuming restarts the count";

  clock_.Advance(1000);
  resumed->cron = "*/5 * * * *";
  EXPECT_EQ(store_->UpdateSchedule(*resumed)->anchor_at, clock_.NowMs()) << "a new rule too";

  ASSERT_TRUE(store_->DeleteSchedule(s.id).ok());
  EXPECT_EQ(store_->GetSchedule(s.id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->DeleteSchedule(s.id).code(), StatusCode::kNotFound);
  Schedule gone = s;
  EXPECT_EQ(store_->UpdateSchedule(gone).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->FireSchedule(s.id, clock_.NowMs(), false).status().code(),
            StatusCode::kNotFound);
}

TEST_P(SchedulesTest, VisibleLikeTasks) {
  Schedule mine = Make("alice", "private");
  Schedule shared = Make("bob", "shared");
  Schedule bobs = Make("bob", "private");
  auto ids = [](const std::vector<Schedule>& v) {
    std::set<std::string> out;
    for (const auto& s : v) out.insert(s.id);
    return out;
  };
  EXPECT_EQ(ids(*store_->ListSchedules(std::string("alice"))),
            (std::set<std::string>{mine.id, shared.id}));
  EXPECT_EQ(ids(*store_->ListSchedules(std::string("bob"))),
            (std::set<std::string>{shared.id, bobs.id}));
  EXPECT_EQ(store_->ListSchedules(std::nullopt)->size(), 3u) << "the scheduler sees all";
}

TEST_P(SchedulesTest, AFireTimeMakesOneTask) {
  Schedule s = Make("alice", "private");
  const TimeMs at = 1'700'000'040'000;
  auto first = Fire(s.id, at);
  EXPECT_EQ(first.fire.outcome, FireOutcome::kCreated);
  ASSERT_TRUE(first.created.has_value());
  EXPECT_EQ(first.created->task.owner, "alice");
  EXPECT_EQ(first.created->task.visibility, "private");
  EXPECT_EQ(first.created->task.title, "nightly report");
  EXPECT_EQ(first.created->task.instruction, "write the report");
  EXPECT_EQ(first.created->job.piece, "ok");

  auto again = Fire(s.id, at);
  EXPECT_EQ(again.fire.outcome, FireOutcome::kAlreadyFired);
  EXPECT_FALSE(again.created.has_value());
  EXPECT_EQ(store_->ListTasks(std::nullopt, 10)->size(), 1u);

  auto after = store_->GetSchedule(s.id);
  EXPECT_EQ(after->last_fire_at, at);
  EXPECT_EQ(after->last_task_id, first.created->task.id);
  auto fires = store_->ListScheduleFires(s.id, 10);
  ASSERT_EQ(fires->size(), 1u);
  EXPECT_EQ((*fires)[0].task_id, first.created->task.id);
  EXPECT_EQ((*fires)[0].outcome, FireOutcome::kCreated);
}

TEST_P(SchedulesTest, ItsTasksTakeItsBudget) {
  Schedule s;
  s.name = "capped";
  s.cron = "@hourly";
  s.instruction = "x";
  s.piece = "ok";
  s.budget = {{"max_tokens", 1000}};
  auto c = store_->CreateSchedule(s);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->budget, s.budget);
  auto fired = Fire(c->id, 3'600'000);
  ASSERT_TRUE(fired.created.has_value());
  EXPECT_EQ(fired.created->task.budget, s.budget);
  c->budget = Json::object();
  EXPECT_EQ(store_->UpdateSchedule(*c)->budget, Json::object());
}

TEST_P(SchedulesTest, ConcurrentClaimsOfOneTimeMakeOneTask) {
  Schedule s = Make("", "private");
  StoreOptions o;
  o.clock = &clock_;
  auto other = OpenAnother(o);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  for (int minute = 1; minute <= 20; ++minute) {
    const TimeMs at = 1'700'000'000'000 + minute * 60'000;
    std::atomic<int> created{0};
    auto fire = [&](Store* st) {
      auto r = st->FireSchedule(s.id, at, false);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      if (r->fire.outcome == FireOutcome::kCreated) ++created;
    };
    std::thread a(fire, store_.get()), b(fire, other->get());
    a.join();
    b.join();
    EXPECT_EQ(created.load(), 1) << "minute " << minute;
  }
  EXPECT_EQ(store_->ListTasks(std::nullopt, 100)->size(), 20u);
}

TEST_P(SchedulesTest, OverlapSkipWhileThePreviousTaskIsOpen) {
  Schedule s = Make("alice", "private", ScheduleOverlap::kSkip);
  auto first = Fire(s.id, 60'000);
  EXPECT_EQ(first.fire.outcome, FireOutcome::kCreated);
  EXPECT_EQ(Fire(s.id, 120'000).fire.outcome, FireOutcome::kSkipped);
  EXPECT_EQ(store_->GetSchedule(s.id)->last_fire_at, 120'000) << "a skip is a claimed fire";
  auto manual = Fire(s.id, 130'000, /*manual=*/true);
  EXPECT_EQ(manual.fire.outcome, FireOutcome::kCreated) << "run now ignores overlap";
  EXPECT_EQ(store_->GetSchedule(s.id)->last_fire_at, 120'000) << "and does not move the count";
  EndTask(first);
  EndTask(manual);
  EXPECT_EQ(Fire(s.id, 180'000).fire.outcome, FireOutcome::kCreated);
  EXPECT_EQ(store_->ListTasks(std::nullopt, 10)->size(), 3u);
}

TEST_P(SchedulesTest, OverlapQueueHoldsOneFireAndReleasesItOnce) {
  Schedule s = Make("alice", "shared", ScheduleOverlap::kQueue);
  auto first = Fire(s.id, 60'000);
  EXPECT_EQ(first.fire.outcome, FireOutcome::kCreated);
  EXPECT_EQ(Fire(s.id, 120'000).fire.outcome, FireOutcome::kHeld);
  EXPECT_EQ(Fire(s.id, 180'000).fire.outcome, FireOutcome::kSkipped) << "one held at most";
  EXPECT_EQ(store_->GetSchedule(s.id)->held_fire_at, 120'000);
  EXPECT_FALSE(store_->ReleaseHeldFire(s.id)->has_value()) << "the first is still open";

  EndTask(first);
  auto released = store_->ReleaseHeldFire(s.id);
  ASSERT_TRUE(released.ok()) << released.status().ToString();
  ASSERT_TRUE(released->has_value());
  EXPECT_EQ((*released)->task.visibility, "shared");
  EXPECT_FALSE(store_->ReleaseHeldFire(s.id)->has_value()) << "released once";
  auto after = store_->GetSchedule(s.id);
  EXPECT_EQ(after->held_fire_at, 0);
  EXPECT_EQ(after->last_task_id, (*released)->task.id);
  auto fires = store_->ListScheduleFires(s.id, 10);
  ASSERT_EQ(fires->size(), 3u);
  EXPECT_EQ((*fires)[1].fire_at, 120'000);
  EXPECT_EQ((*fires)[1].outcome, FireOutcome::kCreated);
  EXPECT_EQ((*fires)[1].task_id, (*released)->task.id);
  EXPECT_EQ(store_->ListTasks(std::nullopt, 10)->size(), 2u);
}

MAESTRO_STORE_CONFORMANCE(SchedulesTest);

TEST_P(SchedulesTest, AQuotaSkipClaimsTheTimeWithoutATask) {
  Schedule s = Make("alice", "private");
  auto skipped = store_->SkipFireForQuota(s.id, 60'000);
  ASSERT_TRUE(skipped.ok()) << skipped.status().ToString();
  EXPECT_EQ(skipped->outcome, FireOutcome::kQuota);
  EXPECT_TRUE(store_->ListTasks(std::nullopt, 10)->empty());
  EXPECT_EQ(store_->GetSchedule(s.id)->last_fire_at, 60'000) << "not tried again";
  auto fires = store_->ListScheduleFires(s.id, 10);
  ASSERT_EQ(fires->size(), 1u);
  EXPECT_EQ((*fires)[0].outcome, FireOutcome::kQuota);
  EXPECT_EQ(FireOutcomeName((*fires)[0].outcome), "quota");
  // The same time again, by a skip or a fire: claimed already, nothing made.
  EXPECT_EQ(store_->SkipFireForQuota(s.id, 60'000)->outcome, FireOutcome::kAlreadyFired);
  EXPECT_EQ(Fire(s.id, 60'000).fire.outcome, FireOutcome::kAlreadyFired);
  EXPECT_TRUE(store_->ListTasks(std::nullopt, 10)->empty());
  // An earlier skipped time does not move last_fire_at back.
  ASSERT_TRUE(store_->SkipFireForQuota(s.id, 30'000).ok());
  EXPECT_EQ(store_->GetSchedule(s.id)->last_fire_at, 60'000);
  EXPECT_EQ(store_->SkipFireForQuota("no-such-schedule", 1).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace maestro
