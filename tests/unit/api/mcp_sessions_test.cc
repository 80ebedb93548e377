// The MCP server's protocol pieces without a server (api/mcp_server.h):
// version negotiation, the session table (owner, idle expiry, bound,
// delete) and the cancellation of a wait, and the progress texts.
#include <gtest/gtest.h>

#include "api/mcp_server.h"

namespace maestro::api::mcp {
namespace {

using namespace std::chrono_literals;

struct FakeTime {
  McpSessions::Clock::time_point now{};
  std::function<McpSessions::Clock::time_point()> Fn() {
    return [this] { return now; };
  }
};

TEST(McpVersionsTest, ASupportedVersionIsKeptAnythingElseGetsTheLatest) {
  EXPECT_EQ(NegotiateVersion("2025-11-25"), "2025-11-25");
  EXPECT_EQ(NegotiateVersion("2025-06-18"), "2025-06-18");
  EXPECT_EQ(NegotiateVersion("2025-03-26"), "2025-03-26");
  EXPECT_EQ(NegotiateVersion("2024-11-05"), kLatestVersion);
  EXPECT_EQ(NegotiateVersion(""), kLatestVersion);
  EXPECT_FALSE(HasStructuredContent("2025-03-26"));
  EXPECT_TRUE(HasStructuredContent("2025-06-18"));
}

TEST(McpSessionsTest, ASessionBelongsToItsUserAndExpiresWhenIdle) {
  FakeTime t;
  McpSessions sessions(10, 30min, t.Fn());
  auto id = sessions.Create("alice", "2025-11-25");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(id->size(), 64u);
  auto found = sessions.Find(*id, "alice");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->version, "2025-11-25");
  EXPECT_FALSE(found->initialized);
  sessions.MarkInitialized(*id);
  EXPECT_TRUE(sessions.Find(*id, "alice")->initialized);
  EXPECT_FALSE(sessions.Find(*id, "bob")) << "another user's session is unknown to them";
  EXPECT_FALSE(sessions.Remove(*id, "bob"));

  t.now += 29min;
  EXPECT_TRUE(sessions.Find(*id, "alice")) << "use restarts the idle time";
  t.now += 29min;
  EXPECT_TRUE(sessions.Find(*id, "alice"));
  t.now += 31min;
  EXPECT_FALSE(sessions.Find(*id, "alice")) << "idle past the limit";
  EXPECT_EQ(sessions.size(), 0u);
}

TEST(McpSessionsTest, AFullTableDropsTheLeastRecentlyUsedSession) {
  FakeTime t;
  McpSessions sessions(2, 30min, t.Fn());
  auto a = sessions.Create("u", "2025-11-25");
  t.now += 1s;
  auto b = sessions.Create("u", "2025-11-25");
  t.now += 1s;
  ASSERT_TRUE(sessions.Find(*a, "u"));  // a is now the most recent
  t.now += 1s;
  auto c = sessions.Create("u", "2025-11-25");
  EXPECT_EQ(sessions.size(), 2u);
  EXPECT_TRUE(sessions.Find(*a, "u"));
  EXPECT_FALSE(sessions.Find(*b, "u"));
  EXPECT_TRUE(sessions.Find(*c, "u"));
}

TEST(McpSessionsTest, CancelAndDeleteEndTheSessionsWaits) {
  McpSessions sessions(10, 30min);
  auto id = sessions.Create("u", "2025-11-25");
  auto w1 = sessions.AddWait(*id, "1");
  auto w2 = sessions.AddWait(*id, "\"1\"");
  int woken = 0;
  w1->SetWake([&] { ++woken; });
  EXPECT_FALSE(sessions.CancelWait(*id, "2"));
  EXPECT_TRUE(sessions.CancelWait(*id, "1"));
  EXPECT_TRUE(w1->cancelled());
  EXPECT_EQ(woken, 1);
  EXPECT_FALSE(w2->cancelled()) << "the string id \"1\" is another request";
  EXPECT_FALSE(sessions.CancelWait(*id, "1")) << "once";
  EXPECT_TRUE(sessions.Remove(*id, "u"));
  EXPECT_TRUE(w2->cancelled()) << "DELETE ends the session's streams";
  EXPECT_FALSE(sessions.Find(*id, "u"));
}

TEST(McpProgressTest, EventsBecomeShortMessages) {
  Event e;
  e.job_id = "01JOBIDJOBIDJOBIDJOB12345";
  e.type = "job.status";
  e.payload = {{"from", "running"}, {"to", "waiting_human"}, {"wait_reason", "ask"}};
  EXPECT_EQ(ProgressMessage(e), "job …JOB12345 running → waiting_human (ask)");
  e.payload = {{"from", "queued"}, {"to", "queued"}};
  EXPECT_EQ(ProgressMessage(e), "job …JOB12345 queued");
  e.type = "tool.call";
  e.payload = {{"tool", "ReadFile"}, {"duration_ms", 12}, {"is_error", false}};
  EXPECT_EQ(ProgressMessage(e), "tool ReadFile ran in 12 ms");
  e.type = "llm.call";
  e.payload = {{"movement", "chat"},
               {"promptTokens", 10},
               {"cachedPromptTokens", 4},
               {"completionTokens", 3},
               {"totalMs", 50}};
  EXPECT_EQ(ProgressMessage(e),
            "LLM call in movement chat: 10 prompt tokens (4 cached), 3 completion tokens, 50 ms");
  e.type = "something.new";
  e.payload = "not an object";
  EXPECT_EQ(ProgressMessage(e), "something.new");
}

TEST(McpToolsTest, EveryToolHasAnObjectSchemaAndResultsCarryTheJsonAsText) {
  Json tools = ToolDefinitions(kLatestVersion);
  ASSERT_EQ(tools.size(), 6u);
  for (const auto& t : tools) {
    EXPECT_EQ(t["inputSchema"]["type"], "object") << t.dump();
    EXPECT_TRUE(IsKnownTool(t["name"].get<std::string>()));
  }
  EXPECT_FALSE(IsKnownTool("rm_rf"));
  Json r = ToolResult({{"a", 1}}, "done", kLatestVersion);
  EXPECT_EQ(r["structuredContent"], Json({{"a", 1}}));
  EXPECT_EQ(r["content"][0]["text"], "done\n{\"a\":1}");
  EXPECT_FALSE(ToolResult({{"a", 1}}, "done", "2025-03-26").contains("structuredContent"));
  EXPECT_EQ(ToolError("bad")["isError"], true);
}

}  // namespace
}  // namespace maestro::api::mcp
