// Seed 001's sentinel catalog, one row per case, and the JobOutcome mapping.
#include "engine/loop/movement_result.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "store/policy.h"

namespace maestro::engine {
namespace {

// work --rules--> check | WAIT_SUBTASKS, default_next check; check -> work;
// finish has default_next COMPLETE (the seed's gotcha for WAIT_SUBTASKS).
Piece TestPiece() {
  Piece p;
  p.name = "t";
  Movement work;
  work.name = "work";
  work.default_next = "check";
  work.rules = {{"c", "check", {}}, {"w", "WAIT_SUBTASKS", {}}};
  Movement check;
  check.name = "check";
  check.rules = {{"", "work", {}}, {"w", "WAIT_SUBTASKS", {}}};
  Movement finish;
  finish.name = "finish";
  finish.default_next = "COMPLETE";
  finish.rules = {{"w", "WAIT_SUBTASKS", {}}};
  p.movements = {work, check, finish};
  p.initial_movement = "work";
  return p;
}

MovementResult Res(const char* movement, std::optional<std::string> next) {
  MovementResult r;
  r.movement = movement;
  r.next = std::move(next);
  return r;
}

struct Row {
  const char* name;
  MovementResult in = {};
  // context
  int ask_count = 0;
  int max_asks = 3;
  int deflections = 0;
  bool pending_children = false;
  // expected
  bool next_movement = false;
  std::string movement = {};  // next movement when next_movement
  PieceRunStatus status = PieceRunStatus::kError;
  std::string resume = {};
  std::string wait_reason = {};
  std::string reason = {};
  int new_ask_count = -1;
  int new_deflections = 0;
  bool deflection_message = false;
  bool retryable = false;
};

MovementResult With(MovementResult r, void (*f)(MovementResult&)) {
  f(r);
  return r;
}

std::vector<Row> Rows() {
  using S = PieceRunStatus;
  std::vector<Row> rows;
  auto add = [&](Row r) { rows.push_back(std::move(r)); };
  {
    Row r{"Complete", With(Res("check", "COMPLETE"), [](auto& m) { m.result = "done"; })};
    r.status = S::kCompleted;
    add(r);
  }
  {
    Row r{"CompleteWithPendingChildrenWaitsForSubtasks", Res("check", "COMPLETE")};
    r.pending_children = true;
    r.status = S::kWaitingSubtasks;
    r.resume = "check";
    add(r);
  }
  {
    Row r{"AbortCancelled", With(Res("work", "ABORT"), [](auto& m) { m.cancelled = true; })};
    r.status = S::kCancelled;
    r.reason = "cancelled";
    add(r);
  }
  {
    Row r{"AbortByGuard",
          With(Res("work", "ABORT"), [](auto& m) { m.abort_reason = kAbortTextOnlyLimit; })};
    r.status = S::kAborted;
    r.reason = "text_only_limit";
    add(r);
  }
  {
    Row r{"AbortMaxIterations",
          With(Res("work", "ABORT"), [](auto& m) { m.abort_reason = kAbortMaxIterations; })};
    r.status = S::kAborted;
    r.reason = "max_iterations";
    add(r);
  }
  {
    Row r{"AbortLlmErrorIsRetryable",
          With(Res("work", "ABORT"), [](auto& m) { m.abort_reason = kAbortLlmError; })};
    r.status = S::kAborted;
    r.reason = "llm_error";
    r.retryable = true;
    add(r);
  }
  {
    Row r{"AskUnderLimitParks", With(Res("check", "ASK"), [](auto& m) { m.question = "which?"; })};
    r.ask_count = 1;
    r.status = S::kWaitingHuman;
    r.resume = "check";
    r.wait_reason = "ask";
    r.new_ask_count = 2;
    add(r);
  }
  {
    Row r{"AskOverLimitFirstDeflection", Res("check", "ASK")};
    r.ask_count = 3;
    r.next_movement = true;
    r.movement = "check";
    r.new_deflections = 1;
    r.deflection_message = true;
    add(r);
  }
  {
    Row r{"AskOverLimitLastDeflection", Res("check", "ASK")};
    r.ask_count = 3;
    r.deflections = MAX_ASK_LIMIT_DEFLECTIONS - 1;
    r.next_movement = true;
    r.movement = "check";
    r.new_deflections = MAX_ASK_LIMIT_DEFLECTIONS;
    r.deflection_message = true;
    add(r);
  }
  {
    Row r{"AskOverLimitAfterDeflectionsAborts", Res("check", "ASK")};
    r.ask_count = 3;
    r.deflections = MAX_ASK_LIMIT_DEFLECTIONS;
    r.status = S::kAborted;
    r.reason = "ask_limit_reached";
    r.new_deflections = MAX_ASK_LIMIT_DEFLECTIONS;
    add(r);
  }
  {
    Row r{"AskWithZeroLimitIsDeflected", Res("work", "ASK")};
    r.max_asks = 0;
    r.next_movement = true;
    r.movement = "work";
    r.new_deflections = 1;
    r.deflection_message = true;
    add(r);
  }
  {
    Row r{"WaitSubtasksViaRulesResumesAtDefaultNext", Res("work", "WAIT_SUBTASKS")};
    r.status = S::kWaitingSubtasks;
    r.resume = "check";
    add(r);
  }
  {
    Row r{"WaitSubtasksWithoutDefaultNextResumesHere", Res("check", "WAIT_SUBTASKS")};
    r.status = S::kWaitingSubtasks;
    r.resume = "check";
    add(r);
  }
  {
    Row r{"WaitSubtasksDefaultNextCompleteResumesHere", Res("finish", "WAIT_SUBTASKS")};
    r.status = S::kWaitingSubtasks;
    r.resume = "finish";
    add(r);
  }
  {
    Row r{"WaitSubtasksToolResumesAtExplicitMovement",
          With(Res("work", "WAIT_SUBTASKS"), [](auto& m) { m.resume_movement = "work"; })};
    r.status = S::kWaitingSubtasks;
    r.resume = "work";
    add(r);
  }
  {
    Row r{"WaitingHumanBrowserLogin", Res("work", "WAITING_HUMAN_BROWSER")};
    r.status = S::kWaitingHuman;
    r.resume = "work";
    r.wait_reason = "browser_login";
    add(r);
  }
  {
    Row r{"WaitingHumanBrowserCaptcha",
          With(Res("work", "WAITING_HUMAN_BROWSER"), [](auto& m) { m.wait_reason = "captcha"; })};
    r.status = S::kWaitingHuman;
    r.resume = "work";
    r.wait_reason = "captcha";
    add(r);
  }
  {
    Row r{"WaitingHumanToolRequest", Res("check", "WAITING_HUMAN_TOOL_REQUEST")};
    r.status = S::kWaitingHuman;
    r.resume = "check";
    r.wait_reason = "tool_request";
    add(r);
  }
  {
    Row r{"WaitingHumanPackageRequest", Res("check", "WAITING_HUMAN_PACKAGE_REQUEST")};
    r.status = S::kWaitingHuman;
    r.resume = "check";
    r.wait_reason = "package_request";
    add(r);
  }
  {
    Row r{"WaitingHumanSpawnRequest", Res("work", "WAITING_HUMAN_SPAWN_REQUEST")};
    r.status = S::kWaitingHuman;
    r.resume = "work";
    r.wait_reason = "spawn_request";
    add(r);
  }
  {
    Row r{"TransitionToMovement", Res("work", "check")};
    r.next_movement = true;
    r.movement = "check";
    add(r);
  }
  {
    Row r{"UnsettledIsRetryableError", Res("work", std::nullopt)};
    r.status = S::kError;
    r.reason = "movement 'work' ended without a transition or completion";
    r.retryable = true;
    add(r);
  }
  {
    Row r{"UnknownMovementIsError", Res("work", "nowhere")};
    r.status = S::kError;
    r.reason = "movement 'work' chose unknown next 'nowhere'";
    add(r);
  }
  return rows;
}

class SentinelCatalog : public ::testing::TestWithParam<Row> {};

TEST_P(SentinelCatalog, MapsRow) {
  const Row& row = GetParam();
  Piece piece = TestPiece();
  MovementMapContext ctx;
  ctx.piece = &piece;
  ctx.ask_count = row.ask_count;
  ctx.max_asks = row.max_asks;
  ctx.ask_deflections = row.deflections;
  ctx.has_pending_children = row.pending_children;
  MovementMapping m = mapMovementResult(row.in, ctx);
  EXPECT_EQ(m.ask_deflections, row.new_deflections);
  EXPECT_EQ(!m.deflection_message.empty(), row.deflection_message);
  if (row.next_movement) {
    ASSERT_EQ(m.kind, MovementMapping::Kind::kNextMovement);
    EXPECT_EQ(m.next_movement, row.movement);
    return;
  }
  ASSERT_EQ(m.kind, MovementMapping::Kind::kDone);
  EXPECT_EQ(PieceRunStatusName(m.done.status), PieceRunStatusName(row.status));
  EXPECT_EQ(m.done.resume_movement, row.resume);
  EXPECT_EQ(m.done.wait_reason, row.wait_reason);
  EXPECT_EQ(m.done.reason, row.reason);
  EXPECT_EQ(m.done.ask_count, row.new_ask_count);
  EXPECT_EQ(m.done.retryable, row.retryable);
  EXPECT_EQ(m.done.last_movement, row.in.movement);
  EXPECT_EQ(m.done.result, row.in.result);
  EXPECT_EQ(m.done.question, row.status == PieceRunStatus::kWaitingHuman ? row.in.question : "");
}

INSTANTIATE_TEST_SUITE_P(Rows, SentinelCatalog, ::testing::ValuesIn(Rows()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(SentinelCatalog, DeflectionMessageTellsTheModelToDecide) {
  Piece piece = TestPiece();
  MovementMapContext ctx{&piece, 3, 3, 0, false};
  MovementMapping m = mapMovementResult(Res("check", "ASK"), ctx);
  EXPECT_THAT(m.deflection_message, ::testing::HasSubstr("asked the user 3 times"));
  EXPECT_THAT(m.deflection_message, ::testing::HasSubstr("decide by yourself"));
}

TEST(SentinelCatalog, EverySentinelNameRoundTrips) {
  for (auto s : {Sentinel::kComplete, Sentinel::kAbort, Sentinel::kAsk, Sentinel::kWaitSubtasks,
                 Sentinel::kWaitingHumanBrowser, Sentinel::kWaitingHumanToolRequest,
                 Sentinel::kWaitingHumanPackageRequest, Sentinel::kWaitingHumanSpawnRequest}) {
    auto back = ParseSentinel(SentinelName(s));
    ASSERT_TRUE(back.has_value()) << SentinelName(s);
    EXPECT_EQ(*back, s);
  }
  EXPECT_FALSE(ParseSentinel("review").has_value());
  EXPECT_FALSE(
      ParseSentinel("complete").has_value());  // case matters: a movement may be "complete"
}

struct CompleteRow {
  const char* name;
  const char* args;
  std::string next;  // "" = invalid
  std::string question;
  std::string abort_reason;
};

class CompleteTool : public ::testing::TestWithParam<CompleteRow> {};

TEST_P(CompleteTool, MapsArguments) {
  const auto& row = GetParam();
  auto r = MovementResultFromComplete("work", Json::parse(row.args));
  if (row.next.empty()) {
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    return;
  }
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->movement, "work");
  EXPECT_EQ(*r->next, row.next);
  EXPECT_EQ(r->question, row.question);
  EXPECT_EQ(r->abort_reason, row.abort_reason);
}

INSTANTIATE_TEST_SUITE_P(
    Rows, CompleteTool,
    ::testing::Values(
        CompleteRow{"Success", R"({"status":"success","result":"ok"})", "COMPLETE", "", ""},
        CompleteRow{"NeedsInput", R"({"status":"needs_user_input","result":"r","question":"q?"})",
                    "ASK", "q?", ""},
        CompleteRow{"NeedsInputQuestionFromResult",
                    R"({"status":"needs_user_input","result":"which one?"})", "ASK", "which one?",
                    ""},
        CompleteRow{"Error", R"({"status":"error","result":"cannot"})", "ABORT", "", "agent_error"},
        CompleteRow{"MissingStatus", R"({"result":"x"})", "", "", ""},
        CompleteRow{"UnknownStatus", R"({"status":"done","result":"x"})", "", "", ""},
        CompleteRow{"NeedsInputWithoutQuestion", R"({"status":"needs_user_input"})", "", "", ""},
        CompleteRow{"NotAnObject", R"([1])", "", "", ""}),
    [](const auto& info) { return std::string(info.param.name); });

// handlePieceResult: what the run reports (the store's policy decides the
// status, re-pointed at policy::MapOutcome where a test reads the decision).
class ToJobOutcomeTest : public ::testing::Test {
 protected:
  RetryConfig retry_{1000, 10000, 3, 0.0};
  Job job_;
  void SetUp() override {
    job_.attempt = 1;
    job_.max_attempts = 3;
  }
};

TEST_F(ToJobOutcomeTest, CompletedSucceedsWithResult) {
  PieceRunResult r;
  r.status = PieceRunStatus::kCompleted;
  r.result = "all done";
  JobOutcome o = ToJobOutcome(r);
  EXPECT_EQ(o.kind, JobOutcome::Kind::kSucceeded);
  EXPECT_EQ(o.result, "all done");
}

TEST_F(ToJobOutcomeTest, AskParksWaitingHumanWithAskCount) {
  PieceRunResult r;
  r.status = PieceRunStatus::kWaitingHuman;
  r.wait_reason = "ask";
  r.resume_movement = "review";
  r.ask_count = 2;
  JobOutcome o = ToJobOutcome(r);
  EXPECT_EQ(o.kind, JobOutcome::Kind::kParked);
  EXPECT_EQ(o.park_status, JobStatus::kWaitingHuman);
  EXPECT_EQ(o.wait_reason, "ask");
  EXPECT_EQ(o.resume_movement, "review");
  EXPECT_EQ(o.ask_count, 2);
}

TEST_F(ToJobOutcomeTest, ToolRequestParkKeepsAskCount) {
  PieceRunResult r;
  r.status = PieceRunStatus::kWaitingHuman;
  r.wait_reason = "tool_request";
  r.resume_movement = "work";
  JobOutcome o = ToJobOutcome(r);
  EXPECT_EQ(o.kind, JobOutcome::Kind::kParked);
  EXPECT_EQ(o.wait_reason, "tool_request");
  EXPECT_EQ(o.ask_count, -1);
}

TEST_F(ToJobOutcomeTest, WaitingSubtasksParks) {
  PieceRunResult r;
  r.status = PieceRunStatus::kWaitingSubtasks;
  r.resume_movement = "check";
  JobOutcome o = ToJobOutcome(r);
  EXPECT_EQ(o.kind, JobOutcome::Kind::kParked);
  EXPECT_EQ(o.park_status, JobStatus::kWaitingSubtasks);
  EXPECT_EQ(o.resume_movement, "check");
}

TEST_F(ToJobOutcomeTest, CancelledCancels) {
  PieceRunResult r;
  r.status = PieceRunStatus::kCancelled;
  r.reason = "cancelled";
  EXPECT_EQ(ToJobOutcome(r).kind, JobOutcome::Kind::kCancelled);
}

TEST_F(ToJobOutcomeTest, GuardAbortFailsWithoutRetry) {
  PieceRunResult r;
  r.status = PieceRunStatus::kAborted;
  r.reason = kAbortAskLimitReached;
  JobOutcome o = ToJobOutcome(r);
  EXPECT_EQ(o.kind, JobOutcome::Kind::kFailed);
  EXPECT_EQ(o.error_message, "aborted: ask_limit_reached");
}

TEST_F(ToJobOutcomeTest, RetryableErrorRetriesThenFailsAtMaxAttempts) {
  PieceRunResult r;
  r.status = PieceRunStatus::kError;
  r.reason = "movement 'work' ended without a transition or completion";
  r.retryable = true;
  JobOutcome o = ToJobOutcome(r);
  EXPECT_EQ(o.kind, JobOutcome::Kind::kFailed);
  EXPECT_TRUE(o.retryable) << "reported, not decided: the store retries or fails it";
  job_.status = JobStatus::kRunning;
  auto decided = policy::MapOutcome(job_, o, {}, 5000, retry_);
  ASSERT_TRUE(decided.ok());
  EXPECT_EQ(decided->to, JobStatus::kRetry);
  EXPECT_EQ(decided->next_retry_at, 6000);
  job_.attempt = 3;
  EXPECT_EQ(policy::MapOutcome(job_, ToJobOutcome(r), {}, 5000, retry_)->to, JobStatus::kFailed);
}

}  // namespace
}  // namespace maestro::engine
