// Approval requests (compare-and-set decisions) and grants (matched by hash).
#include <thread>

#include "core/hash.h"
#include "support/store_fixture.h"

namespace maestro {
namespace {

using testing::StoreConformance;

Request ToolRequest(const std::string& task_id, const Json& args) {
  Request r;
  r.task_id = task_id;
  r.kind = RequestKind::kTool;
  r.name = "RunCommand";
  r.args = args;
  r.reason = "need to run the tests";
  return r;
}

TEST_P(StoreConformance, RequestIsDecidedExactlyOnceUnderConcurrentClicks) {
  auto c = NewTaskWith("ok");
  auto req = store_->CreateRequest(ToolRequest(c.task.id, {{"command", "make test"}}));
  ASSERT_TRUE(req.ok()) << req.status().ToString();
  EXPECT_EQ(req->status, RequestStatus::kPending);
  EXPECT_EQ(req->args_hash, CanonicalJsonHash(Json{{"command", "make test"}}));

  std::atomic<int> won{0}, conflicts{0};
  std::vector<std::thread> clicks;
  for (int i = 0; i < 6; ++i) {
    clicks.emplace_back([&, i] {
      auto d = store_->DecideRequest(req->id, i % 2 ? "deny" : "approve", "once", "user");
      if (d.ok())
        ++won;
      else if (d.status().code() == StatusCode::kConflict)
        ++conflicts;
    });
  }
  for (auto& t : clicks) t.join();
  EXPECT_EQ(won.load(), 1);
  EXPECT_EQ(conflicts.load(), 5);
  auto grants = store_->ListGrants(c.task.id);
  auto decided = store_->GetRequest(req->id);
  EXPECT_EQ(grants->size(), decided->status == RequestStatus::kApproved ? 1u : 0u);
}

TEST_P(StoreConformance, OnceGrantIsBoundToArgumentsAndSpentOnce) {
  auto c = NewTaskWith("ok");
  Json args = {{"command", "make test"}, {"cwd", "."}};
  auto req = store_->CreateRequest(ToolRequest(c.task.id, args));
  ASSERT_TRUE(store_->DecideRequest(req->id, "approve", "once", "alice").ok());
  // Same arguments in another key order hash the same.
  Json reordered = Json::parse(R"({"cwd":".","command":"make test"})");
  auto other = store_->ConsumeGrant(c.task.id, "RunCommand",
                                    CanonicalJsonHash(Json{{"command", "rm -rf /"}}));
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->has_value()) << "a once grant must not cover other arguments";
  auto used = store_->ConsumeGrant(c.task.id, "RunCommand", CanonicalJsonHash(reordered));
  ASSERT_TRUE(used.ok());
  ASSERT_TRUE(used->has_value());
  EXPECT_EQ((*used)->request_id, req->id);
  auto again = store_->ConsumeGrant(c.task.id, "RunCommand", CanonicalJsonHash(reordered));
  EXPECT_FALSE(again->has_value()) << "a once grant is spent";
}

TEST_P(StoreConformance, TaskGrantCoversAnyArgumentsUntilItExpires) {
  auto c = NewTaskWith("ok");
  Grant g;
  g.task_id = c.task.id;
  g.tool_name = "WriteFile";
  g.scope = GrantScope::kTask;
  g.expires_at = clock_.NowMs() + 1000;
  ASSERT_TRUE(store_->AddGrant(g).ok());
  for (int i = 0; i < 3; ++i) {
    auto u = store_->ConsumeGrant(c.task.id, "WriteFile", "hash" + std::to_string(i));
    ASSERT_TRUE(u.ok() && u->has_value());
  }
  EXPECT_FALSE(store_->ConsumeGrant(c.task.id, "ReadFile", "h")->has_value());
  clock_.Advance(1001);
  EXPECT_FALSE(store_->ConsumeGrant(c.task.id, "WriteFile", "h")->has_value());
  // A scope other than once|task cannot reach AddGrant any more: it is not a
  // GrantScope (the text boundary is ParseGrantScope; DecideRequest's "scope").
  EXPECT_FALSE(ParseGrantScope("forever").has_value());
  EXPECT_EQ(store_
                ->DecideRequest(store_->CreateRequest(ToolRequest(c.task.id, {}))->id, "approve",
                                "forever", "u")
                .status()
                .field(),
            "scope");
}

TEST_P(StoreConformance, DeniedRequestCreatesNoGrantAndBadDecisionIsRejected) {
  auto c = NewTaskWith("ok");
  auto req = store_->CreateRequest(ToolRequest(c.task.id, {{"command", "x"}}));
  EXPECT_EQ(store_->DecideRequest(req->id, "maybe", "", "u").status().field(), "decision");
  ASSERT_TRUE(store_->DecideRequest(req->id, "deny", "", "u").ok());
  EXPECT_TRUE(store_->ListGrants(c.task.id)->empty());
  EXPECT_EQ(store_->DecideRequest(req->id, "approve", "task", "u").status().code(),
            StatusCode::kConflict);
  auto list = store_->ListRequests(c.task.id, RequestKind::kTool);
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].status, RequestStatus::kDenied);
  EXPECT_TRUE(store_->ListRequests(c.task.id, RequestKind::kPackage)->empty());
}

}  // namespace
}  // namespace maestro
