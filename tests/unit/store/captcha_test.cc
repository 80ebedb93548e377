// The CAPTCHA pool (seed 001, wait_reason captcha): SetCaptchaWait records
// the (space, screen) a job waits on; ResumeCaptchaJobs requeues every job
// parked on exactly that screen, clearing its space and keeping its screen.
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
  auto n = store_->ResumeCaptchaJobs("space-1", "login-captcha");
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
  auto again = store_->ResumeCaptchaJobs("space-1", "login-captcha");
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

  auto n = store_->ResumeCaptchaJobs("space-1", "login-captcha");
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
  auto no_space = store_->ResumeCaptchaJobs("", "s");
  EXPECT_EQ(no_space.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(no_space.status().field(), "space_id");
  auto no_screen = store_->ResumeCaptchaJobs("space-1", "");
  EXPECT_EQ(no_screen.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(no_screen.status().field(), "screen");
}

MAESTRO_STORE_CONFORMANCE(CaptchaPoolTest);

}  // namespace
}  // namespace maestro
