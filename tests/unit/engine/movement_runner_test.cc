// The agent loop's rules (seed 000 §3) against a scripted LlmClient, a real
// SqliteStore, a real TaskContext and the real Dispatcher.
#include "engine/loop/movement_runner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>

#include "engine/job/piece_runner.h"
#include "engine/prompt/prompt_builder.h"
#include "loop_fixture.h"

namespace maestro::engine {
namespace {

class AgentLoopTest : public test::LoopTest {
 protected:
  void SetUp() override {
    LoopSetup s;
    s.read_file = [this](const Json& a, const tools::ToolContext&) {
      ++reads_;
      return tools::ToolResult::Ok("text of " + a.value("path", std::string()));
    };
    SetUpLoop(std::move(s));
  }

  static Json Last(const std::vector<Json>& messages) { return messages.back(); }

  std::atomic<int> reads_{0};
};

TEST_F(AgentLoopTest, InterjectionIsDeliveredAtTheNextIterationBoundaryAndAcked) {
  llm_.Call("ReadFile", {{"path", "a.cc"}}, [this] {
    auto c = store_->PostComment(created_.task.id, "alice", "also check b.cc", {});
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->outcome, CommentOutcome::kInterjection);
  });
  llm_.Call("complete", {{"status", "success"}, {"result", "done"}});
  AgentLoopDeps d = Deps();
  MovementResult r = RunMovement(d, "plan");
  EXPECT_EQ(r.next, "COMPLETE");
  EXPECT_EQ(r.result, "done");
  ASSERT_EQ(llm_.requests.size(), 2u);
  // Not in the request that was in flight when it was posted...
  for (const Json& m : llm_.requests[0]) {
    EXPECT_EQ(m["content"].dump().find("also check b.cc"), std::string::npos);
  }
  // ...appended after the tool result of that iteration, before the next call.
  const auto& second = llm_.requests[1];
  ASSERT_GE(second.size(), 5u);
  EXPECT_EQ(second[second.size() - 2]["role"], "tool");
  EXPECT_EQ(Last(second)["role"], "user");
  EXPECT_NE(Last(second)["content"].get<std::string>().find("also check b.cc"), std::string::npos);
  // The request prefix is the previous request unchanged (cache-stable).
  for (size_t i = 0; i < llm_.requests[0].size(); ++i) EXPECT_EQ(second[i], llm_.requests[0][i]);
  auto pending = store_->ListUndeliveredComments(job_.id);
  ASSERT_TRUE(pending.ok());
  EXPECT_TRUE(pending->empty());
}

// The budget check sits right before the call: the call that would pass the
// limit is never made; the movement ends parked to resume in itself.
TEST_F(AgentLoopTest, TheCallThatWouldPassTheBudgetIsNotMadeAndTheMovementParks) {
  llm_.Call("ReadFile", {{"path", "a.cc"}});
  llm_.Call("complete", {{"status", "success"}, {"result", "never reached"}});
  AgentLoopDeps d = Deps();
  BudgetContext budget;
  budget.limits.max_llm_calls = 1;
  budget.clock = &clock_;
  scope_.budget = &budget;
  MovementResult r = RunMovement(d, "plan");
  EXPECT_EQ(r.next, "WAITING_HUMAN_BUDGET");
  EXPECT_EQ(r.wait_reason, "budget_exceeded");
  EXPECT_EQ(r.resume_movement, "plan");
  EXPECT_EQ(llm_.requests.size(), 1u) << "the second call was not made";
  EXPECT_EQ(reads_, 1);
  auto events = store_->ListEvents(created_.task.id, "", 1000);
  ASSERT_TRUE(events.ok());
  int exceeded = 0;
  for (const Event& e : *events) {
    if (e.type != "budget.exceeded") continue;
    ++exceeded;
    EXPECT_EQ(e.payload["which"], "max_llm_calls");
    EXPECT_EQ(e.payload["spent"], 1);
    EXPECT_EQ(e.payload["limit"], 1);
  }
  EXPECT_EQ(exceeded, 1);
  auto comments = store_->ListComments(created_.task.id);
  ASSERT_TRUE(comments.ok());
  EXPECT_EQ(comments->back().author, "system");
  EXPECT_EQ(comments->back().body,
            "Budget reached: spent 1 of 1 LLM calls — raise the budget or stop.");
  MovementMapContext mc;
  mc.piece = &piece_;
  MovementMapping m = mapMovementResult(r, mc);
  EXPECT_EQ(m.done.status, PieceRunStatus::kWaitingHuman);
  EXPECT_EQ(m.done.wait_reason, "budget_exceeded");
  EXPECT_EQ(m.done.resume_movement, "plan");
}

TEST_F(AgentLoopTest, InvalidTransitionGetsAnErrorListingTheValidOptionsAndTheLoopGoesOn) {
  llm_.Call("transition", {{"next", "review"}});
  llm_.Call("transition", {{"next", "implement"}});
  AgentLoopDeps d = Deps();
  MovementResult r = RunMovement(d, "plan");
  EXPECT_EQ(r.next, "implement");
  ASSERT_EQ(llm_.requests.size(), 2u);
  Json err = Last(llm_.requests[1]);
  EXPECT_EQ(err["role"], "tool");
  std::string text = err["content"];
  EXPECT_EQ(text.rfind("Error", 0), 0u) << text;
  EXPECT_NE(text.find("implement"), std::string::npos) << text;
  // The tools bytes never changed.
  EXPECT_EQ(llm_.tools_bytes[0], tools_.bytes);
  EXPECT_EQ(llm_.tools_bytes[1], tools_.bytes);
}

TEST_F(AgentLoopTest, TextOnlyRepliesAreWarnedThenAbortAtTheLimit) {
  llm_.Text("I think the bug is in a.cc");
  llm_.Text("Let me think more");
  llm_.Text("Still thinking");
  llm_.Call("complete", {{"status", "success"}, {"result", "never reached"}});
  AgentLoopDeps d = Deps();
  scope_.limits.text_only_limit = 3;
  MovementResult r = RunMovement(d, "plan");
  EXPECT_EQ(r.next, "ABORT");
  EXPECT_EQ(r.abort_reason, kAbortTextOnlyLimit);
  ASSERT_EQ(llm_.requests.size(), 3u);
  EXPECT_EQ(Last(llm_.requests[1])["content"], TextOnlyWarning(1, 3));
  EXPECT_EQ(Last(llm_.requests[2])["content"], TextOnlyWarning(2, 3));
  EXPECT_EQ(llm_.remaining(), 1u);
}

TEST_F(AgentLoopTest, RepeatedIdenticalCallsAbortAsAToolLoop) {
  for (int i = 0; i < 4; ++i) llm_.Call("ReadFile", {{"path", "same.cc"}});
  AgentLoopDeps d = Deps();
  scope_.limits.identical_call_limit = 3;
  MovementResult r = RunMovement(d, "plan");
  EXPECT_EQ(r.next, "ABORT");
  EXPECT_EQ(r.abort_reason, kAbortToolLoop);
  EXPECT_EQ(reads_.load(), 2);  // the third identical batch is not run
  EXPECT_EQ(llm_.requests.size(), 3u);
}

TEST_F(AgentLoopTest, MaxIterationsAborts) {
  llm_.Call("ReadFile", {{"path", "a.cc"}});
  llm_.Call("ReadFile", {{"path", "b.cc"}});
  llm_.Call("ReadFile", {{"path", "c.cc"}});
  AgentLoopDeps d = Deps();
  scope_.limits.max_iterations = 2;
  MovementResult r = RunMovement(d, "plan");
  EXPECT_EQ(r.next, "ABORT");
  EXPECT_EQ(r.abort_reason, kAbortMaxIterations);
  EXPECT_EQ(llm_.requests.size(), 2u);
  EXPECT_EQ(reads_.load(), 2);
}

TEST_F(AgentLoopTest, RegularAndControlResultsAreAppendedInCallOrder) {
  llm_.Calls({{"ReadFile", {{"path", "a.cc"}}},
              {"transition", {{"next", "nowhere"}}},
              {"ReadFile", {{"path", "b.cc"}}}});
  llm_.Call("transition", {{"next", "implement"}});
  AgentLoopDeps d = Deps();
  EXPECT_EQ(RunMovement(d, "plan").next, "implement");
  const auto& msgs = llm_.requests[1];
  size_t n = msgs.size();
  EXPECT_EQ(msgs[n - 3]["content"], "text of a.cc");
  EXPECT_EQ(msgs[n - 2]["content"].get<std::string>().rfind("Error", 0), 0u);
  EXPECT_EQ(msgs[n - 1]["content"], "text of b.cc");
  EXPECT_EQ(msgs[n - 4]["tool_calls"][1]["id"], msgs[n - 2]["tool_call_id"]);
}

TEST_F(AgentLoopTest, ToolNotAllowedInMovementIsAnErrorResult) {
  llm_.Call("WriteFile", {{"path", "a.cc"}, {"content", "x"}});
  llm_.Call("transition", {{"next", "fix"}});
  AgentLoopDeps d = Deps();
  EXPECT_EQ(RunMovement(d, "review").next, "fix");
  std::string text = Last(llm_.requests[1])["content"];
  EXPECT_NE(text.find("not allowed in movement 'review'"), std::string::npos) << text;
}

TEST_F(AgentLoopTest, ParkToolCreatesARequestThenReentryGetsTheDecision) {
  Json args = {{"tool", "RunCommand"}, {"arguments", {{"command", "make"}}}, {"reason", "build"}};
  llm_.Call("RequestTool", args);
  AgentLoopDeps d = Deps();
  MovementResult r = RunMovement(d, "plan");
  EXPECT_EQ(r.next, "WAITING_HUMAN_TOOL_REQUEST");
  EXPECT_EQ(r.wait_reason, "tool_request");
  auto reqs = store_->ListRequests(created_.task.id, RequestKind::kTool);
  ASSERT_TRUE(reqs.ok());
  ASSERT_EQ(reqs->size(), 1u);
  EXPECT_EQ((*reqs)[0].status, RequestStatus::kPending);
  EXPECT_EQ((*reqs)[0].name, "RunCommand");

  // Still pending: the same call parks again without a second card.
  llm_.Call("RequestTool", args);
  EXPECT_EQ(RunMovement(d, "plan").next, "WAITING_HUMAN_TOOL_REQUEST");
  EXPECT_EQ(store_->ListRequests(created_.task.id, RequestKind::kTool)->size(), 1u);

  // The worker parks the job; the decision requeues it; it is claimed again.
  ASSERT_TRUE(
      store_->FinishJob(LeaseOf(job_), JobOutcome::WaitingHuman("tool_request", "plan")).ok());
  auto decided = store_->DecideRequest((*reqs)[0].id, "deny", "", "alice");
  ASSERT_TRUE(decided.ok()) << decided.status().ToString();
  EXPECT_EQ(StatusOf(job_.id), JobStatus::kQueued);
  Job again_job = Claim();
  ASSERT_EQ(again_job.id, job_.id);
  llm_.Call("RequestTool", args);
  llm_.Call("complete", {{"status", "success"}, {"result", "did without make"}});
  MovementResult again = RunMovement(d, "plan");
  EXPECT_EQ(again.next, "COMPLETE");
  EXPECT_EQ(store_->ListRequests(created_.task.id, RequestKind::kTool)->size(), 1u);
  std::string answer = Last(llm_.requests.back())["content"];
  EXPECT_EQ(answer.rfind("Error", 0), 0u) << answer;  // the denial answers the call
}

TEST_F(AgentLoopTest, UsageIsRecordedAsAnLlmCallEventAndTaskStats) {
  llm_.Call("complete", {{"status", "success"}, {"result", "ok"}});
  AgentLoopDeps d = Deps();
  EXPECT_EQ(RunMovement(d, "plan").next, "COMPLETE");
  auto events = store_->ListEvents(created_.task.id, "", 100);
  ASSERT_TRUE(events.ok());
  int llm_calls = 0;
  for (const Event& e : *events) {
    if (e.type != "llm.call") continue;
    ++llm_calls;
    EXPECT_EQ(e.payload["cachedPromptTokens"], 900);
    EXPECT_EQ(e.payload["promptTokens"], 1000);
  }
  EXPECT_EQ(llm_calls, 1);
  auto task = store_->GetTask(created_.task.id);
  EXPECT_EQ(task->llm_call_count, 1);
  EXPECT_EQ(task->total_tokens, 1010);
}

TEST_F(AgentLoopTest, ContextLengthErrorWithNothingToCompressAbortsWithContextOverflow) {
  llm_.Fail(llm::LlmErrorKind::kContextLengthExceeded);
  AgentLoopDeps d = Deps();
  MovementResult r = RunMovement(d, "plan");
  EXPECT_EQ(r.abort_reason, kAbortContextOverflow);
}

TEST_F(AgentLoopTest, CancelStopsBeforeTheNextCall) {
  CancelToken cancel;
  llm_.Call("ReadFile", {{"path", "a.cc"}},
            [&] { cancel.Cancel(CancelToken::Reason::kUserCancel); });
  llm_.Call("complete", {{"status", "success"}, {"result", "no"}});
  AgentLoopDeps d = Deps();
  scope_.cancel = &cancel;
  MovementResult r = RunMovement(d, "plan");
  EXPECT_EQ(r.next, "ABORT");
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(llm_.requests.size(), 1u);
}

TEST_F(AgentLoopTest, RunnerWalksTheCodingPieceThroughTheFixLoop) {
  llm_.Call("ReadFile", {{"path", "a.cc"}});
  llm_.Call("transition", {{"next", "implement"}});
  llm_.Call("transition", {{"next", "review"}});
  llm_.Call("transition", {{"next", "fix"}});
  llm_.Call("transition", {{"next", "review"}});
  llm_.Call("complete", {{"status", "success"}, {"result", "fixed"}});
  AgentLoopDeps d = Deps();
  PieceRunOptions o;
  o.start_movement = SelectStartMovement(piece_, "", "");
  PieceRunResult r = RunPiece(d, o);
  EXPECT_EQ(r.status, PieceRunStatus::kCompleted);
  EXPECT_EQ(r.result, "fixed");
  EXPECT_EQ(r.last_movement, "review");
  // After each transition the next request ends with the new movement's
  // guidance, appended after the previous request's messages.
  for (size_t i = 2; i < llm_.requests.size(); ++i) {
    const auto& prev = llm_.requests[i - 1];
    const auto& cur = llm_.requests[i];
    for (size_t k = 0; k < prev.size(); ++k) ASSERT_EQ(cur[k], prev[k]) << "request " << i;
    EXPECT_EQ(Last(cur)["role"], "user");
  }
  std::vector<std::string> movements;
  for (const Json& dl : deltas_) {
    if (dl["type"] == "movement") movements.push_back(dl["movement"]);
  }
  EXPECT_EQ(movements, (std::vector<std::string>{"plan", "implement", "review", "fix", "review"}));
}

TEST_F(AgentLoopTest, RunnerLoopMonitorAbortsANonConvergingFixLoop) {
  for (int i = 0; i < 4; ++i) {
    llm_.Call("transition", {{"next", "fix"}});
    llm_.Call("transition", {{"next", "review"}});
  }
  AgentLoopDeps d = Deps();
  PieceRunOptions o;
  o.start_movement = SelectStartMovement(piece_, "review", "");
  PieceRunResult r = RunPiece(d, o);
  EXPECT_EQ(r.status, PieceRunStatus::kAborted);
  EXPECT_EQ(r.reason, kAbortLoopMonitor);
}

// Seed 000 §2, "Movement feedback": the reviewer's findings (its transition's
// reason) and the loop monitor's warning are in the next movement's
// instruction, the one user message appended on entering it.
TEST_F(AgentLoopTest, TheNextMovementsInstructionCarriesTheReviewAndTheLoopMonitor) {
  for (int i = 0; i < 3; ++i) {
    llm_.Call("transition", {{"next", "fix"}, {"reason", "finding " + std::to_string(i)}});
    llm_.Call("transition", {{"next", "review"}});
  }
  llm_.Call("complete", {{"status", "success"}, {"result", "done"}});
  AgentLoopDeps d = Deps();
  PieceRunOptions o;
  o.start_movement = SelectStartMovement(piece_, "review", "");
  PieceRunResult r = RunPiece(d, o);
  ASSERT_EQ(r.status, PieceRunStatus::kCompleted) << r.reason;
  ASSERT_EQ(llm_.requests.size(), 7u);
  // Request 1 is review's; each fix request ends with fix's guidance and
  // the finding that sent the work there; the third entry into fix
  // completes the review/fix cycle the coding piece warns about at 3.
  for (int i = 0; i < 3; ++i) {
    const Json fix = Last(llm_.requests[1 + 2 * i]);
    MovementFeedback fb;
    fb.from_movement = "review";
    fb.reason = "finding " + std::to_string(i);
    if (i == 2) fb.loop_warning = piece_.loop_monitors[0].warning;
    EXPECT_EQ(fix, TransitionGuidanceMessage(piece_, "fix", fb)) << i;
    const std::string text = fix["content"];
    EXPECT_EQ(text.rfind(MovementGuidanceText(piece_, "fix"), 0), 0u);
    EXPECT_NE(text.find("## Feedback from movement 'review'\nfinding " + std::to_string(i)),
              std::string::npos)
        << text;
    EXPECT_EQ(
        text.find("## Loop monitor\nThe review/fix loop has run 3 times.") != std::string::npos,
        i == 2)
        << text;
  }
  // A transition without a reason appends the guidance alone.
  EXPECT_EQ(Last(llm_.requests[2]), TransitionGuidanceMessage(piece_, "review"));
}

TEST(SelectStartMovementTest, ResumeBeatsOverrideBeatsInitial) {
  Piece p = test::Builtin("coding");
  EXPECT_EQ(SelectStartMovement(p, "", ""), "plan");
  EXPECT_EQ(SelectStartMovement(p, "", "review"), "review");
  EXPECT_EQ(SelectStartMovement(p, "fix", "review"), "fix");
  EXPECT_EQ(SelectStartMovement(p, "nope", ""), "plan");
}

}  // namespace
}  // namespace maestro::engine
