// The MCP server's protocol pieces without a server (api/mcp_server.h):
// version negotiation, the session table (owner, idle expiry, bound,
// delete) and the cancellation of a wait, and the progress texts; and the
// session caps per user over real HTTP (an in-process ApiServer on
// 127.0.0.1 over a real SqliteStore): one user's initialize flood never
// ends another user's session (issue 44).
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <thread>

#include "api/api_server.h"
#include "api/mcp_server.h"
#include "core/hash.h"
#include "support/store_fixture.h"

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
  McpSessions sessions(10, 10, 30min, t.Fn());
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
  McpSessions sessions(2, 2, 30min, t.Fn());
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

TEST(McpSessionsTest, AUserAtTheirCapEndsOnlyTheirOwnLeastRecentlyUsed) {
  FakeTime t;
  McpSessions sessions(1000, 3, 30min, t.Fn());
  auto alice = sessions.Create("alice", kLatestVersion);
  ASSERT_TRUE(alice.ok());
  std::vector<std::string> bob;
  for (int i = 0; i < 1005; ++i) {
    t.now += 1ms;
    auto id = sessions.Create("bob", kLatestVersion);
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    bob.push_back(*id);
  }
  EXPECT_TRUE(sessions.Find(*alice, "alice")) << "bob's flood ended alice's session";
  EXPECT_EQ(sessions.CountOf("bob"), 3u);
  EXPECT_EQ(sessions.size(), 4u);
  // Bob keeps his three most recent ones.
  EXPECT_FALSE(sessions.Find(bob[1001], "bob"));
  for (size_t i = 1002; i < bob.size(); ++i) {
    t.now += 1ms;  // in order: 1002 the least recently used again
    EXPECT_TRUE(sessions.Find(bob[i], "bob")) << i;
  }

  // Using an old one makes it the most recent: the next new one ends another.
  t.now += 1ms;
  ASSERT_TRUE(sessions.Find(bob[1002], "bob"));
  t.now += 1ms;
  ASSERT_TRUE(sessions.Create("bob", kLatestVersion).ok());
  EXPECT_TRUE(sessions.Find(bob[1002], "bob"));
  EXPECT_FALSE(sessions.Find(bob[1003], "bob"));
}

TEST(McpSessionsTest, AFullTableRefusesANewUserRatherThanEndAnotherUsersSession) {
  FakeTime t;
  McpSessions sessions(4, 3, 30min, t.Fn());
  auto alice = sessions.Create("alice", kLatestVersion);
  t.now += 1s;
  auto carol = sessions.Create("carol", kLatestVersion);
  ASSERT_TRUE(alice.ok() && carol.ok());
  for (int i = 0; i < 50; ++i) {
    t.now += 1ms;
    ASSERT_TRUE(sessions.Create("bob", kLatestVersion).ok()) << "bob pays with his own";
  }
  EXPECT_EQ(sessions.size(), 4u);
  EXPECT_EQ(sessions.CountOf("bob"), 2u) << "the table's bound, below his own cap of 3";
  // Dave holds none, and every live one is someone else's: refused.
  auto dave = sessions.Create("dave", kLatestVersion);
  EXPECT_EQ(dave.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(dave.status().message().find("maximum of 4"), std::string::npos);
  EXPECT_TRUE(sessions.Find(*alice, "alice"));
  EXPECT_TRUE(sessions.Find(*carol, "carol"));
  EXPECT_EQ(sessions.CountOf("dave"), 0u);
  // Once alice ends hers, there is room.
  ASSERT_TRUE(sessions.Remove(*alice, "alice"));
  EXPECT_TRUE(sessions.Create("dave", kLatestVersion).ok());
  // An idle session is swept first: no refusal when one expired.
  t.now += 31min;
  auto erin = sessions.Create("erin", kLatestVersion);
  EXPECT_TRUE(erin.ok());
  EXPECT_EQ(sessions.size(), 1u);
}

TEST(McpSessionsTest, CancelAndDeleteEndTheSessionsWaits) {
  McpSessions sessions(10, 10, 30min);
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

// Over HTTP: tokens for alice, bob and dave; the table holds 40, a user 32.
class McpSessionCapsHttpTest : public maestro::testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    for (const char* u : {"alice", "bob", "dave"}) {
      ASSERT_TRUE(store_->AddApiToken(Sha256Hex(std::string(u) + "-token"), u).ok());
    }
    ApiOptions o;
    o.http.port = 0;
    o.admin_token = "adm";
    o.mcp_max_sessions = 40;
    o.mcp_max_sessions_per_user = 32;
    api_ = std::make_unique<ApiServer>(*store_, notifier_, o);
    auto port = api_->Start();
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    port_ = *port;
  }
  void TearDown() override { api_->Stop(); }

  struct Answer {
    int status = 0;
    std::string session;
    std::string retry_after;
    Json body;
  };
  Answer Call(httplib::Client& c, const std::string& user, const Json& msg,
              const std::string& session = "") {
    httplib::Headers h = {{"Authorization", "Bearer " + user + "-token"},
                          {"Accept", "application/json, text/event-stream"}};
    if (!session.empty()) h.emplace("Mcp-Session-Id", session);
    auto r = c.Post("/mcp", h, msg.dump(), "application/json");
    if (!r) return {};
    return {r->status, r->get_header_value("Mcp-Session-Id"), r->get_header_value("Retry-After"),
            Json::parse(r->body, nullptr, false)};
  }
  Answer Initialize(httplib::Client& c, const std::string& user) {
    return Call(c, user,
                {{"jsonrpc", "2.0"},
                 {"id", 1},
                 {"method", "initialize"},
                 {"params", {{"protocolVersion", kLatestVersion}}}});
  }
  Answer Ping(httplib::Client& c, const std::string& user, const std::string& session) {
    return Call(c, user, {{"jsonrpc", "2.0"}, {"id", 2}, {"method", "ping"}}, session);
  }

  notify::Notifier notifier_;  // the streams' signal and hub; outlives api_
  std::unique_ptr<ApiServer> api_;
  int port_ = 0;
};

TEST_F(McpSessionCapsHttpTest, BobsInitializeFloodLeavesAlicesSessionAlive) {
  httplib::Client c("127.0.0.1", port_);
  c.set_keep_alive(true);
  c.set_tcp_nodelay(true);  // no delayed-ACK stall per request: 1,000 calls in well under 1 s
  Answer alice = Initialize(c, "alice");
  ASSERT_EQ(alice.status, 200) << alice.body.dump();
  ASSERT_EQ(alice.session.size(), 64u);

  // Alice keeps using her session on her own connection while bob floods:
  // every one of her pings is answered.
  std::atomic<bool> flooding{true};
  std::atomic<int> pings{0}, lost{0};
  std::thread alice_client([&] {
    httplib::Client ac("127.0.0.1", port_);
    ac.set_keep_alive(true);
    ac.set_tcp_nodelay(true);
    while (flooding.load()) {
      ++pings;
      if (Ping(ac, "alice", alice.session).status != 200) ++lost;
    }
  });
  std::vector<std::string> bob;
  for (int i = 0; i < 1005; ++i) {
    Answer a = Initialize(c, "bob");
    EXPECT_EQ(a.status, 200) << i << " " << a.body.dump();
    bob.push_back(a.session);
  }
  flooding = false;
  alice_client.join();
  ASSERT_EQ(bob.size(), 1005u);
  EXPECT_GT(pings.load(), 0);
  EXPECT_EQ(lost.load(), 0) << "of " << pings.load() << " pings during bob's flood";
  RecordProperty("alice_pings_during_flood", pings.load());
  EXPECT_EQ(Ping(c, "alice", alice.session).status, 200) << "bob ended alice's live session";
  // Bob holds his 32 newest; his older ones are gone (404: initialize again).
  EXPECT_EQ(Ping(c, "bob", bob[1005 - 32]).status, 200);
  EXPECT_EQ(Ping(c, "bob", bob[1005 - 33]).status, 404);
  EXPECT_EQ(Ping(c, "bob", bob[0]).status, 404);
  // Bob cannot use (or end) alice's session with his token.
  EXPECT_EQ(Ping(c, "bob", alice.session).status, 404);

  // 33 live now (alice 1, bob 32): dave gets the 7 places left, then pays
  // for each new one with his own oldest.
  std::vector<std::string> dave;
  for (int i = 0; i < 20; ++i) {
    Answer a = Initialize(c, "dave");
    ASSERT_EQ(a.status, 200) << i << " " << a.body.dump();
    dave.push_back(a.session);
  }
  EXPECT_EQ(Ping(c, "dave", dave.back()).status, 200);
  EXPECT_EQ(Ping(c, "dave", dave[0]).status, 404);
  EXPECT_EQ(Ping(c, "alice", alice.session).status, 200);

  // Alice ends hers and dave takes the place: with the table full of bob's
  // and dave's, her new initialize is refused with a clear 503 rather than
  // ending one of theirs.
  httplib::Headers h = {{"Authorization", "Bearer alice-token"}, {"Mcp-Session-Id", alice.session}};
  auto del = c.Delete("/mcp", h);
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 204);
  Answer last = Initialize(c, "dave");
  ASSERT_EQ(last.status, 200) << last.body.dump();
  dave.push_back(last.session);
  Answer refused = Initialize(c, "alice");
  EXPECT_EQ(refused.status, 503) << refused.body.dump();
  EXPECT_EQ(refused.retry_after, "5");
  EXPECT_EQ(refused.session, "");
  EXPECT_EQ(refused.body["error"]["code"], kServerBusy);
  EXPECT_NE(refused.body["error"]["message"].get<std::string>().find("maximum of 40"),
            std::string::npos);
  EXPECT_EQ(Ping(c, "bob", bob.back()).status, 200);
  EXPECT_EQ(Ping(c, "dave", dave.back()).status, 200);
}

}  // namespace
}  // namespace maestro::api::mcp
