// `maestro task create|list|show --server --json` against a running server, and the
// tool-duration histogram of GET /metrics after a real run.
#include "serve_fixture.h"

namespace maestro::testing {
namespace {

class CliClientTest : public ServeEngineTest {
 protected:
  // Runs the maestro CLI (--json: the server's replies); returns {exit code, stdout + stderr}.
  std::pair<int, std::string> Cli(std::vector<std::string> args, const std::string& token = "tok") {
    args.insert(args.begin(), MAESTRO_BIN);
    args.insert(args.end(), {"--server", ServerUrl(), "--token", token, "--json"});
    return RunCommand(args, {{"MAESTRO_DATA_DIR", dir_.File("elsewhere")}},
                      dir_.File("cli" + std::to_string(++runs_)));
  }
  // The JSON document the CLI printed (stdout; stderr may add lines).
  static Json Doc(const std::string& out) {
    auto a = out.find('{'), b = out.rfind('}');
    return a == std::string::npos ? Json() : Json::parse(out.substr(a, b - a + 1), nullptr, false);
  }
  int runs_ = 0;
};

TEST_F(CliClientTest, CreateListShowGoThroughTheServer) {
  Start(Json::array({ToolCallReply("complete", {{"status", "success"}, {"result", "hi there"}})}));
  auto [code, out] = Cli({"task", "create", "say hi", "--piece", "chat", "--title", "cli task"});
  ASSERT_EQ(code, 0) << out;
  Json created = Doc(out);
  std::string id = created["task"]["id"];
  EXPECT_EQ(created["task"]["owner"], "admin") << "owned by the token's user";
  WaitStatus(created, "succeeded");

  auto [lcode, list] = Cli({"task", "list"});
  ASSERT_EQ(lcode, 0) << list;
  Json tasks = Doc(list)["tasks"];
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[0]["id"], id);
  EXPECT_EQ(tasks[0]["title"], "cli task");

  auto [scode, show] = Cli({"task", "show", id});
  ASSERT_EQ(scode, 0) << show;
  Json t = Doc(show);
  EXPECT_EQ(t["latest_job"]["status"], "succeeded");
  EXPECT_EQ(t["latest_job"]["result"], "hi there");
  // Nothing was written to the local data dir the CLI would otherwise use.
  EXPECT_FALSE(std::filesystem::exists(dir_.File("elsewhere/maestro.db")));

  auto [ncode, missing] = Cli({"task", "show", "00000000-0000-4000-8000-000000000000"});
  EXPECT_EQ(ncode, 2) << missing;
  auto [bcode, bad] = Cli({"task", "list"}, "wrong");
  EXPECT_EQ(bcode, 2) << "401 is a refusal: " << bad;
}

TEST_F(CliClientTest, MetricsHaveToolDurationsByTool) {
  Json slow_cmd = ToolCallReply("RunCommand", {{"command", "sleep 0.3"}});
  Start(Json::array({ToolCallReply("ListDir", Json::object()),
                     ToolCallReply("ListDir", Json::object()), slow_cmd,
                     ToolCallReply("ReadFile", {{"path", "missing.txt"}}),
                     ToolCallReply("complete", {{"status", "success"}, {"result", "ok"}})}));
  Json c = Create("use tools");
  WaitStatus(c, "succeeded");
  auto r = Client().Get("/metrics");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  const std::string& m = r->body;
  EXPECT_TRUE(Contains(m, "# TYPE maestro_tool_duration_seconds histogram")) << m;
  EXPECT_TRUE(Contains(m, "maestro_tool_duration_seconds_count{tool=\"ListDir\"} 2")) << m;
  EXPECT_TRUE(Contains(m, "maestro_tool_duration_seconds_count{tool=\"RunCommand\"} 1")) << m;
  // The 0.3 s command is above the 0.1 s bucket and within the 0.5 s one.
  EXPECT_TRUE(Contains(m, "maestro_tool_duration_seconds_bucket{tool=\"RunCommand\",le=\"0.1\"} 0"))
      << m;
  EXPECT_TRUE(
      Contains(m, "maestro_tool_duration_seconds_bucket{tool=\"RunCommand\",le=\"+Inf\"} 1"));
  EXPECT_TRUE(Contains(m, "maestro_tool_errors_total{tool=\"ReadFile\"} 1")) << m;
  EXPECT_TRUE(Contains(m, "maestro_tool_errors_total{tool=\"ListDir\"} 0")) << m;
  // LLM figures come from the engine's llm.call events (5 calls, real usage).
  EXPECT_TRUE(Contains(m, "maestro_llm_calls_total 5")) << m;
  EXPECT_FALSE(Contains(m, "maestro_llm_tokens_total{kind=\"prompt\"} 0\n")) << m;
  EXPECT_FALSE(Contains(m, "maestro_llm_tokens_total{kind=\"cached_prompt\"} 0\n")) << m;
}

}  // namespace
}  // namespace maestro::testing
