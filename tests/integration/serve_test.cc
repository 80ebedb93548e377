// Starts the real `maestro` binary against a temp data dir and talks to it
// over loopback HTTP and through its CLI, as a user would.
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/json.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace maestro {
namespace {

using namespace std::chrono_literals;
using testing::Process;

class ServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = testing::FreePort();
    config_ = dir_.File("maestro.yaml");
    std::ofstream(config_) << "workers: 2\n"
                              "log:\n  level: info\n"
                              "jobs:\n  poll_interval_ms: 100\n  shutdown_grace_ms: 2000\n";
    env_ = {{"MAESTRO_DATA_DIR", dir_.File("data")},
            {"MAESTRO_LISTEN", "127.0.0.1:" + std::to_string(port_)},
            {"MAESTRO_ADMIN_TOKEN", "tok"},
            {"MAESTRO_DEMO", "false"}};  // demo mode has its own tests below
    token_ = "tok";
  }

  std::unique_ptr<Process> StartServe() {
    auto p = std::make_unique<Process>(
        std::vector<std::string>{MAESTRO_BIN, "--config", config_, "serve"}, env_,
        dir_.File("serve.out"), dir_.File("serve.err"));
    EXPECT_TRUE(p->started());
    httplib::Client cli("127.0.0.1", port_);
    for (int i = 0; i < 500; ++i) {
      if (auto r = cli.Get("/api/health"); r && r->status == 200) return p;
      if (!p->running()) break;
      std::this_thread::sleep_for(10ms);
    }
    ADD_FAILURE() << "maestro serve did not come up:\n" << p->Stderr();
    return p;
  }

  httplib::Client Client() {
    httplib::Client c("127.0.0.1", port_);
    if (!token_.empty()) c.set_bearer_token_auth(token_);
    return c;
  }

  Json GetTask(const std::string& id) {
    auto r = Client().Get("/api/local/tasks/" + id);
    EXPECT_TRUE(r);
    return r ? Json::parse(r->body) : Json();
  }

  testing::TempDir dir_;
  int port_ = 0;
  std::string config_;
  std::string token_;
  std::map<std::string, std::string> env_;
};

TEST_F(ServeTest, ServesHealthAndTasksAndStopsCleanlyOnSigterm) {
  auto serve = StartServe();
  auto health = Client().Get("/api/health");
  ASSERT_TRUE(health);
  Json h = Json::parse(health->body);
  EXPECT_EQ(h["status"], "ok");
  EXPECT_EQ(h["schema_version"], 14);  // shared schema change 14: identity (issue 49)
  EXPECT_TRUE(std::ifstream(dir_.File("data/maestro.db")).good()) << "SQLite under the data dir";

  auto created = Client().Post("/api/local/tasks", R"({"instruction":"say hi","piece":"chat"})",
                               "application/json");
  ASSERT_TRUE(created);
  ASSERT_EQ(created->status, 201) << created->body;
  Json c = Json::parse(created->body);
  std::string task_id = c["task"]["id"];
  EXPECT_EQ(c["job"]["status"], "queued");

  // With no LLM server configured, a worker claims the job and fails it
  // with a message naming the setting instead of pretending. (The task and
  // its latest job are two reads: wait until both show the end.)
  Json t;
  for (int i = 0; i < 300; ++i) {
    t = GetTask(task_id);
    if (t["latest_job"]["status"] == "failed" && t["task"]["status"] == "failed") break;
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(t["latest_job"]["status"], "failed");
  EXPECT_NE(t["latest_job"]["error_message"].get<std::string>().find("MAESTRO_LLM_BASE_URL"),
            std::string::npos);
  EXPECT_EQ(t["task"]["status"], "failed");

  serve->Signal(SIGTERM);
  auto code = serve->Wait(10s);
  ASSERT_TRUE(code.has_value()) << "serve did not stop on SIGTERM";
  EXPECT_EQ(*code, 0) << serve->Stderr();
  EXPECT_NE(serve->Stderr().find("stopped"), std::string::npos);
}

TEST_F(ServeTest, BadRequestsGetClearErrors) {
  auto serve = StartServe();
  auto missing = Client().Post("/api/local/tasks", R"({"piece":"chat"})", "application/json");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 400);
  EXPECT_EQ(Json::parse(missing->body)["error"]["field"], "instruction");
  auto wrong_type =
      Client().Post("/api/local/tasks", R"({"instruction":"x","title":7})", "application/json");
  EXPECT_EQ(Json::parse(wrong_type->body)["error"]["field"], "title");
  auto not_json = Client().Post("/api/local/tasks", "{oops", "application/json");
  EXPECT_EQ(not_json->status, 400);
  auto unknown = Client().Get("/api/local/tasks/00000000-0000-4000-8000-000000000000");
  EXPECT_EQ(unknown->status, 404);
  EXPECT_EQ(Json::parse(unknown->body)["error"]["code"], "NOT_FOUND");
  std::string big(2 << 20, 'x');
  auto too_big =
      Client().Post("/api/local/tasks", "{\"instruction\":\"" + big + "\"}", "application/json");
  ASSERT_TRUE(too_big);
  EXPECT_EQ(too_big->status, 413);
}

TEST_F(ServeTest, AdminTokenIsRequiredWhenConfigured) {
  env_["MAESTRO_ADMIN_TOKEN"] = "s3cret";
  token_.clear();
  auto serve = StartServe();
  auto anon = Client().Get("/api/local/tasks");
  ASSERT_TRUE(anon);
  EXPECT_EQ(anon->status, 401);
  token_ = "s3cret";
  auto ok = Client().Get("/api/local/tasks");
  EXPECT_EQ(ok->status, 200);
}

TEST_F(ServeTest, JobsCreatedByAnotherProcessArePickedUpByPolling) {
  auto serve = StartServe();
  auto [code, out] =
      testing::RunCommand({MAESTRO_BIN, "--config", config_, "task", "create", "from the CLI",
                           "--piece", "chat", "--db", dir_.File("data")},
                          env_, dir_.File("cli"));
  ASSERT_EQ(code, 0) << out;
  std::string task_id = Json::parse(out.substr(0, out.rfind('}') + 1))["task_id"];
  Json t;
  for (int i = 0; i < 300; ++i) {
    t = GetTask(task_id);
    if (t["latest_job"]["status"] == "failed") break;
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(t["latest_job"]["status"], "failed") << t.dump();
  auto [show_code, show] = testing::RunCommand(
      {MAESTRO_BIN, "--config", config_, "task", "show", task_id, "--db", dir_.File("data")}, env_,
      dir_.File("show"));
  EXPECT_EQ(show_code, 0);
  EXPECT_NE(show.find("\"failed\""), std::string::npos) << show;
}

TEST_F(ServeTest, ConfigErrorsNameFileLineAndColumn) {
  std::ofstream(config_) << "workers: 2\nlisten_addr: 127.0.0.1:1\n";
  auto [code, out] =
      testing::RunCommand({MAESTRO_BIN, "--config", config_, "serve"}, env_, dir_.File("bad"));
  EXPECT_EQ(code, 2);
  EXPECT_NE(out.find(config_ + ":2:1: unknown key 'listen_addr'"), std::string::npos) << out;
  EXPECT_NE(out.find("did you mean 'listen'?"), std::string::npos) << out;
}

TEST_F(ServeTest, RunAndTaskCreateRefuseAnUnknownPieceAndWriteNoTask) {
  env_["MAESTRO_LLM_BASE_URL"] = "http://127.0.0.1:1/v1";  // `run` needs one; never called
  auto [run_code, run_out] =
      testing::RunCommand({MAESTRO_BIN, "--config", config_, "run", "--piece", "nosuch", "hello"},
                          env_, dir_.File("run"));
  EXPECT_EQ(run_code, 2) << run_out;
  EXPECT_NE(run_out.find("unknown piece 'nosuch'; known pieces: chat"), std::string::npos)
      << run_out;
  auto [create_code, create_out] =
      testing::RunCommand({MAESTRO_BIN, "--config", config_, "task", "create", "x", "--piece",
                           "nosuch", "--db", dir_.File("data")},
                          env_, dir_.File("create"));
  EXPECT_EQ(create_code, 2) << create_out;
  auto [list_code, list_out] = testing::RunCommand(
      {MAESTRO_BIN, "--config", config_, "task", "list", "--db", dir_.File("data")}, env_,
      dir_.File("list"));
  EXPECT_EQ(list_code, 0) << list_out;
  EXPECT_EQ(list_out, "") << "no task was written";
}

// `task create --db` creates through the API's TaskService: the config's
// daily quota holds it too (before, only the piece was checked).
TEST_F(ServeTest, TaskCreateWithDbIsHeldToTheDailyQuota) {
  std::ofstream(config_, std::ios::app) << "quotas:\n  default:\n    max_tasks_per_day: 1\n";
  auto create = [&](const std::string& instruction) {
    return testing::RunCommand({MAESTRO_BIN, "--config", config_, "task", "create", instruction,
                                "--piece", "chat", "--db", dir_.File("data")},
                               env_, dir_.File("create-" + instruction));
  };
  auto [first_code, first_out] = create("one");
  EXPECT_EQ(first_code, 0) << first_out;
  auto [second_code, second_out] = create("two");
  EXPECT_EQ(second_code, 1) << second_out;
  EXPECT_NE(second_out.find("daily quota of 1 tasks reached"), std::string::npos) << second_out;
  auto [list_code, list_out] = testing::RunCommand(
      {MAESTRO_BIN, "--config", config_, "task", "list", "--db", dir_.File("data")}, env_,
      dir_.File("list"));
  EXPECT_EQ(list_code, 0) << list_out;
  EXPECT_NE(list_out.find("one"), std::string::npos) << list_out;
  EXPECT_EQ(list_out.find("two"), std::string::npos)
      << "the refused task was written: " << list_out;
}

TEST_F(ServeTest, ASpaceWithARelativePathStopsTheStartNamingTheKey) {
  std::ofstream(config_) << "spaces:\n  docs:\n    path: docs\n";
  auto [code, out] =
      testing::RunCommand({MAESTRO_BIN, "--config", config_, "serve"}, env_, dir_.File("bad"));
  EXPECT_EQ(code, 2);
  EXPECT_NE(out.find("'spaces.docs.path' must be an absolute directory path"), std::string::npos)
      << out;
}

TEST_F(ServeTest, PieceLintReportsFileLineColumnAndListShowsBuiltins) {
  std::string piece = dir_.File("bad.yaml");
  std::ofstream(piece) << "name: x\ninitial_movement: a\nmovements:\n"
                          "  - name: a\n    guidance: hi\n    rulez: []\n";
  auto [code, out] =
      testing::RunCommand({MAESTRO_BIN, "piece", "lint", piece}, env_, dir_.File("lint"));
  EXPECT_NE(code, 0);
  EXPECT_NE(out.find(piece + ":6:5: unknown movement key 'rulez'; did you mean 'rules'?"),
            std::string::npos)
      << out;
  auto [lcode, list] = testing::RunCommand({MAESTRO_BIN, "piece", "list"}, env_, dir_.File("l"));
  EXPECT_EQ(lcode, 0);
  EXPECT_NE(list.find("coding"), std::string::npos) << list;
  auto [vcode, vout] = testing::RunCommand({MAESTRO_BIN, "version"}, env_, dir_.File("v"));
  EXPECT_EQ(vcode, 0);
  EXPECT_NE(vout.find("maestro "), std::string::npos);
}

TEST_F(ServeTest, FirstStartCreatesAnAdminTokenFilePrintedOnce) {
  env_.erase("MAESTRO_ADMIN_TOKEN");
  token_.clear();
  std::string token;
  {
    auto serve = StartServe();
    std::string path = dir_.File("data") + "/admin_token";
    std::ifstream(path) >> token;
    ASSERT_EQ(token.size(), 64u);
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600);
    EXPECT_NE(serve->Stdout().find(token), std::string::npos);
    EXPECT_EQ(serve->Stderr().find(token), std::string::npos);  // not in the log
    EXPECT_EQ(Client().Get("/api/local/tasks")->status, 401);
    token_ = token;
    EXPECT_EQ(Client().Get("/api/local/tasks")->status, 200);
  }
  // A second start keeps the token and prints nothing new.
  auto again = StartServe();
  EXPECT_EQ(Client().Get("/api/local/tasks")->status, 200);
  EXPECT_EQ(again->Stdout().find(token), std::string::npos);
}

// A second serve on a busy port must not share it (cpp-httplib's default
// SO_REUSEPORT would let both listen and split the requests): it exits 1
// naming the address and MAESTRO_LISTEN, before its demo model or workers
// start.
TEST_F(ServeTest, ASecondServeOnABusyPortExitsNamingMaestroListen) {
  auto first = StartServe();
  auto env = env_;
  env["MAESTRO_DATA_DIR"] = dir_.File("data2");
  env.erase("MAESTRO_DEMO");  // demo mode on: it must not start
  Process second({MAESTRO_BIN, "--config", config_, "serve"}, env, dir_.File("serve2.out"),
                 dir_.File("serve2.err"));
  auto code = second.Wait(20s);
  ASSERT_TRUE(code.has_value()) << "the second serve kept running:\n" << second.Stderr();
  EXPECT_EQ(*code, 1);
  const std::string err = second.Stderr();
  const std::string where = "127.0.0.1:" + std::to_string(port_);
  EXPECT_NE(err.find("cannot listen on " + where), std::string::npos) << err;
  EXPECT_NE(err.find("MAESTRO_LISTEN"), std::string::npos) << err;
  EXPECT_EQ(err.find("DEMO MODE"), std::string::npos) << "demo model started first:\n" << err;
  EXPECT_EQ(err.find("listening on"), std::string::npos) << err;
  // The first one still serves every request.
  for (int i = 0; i < 20; ++i) {
    auto r = Client().Get("/api/health");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
  }
  // And it restarts on the same port once the first is gone (no
  // TIME_WAIT lockout: SO_REUSEADDR stays).
  first->Signal(SIGTERM);
  ASSERT_EQ(first->Wait(20s), std::optional<int>(0));
  auto again = StartServe();
  EXPECT_TRUE(again->running());
}

// With no LLM server configured (and demo mode on, the default) serve starts
// the bundled maestro-fakellm with demo/demo-script.yaml: jobs really run,
// GET /api/info says `demo`, and the child stops with serve.
TEST_F(ServeTest, DemoModeRunsTasksWithTheBundledFakeModel) {
  env_.erase("MAESTRO_DEMO");
  auto serve = StartServe();
  auto info = Client().Get("/api/info");
  ASSERT_TRUE(info);
  EXPECT_EQ(Json::parse(info->body)["demo"], true);
  EXPECT_EQ(Json::parse(Client().Get("/api/health")->body)["demo"], true);
  auto created = Client().Post(
      "/api/local/tasks", R"({"instruction":"Demo: explain what maestro does","piece":"chat"})",
      "application/json");
  ASSERT_TRUE(created);
  ASSERT_EQ(created->status, 201) << created->body;
  std::string task_id = Json::parse(created->body)["task"]["id"];
  Json t;
  for (int i = 0; i < 600; ++i) {
    t = GetTask(task_id);
    std::string st = t["latest_job"]["status"];
    if (st == "succeeded" || st == "failed") break;
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(t["latest_job"]["status"], "succeeded") << t.dump() << serve->Stderr();
  EXPECT_EQ(t["latest_job"]["result"], "Explained maestro in one paragraph.");

  // The log names the demo model's address; it is gone after SIGTERM.
  std::string err = serve->Stderr();
  auto at = err.find("demo model at http://127.0.0.1:");
  ASSERT_NE(at, std::string::npos) << err;
  int fake_port = std::stoi(err.substr(at + std::string("demo model at http://127.0.0.1:").size()));
  httplib::Client fake("127.0.0.1", fake_port);
  EXPECT_TRUE(fake.Get("/v1/models"));
  serve->Signal(SIGTERM);
  auto code = serve->Wait(15s);
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0) << serve->Stderr();
  fake.set_connection_timeout(1s);
  EXPECT_FALSE(fake.Get("/v1/models")) << "the demo model outlived serve";
}

TEST_F(ServeTest, ServesTheWebUiWithIndexFallbackAndLeavesApiRoutesAlone) {
  std::filesystem::create_directories(dir_.File("ui/assets"));
  std::ofstream(dir_.File("ui/index.html")) << "<!doctype html><title>maestro-ui-index</title>";
  std::ofstream(dir_.File("ui/assets/app-1234.js")) << "console.log('maestro-ui-asset')";
  env_["MAESTRO_UI_DIR"] = dir_.File("ui");
  auto serve = StartServe();
  httplib::Client open("127.0.0.1", port_);  // the UI itself needs no token
  for (const char* path : {"/", "/tasks/some-task-id"}) {
    auto r = open.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 200) << path;
    EXPECT_NE(r->body.find("maestro-ui-index"), std::string::npos) << path;
    EXPECT_EQ(r->get_header_value("Cache-Control"), "no-cache") << path;
  }
  auto js = open.Get("/assets/app-1234.js");
  ASSERT_TRUE(js);
  EXPECT_EQ(js->status, 200);
  EXPECT_NE(js->body.find("maestro-ui-asset"), std::string::npos);
  EXPECT_NE(js->get_header_value("Content-Type").find("javascript"), std::string::npos);
  EXPECT_NE(js->get_header_value("Cache-Control").find("immutable"), std::string::npos);
  // API routes keep their JSON answers, auth and 404s.
  auto health = open.Get("/api/health");
  EXPECT_EQ(Json::parse(health->body)["status"], "ok");
  EXPECT_EQ(Json::parse(open.Get("/api/info")->body)["demo"], false);
  EXPECT_EQ(open.Get("/api/local/tasks")->status, 401);
  auto unknown = Client().Get("/api/nope");
  EXPECT_EQ(unknown->status, 404);
  EXPECT_EQ(Json::parse(unknown->body)["error"]["code"], "NOT_FOUND");
}

TEST_F(ServeTest, WithoutABuiltUiTheRootSaysHowToBuildIt) {
  env_["MAESTRO_UI_DIR"] = dir_.File("no-ui-here");  // named, but not built
  auto serve = StartServe();
  auto r = httplib::Client("127.0.0.1", port_).Get("/");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->body.find("scripts/ui.sh"), std::string::npos) << r->body;
  EXPECT_EQ(Json::parse(httplib::Client("127.0.0.1", port_).Get("/api/info")->body)["ui"], false);
  EXPECT_EQ(Json::parse(httplib::Client("127.0.0.1", port_).Get("/api/health")->body)["status"],
            "ok");
}

}  // namespace
}  // namespace maestro
