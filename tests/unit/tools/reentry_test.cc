// Re-entrant park tools against a real SqliteStore: a call re-issued after
// the resume finds its decided request — no second card, no denial loop.
#include "tools/reentry.h"

#include <gtest/gtest.h>

#include "support/store_fixture.h"
#include "tools/dispatcher.h"
#include "tools/park_tools.h"
#include "tools/workspace_tools.h"

namespace maestro::tools {
namespace {

class ReentryTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    task_ = NewTaskWith("chat");
  }
  // What the engine does with a request-creating park call: short-circuit a
  // decided request, otherwise create one (unless pending) and park.
  ReentryOutcome Issue(const ToolCall& call) {
    auto out = CheckReentry(*store_, task_.task.id, task_.job.id, call);
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    if (out.ok() && out->state == ReentryState::kNew) {
      auto key = RequestKeyFor(call);
      EXPECT_TRUE(key.ok());
      EXPECT_TRUE(
          store_->CreateRequest(NewRequestFor(*key, task_.task.id, task_.job.id, call)).ok());
    }
    return out.ok() ? *out : ReentryOutcome{};
  }
  size_t RequestCount(RequestKind kind) {
    auto r = store_->ListRequests(task_.task.id, kind);
    EXPECT_TRUE(r.ok());
    return r.ok() ? r->size() : 0;
  }
  Store::CreatedTask task_;
};

ToolCall AskWrite(const std::string& id, const std::string& reason = "need to save") {
  return {id,
          "RequestTool",
          {{"tool", "WriteFile"},
           {"arguments", {{"path", "out.txt"}, {"content", "42"}}},
           {"reason", reason}}};
}

TEST_F(ReentryTest, ADeniedRequestToolReissuedAfterResumeGetsTheDenialWithoutANewRequest) {
  EXPECT_EQ(Issue(AskWrite("c1")).state, ReentryState::kNew);
  ASSERT_EQ(RequestCount(RequestKind::kTool), 1u);
  // Still pending (e.g. a spurious resume): park again, no second card.
  EXPECT_EQ(Issue(AskWrite("c1b")).state, ReentryState::kPending);
  EXPECT_EQ(RequestCount(RequestKind::kTool), 1u);

  auto reqs = store_->ListRequests(task_.task.id, RequestKind::kTool);
  ASSERT_TRUE(store_->DecideRequest((*reqs)[0].id, "deny", "", "bob").ok());
  // After the resume the model calls the same tool again, with a reworded reason.
  ReentryOutcome again = Issue(AskWrite("c2", "please, I really need it"));
  EXPECT_EQ(again.state, ReentryState::kDenied);
  EXPECT_TRUE(again.result.is_error);
  EXPECT_EQ(again.result.call_id, "c2");
  EXPECT_EQ(again.result.content.rfind("Error: the user denied", 0), 0u) << again.result.content;
  EXPECT_NE(again.result.content.find("Do not ask again"), std::string::npos);
  EXPECT_EQ(RequestCount(RequestKind::kTool), 1u);
}

TEST_F(ReentryTest, AnApprovedRequestProceedsAndItsGrantAuthorizesExactlyThoseArguments) {
  Issue(AskWrite("c1"));
  auto reqs = store_->ListRequests(task_.task.id, RequestKind::kTool);
  ASSERT_TRUE(store_->DecideRequest((*reqs)[0].id, "approve", "once", "alice").ok());
  ReentryOutcome out = Issue(AskWrite("c2"));
  EXPECT_EQ(out.state, ReentryState::kApproved);
  EXPECT_FALSE(out.result.is_error);
  EXPECT_NE(out.result.content.find("call WriteFile now"), std::string::npos);
  EXPECT_EQ(RequestCount(RequestKind::kTool), 1u);

  ToolRegistry reg;
  ASSERT_TRUE(RegisterFileTools(reg).ok());
  testing::TempDir ws;
  ToolScope ctx;
  ctx.task_id = task_.task.id;
  ctx.job_id = task_.job.id;
  ctx.workspace_root = std::filesystem::canonical(ws.path()).string();
  ctx.policy.allowed_tools = {"WriteFile"};  // edit_allowed stays false
  Dispatcher d(&reg, ToolAuthorizer(store_.get()));
  auto other = d.Run({{"w0", "WriteFile", {{"path", "out.txt"}, {"content", "43"}}}}, ctx);
  EXPECT_TRUE(other[0].is_error);  // different arguments: not approved
  auto same = d.Run({{"w1", "WriteFile", {{"path", "out.txt"}, {"content", "42"}}}}, ctx);
  EXPECT_FALSE(same[0].is_error) << same[0].content;

  // The once-grant is spent: asking again for the same call is a new request
  // (a new card), not an "approved" that the authorizer would then refuse.
  EXPECT_EQ(Issue(AskWrite("c3")).state, ReentryState::kNew);
  EXPECT_EQ(RequestCount(RequestKind::kTool), 2u);
}

TEST_F(ReentryTest, DifferentArgumentsAreADifferentRequest) {
  Issue(AskWrite("c1"));
  auto reqs = store_->ListRequests(task_.task.id, RequestKind::kTool);
  ASSERT_TRUE(store_->DecideRequest((*reqs)[0].id, "deny", "", "bob").ok());
  ToolCall other = {"c2",
                    "RequestTool",
                    {{"tool", "WriteFile"},
                     {"arguments", {{"path", "other.txt"}, {"content", "1"}}},
                     {"reason", "r"}}};
  EXPECT_EQ(Issue(other).state, ReentryState::kNew);
  EXPECT_EQ(RequestCount(RequestKind::kTool), 2u);
}

TEST_F(ReentryTest, ARequestOfAnotherJobDoesNotAnswer) {
  Issue(AskWrite("c1"));
  auto reqs = store_->ListRequests(task_.task.id, RequestKind::kTool);
  ASSERT_TRUE(store_->DecideRequest((*reqs)[0].id, "deny", "", "bob").ok());
  NewJob nj;
  nj.task_id = task_.task.id;
  nj.piece = "chat";
  auto next = store_->EnqueueJob(nj);
  ASSERT_TRUE(next.ok());
  auto out = CheckReentry(*store_, task_.task.id, next->id, AskWrite("c9"));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->state, ReentryState::kNew);
}

TEST_F(ReentryTest, PackageAndSpawnRequestsShortCircuitToo) {
  ToolCall pkg = {
      "p1", "RequestPackage", {{"ecosystem", "pip"}, {"name", "requests"}, {"reason", "http"}}};
  EXPECT_EQ(Issue(pkg).state, ReentryState::kNew);
  auto reqs = store_->ListRequests(task_.task.id, RequestKind::kPackage);
  ASSERT_EQ(reqs->size(), 1u);
  EXPECT_EQ((*reqs)[0].name, "pip:requests");
  ASSERT_TRUE(store_->DecideRequest((*reqs)[0].id, "approve", "", "alice").ok());
  ReentryOutcome p = Issue(pkg);
  EXPECT_EQ(p.state, ReentryState::kApproved);
  EXPECT_NE(p.result.content.find("installed"), std::string::npos);
  EXPECT_EQ(RequestCount(RequestKind::kPackage), 1u);

  ToolCall spawn = {"s1",
                    "SpinOffTask",
                    {{"title", "docs"}, {"instruction", "write docs"}, {"space", "website"}}};
  EXPECT_EQ(Issue(spawn).state, ReentryState::kNew);
  auto sreqs = store_->ListRequests(task_.task.id, RequestKind::kSpawn);
  ASSERT_TRUE(store_->DecideRequest((*sreqs)[0].id, "deny", "", "bob").ok());
  EXPECT_EQ(Issue(spawn).state, ReentryState::kDenied);
  EXPECT_EQ(RequestCount(RequestKind::kSpawn), 1u);

  // A SpinOffTask in the same workspace needs no approval at all.
  EXPECT_FALSE(RequestKeyFor({"s2", "SpinOffTask", {{"title", "x"}, {"instruction", "y"}}}).ok());
}

TEST(ParkToolsTest, ControlTableMapsEachParkToolToItsSentinelAndWaitReason) {
  const ControlToolInfo* rt = FindControlTool("RequestTool");
  ASSERT_NE(rt, nullptr);
  EXPECT_EQ(rt->sentinel, "WAITING_HUMAN_TOOL_REQUEST");
  EXPECT_EQ(rt->wait_reason, "tool_request");
  EXPECT_TRUE(rt->resumes_current_movement);
  EXPECT_EQ(FindControlTool("RequestPackage")->wait_reason, "package_request");
  EXPECT_EQ(FindControlTool("WaitSubTask")->park_status, "waiting_subtasks");
  EXPECT_EQ(FindControlTool("SpinOffTask")->wait_reason, "spawn_request");
  EXPECT_EQ(FindControlTool("ReadFile"), nullptr);
  ToolRegistry reg;
  ASSERT_TRUE(RegisterParkTools(reg).ok());
  EXPECT_EQ(FindControlTool("RequestCaptchaHelp")->wait_reason, "captcha");
  EXPECT_EQ(FindControlTool("RequestCaptchaHelp")->sentinel, "WAITING_HUMAN_BROWSER");
  for (const auto& c : ControlTools()) {
    if (c.name == "complete" || c.name == "transition") continue;
    // Registered per job next to BrowseWeb (src/browser), not here.
    if (c.name == "RequestCaptchaHelp") continue;
    EXPECT_NE(reg.Find(std::string(c.name)), nullptr) << c.name;
    EXPECT_EQ(reg.Handler(std::string(c.name)), nullptr) << c.name;  // the engine handles them
  }
}

}  // namespace
}  // namespace maestro::tools
