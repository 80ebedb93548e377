// The schedule routes of a real `maestro serve` (no workers: tasks stay
// queued): create with every field checked (400 naming the field), list,
// show with next_fires, pause/resume, run now, history, visibility to
// another user, delete (issue 20); a shared schedule changed, deleted or run
// only by its owner or admin (403 for another user who sees it), and the
// per-user schedule limit (429 naming quotas.max_schedules) (issue 44). The
// firing itself (and a fire over the owner's quota) is covered over a
// FakeClock in tests/unit/schedule/.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <thread>

#include "core/json.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace maestro {
namespace {

using namespace std::chrono_literals;
using testing::Process;

class SchedulesApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = testing::FreePort();
    serve_ = std::make_unique<Process>(
        std::vector<std::string>{MAESTRO_BIN, "serve"},
        std::map<std::string, std::string>{{"MAESTRO_DATA_DIR", dir_.File("data")},
                                           {"MAESTRO_LISTEN", "127.0.0.1:" + std::to_string(port_)},
                                           {"MAESTRO_WORKERS", "0"},
                                           {"MAESTRO_SCHEDULES_TICK_MS", "50"},
                                           {"MAESTRO_ADMIN_TOKEN", "tok"}},
        dir_.File("serve.out"), dir_.File("serve.err"));
    httplib::Client c("127.0.0.1", port_);
    for (int i = 0; i < 500; ++i) {
      if (auto r = c.Get("/api/health"); r && r->status == 200) return;
      std::this_thread::sleep_for(10ms);
    }
    FAIL() << "serve did not start: " << serve_->Stderr();
  }

  std::pair<int, Json> Call(const std::string& method, const std::string& path,
                            const std::string& body = "", const std::string& token = "tok") {
    httplib::Client c("127.0.0.1", port_);
    c.set_bearer_token_auth(token);
    httplib::Result r = method == "POST"     ? c.Post(path, body, "application/json")
                        : method == "PATCH"  ? c.Patch(path, body, "application/json")
                        : method == "DELETE" ? c.Delete(path)
                                             : c.Get(path);
    if (!r) return {0, Json()};
    return {r->status, Json::parse(r->body, nullptr, false)};
  }

  Json Valid() {
    return {{"name", "morning digest"},
            {"cron", "0 7 * * mon-fri"},
            {"timezone", "Europe/Berlin"},
            {"instruction", "summarise the news"}};
  }

  testing::TempDir dir_;
  int port_ = 0;
  std::unique_ptr<Process> serve_;
};

TEST_F(SchedulesApiTest, BadInputIsA400NamingTheField) {
  struct Case {
    const char* field;
    Json value;
  } const cases[] = {
      {"cron", "61 * * * *"},
      {"cron", "* * *"},
      {"cron", 5},
      {"timezone", "Nowhere/Land"},
      {"overlap", "sometimes"},
      {"catch_up", "all"},
      {"visibility", "public"},
      {"enabled", "yes"},
      {"piece", "no-such-piece"},
      {"space", "no-such-space"},
      {"name", ""},
      {"instruction", " "},
      {"colour", "blue"},
  };
  for (const auto& c : cases) {
    Json body = Valid();
    body[c.field] = c.value;
    auto [code, reply] = Call("POST", "/api/local/schedules", body.dump());
    EXPECT_EQ(code, 400) << c.field << ": " << reply.dump();
    EXPECT_EQ(reply["error"]["field"], c.field) << reply.dump();
  }
  Json no_cron = Valid();
  no_cron.erase("cron");
  EXPECT_EQ(Call("POST", "/api/local/schedules", no_cron.dump()).second["error"]["field"], "cron");
  auto [code, reply] = Call("POST", "/api/local/schedules", Valid().dump());
  ASSERT_EQ(code, 201) << reply.dump();
  auto [list_code, list] = Call("GET", "/api/local/schedules");
  EXPECT_EQ(list["schedules"].size(), 1u) << "only the valid one was written";
}

TEST_F(SchedulesApiTest, CreateShowPauseRunHistoryDelete) {
  auto [code, created] = Call("POST", "/api/local/schedules", Valid().dump());
  ASSERT_EQ(code, 201) << created.dump();
  const Json s = created["schedule"];
  const std::string path = "/api/local/schedules/" + s["id"].get<std::string>();
  EXPECT_EQ(s["owner"], "admin");
  EXPECT_EQ(s["enabled"], true);
  EXPECT_EQ(s["overlap"], "skip");
  EXPECT_EQ(s["catch_up"], "none");
  EXPECT_EQ(s["piece"], "chat");
  ASSERT_EQ(s["next_fires"].size(), 5u);
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  int64_t prev = now;
  for (const auto& t : s["next_fires"]) {
    EXPECT_GT(t.get<int64_t>(), prev);
    prev = t.get<int64_t>();
  }

  auto [c_get, got] = Call("GET", path);
  EXPECT_EQ(c_get, 200);
  EXPECT_EQ(got["schedule"]["name"], "morning digest");

  auto [c_pause, paused] = Call("PATCH", path, R"({"enabled": false})");
  ASSERT_EQ(c_pause, 200) << paused.dump();
  EXPECT_EQ(paused["schedule"]["enabled"], false);
  EXPECT_TRUE(paused["schedule"]["next_fires"].empty());
  EXPECT_EQ(paused["schedule"]["cron"], "0 7 * * mon-fri") << "the other fields stay";
  auto [c_bad, bad] = Call("PATCH", path, R"({"timezone": "Mars/Base"})");
  EXPECT_EQ(c_bad, 400);
  EXPECT_EQ(bad["error"]["field"], "timezone");
  auto [c_resume, resumed] = Call("PATCH", path, R"({"enabled": true, "overlap": "allow"})");
  EXPECT_EQ(resumed["schedule"]["overlap"], "allow");
  EXPECT_EQ(resumed["schedule"]["next_fires"].size(), 5u);

  auto [c_run, run] = Call("POST", path + "/run");
  ASSERT_EQ(c_run, 201) << run.dump();
  EXPECT_EQ(run["task"]["title"], "morning digest");
  EXPECT_EQ(run["task"]["instruction"], "summarise the news");
  EXPECT_EQ(run["task"]["owner"], "admin");
  EXPECT_EQ(run["job"]["status"], "queued");
  auto [c_hist, hist] = Call("GET", path + "/tasks");
  ASSERT_EQ(c_hist, 200) << hist.dump();
  ASSERT_EQ(hist["fires"].size(), 1u);
  EXPECT_EQ(hist["fires"][0]["manual"], true);
  EXPECT_EQ(hist["fires"][0]["outcome"], "created");
  EXPECT_EQ(hist["fires"][0]["task"]["id"], run["task"]["id"]);
  auto [c_task, task] = Call("GET", "/api/local/tasks/" + run["task"]["id"].get<std::string>());
  EXPECT_EQ(c_task, 200) << "the task is an ordinary task";

  auto [c_del, del] = Call("DELETE", path);
  EXPECT_EQ(c_del, 200);
  EXPECT_EQ(Call("GET", path).first, 404);
  EXPECT_EQ(Call("GET", "/api/local/tasks/" + run["task"]["id"].get<std::string>()).first, 200)
      << "its tasks stay";
  auto [c_malformed, malformed] = Call("GET", "/api/local/schedules/not-an-id");
  EXPECT_EQ(c_malformed, 404);
  EXPECT_EQ(malformed["error"]["message"], "no such schedule: not-an-id");
}

TEST_F(SchedulesApiTest, AnotherUsersPrivateScheduleIsA404) {
  auto [c_tok, tok] = Call("POST", "/api/local/tokens", R"({"user":"bob"})");
  ASSERT_EQ(c_tok, 201) << tok.dump();
  const std::string bob = tok["token"];
  auto [c1, mine] = Call("POST", "/api/local/schedules", Valid().dump());
  Json shared = Valid();
  shared["visibility"] = "shared";
  auto [c2, ours] = Call("POST", "/api/local/schedules", shared.dump());
  const std::string mine_path = "/api/local/schedules/" + mine["schedule"]["id"].get<std::string>();
  EXPECT_EQ(Call("GET", mine_path, "", bob).first, 404);
  EXPECT_EQ(Call("POST", mine_path + "/run", "", bob).first, 404);
  EXPECT_EQ(Call("DELETE", mine_path, "", bob).first, 404);
  auto [c3, list] = Call("GET", "/api/local/schedules", "", bob);
  ASSERT_EQ(list["schedules"].size(), 1u);
  EXPECT_EQ(list["schedules"][0]["id"], ours["schedule"]["id"]);
}

TEST_F(SchedulesApiTest, OnlyTheOwnerOrAdminChangesASharedSchedule) {
  auto token = [&](const std::string& user) {
    auto [code, tok] = Call("POST", "/api/local/tokens", Json{{"user", user}}.dump());
    EXPECT_EQ(code, 201) << tok.dump();
    return tok.value("token", "");
  };
  const std::string alice = token("alice"), bob = token("bob");
  Json shared = Valid();
  shared["visibility"] = "shared";
  auto [c1, created] = Call("POST", "/api/local/schedules", shared.dump(), alice);
  ASSERT_EQ(c1, 201) << created.dump();
  const std::string path = "/api/local/schedules/" + created["schedule"]["id"].get<std::string>();
  EXPECT_EQ(Call("GET", path, "", bob).first, 200) << "bob sees it";
  auto [c_patch, patched] = Call("PATCH", path, R"({"instruction": "mine now"})", bob);
  EXPECT_EQ(c_patch, 403) << patched.dump();
  EXPECT_EQ(patched["error"]["code"], "PERMISSION_DENIED");
  EXPECT_EQ(Call("PATCH", path, R"({"enabled": false})", bob).first, 403);
  EXPECT_EQ(Call("DELETE", path, "", bob).first, 403);
  EXPECT_EQ(Call("POST", path + "/run", "", bob).first, 403) << "its task would be alice's";
  auto [c_get, got] = Call("GET", path, "", alice);
  EXPECT_EQ(got["schedule"]["instruction"], "summarise the news") << "unchanged";
  EXPECT_EQ(got["schedule"]["enabled"], true);
  EXPECT_TRUE(Call("GET", path + "/tasks", "", alice).second["fires"].empty()) << "never run";
  // The owner and admin may.
  EXPECT_EQ(Call("PATCH", path, R"({"instruction": "alice's own change"})", alice).first, 200);
  EXPECT_EQ(Call("PATCH", path, R"({"enabled": false})").first, 200) << "admin";
  EXPECT_EQ(Call("DELETE", path, "", alice).first, 200);
  EXPECT_EQ(Call("GET", path, "", alice).first, 404);
}

TEST_F(SchedulesApiTest, AUserOwnsAtMost50Schedules) {
  auto [c_tok, tok] = Call("POST", "/api/local/tokens", R"({"user":"bob"})");
  ASSERT_EQ(c_tok, 201) << tok.dump();
  const std::string bob = tok["token"];
  Json every_minute = Valid();
  every_minute["cron"] = "* * * * *";
  every_minute["enabled"] = false;  // the limit, not the fires, is under test
  for (int i = 0; i < 50; ++i) {
    auto [code, body] = Call("POST", "/api/local/schedules", every_minute.dump(), bob);
    ASSERT_EQ(code, 201) << i << " " << body.dump();
  }
  auto [code, refused] = Call("POST", "/api/local/schedules", every_minute.dump(), bob);
  EXPECT_EQ(code, 429) << refused.dump();
  EXPECT_EQ(refused["error"]["field"], "quotas.max_schedules") << refused.dump();
  EXPECT_EQ(Call("GET", "/api/local/schedules", "", bob).second["schedules"].size(), 50u);
  // Another user's count is their own.
  EXPECT_EQ(Call("POST", "/api/local/schedules", every_minute.dump()).first, 201);
  // One deleted: one more fits.
  const std::string first =
      Call("GET", "/api/local/schedules", "", bob).second["schedules"][0]["id"];
  EXPECT_EQ(Call("DELETE", "/api/local/schedules/" + first, "", bob).first, 200);
  EXPECT_EQ(Call("POST", "/api/local/schedules", every_minute.dump(), bob).first, 201);
}

}  // namespace
}  // namespace maestro
