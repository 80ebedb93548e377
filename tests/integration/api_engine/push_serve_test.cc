// Web Push end to end (issue 45 item 6) through the real `maestro serve` +
// `maestro-fakellm`: a browser's subscription (keys made by node, as a
// PushManager would) registered over the API, tasks that park on ASK,
// finish and fail, and a push-service stand-in on 127.0.0.2 (admitted by
// `egress: allow:`) that receives maestro's POSTs. An independent
// implementation — npm http_ece, pinned in tests/push (installed by
// scripts/npm_pinned.sh tests/push) — decrypts each body with the
// subscription's private key, and node's crypto verifies the VAPID JWT's
// ES256 signature with the key GET /api/local/push/key advertised. A 410
// removes the subscription; internal endpoints are refused at POST and,
// for one planted in the database, at send (a canary on 127.0.0.1 hears
// nothing).
#include <filesystem>
#include <fstream>

#include "core/mutex.h"
#include "serve_fixture.h"

namespace maestro::testing {
namespace {

Json For(const std::string& tag, Json reply) {
  reply["match"] = {{"any_message_contains", tag}};
  return reply;
}

// The push service stand-in: POST /push/<name> records the request;
// /push/gone answers 410 (an expired subscription), the rest 201.
struct PushService {
  struct Got {
    std::string body, authorization, encoding, ttl, urgency;
  };
  httplib::Server server;
  int port = 0;
  std::thread thread;
  Mutex mu;
  std::map<std::string, std::vector<Got>> got GUARDED_BY(mu);

  explicit PushService(const std::string& host) {
    server.Post(R"(/push/(\w+))", [this](const httplib::Request& req, httplib::Response& res) {
      MutexLock lock(&mu);
      const std::string name = req.matches[1];
      got[name].push_back({req.body, req.get_header_value("Authorization"),
                           req.get_header_value("Content-Encoding"), req.get_header_value("TTL"),
                           req.get_header_value("Urgency")});
      res.status = name == "gone" ? 410 : 201;
    });
    port = server.bind_to_any_port(host);
    thread = std::thread([this] { server.listen_after_bind(); });
  }
  ~PushService() {
    server.stop();
    thread.join();
  }
  std::vector<Got> Of(const std::string& name) {
    MutexLock lock(&mu);
    return got[name];
  }
  bool WaitFor(const std::string& name, size_t n, std::chrono::seconds limit = 20s) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (Of(name).size() < n && std::chrono::steady_clock::now() < end) {
      std::this_thread::sleep_for(20ms);
    }
    return Of(name).size() >= n;
  }
};

std::string Base64(std::string_view bytes) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    out += {k[v >> 18], k[(v >> 12) & 63], k[(v >> 6) & 63], k[v & 63]};
  }
  if (bytes.size() - i == 1) {
    uint32_t v = uint8_t(bytes[i]) << 16;
    out += {k[v >> 18], k[(v >> 12) & 63], '=', '='};
  } else if (bytes.size() - i == 2) {
    uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8);
    out += {k[v >> 18], k[(v >> 12) & 63], k[(v >> 6) & 63], '='};
  }
  return out;
}

class PushServeTest : public ServeEngineTest {
 protected:
  // Runs tests/push/push_check.mjs; its stdout as JSON.
  Json Node(const std::vector<std::string>& args) {
    const std::string dir = MAESTRO_PUSH_TEST_DIR;
    std::vector<std::string> argv = {"/usr/bin/env", "node", dir + "/push_check.mjs"};
    argv.insert(argv.end(), args.begin(), args.end());
    const std::string tag = std::to_string(++node_runs_);
    Process node(argv, {}, dir_.File("node" + tag + ".out"), dir_.File("node" + tag + ".err"));
    auto code = node.Wait(30s);
    EXPECT_TRUE(code.has_value() && *code == 0) << node.Stdout() << node.Stderr();
    return Json::parse(node.Stdout(), nullptr, false);
  }
  Json Subscription(const std::string& endpoint, const Json& keys) {
    return {{"endpoint", endpoint},
            {"expirationTime", nullptr},
            {"keys", {{"p256dh", keys["p256dh"]}, {"auth", keys["auth"]}}}};
  }
  // Decrypts a received message as the browser holding `keys` would.
  Json Open(const PushService::Got& got, const Json& keys, const std::string& server_key,
            const std::string& endpoint) {
    const std::string file = dir_.File("msg" + std::to_string(++node_runs_) + ".json");
    std::ofstream(file) << Json{
        {"private", keys["private"]},
        {"auth", keys["auth"]},
        {"p256dh", keys["p256dh"]},
        {"body", Base64(got.body)},
        {"authorization", got.authorization},
        {"endpoint", endpoint},
        {"server_key",
         server_key}}.dump();
    return Node({"open", file});
  }
  int node_runs_ = 0;
};

TEST_F(PushServeTest, MessagesDecryptWithAnIndependentLibraryAndGoneSubscriptionsGo) {
  ASSERT_TRUE(std::filesystem::exists(std::string(MAESTRO_PUSH_TEST_DIR) +
                                      "/node_modules/http_ece/package.json"))
      << "http_ece is not installed: run scripts/npm_pinned.sh tests/push";
  extra_config_ =
      "egress:\n  allow: [127.0.0.2]\n"
      "push:\n  subject: mailto:ops@example.com\n  max_subscriptions_per_user: 4\n";
  max_attempts_ = 1;  // a failed LLM call fails the job at once
  Start(Json::array({For("PUSH-ASK", CompleteReply({{"status", "needs_user_input"},
                                                    {"question", "Which colour?"}})),
                     For("PUSH-DONE", SucceedReply("all done")),
                     For("PUSH-FAIL", Json{{"status", 400}, {"repeat", 5}})}));
  PushService service("127.0.0.2");
  PushService canary("127.0.0.1");
  ASSERT_GT(service.port, 0);
  ASSERT_GT(canary.port, 0);
  const std::string base = "http://127.0.0.2:" + std::to_string(service.port) + "/push/";
  const std::string canary_url = "http://127.0.0.1:" + std::to_string(canary.port) + "/push/";

  auto [key_status, key] = GetWithStatus("/api/local/push/key");
  ASSERT_EQ(key_status, 200) << key.dump();
  const std::string server_key = key["public_key"];
  const Json browser = Node({"keys"});
  const Json gone_browser = Node({"keys"});
  ASSERT_TRUE(browser.contains("private")) << browser.dump();

  // Internal endpoints are refused at POST, each a 400 naming `endpoint`.
  const std::string cp = std::to_string(canary.port);
  for (const std::string& url :
       {canary_url + "x", "http://localhost:" + cp + "/push/x", "http://0x7f.1:" + cp + "/push/x",
        "http://2130706433:" + cp + "/push/x", "http://[::1]:" + cp + "/push/x",
        std::string("https://169.254.169.254/latest/meta-data/"),
        std::string("https://10.1.2.3/push/x"), "http://[::ffff:127.0.0.1]:" + cp + "/push/x"}) {
    auto [status, reply] = Post("/api/local/push/subscriptions", Subscription(url, browser));
    EXPECT_EQ(status, 400) << url << ": " << reply.dump();
    EXPECT_EQ(reply["error"]["field"], "endpoint") << reply.dump();
  }
  auto [s1, sub] = Post("/api/local/push/subscriptions", Subscription(base + "me", browser));
  ASSERT_EQ(s1, 201) << sub.dump();
  auto [s2, gone] =
      Post("/api/local/push/subscriptions", Subscription(base + "gone", gone_browser));
  ASSERT_EQ(s2, 201) << gone.dump();
  // A subscription planted in the database behind the API's back (as if
  // its name had resolved elsewhere when it was accepted): refused at send.
  {
    auto store = SqliteStore::Open(DataDir() + "/maestro.db", StoreOptions{});
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    PushSubscription planted;
    planted.owner = "admin";
    planted.endpoint = canary_url + "planted";
    planted.p256dh = browser["p256dh"];
    planted.auth = browser["auth"];
    ASSERT_TRUE((*store)->AddPushSubscription(planted, 10).ok());
  }
  // Another user: their list is empty and they cannot delete the admin's.
  auto [ts, token] = Post("/api/local/tokens", {{"user", "bob"}});
  ASSERT_EQ(ts, 201);
  auto [bl, bob_list] = GetWithStatus("/api/local/push/subscriptions", token["token"]);
  EXPECT_EQ(bl, 200);
  EXPECT_TRUE(bob_list["subscriptions"].empty()) << bob_list.dump();
  {
    httplib::Client c("127.0.0.1", port_);
    c.set_bearer_token_auth(token["token"].get<std::string>());
    auto del = c.Delete("/api/local/push/subscriptions/" + sub["id"].get<std::string>());
    ASSERT_TRUE(del);
    EXPECT_EQ(del->status, 404) << del->body;
  }

  const Json ask = Create("PUSH-ASK paint the fence");
  WaitStatus(ask, "waiting_human");
  ASSERT_TRUE(service.WaitFor("me", 1)) << LogTail();
  const Json done = Create("PUSH-DONE tidy up");
  WaitStatus(done, "succeeded");
  ASSERT_TRUE(service.WaitFor("me", 2)) << LogTail();
  const Json fail = Create("PUSH-FAIL break it");
  WaitStatus(fail, "failed");
  ASSERT_TRUE(service.WaitFor("me", 3)) << LogTail();

  std::map<std::string, Json> by_outcome;
  for (const auto& got : service.Of("me")) {
    EXPECT_EQ(got.encoding, "aes128gcm");
    EXPECT_EQ(got.ttl, "86400");
    Json opened = Open(got, browser, server_key, base + "me");
    ASSERT_TRUE(opened.contains("payload")) << opened.dump();
    EXPECT_TRUE(opened["signature_ok"].get<bool>()) << "the VAPID JWT does not verify";
    EXPECT_TRUE(opened["k_matches"].get<bool>());
    EXPECT_EQ(opened["jwt"]["header"]["alg"], "ES256");
    EXPECT_EQ(opened["jwt"]["claims"]["aud"], "http://127.0.0.2:" + std::to_string(service.port));
    EXPECT_EQ(opened["jwt"]["claims"]["sub"], "mailto:ops@example.com");
    const int64_t exp = opened["jwt"]["claims"]["exp"];
    const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    EXPECT_GT(exp, now);
    EXPECT_LE(exp, now + 24 * 3600);
    const Json& p = opened["payload"];
    by_outcome[p["outcome"]] = p;
    EXPECT_EQ(got.urgency, p["outcome"] == "needs_you" ? "high" : "normal");
  }
  ASSERT_EQ(by_outcome.size(), 3u);
  EXPECT_EQ(by_outcome["needs_you"]["task_id"], ask["task"]["id"]);
  EXPECT_EQ(by_outcome["needs_you"]["task_name"], "PUSH-ASK paint the fence");
  EXPECT_EQ(by_outcome["needs_you"]["summary"], "needs you");
  EXPECT_EQ(by_outcome["needs_you"]["url"], "/tasks/" + ask["task"]["id"].get<std::string>());
  EXPECT_EQ(by_outcome["finished"]["task_id"], done["task"]["id"]);
  EXPECT_EQ(by_outcome["failed"]["task_id"], fail["task"]["id"]);
  for (const auto& [outcome, p] : by_outcome) {
    EXPECT_EQ(p.size(), 6u) << "the payload holds only the notice: " << p.dump();
  }

  // The 410 removed that subscription (after its first message); the
  // planted internal endpoint was never reached.
  EXPECT_EQ(service.Of("gone").size(), 1u);
  Json list = Get("/api/local/push/subscriptions")["subscriptions"];
  std::vector<std::string> endpoints;
  for (const auto& s : list) endpoints.push_back(s["endpoint"]);
  EXPECT_EQ(std::count(endpoints.begin(), endpoints.end(), base + "gone"), 0) << list.dump();
  EXPECT_EQ(std::count(endpoints.begin(), endpoints.end(), base + "me"), 1) << list.dump();
  EXPECT_TRUE(canary.Of("planted").empty()) << "an internal endpoint was reached at send";
  EXPECT_TRUE(canary.Of("x").empty());
  // The VAPID key lives in the data dir, private.
  auto perms = std::filesystem::status(DataDir() + "/vapid_key.pem").permissions();
  EXPECT_EQ(perms & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

}  // namespace
}  // namespace maestro::testing
