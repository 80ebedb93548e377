// The CAPTCHA pool (seed 001, wait_reason captcha): SetCaptchaWait records
// the (space, screen) a job waits on; ResumeCaptchaJobs requeues every job
// parked on exactly that screen, clearing its space and keeping its screen —
// and, for a user (issue 44), only the waits that user may resolve: never
// another user's private task, never another user's personal pool.
#include "support/store_fixture.h"

namespace maestro {
namespace {

using testing::StoreConformance;

class CaptchaPoolTest : public StoreConformance {
 protected:
  // A job claimed, marked as waiting on (space, screen), and parked with
  // wait_reason captcha.
  Job ParkOnCaptcha(const std::string& space, const std::string& screen) {
    NewTaskWith("captcha");
    Job j = Claim();
    EXPECT_TRUE(store_->SetCaptchaWait(j.id, space, screen).ok());
    EXPECT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::WaitingHuman("captcha", "browse")).ok());
    auto parked = store_->GetJob(j.id);
    EXPECT_TRUE(parked.ok());
    EXPECT_EQ(parked->status, JobStatus::kWaitingHuman);
    EXPECT_EQ(parked->wait_reason, "captcha");
    EXPECT_EQ(parked->captcha_space_id, space);
    EXPECT_EQ(parked->captcha_screen, screen);
    return parked.ok() ? *parked : j;
  }

  // The same for a task of `owner` in `space` ("" = none) with `visibility`.
  Job ParkOwned(const std::string& owner, const std::string& space, const std::string& visibility,
                const std::string& pool, const std::string& screen) {
    NewTask t;
    t.instruction = "sign in";
    t.piece = "captcha";
    t.owner = owner;
    t.space = space;
    t.visibility = visibility;
    auto c = store_->CreateTask(t);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    Job j = Claim();
    EXPECT_EQ(j.task_id, c.ok() ? c->task.id : "");
    EXPECT_TRUE(store_->SetCaptchaWait(j.id, pool, screen).ok());
    EXPECT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::WaitingHuman("captcha", "browse")).ok());
    return j;
  }

  int QueuedEventsFromWaitingHuman(const std::string& task_id) {
    auto events = store_->ListEvents(task_id, "", 1000);
    EXPECT_TRUE(events.ok());
    int n = 0;
    for (const auto& e : *events) {
      if (e.type == "job.status" && e.payload["from"] == "waiting_human" &&
          e.payload["to"] == "queued") {
        ++n;
      }
    }
    return n;
  }
};

TEST_P(CaptchaPoolTest, ResolveRequeuesExactlyTheJobsOnThatScreen) {
  Job a = ParkOnCaptcha("space-1", "login-captcha");
  Job b = ParkOnCaptcha("space-1", "login-captcha");
  Job other_screen = ParkOnCaptcha("space-1", "checkout-captcha");
  Job other_space = ParkOnCaptcha("space-2", "login-captcha");

  int before = wakeups_;
  auto n = store_->ResumeCaptchaJobs("space-1", "login-captcha", std::nullopt);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 2);
  EXPECT_GT(wakeups_.load(), before);

  for (const Job& j : {a, b}) {
    auto r = store_->GetJob(j.id);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, JobStatus::kQueued);
    EXPECT_EQ(r->wait_reason, "");
    EXPECT_EQ(r->resume_movement, "browse");
    EXPECT_EQ(r->captcha_space_id, "");
    EXPECT_EQ(r->captcha_screen, "login-captcha");  // kept: "my screen was solved"
    // The same mirror and event ResumeParkedJob gives.
    EXPECT_EQ(store_->GetTask(j.task_id)->status, JobStatus::kQueued);
    EXPECT_EQ(QueuedEventsFromWaitingHuman(j.task_id), 1);
  }
  for (const Job& j : {other_screen, other_space}) {
    auto r = store_->GetJob(j.id);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, JobStatus::kWaitingHuman);
    EXPECT_EQ(r->wait_reason, "captcha");
    EXPECT_EQ(r->captcha_space_id, j.captcha_space_id);
    EXPECT_EQ(r->captcha_screen, j.captcha_screen);
    EXPECT_EQ(store_->GetTask(j.task_id)->status, JobStatus::kWaitingHuman);
  }

  // Nothing waits on that screen any more.
  auto again = store_->ResumeCaptchaJobs("space-1", "login-captcha", std::nullopt);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 0);

  // The resumed jobs are claimable and still see their solved screen.
  Job r1 = Claim("w2");
  Job r2 = Claim("w3");
  EXPECT_EQ(r1.id, a.id);
  EXPECT_EQ(r2.id, b.id);
  EXPECT_EQ(r1.captcha_space_id, "");
  EXPECT_EQ(r1.captcha_screen, "login-captcha");
  EXPECT_TRUE(NothingToClaim());
}

TEST_P(CaptchaPoolTest, AJobThatIsNotParkedIsNotTouched) {
  NewTaskWith("captcha");
  Job running = Claim();
  ASSERT_TRUE(store_->SetCaptchaWait(running.id, "space-1", "login-captcha").ok());
  // Parked, but for another reason, on the same fields.
  NewTaskWith("captcha");
  Job asking = Claim("w2");
  ASSERT_TRUE(store_->SetCaptchaWait(asking.id, "space-1", "login-captcha").ok());
  ASSERT_TRUE(store_->FinishJob(LeaseOf(asking), JobOutcome::WaitingHuman("ask", "m")).ok());

  auto n = store_->ResumeCaptchaJobs("space-1", "login-captcha", std::nullopt);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 0);
  auto r = store_->GetJob(running.id);
  EXPECT_EQ(r->status, JobStatus::kRunning);
  EXPECT_EQ(r->captcha_space_id, "space-1");
  EXPECT_EQ(r->captcha_screen, "login-captcha");
  EXPECT_EQ(StatusOf(asking.id), JobStatus::kWaitingHuman);
  EXPECT_EQ(store_->GetJob(asking.id)->captcha_space_id, "space-1");
}

TEST_P(CaptchaPoolTest, SetCaptchaWaitClearsAndRefusesAnUnknownJob) {
  NewTaskWith("captcha");
  Job j = Claim();
  ASSERT_TRUE(store_->SetCaptchaWait(j.id, "space-1", "s").ok());
  ASSERT_TRUE(store_->SetCaptchaWait(j.id, "", "").ok());
  auto r = store_->GetJob(j.id);
  EXPECT_EQ(r->captcha_space_id, "");
  EXPECT_EQ(r->captcha_screen, "");
  EXPECT_EQ(store_->SetCaptchaWait("01JDW3K6V4Q8X2M7N5P0R9S1TB", "space-1", "s").code(),
            StatusCode::kNotFound);
  // A new job starts with neither.
  auto fresh = NewTaskWith("other");
  EXPECT_EQ(fresh.job.captcha_space_id, "");
  EXPECT_EQ(fresh.job.captcha_screen, "");
}

TEST_P(CaptchaPoolTest, EmptyArgumentsAreInvalidNamingTheField) {
  auto no_space = store_->ResumeCaptchaJobs("", "s", "alice");
  EXPECT_EQ(no_space.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(no_space.status().field(), "space_id");
  auto no_screen = store_->ResumeCaptchaJobs("space-1", "", std::nullopt);
  EXPECT_EQ(no_screen.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(no_screen.status().field(), "screen");
}

TEST_P(CaptchaPoolTest, AUserRequeuesOnlyTheWaitsTheyMayResolve) {
  // Space-less tasks wait in "personal" (the engine's pool name for them):
  // each owner's personal pool is their own, shared task or not.
  Job alice_private = ParkOwned("alice", "", "private", "personal", "s");
  Job alice_shared = ParkOwned("alice", "", "shared", "personal", "s");
  Job bob_own = ParkOwned("bob", "", "private", "personal", "s");
  // In a space: the tasks the resolver may see.
  Job alice_proj_private = ParkOwned("alice", "proj", "private", "proj", "s");
  Job alice_proj_shared = ParkOwned("alice", "proj", "shared", "proj", "s");
  Job unowned_proj = ParkOwned("", "proj", "private", "proj", "s");

  // Bob: his own personal wait only; alice's two stay parked.
  auto personal = store_->ResumeCaptchaJobs("personal", "s", "bob");
  ASSERT_TRUE(personal.ok()) << personal.status().ToString();
  EXPECT_EQ(*personal, 1);
  EXPECT_EQ(StatusOf(bob_own.id), JobStatus::kQueued);
  for (const Job& j : {alice_private, alice_shared}) {
    EXPECT_EQ(StatusOf(j.id), JobStatus::kWaitingHuman);
    EXPECT_EQ(store_->GetJob(j.id)->captcha_space_id, "personal");
    EXPECT_EQ(QueuedEventsFromWaitingHuman(j.task_id), 0) << "no event for alice's job";
  }
  // In the space: the shared and the unowned task, never alice's private one.
  auto proj = store_->ResumeCaptchaJobs("proj", "s", "bob");
  ASSERT_TRUE(proj.ok());
  EXPECT_EQ(*proj, 2);
  EXPECT_EQ(StatusOf(alice_proj_shared.id), JobStatus::kQueued);
  EXPECT_EQ(StatusOf(unowned_proj.id), JobStatus::kQueued);
  EXPECT_EQ(StatusOf(alice_proj_private.id), JobStatus::kWaitingHuman);
  EXPECT_EQ(store_->GetTask(alice_proj_private.task_id)->status, JobStatus::kWaitingHuman);
  // Again: nothing of bob's is left; alice's still wait.
  EXPECT_EQ(*store_->ResumeCaptchaJobs("personal", "s", "bob"), 0);
  EXPECT_EQ(*store_->ResumeCaptchaJobs("proj", "s", "bob"), 0);
  EXPECT_EQ(StatusOf(alice_private.id), JobStatus::kWaitingHuman);

  // Alice resolves hers: both personal ones and her private one in proj.
  EXPECT_EQ(*store_->ResumeCaptchaJobs("personal", "s", "alice"), 2);
  EXPECT_EQ(*store_->ResumeCaptchaJobs("proj", "s", "alice"), 1);
  for (const Job& j : {alice_private, alice_shared, alice_proj_private}) {
    EXPECT_EQ(StatusOf(j.id), JobStatus::kQueued);
    EXPECT_EQ(store_->GetJob(j.id)->captcha_space_id, "");
    EXPECT_EQ(QueuedEventsFromWaitingHuman(j.task_id), 1);
  }
}

TEST_P(CaptchaPoolTest, WithoutAUserEveryWaitOnTheScreenIsRequeued) {
  ParkOwned("alice", "", "private", "personal", "s");
  ParkOwned("bob", "", "private", "personal", "s");
  ParkOwned("alice", "proj", "private", "personal", "s");
  auto n = store_->ResumeCaptchaJobs("personal", "s", std::nullopt);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 3);
}

MAESTRO_STORE_CONFORMANCE(CaptchaPoolTest);

}  // namespace
}  // namespace maestro
