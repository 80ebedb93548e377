// Durable A2A push configs across API processes (issue 48 item 3): two
// `maestro serve --workers 0` on one PostgreSQL database (and data dir), a
// `maestro worker` running the job and `maestro-fakellm`. A push config set
// through one API process is there after that process restarts (get, list,
// on both processes), another user neither sees nor deletes it, and each of
// the task's status updates reaches the receiver on 127.0.0.1 (allowed by
// the test's egress config) exactly once although both API processes see
// every commit — the store's delivery claim decides which one sends.
#include <set>

#include "core/mutex.h"
#include "pg_cluster.h"

namespace maestro::testing {
namespace {

Json Ask(const std::string& question) {
  return CompleteReply({{"status", "needs_user_input"}, {"question", question}});
}
Json For(const std::string& tag, Json reply, const char* match = "any_message_contains") {
  reply["match"] = {{match, tag}};
  return reply;
}

// Records every POST: {token header, status state, status timestamp}.
struct Receiver {
  httplib::Server server;
  int port = 0;
  std::thread thread;
  Mutex mu;
  std::vector<std::array<std::string, 3>> got GUARDED_BY(mu);

  Receiver() {
    server.Post("/push", [this](const httplib::Request& req, httplib::Response& res) {
      Json body = Json::parse(req.body, nullptr, false);
      std::array<std::string, 3> one{req.get_header_value("X-A2A-Notification-Token"), "", ""};
      if (body.is_object() && body["status"].is_object()) {
        one[1] = body["status"].value("state", "");
        one[2] = body["status"].value("timestamp", "");
      }
      MutexLock lock(&mu);
      got.push_back(one);
      res.status = 200;
    });
    port = server.bind_to_any_port("127.0.0.1");
    thread = std::thread([this] { server.listen_after_bind(); });
  }
  ~Receiver() {
    server.stop();
    thread.join();
  }
  std::vector<std::array<std::string, 3>> All() {
    MutexLock lock(&mu);
    return got;
  }
  size_t CountState(const std::string& state) {
    size_t n = 0;
    for (const auto& g : All()) n += g[1] == state;
    return n;
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port) + "/push"; }
};

class A2aPushDurableTest : public PgClusterTest {
 protected:
  // POST /a2a on `port`; the body as JSON.
  static Json Rpc(int port, const std::string& method, const Json& params,
                  const std::string& token = "tok") {
    httplib::Client c("127.0.0.1", port);
    c.set_bearer_token_auth(token);
    c.set_read_timeout(30, 0);
    const Json req = {{"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", params}};
    auto r = c.Post("/a2a", req.dump(), "application/json");
    return r ? Json::parse(r->body, nullptr, false) : Json();
  }
  // A second API process on the cluster's config, database and data dir.
  std::unique_ptr<Process> StartSecondApi(int port) {
    auto p = std::make_unique<Process>(
        std::vector<std::string>{MAESTRO_BIN, "--config", dir_.File("maestro.yaml"), "serve"},
        std::map<std::string, std::string>{{"MAESTRO_DATA_DIR", DataDir()},
                                           {"MAESTRO_LISTEN", "127.0.0.1:" + std::to_string(port)},
                                           {"MAESTRO_ADMIN_TOKEN", "tok"}},
        dir_.File("serve-b.out"), dir_.File("serve-b.err"));
    httplib::Client c("127.0.0.1", port);
    for (int i = 0; i < 1000; ++i) {
      if (auto r = c.Get("/api/health"); r && r->status == 200) return p;
      if (!p->running()) break;
      std::this_thread::sleep_for(10ms);
    }
    ADD_FAILURE() << "the second API process did not come up:\n" << p->Stderr();
    return p;
  }
  static bool WaitFor(const std::function<bool()>& done, std::chrono::seconds limit = 30s) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!done()) {
      if (std::chrono::steady_clock::now() > end) return false;
      std::this_thread::sleep_for(25ms);
    }
    return true;
  }
};

TEST_F(A2aPushDurableTest, ConfigsSurviveAnApiRestartAndTwoApiProcessesDeliverEachUpdateOnce) {
  extra_config_ += "egress:\n  allow: [127.0.0.1]\n";  // the receiver below is local
  // The answer's reply first: the resumed run's conversation still holds the
  // question's tag.
  StartCluster(
      Json::array({For("DURABLE-ANSWER", SucceedReply("DURABLE-DONE"), "last_message_contains"),
                   For("A2A-DURABLE", Ask("A2A-DURABLE-Q which colour?"))}),
      /*workers=*/1, /*threads=*/2);
  ASSERT_FALSE(HasFatalFailure());
  Receiver receiver;
  ASSERT_GT(receiver.port, 0);
  const int port_b = FreePort();
  auto serve_b = StartSecondApi(port_b);
  ASSERT_FALSE(HasFailure());

  // The config, set with the message that creates the task, through API a.
  Json sent = Rpc(port_, "message/send",
                  {{"message",
                    {{"role", "user"},
                     {"messageId", "m-durable"},
                     {"parts", {{{"kind", "text"}, {"text", "A2A-DURABLE paint it"}}}}}},
                   {"configuration",
                    {{"blocking", false},
                     {"pushNotificationConfig",
                      {{"id", "cfg-1"}, {"url", receiver.url()}, {"token", "durable-tok"}}}}}});
  ASSERT_TRUE(sent["result"].is_object()) << sent.dump();
  const std::string task_id = sent["result"]["id"];
  ASSERT_TRUE(WaitFor([&] { return receiver.CountState("input-required") >= 1; })) << LogTail();

  RestartServe();  // API a: SIGTERM and start again
  ASSERT_FALSE(HasFatalFailure());
  for (int port : {port_, port_b}) {
    Json got = Rpc(port, "tasks/pushNotificationConfig/get",
                   {{"id", task_id}, {"pushNotificationConfigId", "cfg-1"}});
    EXPECT_EQ(got["result"]["pushNotificationConfig"]["url"], receiver.url())
        << port << ": " << got.dump();
    EXPECT_EQ(got["result"]["pushNotificationConfig"]["token"], "durable-tok") << got.dump();
    Json listed = Rpc(port, "tasks/pushNotificationConfig/list", {{"id", task_id}});
    EXPECT_EQ(listed["result"].size(), 1u) << listed.dump();
  }

  // Another user: not found, and their delete removes nothing.
  auto [token_status, token] = Post("/api/local/tokens", {{"user", "bob"}});
  ASSERT_EQ(token_status, 201) << token.dump();
  const std::string bob = token["token"];
  for (int port : {port_, port_b}) {
    Json listed = Rpc(port, "tasks/pushNotificationConfig/list", {{"id", task_id}}, bob);
    EXPECT_FALSE(listed.contains("result") && !listed["result"].empty()) << listed.dump();
    Json got = Rpc(port, "tasks/pushNotificationConfig/get",
                   {{"id", task_id}, {"pushNotificationConfigId", "cfg-1"}}, bob);
    EXPECT_TRUE(got.contains("error")) << got.dump();
    EXPECT_EQ(got.dump().find("durable-tok"), std::string::npos) << got.dump();
    Json deleted = Rpc(port, "tasks/pushNotificationConfig/delete",
                       {{"id", task_id}, {"pushNotificationConfigId", "cfg-1"}}, bob);
    EXPECT_TRUE(deleted.contains("error")) << deleted.dump();
  }
  EXPECT_EQ(Rpc(port_b, "tasks/pushNotificationConfig/list", {{"id", task_id}})["result"].size(),
            1u)
      << "bob's deletes removed nothing";

  // The answer through API b: the job resumes on the worker and completes;
  // both API processes see every commit.
  Json answered = Rpc(port_b, "message/send",
                      {{"message",
                        {{"role", "user"},
                         {"messageId", "m-answer"},
                         {"taskId", task_id},
                         {"parts", {{{"kind", "text"}, {"text", "DURABLE-ANSWER blue"}}}}}},
                       {"configuration", {{"blocking", false}}}});
  ASSERT_TRUE(answered["result"].is_object()) << answered.dump();
  ASSERT_TRUE(WaitFor([&] { return receiver.CountState("completed") >= 1; })) << LogTail();
  std::this_thread::sleep_for(3s);  // beyond both processes' 2 s polls: a duplicate would show

  const auto all = receiver.All();
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& g : all) {
    EXPECT_EQ(g[0], "durable-tok");
    EXPECT_TRUE(seen.insert({g[1], g[2]}).second)
        << "status " << g[1] << " at " << g[2] << " delivered twice";
  }
  std::printf("two API processes, one restart: %zu notifications, %zu distinct\n", all.size(),
              seen.size());
  EXPECT_EQ(receiver.CountState("completed"), 1u);
  EXPECT_EQ(receiver.CountState("input-required"), 1u);
}

}  // namespace
}  // namespace maestro::testing
