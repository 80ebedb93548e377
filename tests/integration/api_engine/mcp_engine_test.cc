// Issue 15 through the real `maestro serve` + `maestro-fakellm` and REAL MCP
// servers from npm (tests/mcp, installed by scripts/mcp_servers.sh), each
// started per job as a sandboxed stdio child:
// - a piece allowing mcp__everything__echo and mcp__filesystem__read_text_file
//   completes through the servers; the tools array is byte-identical across
//   two jobs of the task and the follow-up keeps the previous prompt as its
//   prefix;
// - cancelling during a long MCP call stops the job within a second and the
//   stdio server is gone;
// - a required server without its token parks `mcp_auth_required`; with the
//   token set (serve restarted with it) a comment resumes the task.
#include <signal.h>

#include <fstream>

#include "serve_fixture.h"

namespace maestro::testing {
namespace {

namespace fs = std::filesystem;

const std::string kModules = MAESTRO_MCP_MODULES;  // tests/mcp/node_modules

class McpEngineTest : public ServeEngineTest {
 protected:
  void SetUp() override {
    if (!fs::exists(kModules + "/@modelcontextprotocol/server-everything/dist/index.js")) {
      GTEST_SKIP() << "run scripts/mcp_servers.sh (npm ci of tests/mcp)";
    }
    if (!fs::exists("/usr/bin/node")) GTEST_SKIP() << "node is missing";
  }
  // Two stdio servers; `extra` is appended under mcp_servers.
  void StartWithServers(const Json& replies, const std::string& extra = "") {
    fs::create_directories(DataDir() + "/pieces");
    std::ofstream(DataDir() + "/pieces/mcpwork.yaml")
        << "name: mcpwork\ndescription: uses MCP tools\nmovements:\n"
           "  - name: work\n    description: Use the MCP tools.\n"
           "    allowed_tools: [mcp__everything__echo, mcp__everything__trigger-long-running-"
           "operation, mcp__filesystem__read_text_file, mcp__vault__echo, mcp__gated__echo, "
           "WriteFile]\n"
           "    rules: []\n";
    const std::string server = kModules + "/@modelcontextprotocol/server-";
    extra_config_ =
        "mcp_servers:\n"
        "  everything:\n    command: /usr/bin/node\n    args: [" +
        server + "everything/dist/index.js]\n    readonly_paths: [" + kModules +
        "]\n  filesystem:\n    command: /usr/bin/node\n    args: [" + server +
        "filesystem/dist/index.js, \"{workspace}\"]\n    readonly_paths: [" + kModules + "]\n" +
        extra;
    Start(replies);
  }
  Json CreateMcp(const std::string& instruction) { return Create(instruction, "mcpwork"); }
  // The `tools` array of each LLM request, serialized.
  std::vector<std::string> ToolsArrays() const {
    std::vector<std::string> out;
    for (const auto& r : FakeRequests()) out.push_back(r["body"]["tools"].dump());
    return out;
  }
};

TEST_F(McpEngineTest, ATaskCompletesThroughRealServersWithAStableToolsArray) {
  // The workspace path is known only once the job runs: the file is read by
  // a relative path, which server-filesystem resolves in its cwd — the
  // workspace, its one allowed directory.
  Json write = ToolCallReply("WriteFile", {{"path", "notes.txt"}, {"content", "NOTE-42"}});
  Json echo = ToolCallReply("mcp__everything__echo", {{"message", "hello from maestro"}});
  Json read = ToolCallReply("mcp__filesystem__read_text_file", {{"path", "notes.txt"}});
  StartWithServers(Json::array(
      {write, echo, read, SucceedReply("echoed and read"), SucceedReply("second job")}));
  Json c = CreateMcp("write notes.txt, echo something, then read notes.txt");
  WaitStatus(c, "succeeded", 30s);
  auto reqs = FakeRequests();
  ASSERT_GE(reqs.size(), 4u);
  // Both results reached the model.
  const std::string last = reqs[3]["body"]["messages"].dump();
  EXPECT_TRUE(Contains(last, "hello from maestro")) << last.substr(0, 3000);
  EXPECT_TRUE(Contains(last, "NOTE-42")) << last.substr(0, 3000);
  const std::string tools = reqs[0]["body"]["tools"].dump();
  EXPECT_TRUE(Contains(tools, "\"mcp__everything__echo\"")) << tools.substr(0, 500);
  EXPECT_TRUE(Contains(tools, "\"mcp__filesystem__read_text_file\""));
  EXPECT_FALSE(Contains(tools, "mcp__everything__add")) << "only the piece's tools are offered";
  // A second job of the task (a follow-up): the same servers, the same bytes.
  Post(TaskPath(c) + "/comments", {{"body", "once more"}});
  WaitFakeRequests(5);
  for (int i = 0; i < 200 && Get(TaskPath(c))["latest_job"]["status"] != "succeeded"; ++i) {
    std::this_thread::sleep_for(50ms);
  }
  auto arrays = ToolsArrays();
  ASSERT_GE(arrays.size(), 5u);
  for (const auto& a : arrays) EXPECT_EQ(a, arrays[0]) << "tools array changed between jobs";
  // Prefix retention: the follow-up's messages start with the whole previous request's.
  auto all = FakeRequests();
  const Json& prev = all[3]["body"]["messages"];
  const Json& next = all[4]["body"]["messages"];
  ASSERT_GE(next.size(), prev.size());
  size_t same = 0;
  while (same < prev.size() && prev[same] == next[same]) ++same;
  EXPECT_GE(static_cast<double>(same) / static_cast<double>(prev.size()), 0.99)
      << same << " of " << prev.size();
}

TEST_F(McpEngineTest, ASpaceOpensOnlyTheServersItNames) {
  const std::string space = dir_.File("spaces/docs");
  StartWithServers(Json::array({SucceedReply("done")}),
                   "spaces:\n  docs:\n    path: " + space +
                       "\n    edit_allowed: true\n    mcp_servers: [filesystem]\n");
  auto [code, created] =
      Post("/api/local/tasks",
           {{"instruction", "look around"}, {"piece", "mcpwork"}, {"space", "docs"}});
  ASSERT_EQ(code, 201) << created.dump();
  WaitStatus(created, "succeeded", 30s);
  const std::string tools = ToolsArrays().at(0);
  EXPECT_TRUE(Contains(tools, "\"mcp__filesystem__read_text_file\"")) << tools.substr(0, 400);
  EXPECT_FALSE(Contains(tools, "mcp__everything__")) << "the space does not name everything";
}

// approval: once — the tool is not offered until a person approves a
// RequestTool for it; the task grant then lets the call through the same
// Dispatcher path as a builtin tool.
TEST_F(McpEngineTest, AnApprovalOnceServerNeedsAGrantFirst) {
  const std::string extra = "  gated:\n    command: /usr/bin/node\n    args: [" + kModules +
                            "/@modelcontextprotocol/server-everything/dist/index.js]\n"
                            "    readonly_paths: [" +
                            kModules + "]\n    approval: once\n";
  Json early = ToolCallReply("mcp__gated__echo", {{"message", "too-early"}});
  Json ask = ToolCallReply("RequestTool", {{"tool", "mcp__gated__echo"},
                                           {"arguments", {{"message", "approved-echo"}}},
                                           {"reason", "to echo"},
                                           {"scope", "task"}});
  Json call = ToolCallReply("mcp__gated__echo", {{"message", "approved-echo"}});
  StartWithServers(Json::array({early, ask, call, SucceedReply("echoed after approval")}), extra);
  Json c = CreateMcp("echo through the gated server");
  WaitStatus(c, "waiting_human", 20s);
  EXPECT_FALSE(Contains(ToolsArrays().at(0), "mcp__gated__echo")) << "not offered before approval";
  EXPECT_TRUE(Contains(FakeRequests()[1]["body"]["messages"].dump(), "RequestTool"))
      << "the refused call says how to ask";
  Json reqs = Get(TaskPath(c) + "/tool-requests")["requests"];
  ASSERT_EQ(reqs.size(), 1u) << reqs.dump();
  auto [code, body] =
      Post(TaskPath(c) + "/tool-requests/" + reqs[0]["id"].get<std::string>() + "/decide",
           {{"decision", "approve"}, {"scope", "task"}});
  ASSERT_EQ(code, 200) << body.dump();
  WaitStatus(c, "succeeded", 30s);
  const std::string last = FakeRequests().back()["body"]["messages"].dump();
  EXPECT_TRUE(Contains(last, "Echo: approved-echo")) << last.substr(last.size() - 1500);
}

TEST_F(McpEngineTest, CancelDuringALongCallStopsTheJobAndTheServer) {
  Json slow = ToolCallReply("mcp__everything__trigger-long-running-operation",
                            {{"duration", 30}, {"steps", 30}});
  StartWithServers(Json::array({slow, SucceedReply("never")}));
  Json c = CreateMcp("run the long operation");
  WaitFakeRequests(1);
  std::this_thread::sleep_for(1500ms);  // the call is running on the server
  auto before = RunCommand({"/usr/bin/pgrep", "-f", "server-everything"}, {}, dir_.File("pg1"));
  const auto start = std::chrono::steady_clock::now();
  Post(TaskPath(c) + "/cancel", Json::object());
  WaitStatus(c, "cancelled", 10s);
  // The bounds below are far under the operation's 30 s, so they prove the
  // call was stopped rather than waited out, with room for a loaded machine.
  EXPECT_LT(std::chrono::steady_clock::now() - start, 8s);
  bool gone = false;
  for (int i = 0; i < 40 && !gone; ++i) {
    auto [code, out] =
        RunCommand({"/usr/bin/pgrep", "-f", "server-everything/dist"}, {}, dir_.File("pg2"));
    gone = code != 0;
    if (!gone) std::this_thread::sleep_for(50ms);
  }
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(gone) << "the stdio server outlived its job";
  // Cancel → the call's notifications/cancelled → the job ends → the
  // server is closed (SIGTERM, SIGKILL after 500 ms): about a second on an
  // idle machine (the figure is recorded as a test property).
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(took).count();
  EXPECT_LT(took, 10s) << ms;
  RecordProperty("cancel_to_server_gone_ms", static_cast<int>(ms));
  EXPECT_EQ(before.first, 0) << "the server ran during the call";
}

TEST_F(McpEngineTest, ARequiredServerWithoutItsTokenParksAndResumesOnceSet) {
  // `vault`: server-everything again, required, with a bearer variable.
  const std::string extra =
      "  vault:\n    command: /usr/bin/node\n    args: [" + kModules +
      "/@modelcontextprotocol/server-everything/dist/index.js]\n"
      "    readonly_paths: [" +
      kModules +
      "]\n    required: true\n    env:\n      VAULT_TOKEN: $MAESTRO_TEST_VAULT"
      "\n";
  Json echo = ToolCallReply("mcp__vault__echo", {{"message", "vault says hi"}});
  StartWithServers(Json::array({echo, SucceedReply("vault used")}), extra);
  Json c = CreateMcp("use the vault");
  ASSERT_TRUE(c.contains("task")) << c.dump() << LogTail();
  Json parked = WaitStatus(c, "waiting_human", 20s);
  EXPECT_EQ(parked["wait_reason"], "mcp_auth_required") << parked.dump();
  Json comments = Get(TaskPath(c) + "/comments")["comments"];
  ASSERT_FALSE(comments.empty());
  EXPECT_TRUE(Contains(comments.back()["body"].get<std::string>(), "MAESTRO_TEST_VAULT"))
      << comments.dump();
  EXPECT_TRUE(FakeRequests().empty()) << "no LLM call before the token is there";
  // The operator sets the variable and restarts; a comment resumes the task.
  RestartServe({{"MAESTRO_TEST_VAULT", "s3cret-value"}});
  Post(TaskPath(c) + "/comments", {{"body", "token is set"}});
  for (int i = 0; i < 400 && Get(TaskPath(c))["latest_job"]["status"] != "succeeded"; ++i) {
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(Get(TaskPath(c))["latest_job"]["status"], "succeeded") << LogTail();
  EXPECT_FALSE(Contains(FakeRequests().dump(), "s3cret-value")) << "a secret reached the model";
  EXPECT_FALSE(Contains(LogTail(), "s3cret-value")) << "a secret reached the log";
}

}  // namespace
}  // namespace maestro::testing
