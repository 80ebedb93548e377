// The `maestro task …` client against a real `maestro serve` +
// `maestro-fakellm` (docs/cli.md): the server found by default, the token
// read from the data dir, human output and --json, the one-line "no server"
// error that creates nothing, `task watch` following a task across an
// answer and an approval with the exact commands it prints, `--until-wait`,
// `--version`, `serve --help` and the hint `maestro run` gives at a wait.
#include <filesystem>
#include <sstream>

#include "serve_fixture.h"

namespace maestro::testing {
namespace {

namespace fs = std::filesystem;

class CliTaskTest : public ServeEngineTest {
 protected:
  // Runs the CLI with MAESTRO_SERVER pointing at the test's server; `env`
  // adds or overrides variables. Returns {exit code, stdout + stderr}.
  std::pair<int, std::string> Cli(std::vector<std::string> args,
                                  std::map<std::string, std::string> env = {}) {
    args.insert(args.begin(), MAESTRO_BIN);
    std::map<std::string, std::string> all = {{"MAESTRO_SERVER", ServerUrl()},
                                              {"MAESTRO_TOKEN", "tok"},
                                              {"MAESTRO_DATA_DIR", dir_.File("elsewhere")}};
    for (auto& [k, v] : env) all[k] = v;
    return RunCommand(args, all, dir_.File("cli" + std::to_string(++runs_)));
  }
  // `maestro task watch` in the background.
  std::unique_ptr<Process> Watch(std::vector<std::string> extra) {
    std::vector<std::string> argv = {MAESTRO_BIN, "task", "watch"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    ++runs_;
    return std::make_unique<Process>(argv,
                                     std::map<std::string, std::string>{
                                         {"MAESTRO_SERVER", ServerUrl()}, {"MAESTRO_TOKEN", "tok"}},
                                     dir_.File("watch" + std::to_string(runs_) + ".out"),
                                     dir_.File("watch" + std::to_string(runs_) + ".err"));
  }
  // Waits until the process printed `needle` on stdout (or exited).
  static bool WaitOutput(Process& p, const std::string& needle, std::chrono::seconds limit = 30s) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      if (Contains(p.Stdout(), needle)) return true;
      if (!p.running() && !Contains(p.Stdout(), needle)) {
        if (p.Wait(10ms)) return Contains(p.Stdout(), needle);
      }
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }
  static std::string Id(const Json& c) { return c["task"]["id"].get<std::string>(); }
  int runs_ = 0;
};

TEST_F(CliTaskTest, ListAndShowAreTablesAndSummariesOrTheServersJson) {
  Start(Json::array({CompleteReply({{"status", "success"}, {"result", "LIST-RESULT hi there"}})}));
  auto [ccode, cout_] = Cli({"task", "create", "say hi", "--title", "cli task"});
  ASSERT_EQ(ccode, 0) << cout_;
  EXPECT_TRUE(Contains(cout_, "created task ")) << cout_;
  Json list = Get("/api/local/tasks")["tasks"];
  ASSERT_EQ(list.size(), 1u);
  const std::string id = list[0]["id"];
  WaitJob(id, Get("/api/local/tasks/" + id)["latest_job"]["id"],
          [](const Json& j) { return j["status"] == "succeeded"; });

  auto [lcode, table] = Cli({"task", "list"});
  ASSERT_EQ(lcode, 0) << table;
  EXPECT_TRUE(Contains(table, "ID        STATUS     PIECE  AGE")) << table;
  EXPECT_TRUE(Contains(table, id.substr(0, 8) + "  succeeded  chat   ")) << table;
  EXPECT_TRUE(Contains(table, "cli task")) << table;
  EXPECT_FALSE(Contains(table, id)) << "ids are cut to 8 characters: " << table;
  auto [jcode, json] = Cli({"task", "list", "--json"});
  ASSERT_EQ(jcode, 0) << json;
  Json doc = Json::parse(json, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << json;
  EXPECT_EQ(doc["tasks"][0]["id"], id) << "the server's JSON, unchanged";

  auto [scode, show] = Cli({"task", "show", id});
  ASSERT_EQ(scode, 0) << show;
  EXPECT_EQ(show.rfind("cli task\n", 0), 0u) << show;
  EXPECT_TRUE(Contains(show, "  status   succeeded")) << show;
  EXPECT_TRUE(Contains(show, "result:\n  LIST-RESULT hi there")) << show;
  auto [sjcode, sjson] = Cli({"task", "show", id, "--json"});
  ASSERT_EQ(sjcode, 0);
  EXPECT_EQ(Json::parse(sjson)["latest_job"]["result"], "LIST-RESULT hi there");
  EXPECT_FALSE(fs::exists(dir_.File("elsewhere"))) << "the client creates no data dir";

  auto [ncode, missing] = Cli({"task", "show", "00000000-0000-4000-8000-000000000000"});
  EXPECT_EQ(ncode, 2) << missing;
}

TEST_F(CliTaskTest, WithoutAServerItSaysSoExits2AndCreatesNothing) {
  const std::string empty = dir_.File("empty");
  fs::create_directories(empty);
  const int port = FreePort();  // nothing listens there
  for (const char* cmd : {"list", "show 00000000-0000-4000-8000-000000000000",
                          "watch 00000000-0000-4000-8000-000000000000"}) {
    auto [code, out] = RunCommand(
        {"/bin/sh", "-c",
         std::string("cd '") + empty + "' && exec " + MAESTRO_BIN + " task " + cmd},
        {{"MAESTRO_SERVER", "http://127.0.0.1:" + std::to_string(port)}}, dir_.File("noserver"));
    EXPECT_EQ(code, 2) << cmd << ": " << out;
    EXPECT_EQ(out, "maestro: no server at http://127.0.0.1:" + std::to_string(port) +
                       " (start one with `maestro serve`, or name one with --server / "
                       "MAESTRO_SERVER)\n")
        << cmd;
  }
  // The default server, when MAESTRO_SERVER is unset, is named the same way
  // (whether or not something listens on 8080, no file appears here).
  RunCommand(
      {"/bin/sh", "-c", std::string("cd '") + empty + "' && exec " + MAESTRO_BIN + " task list"},
      {}, dir_.File("default"));
  EXPECT_TRUE(fs::is_empty(empty)) << "nothing created in the current directory";
}

TEST_F(CliTaskTest, TheTokenComesFromTheDataDirsAdminTokenFile) {
  serve_env_["MAESTRO_ADMIN_TOKEN"] = "";  // the server creates data/admin_token
  Start(Json::array());
  ASSERT_TRUE(fs::exists(DataDir() + "/admin_token"));
  auto [code, out] =
      Cli({"task", "list"}, {{"MAESTRO_TOKEN", ""}, {"MAESTRO_DATA_DIR", DataDir()}});
  EXPECT_EQ(code, 0) << out;
  EXPECT_TRUE(Contains(out, "no tasks")) << out;
  auto [bad, refused] = Cli({"task", "list", "--token", "wrong"});
  EXPECT_EQ(bad, 2) << refused;
  EXPECT_TRUE(Contains(refused, "refused the token (401): the token came from --token")) << refused;
  auto [none, nofile] =
      Cli({"task", "list"}, {{"MAESTRO_TOKEN", ""}, {"MAESTRO_DATA_DIR", dir_.File("nowhere")}});
  EXPECT_EQ(none, 2) << nofile;
  EXPECT_TRUE(Contains(nofile, "no token was found")) << nofile;
  EXPECT_TRUE(Contains(nofile, dir_.File("nowhere") + "/admin_token")) << nofile;
  EXPECT_FALSE(fs::exists(dir_.File("nowhere"))) << "read only";
}

// An ASK: the watch prints the question and the command to answer, keeps
// following, and after the answer (posted over HTTP by "another client")
// prints the follow-up job's streamed text and the result, then exits 0.
TEST_F(CliTaskTest, WatchFollowsAnAskAcrossTheAnswerToTheEnd) {
  Json followup = Matching(
      {{"text", "WATCH-TEXT blue it is. "},
       {"tool_calls",
        Json::array({{{"name", "complete"},
                      {"arguments", {{"status", "success"}, {"result", "WATCH-RESULT blue"}}}}})}},
      "ANSWER-BLUE");
  Start(Json::array(
      {CompleteReply({{"status", "needs_user_input"}, {"question", "WATCH-Q which colour?"}}),
       followup}));
  Json c = Create("pick a colour");
  auto watch = Watch({Id(c)});
  ASSERT_TRUE(WaitOutput(*watch, "answer: maestro task comment " + Id(c) + " \"<answer>\""))
      << watch->Stdout() << watch->Stderr();
  EXPECT_TRUE(Contains(watch->Stdout(), "question: WATCH-Q which colour?")) << watch->Stdout();
  std::this_thread::sleep_for(300ms);
  EXPECT_TRUE(watch->running()) << "a wait does not end the watch";
  auto [code, body] = Post(TaskPath(c) + "/comments", {{"body", "ANSWER-BLUE"}});
  ASSERT_EQ(code, 201) << body.dump();
  auto exit = watch->Wait(30s);
  ASSERT_TRUE(exit.has_value()) << watch->Stdout();
  EXPECT_EQ(*exit, 0) << watch->Stdout() << watch->Stderr();
  const std::string out = watch->Stdout();
  EXPECT_TRUE(Contains(out, "WATCH-TEXT blue it is.")) << out;
  EXPECT_TRUE(Contains(out, "task succeeded")) << out;
  EXPECT_TRUE(Contains(out, "result:\nWATCH-RESULT blue")) << out;
  EXPECT_LT(out.find("WATCH-Q"), out.find("WATCH-TEXT")) << out;

  // --no-follow on the ended task: what happened, then exit at once.
  auto [ncode, backlog] = Cli({"task", "watch", Id(c), "--no-follow"});
  EXPECT_EQ(ncode, 0) << backlog;
  EXPECT_TRUE(Contains(backlog, "question: WATCH-Q which colour?")) << backlog;
  EXPECT_TRUE(Contains(backlog, "result:\nWATCH-RESULT blue")) << backlog;

  // --json: the server's events, one per line, unchanged.
  auto [jcode, lines] = Cli({"task", "watch", Id(c), "--no-follow", "--json"});
  EXPECT_EQ(jcode, 0) << lines;
  std::istringstream in(lines);
  Json events = Events(Id(c));
  size_t n = 0;
  for (std::string line; std::getline(in, line); ++n) {
    ASSERT_LT(n, events.size()) << lines;
    EXPECT_EQ(Json::parse(line), events[n]) << line;
  }
  EXPECT_EQ(n, events.size()) << lines;
}

// The server restarts while the task waits: the watch reconnects with
// Last-Event-ID (the question is not printed twice) and still ends with the
// result; Ctrl-C ends a watch at once with 130.
TEST_F(CliTaskTest, WatchSurvivesAServerRestartAndCtrlCEndsIt) {
  Json followup = Matching(CompleteReply({{"status", "success"}, {"result", "RESTART-RESULT ok"}}),
                           "ANSWER-RESTART");
  Start(Json::array({CompleteReply({{"status", "needs_user_input"}, {"question", "RESTART-Q go?"}}),
                     followup,
                     CompleteReply({{"status", "needs_user_input"}, {"question", "SECOND-Q?"}})}));
  Json c = Create("ask then go");
  auto watch = Watch({Id(c)});
  ASSERT_TRUE(WaitOutput(*watch, "answer: maestro task comment")) << watch->Stdout();
  RestartServe();
  std::this_thread::sleep_for(1s);  // the watch reconnects (every 0.5 s)
  auto [code, body] = Post(TaskPath(c) + "/comments", {{"body", "ANSWER-RESTART"}});
  ASSERT_EQ(code, 201) << body.dump();
  auto exit = watch->Wait(30s);
  ASSERT_TRUE(exit.has_value()) << watch->Stdout();
  EXPECT_EQ(*exit, 0) << watch->Stdout() << watch->Stderr();
  const std::string out = watch->Stdout();
  EXPECT_TRUE(Contains(out, "result:\nRESTART-RESULT ok")) << out;
  EXPECT_EQ(out.find("question: RESTART-Q"), out.rfind("question: RESTART-Q")) << out;

  Json second = Create("second");
  auto interrupted = Watch({Id(second)});
  ASSERT_TRUE(WaitOutput(*interrupted, "question: SECOND-Q?")) << interrupted->Stdout();
  interrupted->Signal(SIGINT);
  auto code2 = interrupted->Wait(10s);
  ASSERT_TRUE(code2.has_value()) << "Ctrl-C ends the watch";
  EXPECT_EQ(*code2, 130) << interrupted->Stderr();
}

TEST_F(CliTaskTest, WatchUntilWaitExitsAtTheQuestionWithTheHint) {
  Start(Json::array(
      {CompleteReply({{"status", "needs_user_input"}, {"question", "UNTIL-Q size?"}})}));
  Json c = Create("pick a size");
  auto [code, out] = Cli({"task", "watch", Id(c), "--until-wait"});
  EXPECT_EQ(code, 0) << out;
  EXPECT_TRUE(Contains(out, "question: UNTIL-Q size?")) << out;
  EXPECT_TRUE(Contains(out, "answer: maestro task comment " + Id(c) + " \"<answer>\"")) << out;
}

// A tool request: the watch prints the approve command; that command, run as
// printed, resumes the job and the watch ends with its result.
TEST_F(CliTaskTest, WatchPrintsTheApproveCommandAndThatCommandWorks) {
  Json park = ToolCallReply("RequestTool", {{"tool", "RunCommand"},
                                            {"arguments", {{"command", "echo hi"}}},
                                            {"reason", "APPROVE-REASON"}});
  Start(Json::array({ToolCallReply("transition", {{"next", "implement"}}), park, park,
                     CompleteReply({{"status", "success"}, {"result", "APPROVED-DONE"}})}));
  Json c = Create("do the change", "coding");
  auto watch = Watch({Id(c)});
  ASSERT_TRUE(WaitOutput(*watch, "deny:    maestro task deny"))
      << watch->Stdout() << watch->Stderr();
  std::string out = watch->Stdout();
  EXPECT_TRUE(Contains(out, "APPROVE-REASON")) << out;
  const std::string prefix = "approve: ";
  auto at = out.find(prefix + "maestro task approve " + Id(c) + " ");
  ASSERT_NE(at, std::string::npos) << out;
  std::string line = out.substr(at + prefix.size(), out.find('\n', at) - at - prefix.size());
  EXPECT_TRUE(Contains(line, "--kind tool")) << line;
  std::istringstream words(line);
  std::vector<std::string> argv;
  for (std::string w; words >> w;) argv.push_back(w);
  ASSERT_EQ(argv[0], "maestro");
  argv.erase(argv.begin());
  auto [code, approved] = Cli(argv);
  ASSERT_EQ(code, 0) << approved;
  EXPECT_TRUE(Contains(approved, "approved")) << approved;
  auto exit = watch->Wait(30s);
  ASSERT_TRUE(exit.has_value()) << watch->Stdout();
  EXPECT_EQ(*exit, 0) << watch->Stdout() << watch->Stderr();
  EXPECT_TRUE(Contains(watch->Stdout(), "result:\nAPPROVED-DONE")) << watch->Stdout();
}

TEST_F(CliTaskTest, VersionAndServeHelpListTheSettings) {
  for (const char* flag : {"--version", "version"}) {
    auto [code, out] = RunCommand({MAESTRO_BIN, flag}, {}, dir_.File("v"));
    EXPECT_EQ(code, 0) << flag;
    EXPECT_EQ(out.rfind("maestro ", 0), 0u) << out;
    EXPECT_TRUE(Contains(out, " (schema ")) << out;
  }
  auto [hcode, help] = RunCommand({MAESTRO_BIN, "serve", "--help"}, {}, dir_.File("h"));
  EXPECT_EQ(hcode, 0) << help;
  EXPECT_TRUE(Contains(help, "database_url")) << help;
  EXPECT_TRUE(Contains(help, "MAESTRO_DATABASE_URL")) << help;
  EXPECT_TRUE(Contains(help, "MAESTRO_LISTEN")) << help;
  auto [wcode, warn] =
      RunCommand({MAESTRO_BIN, "piece", "list"},
                 {{"MAESTRO_TOKEN", "x"}, {"MAESTRO_SERVER", "http://h:1"}}, dir_.File("w"));
  EXPECT_EQ(wcode, 0) << warn;
  EXPECT_FALSE(Contains(warn, "unknown environment variable")) << warn;
}

}  // namespace
}  // namespace maestro::testing
