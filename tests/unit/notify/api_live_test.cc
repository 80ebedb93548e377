// In-process ApiServer (port 0) over a real SqliteStore: the live job stream,
// bearer tokens and task visibility, the notification inbox, /metrics
// additions and /api/pieces.
#include <gtest/gtest.h>
#include <httplib.h>

#include <thread>

#include "api/api_server.h"
#include "support/store_fixture.h"

namespace maestro {
namespace {

using namespace std::chrono_literals;

class ApiLiveTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    ApiOptions o;
    o.http.port = 0;
    o.admin_token = "adm";
    o.pieces_json = [] { return Json{{"pieces", Json::array({{{"name", "chat"}}})}}; };
    api_ = std::make_unique<ApiServer>(*store_, notifier_, o);
    auto port = api_->Start();
    ASSERT_TRUE(port.ok());
    port_ = *port;
  }
  void TearDown() override { api_->Stop(); }

  httplib::Client Client(const std::string& token) {
    httplib::Client c("127.0.0.1", port_);
    if (!token.empty()) c.set_bearer_token_auth(token);
    c.set_read_timeout(10s);
    return c;
  }
  std::string NewToken(const std::string& user) {
    auto r =
        Client("adm").Post("/api/local/tokens", Json{{"user", user}}.dump(), "application/json");
    EXPECT_TRUE(r && r->status == 201) << (r ? r->body : "no response");
    return r ? Json::parse(r->body)["token"].get<std::string>() : "";
  }
  // Creates a task over HTTP; returns the reply JSON.
  Json CreateTask(const std::string& token, const std::string& visibility = "private") {
    auto r = Client(token).Post("/api/local/tasks",
                                Json{{"instruction", "hi"}, {"visibility", visibility}}.dump(),
                                "application/json");
    EXPECT_TRUE(r && r->status == 201) << (r ? r->body : "no response");
    return r ? Json::parse(r->body) : Json();
  }
  // Reads the job stream until it ends (or `stop_after` frames when > 0).
  std::string ReadStream(const std::string& token, const std::string& job_id,
                         const std::string& last_id = "", int stop_after = 0) {
    std::string out;
    int frames = 0;
    httplib::Headers h = {{"Accept", "text/event-stream"}};
    if (!last_id.empty()) h.emplace("Last-Event-ID", last_id);
    Client(token).Get("/api/local/jobs/" + job_id + "/stream", h, [&](const char* data, size_t n) {
      out.append(data, n);
      frames += static_cast<int>(std::count(data, data + n, '\n'));
      return stop_after == 0 || out.find("id: " + std::to_string(stop_after)) == std::string::npos;
    });
    return out;
  }

  notify::Notifier notifier_;  // the streams' signal and hub; outlives api_
  std::unique_ptr<ApiServer> api_;
  int port_ = 0;
};

TEST_F(ApiLiveTest, JobStreamDeliversLiveDeltasAndEndsWhenTheJobEnds) {
  Json created = CreateTask("adm");
  std::string job_id = created["job"]["id"];
  auto publish = api_->job_publisher();
  std::string got;
  std::thread reader([&] { got = ReadStream("adm", job_id); });
  std::this_thread::sleep_for(100ms);
  publish(job_id, {{"type", "text"}, {"text", "Hel"}});
  publish(job_id, {{"type", "text"}, {"text", "lo"}});
  std::this_thread::sleep_for(100ms);
  ASSERT_TRUE(store_->RequestCancel(job_id).ok());  // terminal: the stream ends
  reader.join();
  EXPECT_NE(got.find("id: 1\nevent: delta\ndata: {\"text\":\"Hel\",\"type\":\"text\"}"),
            std::string::npos)
      << got;
  EXPECT_NE(got.find("id: 2\n"), std::string::npos);
  EXPECT_NE(got.find("event: end\ndata: {\"status\":\"cancelled\"}"), std::string::npos) << got;
}

TEST_F(ApiLiveTest, LastEventIdResumesWithinTheBuffer) {
  Json created = CreateTask("adm");
  std::string job_id = created["job"]["id"];
  for (int i = 1; i <= 4; ++i) api_->job_publisher()(job_id, {{"i", i}});
  ASSERT_TRUE(store_->RequestCancel(job_id).ok());
  std::string got = ReadStream("adm", job_id, "2");
  EXPECT_EQ(got.find("id: 1\n"), std::string::npos) << got;
  EXPECT_EQ(got.find("id: 2\n"), std::string::npos) << got;
  EXPECT_NE(got.find("id: 3\n"), std::string::npos) << got;
  EXPECT_NE(got.find("id: 4\n"), std::string::npos) << got;
}

TEST_F(ApiLiveTest, ClientDisconnectDoesNotAffectThePublisher) {
  Json created = CreateTask("adm");
  std::string job_id = created["job"]["id"];
  auto publish = api_->job_publisher();
  publish(job_id, {{"i", 1}});
  std::string first = ReadStream("adm", job_id, "", /*stop_after=*/1);  // hangs up
  EXPECT_NE(first.find("id: 1\n"), std::string::npos);
  for (int i = 2; i <= 50; ++i) publish(job_id, {{"i", i}});
  ASSERT_TRUE(store_->RequestCancel(job_id).ok());
  std::string again = ReadStream("adm", job_id, "1");
  EXPECT_NE(again.find("id: 50\n"), std::string::npos);
  EXPECT_EQ(api_->job_streams().ReadAfter(job_id, 0, 0ms).deltas.size(), 50u);
}

TEST_F(ApiLiveTest, RequestsWithoutAValidTokenAre401) {
  for (const char* path :
       {"/api/local/tasks", "/metrics", "/api/local/notifications", "/api/pieces"}) {
    auto anon = Client("").Get(path);
    ASSERT_TRUE(anon);
    EXPECT_EQ(anon->status, 401) << path;
    auto wrong = Client("nope").Get(path);
    EXPECT_EQ(wrong->status, 401) << path;
    // The presented token never appears in the reply.
    EXPECT_EQ(wrong->body.find("nope"), std::string::npos);
  }
  EXPECT_EQ(Client("").Get("/api/health")->status, 200);
}

TEST_F(ApiLiveTest, AnotherUsersPrivateTaskIsNotFoundOnEveryRoute) {
  std::string alice = NewToken("alice"), bob = NewToken("bob");
  ASSERT_NE(alice, bob);
  Json priv = CreateTask(alice);
  EXPECT_EQ(priv["task"]["owner"], "alice");
  std::string id = priv["task"]["id"], job = priv["job"]["id"];
  const std::string base = "/api/local/tasks/" + id;
  EXPECT_EQ(Client(alice).Get(base)->status, 200);
  EXPECT_EQ(Client(bob).Get(base)->status, 404);
  EXPECT_EQ(Client(bob).Get(base + "/comments")->status, 404);
  EXPECT_EQ(Client(bob).Get(base + "/events")->status, 404);
  EXPECT_EQ(Client(bob).Get(base + "/tool-requests")->status, 404);
  EXPECT_EQ(Client(bob).Get("/api/local/jobs/" + job + "/stream")->status, 404);
  EXPECT_EQ(Client(alice).Get(base + "/attachments")->status, 200);
  EXPECT_EQ(Client(bob).Get(base + "/attachments")->status, 404);
  // The live browser's view: bob is told there is no such job (not that it
  // has no browser, which would say the job exists).
  auto shot = Client(bob).Get("/api/local/jobs/" + job + "/browser/screenshot");
  ASSERT_TRUE(shot);
  EXPECT_EQ(shot->status, 404);
  EXPECT_NE(shot->body.find("no such job"), std::string::npos) << shot->body;
  // Nor can bob drive it or hand a login over (the job stays queued below).
  for (const char* path : {"/browser/input", "/browser/done"}) {
    auto r = Client(bob).Post("/api/local/jobs/" + job + path, R"({"type":"click","x":1,"y":1})",
                              "application/json");
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 404) << path;
    EXPECT_NE(r->body.find("no such job"), std::string::npos) << path << ": " << r->body;
  }
  EXPECT_EQ(Client(bob).Post(base + "/comments", R"({"body":"x"})", "application/json")->status,
            404);
  EXPECT_EQ(Client(bob).Post(base + "/continue", "", "application/json")->status, 404);
  EXPECT_EQ(Client(bob).Post(base + "/cancel", "", "application/json")->status, 404);
  auto list = Json::parse(Client(bob).Get("/api/local/tasks")->body);
  EXPECT_TRUE(list["tasks"].empty());
  // The job was not touched by bob's cancel.
  EXPECT_EQ(StatusOf(job), JobStatus::kQueued);
  // A shared task is visible to bob.
  Json shared = CreateTask(alice, "shared");
  EXPECT_EQ(Client(bob).Get("/api/local/tasks/" + shared["task"]["id"].get<std::string>())->status,
            200);
  // Only the admin issues tokens for other users (403 since issue 49: the
  // route exists for everyone's own tokens).
  EXPECT_EQ(Client(bob).Post("/api/local/tokens", R"({"user":"eve"})", "application/json")->status,
            403);
}

TEST_F(ApiLiveTest, TokensAreStoredHashed) {
  std::string token = NewToken("carol");
  auto direct = store_->UserForToken(token);
  ASSERT_TRUE(direct.ok());
  EXPECT_FALSE(direct->has_value());  // the plain token is not a key
}

TEST_F(ApiLiveTest, NotificationInboxShowsTheUsersFinishedJobs) {
  std::string alice = NewToken("alice"), bob = NewToken("bob");
  Json t = CreateTask(alice);
  Job j = Claim();
  ASSERT_EQ(j.id, t["job"]["id"]);
  ASSERT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::Succeeded("done")).ok());
  auto inbox = Json::parse(Client(alice).Get("/api/local/notifications")->body);
  ASSERT_EQ(inbox["notifications"].size(), 1u) << inbox.dump();
  EXPECT_EQ(inbox["notifications"][0]["status"], "succeeded");
  EXPECT_EQ(inbox["unread"], 1);
  EXPECT_TRUE(
      Json::parse(Client(bob).Get("/api/local/notifications")->body)["notifications"].empty());
  std::string nid = inbox["notifications"][0]["id"];
  auto mark = Client(alice).Post("/api/local/notifications/read", Json{{"ids", {nid}}}.dump(),
                                 "application/json");
  EXPECT_EQ(mark->status, 200);
  auto after = Json::parse(Client(alice).Get("/api/local/notifications?unread=true")->body);
  EXPECT_TRUE(after["notifications"].empty());
  EXPECT_EQ(Client(alice)
                .Post("/api/local/notifications/read", R"({"ids":[1,2]})", "application/json")
                ->status,
            400);
}

TEST_F(ApiLiveTest, MetricsReportQueueWaitTokensAndCacheReuse) {
  Json t = CreateTask("adm");
  clock_.Advance(1500);
  Job j = Claim();
  Event e;
  e.task_id = t["task"]["id"];
  e.job_id = j.id;
  e.type = "llm.call";
  e.payload = {{"prompt_tokens", 200}, {"cached_prompt_tokens", 150}, {"completion_tokens", 7}};
  ASSERT_TRUE(store_->AppendEvent(e).ok());
  auto r = Client("adm").Get("/metrics");
  ASSERT_EQ(r->status, 200);
  EXPECT_NE(r->body.find("maestro_queue_wait_seconds_sum 1.5\n"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("maestro_queue_wait_seconds_count 1\n"), std::string::npos);
  EXPECT_NE(r->body.find("maestro_llm_tokens_total{kind=\"prompt\"} 200\n"), std::string::npos);
  EXPECT_NE(r->body.find("maestro_llm_cache_reuse_ratio 0.75\n"), std::string::npos);
  EXPECT_NE(r->body.find("maestro_webhook_deliveries_total{result=\"failed\"} 0\n"),
            std::string::npos);
}

TEST_F(ApiLiveTest, PiecesRouteServesTheCatalog) {
  auto r = Client("adm").Get("/api/pieces");
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(Json::parse(r->body)["pieces"][0]["name"], "chat");
}

}  // namespace
}  // namespace maestro
