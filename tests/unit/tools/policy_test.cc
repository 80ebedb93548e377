// Tool Policy ∪ grants as the only source of permission, against a real
// SqliteStore: a grant bound to arguments authorizes exactly those.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/hash.h"
#include "sandbox/sandbox.h"
#include "support/store_fixture.h"
#include "tools/dispatcher.h"
#include "tools/workspace_tools.h"

namespace maestro::tools {
namespace {

class PolicyTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    ASSERT_TRUE(RegisterFileTools(registry_).ok());
    ASSERT_TRUE(
        RegisterRunCommand(registry_, std::make_shared<Sandbox>(Sandbox::Unavailable("t"))).ok());
    task_ = NewTaskWith("chat");
    std::filesystem::create_directories(dir_.File("ws"));
    ctx_.task_id = task_.task.id;
    ctx_.job_id = task_.job.id;
    ctx_.workspace_root = std::filesystem::canonical(dir_.File("ws")).string();
    ctx_.policy.allowed_tools = {"ReadFile", "ListDir", "WriteFile", "EditFile", "RunCommand"};
  }
  Permission Check(const std::string& tool, const Json& args) {
    auto p = ToolAuthorizer(store_.get())
                 .Authorize(ctx_.policy, ctx_.task_id, *registry_.Find(tool), args);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return p.ok() ? *p : Permission{};
  }
  void GrantOnce(const std::string& tool, const Json& args) {
    Grant g;
    g.task_id = ctx_.task_id;
    g.tool_name = tool;
    g.scope = GrantScope::kOnce;
    g.args_hash = CanonicalJsonHash(args);
    g.uses_left = 1;
    ASSERT_TRUE(store_->AddGrant(g).ok());
  }

  ToolRegistry registry_;
  Store::CreatedTask task_;
  ToolScope ctx_;
};

TEST_F(PolicyTest, PolicyAloneDecidesWhenItAllows) {
  EXPECT_TRUE(Check("ReadFile", {{"path", "a"}}).allowed);
  Permission w = Check("WriteFile", {{"path", "a"}, {"content", "x"}});
  EXPECT_FALSE(w.allowed);
  EXPECT_NE(w.denial.find("editing is not allowed"), std::string::npos);
  EXPECT_NE(w.denial.find("RequestTool"), std::string::npos);
  EXPECT_EQ(w.denial.rfind("Error: ", 0), 0u);
  Permission g = Check("Grep", {{"pattern", "x"}});  // not in allowed_tools
  EXPECT_FALSE(g.allowed);
  EXPECT_NE(g.denial.find("allowed tools"), std::string::npos);
  ctx_.policy.edit_allowed = true;
  EXPECT_TRUE(Check("WriteFile", {{"path", "a"}, {"content", "x"}}).allowed);
}

TEST_F(PolicyTest, AOnceGrantAuthorizesOnlyItsArgumentsAndOnlyOnce) {
  const Json approved = {{"path", "notes.txt"}, {"content", "hello"}};
  GrantOnce("WriteFile", approved);
  // Different arguments — even the same path with other content — are not covered.
  EXPECT_FALSE(Check("WriteFile", {{"path", "notes.txt"}, {"content", "rm -rf"}}).allowed);
  EXPECT_FALSE(Check("WriteFile", {{"path", "other.txt"}, {"content", "hello"}}).allowed);
  // Key order does not matter: the hash is canonical.
  Permission p = Check("WriteFile", Json::parse(R"({"content":"hello","path":"notes.txt"})"));
  EXPECT_TRUE(p.allowed);
  EXPECT_FALSE(p.grant_id.empty());
  EXPECT_FALSE(Check("WriteFile", approved).allowed);  // spent
}

TEST_F(PolicyTest, ATaskGrantCoversTheToolButNotTheNetwork) {
  Grant g;
  g.task_id = ctx_.task_id;
  g.tool_name = "RunCommand";
  g.scope = GrantScope::kTask;
  ASSERT_TRUE(store_->AddGrant(g).ok());
  EXPECT_TRUE(Check("RunCommand", {{"command", "make"}}).allowed);
  EXPECT_TRUE(Check("RunCommand", {{"command", "make test"}}).allowed);
  Permission net = Check("RunCommand", {{"command", "curl x"}, {"network", true}});
  EXPECT_FALSE(net.allowed);
  EXPECT_NE(net.denial.find("shell commands"), std::string::npos);
  // A once-grant for exactly the networked call does open it.
  GrantOnce("RunCommand", {{"command", "curl x"}, {"network", true}});
  Permission once = Check("RunCommand", {{"command", "curl x"}, {"network", true}});
  EXPECT_TRUE(once.allowed);
  EXPECT_TRUE(once.network);
}

TEST_F(PolicyTest, GrantsOfAnotherTaskDoNotCount) {
  auto other = NewTaskWith("chat");
  Grant g;
  g.task_id = other.task.id;
  g.tool_name = "WriteFile";
  g.scope = GrantScope::kTask;
  ASSERT_TRUE(store_->AddGrant(g).ok());
  EXPECT_FALSE(Check("WriteFile", {{"path", "a"}, {"content", "x"}}).allowed);
}

TEST_F(PolicyTest, ADeniedCallThroughTheDispatcherDoesNothing) {
  Dispatcher d(&registry_, ToolAuthorizer(store_.get()));
  auto r = d.Run({{"c1", "WriteFile", {{"path", "x.txt"}, {"content", "data"}}}}, ctx_);
  EXPECT_TRUE(r[0].is_error);
  EXPECT_NE(r[0].content.find("RequestTool"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(ctx_.workspace_root + "/x.txt"));
  // Approving the request for exactly these arguments makes the same call work.
  Request req;
  req.task_id = ctx_.task_id;
  req.job_id = ctx_.job_id;
  req.kind = RequestKind::kTool;
  req.name = "WriteFile";
  req.args = {{"path", "x.txt"}, {"content", "data"}};
  auto created = store_->CreateRequest(req);
  ASSERT_TRUE(created.ok());
  ASSERT_TRUE(store_->DecideRequest(created->id, "approve", "once", "alice").ok());
  auto r2 = d.Run({{"c2", "WriteFile", {{"path", "x.txt"}, {"content", "data"}}}}, ctx_);
  EXPECT_FALSE(r2[0].is_error) << r2[0].content;
  EXPECT_TRUE(std::filesystem::exists(ctx_.workspace_root + "/x.txt"));
}

TEST(ToolPolicyJsonTest, ParsesAndNamesUnknownKeys) {
  auto p = ToolPolicy::FromJson({{"allowed_tools", {"ReadFile"}}, {"shell_allowed", true}});
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->shell_allowed);
  EXPECT_FALSE(p->edit_allowed);
  EXPECT_EQ(p->allowed_tools.count("ReadFile"), 1u);
  auto bad = ToolPolicy::FromJson({{"shell_alowed", true}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "tool_policy.shell_alowed");
  EXPECT_NE(bad.status().message().find("shell_allowed"), std::string::npos);
}

}  // namespace
}  // namespace maestro::tools
