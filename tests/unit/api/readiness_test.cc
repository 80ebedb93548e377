// GET /api/ready and /api/live (api/readiness.h) on an in-process ApiServer
// over a real SqliteStore, and on the worker's HealthServer over loopback:
// ready only when the store answers with this binary's schema and the pool
// runs, each unmet condition named; live answered on the I/O thread while
// readiness is stuck on a store that does not answer; the probes show no
// user's data to anyone; a taken probe port is refused naming it.
#include "api/readiness.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <future>
#include <thread>

#include "api/api_server.h"
#include "core/hash.h"
#include "store/sqlite/migrations.h"
#include "support/store_fixture.h"

namespace maestro {
namespace {

using namespace std::chrono_literals;

std::pair<int, Json> GetAt(int port, const std::string& path, const std::string& token = "") {
  httplib::Client c("127.0.0.1", port);
  if (!token.empty()) c.set_bearer_token_auth(token);
  c.set_read_timeout(10s);
  auto r = c.Get(path);
  if (!r) return {0, Json()};
  return {r->status, Json::parse(r->body, nullptr, false)};
}

class ReadinessApiTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    ASSERT_TRUE(store_->AddApiToken(Sha256Hex("bob-token"), "bob").ok());
  }
  void StartApi(int workers, int latest = sqlite::LatestSchemaVersion(), int handler_threads = 8) {
    ApiOptions o;
    o.http.port = 0;
    o.http.handler_threads = handler_threads;
    o.admin_token = "adm";
    o.workers = workers;
    o.startup = state_;
    o.latest_schema_version = latest;
    api_ = std::make_unique<ApiServer>(*store_, notifier_, o);
    auto port = api_->Start();
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    port_ = *port;
  }
  void ProbeTheStore() {
    SqlStore* s = store_.get();
    state_->SetSchemaProbe([s] { return s->SchemaVersion(); });
  }
  void TearDown() override {
    if (api_) api_->Stop();
  }

  std::shared_ptr<api::StartupState> state_ = std::make_shared<api::StartupState>();
  notify::Notifier notifier_;
  std::unique_ptr<ApiServer> api_;
  int port_ = 0;
};

TEST_F(ReadinessApiTest, ReadyWhenTheStoreAnswersWithThisSchemaAndThePoolRuns) {
  StartApi(/*workers=*/2);
  ProbeTheStore();
  state_->SetWorkersRunning(true);
  auto [code, body] = GetAt(port_, "/api/ready");
  EXPECT_EQ(code, 200) << body.dump();
  EXPECT_EQ(body["ready"], true);
  EXPECT_EQ(body["store"], "ok");
  EXPECT_EQ(body["schema_version"], sqlite::LatestSchemaVersion());
  EXPECT_EQ(body["workers"], (Json{{"configured", 2}, {"running", true}}));
  auto [live, lbody] = GetAt(port_, "/api/live");
  EXPECT_EQ(live, 200);
  EXPECT_EQ(lbody, (Json{{"live", true}}));
  // /api/health is unchanged.
  EXPECT_EQ(GetAt(port_, "/api/health").second["status"], "ok");
}

TEST_F(ReadinessApiTest, APoolThatDoesNotRunIsNamedAndZeroWorkersNeedNone) {
  StartApi(/*workers=*/3);
  ProbeTheStore();
  auto [code, body] = GetAt(port_, "/api/ready");
  EXPECT_EQ(code, 503) << body.dump();
  EXPECT_EQ(body, (Json{{"ready", false}, {"waiting_for", Json::array({"workers"})}}));
  state_->SetWorkersRunning(true);
  EXPECT_EQ(GetAt(port_, "/api/ready").first, 200);
  state_->SetStopping();  // SIGTERM: draining
  EXPECT_EQ(GetAt(port_, "/api/ready").second["waiting_for"], Json::array({"shutdown"}));
  api_->Stop();

  // An API-only serve (--workers 0) is ready without a pool.
  state_ = std::make_shared<api::StartupState>();
  StartApi(/*workers=*/0);
  ProbeTheStore();
  auto [c0, b0] = GetAt(port_, "/api/ready");
  EXPECT_EQ(c0, 200) << b0.dump();
  EXPECT_EQ(b0["workers"], (Json{{"configured", 0}, {"running", false}}));
}

TEST_F(ReadinessApiTest, AnotherSchemaOrNoStoreOrAStartupWaitIsNamed) {
  StartApi(/*workers=*/0, /*latest=*/sqlite::LatestSchemaVersion() + 1);
  // No store yet: the database.
  EXPECT_EQ(GetAt(port_, "/api/ready").second["waiting_for"], Json::array({"database"}));
  // A store on another schema (this binary migrates further).
  ProbeTheStore();
  auto [code, body] = GetAt(port_, "/api/ready");
  EXPECT_EQ(code, 503);
  EXPECT_EQ(body["waiting_for"], Json::array({"migrations"}));
  // A store that stops answering: the database; its error text is not shown.
  state_->SetSchemaProbe(
      [] { return Result<int>(Unavailable("postgres connect: password=hunter2 refused")); });
  auto [c2, b2] = GetAt(port_, "/api/ready");
  EXPECT_EQ(c2, 503);
  EXPECT_EQ(b2["waiting_for"], Json::array({"database"}));
  EXPECT_EQ(b2.dump().find("hunter2"), std::string::npos) << b2.dump();
  // What the startup waits for is named as it says it.
  state_->SetWaitingFor("data_dir marker /data/.maestro-database-id");
  EXPECT_EQ(GetAt(port_, "/api/ready").second["waiting_for"],
            Json::array({"data_dir marker /data/.maestro-database-id"}));
}

// Liveness must not depend on the store: with the only handler thread stuck
// in a readiness probe whose store does not answer, /api/live still answers
// (on the I/O thread) and says nothing about the store.
TEST_F(ReadinessApiTest, LiveAnswersWhileTheStoreDoesNotAnswer) {
  StartApi(/*workers=*/0, sqlite::LatestSchemaVersion(), /*handler_threads=*/1);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> probing{false};
  state_->SetSchemaProbe([&, released] {
    probing = true;
    released.wait();
    return Result<int>(Unavailable("gone"));
  });
  auto stuck = std::async(std::launch::async, [&] { return GetAt(port_, "/api/ready").first; });
  for (int i = 0; i < 500 && !probing; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(probing.load());  // not ASSERT: the probe must be released below
  const auto t0 = std::chrono::steady_clock::now();
  auto [code, body] = GetAt(port_, "/api/live");
  EXPECT_EQ(code, 200);
  EXPECT_EQ(body, (Json{{"live", true}}));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  release.set_value();
  EXPECT_EQ(stuck.get(), 503);
}

// Public routes with nothing of anyone's: no token, a user's token, a bad
// token all get the same fixed keys; a task of bob's is never in them.
TEST_F(ReadinessApiTest, TheProbesArePublicAndShowNoUsersData) {
  StartApi(/*workers=*/0);
  ProbeTheStore();
  NewTask t;
  t.instruction = "bob's secret plan";
  t.owner = "bob";
  t.visibility = "private";
  ASSERT_TRUE(store_->CreateTask(t).ok());
  for (const std::string token : {"", "bob-token", "wrong", "adm"}) {
    for (const char* path : {"/api/ready", "/api/live"}) {
      auto [code, body] = GetAt(port_, path, token);
      EXPECT_EQ(code, 200) << path << " " << token;
      EXPECT_EQ(body.dump().find("secret"), std::string::npos) << body.dump();
      for (const auto& [k, v] : body.items()) {
        EXPECT_TRUE(k == "ready" || k == "store" || k == "schema_version" || k == "workers" ||
                    k == "live")
            << path << " shows " << k;
      }
    }
  }
  // Without a startup state the server is never ready (nothing wired).
  ApiOptions o;
  o.http.port = 0;
  ApiServer bare(*store_, notifier_, o);
  auto port = bare.Start();
  ASSERT_TRUE(port.ok());
  EXPECT_EQ(GetAt(*port, "/api/ready").first, 503);
  EXPECT_EQ(GetAt(*port, "/api/live").first, 200);
  bare.Stop();
}

// The worker's probe server: the two probes, nothing else (404, also for
// another method or an API path), and a port already taken refused naming
// the address.
TEST_F(ReadinessApiTest, TheWorkersHealthServerServesTheTwoProbesAndNothingElse) {
  state_->SetWaitingFor("data_dir marker /data/.maestro-database-id");
  api::HealthServer health("127.0.0.1", 0, state_,
                           {/*workers_configured=*/2, sqlite::LatestSchemaVersion()});
  auto port = health.Start();
  ASSERT_TRUE(port.ok()) << port.status().ToString();
  auto [code, body] = GetAt(*port, "/api/ready");
  EXPECT_EQ(code, 503);
  EXPECT_EQ(body,
            (Json{{"ready", false},
                  {"waiting_for", Json::array({"data_dir marker /data/.maestro-database-id"})}}));
  EXPECT_EQ(GetAt(*port, "/api/live").first, 200);
  // The wait ends, the store answers, the pool runs: ready.
  state_->SetWaitingFor("");
  ProbeTheStore();
  state_->SetWorkersRunning(true);
  auto [c2, b2] = GetAt(*port, "/api/ready");
  EXPECT_EQ(c2, 200) << b2.dump();
  EXPECT_EQ(b2["workers"]["running"], true);
  for (const char* path : {"/api/health", "/api/local/tasks", "/", "/metrics", "/api/ready/x"}) {
    EXPECT_EQ(GetAt(*port, path, "adm").first, 404) << path;
  }
  httplib::Client c("127.0.0.1", *port);
  auto posted = c.Post("/api/ready", "{}", "application/json");
  ASSERT_TRUE(posted);
  EXPECT_EQ(posted->status, 404);

  api::HealthServer second("127.0.0.1", *port, state_, {});
  auto taken = second.Start();
  ASSERT_FALSE(taken.ok());
  EXPECT_NE(taken.status().message().find("127.0.0.1:" + std::to_string(*port)), std::string::npos)
      << taken.status().message();
  health.Stop();
}

}  // namespace
}  // namespace maestro
