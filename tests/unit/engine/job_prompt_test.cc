// PlanJobPrompt: which prompt path each kind of job takes, from the store's
// job/comment records and whether the task has a transcript.
#include "engine/job_prompt.h"

#include <fstream>

#include <gtest/gtest.h>

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
    std::ofstream(transcript_) << R"({"role":"system","content":"s"})" << "\n";
  }
  // Ends the running job `j` as succeeded.
  void Finish(const Job& j) {
    ASSERT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::Succeeded("done")).ok());
  }
  JobPromptPlan Plan(const Job& j) {
    auto task = store_->GetTask(created_.task.id);
    EXPECT_TRUE(task.ok());
    auto plan = PlanJobPrompt(*store_, *task, j, transcript_);
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
  JobPromptPlan p = Plan(j);
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
  auto c = store_->PostComment(created_.task.id, "alice", "Use tabs, not spaces.");
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->outcome, "followup");
  JobPromptPlan p = Plan(Claim());
  EXPECT_EQ(p.path, PromptPath::kFollowUp);
  EXPECT_NE(p.instruction.find("Use tabs, not spaces."), std::string::npos) << p.instruction;
}

TEST_F(JobPromptTest, AReplayingPathWithoutATranscriptStartsFresh) {
  Finish(Claim());
  ASSERT_TRUE(store_->ContinueTask(created_.task.id, "", "alice", "More.").ok());
  EXPECT_EQ(Plan(Claim()).path, PromptPath::kNewJob);
}

}  // namespace
}  // namespace maestro::engine
