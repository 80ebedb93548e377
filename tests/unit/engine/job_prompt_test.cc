// PlanJobPrompt: which prompt path each kind of job takes, from the store's
// job/comment records and whether the task has a transcript.
#include <gtest/gtest.h>

#include <fstream>

#include "engine/prompt/prompt_paths.h"
#include "support/store_fixture.h"

namespace maestro::engine {
namespace {

class JobPromptTest : public maestro::testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    created_ = NewTaskWith("coding");
    transcript_ = dir_.File("transcript.jsonl");
  }
  void WriteTranscript() {
    std::ofstream(transcript_) << R"({"role":"system","content":"s"})"
                               << "\n";
  }
  // Ends the running job `j` as succeeded.
  void Finish(const Job& j) {
    ASSERT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::Succeeded("done")).ok());
  }
  JobPromptPlan Plan(const Job& j, bool ran_before = false) {
    auto task = store_->GetTask(created_.task.id);
    EXPECT_TRUE(task.ok());
    auto plan = PlanJobPrompt(*store_, *task, j, {transcript_, ""}, ran_before);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    return plan.ok() ? *plan : JobPromptPlan{};
  }

  Store::CreatedTask created_;
  std::string transcript_;
};

TEST_F(JobPromptTest, NewJobHasTheTaskInstruction) {
  JobPromptPlan p = Plan(Claim());
  EXPECT_EQ(p.path, PromptPath::kNewJob);
  EXPECT_EQ(p.instruction, "do coding");
}

TEST_F(JobPromptTest, TheSameJobAgainReplaysAsAFollowUp) {
  Job j = Claim();
  WriteTranscript();
  j.resume_movement = "review";
  JobPromptPlan p = Plan(j, /*ran_before=*/true);
  EXPECT_EQ(p.path, PromptPath::kFollowUp);
  EXPECT_NE(p.instruction.find("movement 'review'"), std::string::npos) << p.instruction;
}

TEST_F(JobPromptTest, ContinueWithTheSamePieceIsASamePieceContinue) {
  Finish(Claim());
  WriteTranscript();
  auto c = store_->ContinueTask(created_.task.id, "", "alice", "Now add a test.");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  JobPromptPlan p = Plan(Claim());
  EXPECT_EQ(p.path, PromptPath::kSamePieceContinue);
  EXPECT_NE(p.instruction.find("Now add a test."), std::string::npos);
}

TEST_F(JobPromptTest, ContinueWithAnotherPieceIsACrossPieceContinue) {
  Finish(Claim());
  WriteTranscript();
  ASSERT_TRUE(store_->ContinueTask(created_.task.id, "review", "alice", "Review it.").ok());
  EXPECT_EQ(Plan(Claim()).path, PromptPath::kCrossPieceContinue);
}

TEST_F(JobPromptTest, ACommentAfterTheJobEndedIsAFollowUpCarryingTheComment) {
  Finish(Claim());
  WriteTranscript();
  auto c = store_->PostComment(created_.task.id, "alice", "Use tabs, not spaces.", {});
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->outcome, CommentOutcome::kFollowUp);
  JobPromptPlan p = Plan(Claim());
  EXPECT_EQ(p.path, PromptPath::kFollowUp);
  EXPECT_NE(p.instruction.find("Use tabs, not spaces."), std::string::npos) << p.instruction;
}

// Issue 45 item 1: the answer to an ASK comes with its question, quoted
// line by line in the follow-up's note; the question comment is handed back
// to be acknowledged with the delivered ones.
TEST_F(JobPromptTest, AnAnswerToAnAskQuotesTheQuestionInTheFollowUpNote) {
  Job asked = Claim();
  Comment q;
  q.task_id = created_.task.id;
  q.job_id = asked.id;
  q.author = "agent";
  q.kind = CommentKind::kQuestion;
  q.body = "Which colour?\nRed or blue.";
  ASSERT_TRUE(store_->AddComment(q).ok());
  Finish(asked);
  WriteTranscript();
  auto c = store_->PostComment(created_.task.id, "alice", "Blue.", {});
  ASSERT_TRUE(c.ok());
  JobPromptPlan p = Plan(Claim());
  EXPECT_EQ(p.path, PromptPath::kFollowUp);
  EXPECT_EQ(p.instruction.rfind("## Follow-up\nYou asked the user:\n> Which colour?\n> Red or "
                                "blue.\nThe user answered below",
                                0),
            0u)
      << p.instruction;
  EXPECT_NE(p.instruction.find("Blue."), std::string::npos);
  ASSERT_EQ(p.quoted.size(), 1u);
  EXPECT_EQ(p.quoted[0].kind, CommentKind::kQuestion);
}

TEST_F(JobPromptTest, ACommentOnAQueuedJobIsInItsFirstPromptOnce) {
  auto c = store_->PostComment(created_.task.id, "alice", "Also mention the date.", {});
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->outcome, CommentOutcome::kReused);
  Job j = Claim();
  JobPromptPlan p = Plan(j);
  EXPECT_EQ(p.path, PromptPath::kNewJob);
  ASSERT_EQ(p.delivered.size(), 1u);
  EXPECT_NE(p.instruction.find("[comment " + c->comment.id + "] alice: Also mention the date."),
            std::string::npos)
      << p.instruction;
  // Once acknowledged it is never delivered again.
  ASSERT_TRUE(store_->AckDeliveredComments({c->comment.id}).ok());
  EXPECT_TRUE(Plan(j, true).delivered.empty());
}

TEST_F(JobPromptTest, ACommentAlreadyInTheTranscriptIsAcknowledgedNotResent) {
  auto c = store_->PostComment(created_.task.id, "alice", "Use tabs.", {});
  ASSERT_TRUE(c.ok());
  Job j = Claim();
  // A crash after the seed was written, before the acknowledgement.
  std::ofstream(transcript_) << R"({"role":"system","content":"s"})"
                             << "\n"
                             << R"({"role":"user","content":"[comment )" << c->comment.id
                             << R"(] alice: Use tabs."})"
                             << "\n";
  JobPromptPlan p = Plan(j, /*ran_before=*/true);
  EXPECT_TRUE(p.delivered.empty());
  EXPECT_EQ(p.instruction.find("Use tabs."), std::string::npos) << p.instruction;
  auto left = store_->ListUndeliveredComments(j.id);
  ASSERT_TRUE(left.ok());
  EXPECT_TRUE(left->empty());
}

TEST_F(JobPromptTest, AReplayingPathWithoutATranscriptStartsFresh) {
  Finish(Claim());
  ASSERT_TRUE(store_->ContinueTask(created_.task.id, "", "alice", "More.").ok());
  EXPECT_EQ(Plan(Claim()).path, PromptPath::kNewJob);
}

}  // namespace
}  // namespace maestro::engine
