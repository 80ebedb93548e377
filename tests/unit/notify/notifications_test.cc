// The notification inbox says what happened to the task, not just the job's
// new status: an answered ASK and a handoff end their job "succeeded" while
// the task goes on. Real SqliteStore, read as GET /api/local/notifications
// renders it (api::NotificationJson).
#include <gtest/gtest.h>

#include "api/notification_view.h"
#include "support/store_fixture.h"

namespace maestro {
namespace {

class NotificationsTest : public testing::StoreTest {
 protected:
  Store::CreatedTask Create(const std::string& title, const std::string& instruction) {
    NewTask t;
    t.title = title;
    t.instruction = instruction;
    t.owner = "alice";
    auto c = store_->CreateTask(t);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return *c;
  }
  // Alice's notifications, newest first, as the API renders them.
  std::vector<Json> Inbox() {
    auto list = store_->ListNotifications("alice", false, 50);
    EXPECT_TRUE(list.ok()) << list.status().ToString();
    std::vector<Json> out;
    for (const auto& n : *list) out.push_back(api::NotificationJson(n));
    return out;
  }
};

TEST_F(NotificationsTest, AnAnsweredQuestionIsNotAFinishedTask) {
  auto c = Create("Plan the trip", "plan it");
  Job j = Claim();
  ASSERT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::WaitingHuman("ask", "")).ok());
  ASSERT_TRUE(store_->PostComment(c.task.id, "alice", "Tuesday", {}).ok());
  auto inbox = Inbox();
  ASSERT_EQ(inbox.size(), 2u);
  EXPECT_EQ(inbox[0]["outcome"], "question_answered");
  EXPECT_EQ(inbox[0]["summary"], "question answered");
  EXPECT_EQ(inbox[0]["status"], "succeeded");
  EXPECT_EQ(inbox[1]["outcome"], "needs_you");
  EXPECT_EQ(inbox[1]["summary"], "needs you");
  EXPECT_EQ(inbox[1]["wait_reason"], "ask");
  EXPECT_EQ(inbox[0]["task_name"], "Plan the trip");
}

TEST_F(NotificationsTest, AHandoffSaysItWentToAFreshSessionAndTheEndSaysFinished) {
  auto c = Create("", "Summarize the notes\nin two parts");
  Job j = Claim();
  NewJob cont;
  cont.task_id = c.task.id;
  cont.continued_from_job_id = j.id;
  auto queued = store_->EnqueueJob(cont);
  ASSERT_TRUE(queued.ok()) << queued.status().ToString();
  ASSERT_TRUE(store_
                  ->FinishJob(LeaseOf(j), JobOutcome::Succeeded(
                                              "handoff 0001.yaml; continued in job " + queued->id))
                  .ok());
  Job next = Claim();
  ASSERT_EQ(next.id, queued->id);
  ASSERT_TRUE(store_->FinishJob(LeaseOf(next), JobOutcome::Succeeded("summary done")).ok());
  auto inbox = Inbox();
  ASSERT_EQ(inbox.size(), 2u);
  EXPECT_EQ(inbox[0]["outcome"], "finished");
  EXPECT_EQ(inbox[1]["outcome"], "handed_off");
  EXPECT_EQ(inbox[1]["summary"], "handed off to a fresh session");
  // No title: the instruction's first line.
  EXPECT_EQ(inbox[0]["task_name"], "Summarize the notes");
}

TEST_F(NotificationsTest, AFailureSaysFailed) {
  Create("t", "x");
  Job j = Claim();
  ASSERT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::Failed("boom")).ok());
  auto inbox = Inbox();
  ASSERT_EQ(inbox.size(), 1u);
  EXPECT_EQ(inbox[0]["outcome"], "failed");
  EXPECT_EQ(inbox[0]["summary"], "failed");
}

TEST(TaskDisplayNameTest, TitleElseTheInstructionsFirstLineShortenedAtACharacter) {
  EXPECT_EQ(api::TaskDisplayName("  Title ", "ignored"), "Title");
  EXPECT_EQ(api::TaskDisplayName("", "\n  first line \nsecond"), "first line");
  EXPECT_EQ(api::TaskDisplayName("", std::string(100, 'a'), 10), std::string(10, 'a') + "…");
  // "é" is two bytes: a cut inside it backs off to the character before.
  EXPECT_EQ(api::TaskDisplayName("", "abcdefghié and more", 10), "abcdefghi…");
  EXPECT_EQ(api::TaskDisplayName("", ""), "");
}

}  // namespace
}  // namespace maestro
