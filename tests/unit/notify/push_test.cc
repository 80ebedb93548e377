// Web Push subscriptions and delivery: the routes of routes_push.cc on an
// in-process ApiServer (port 0) over a real SqliteStore — validation that
// names the field, internal endpoints refused in every spelling, the cap,
// another user's subscription a 404 — and the PushDispatcher against a
// push-service stand-in (httplib on 127.0.0.1): what is sent for which job
// status, VAPID headers, 410 removing the subscription, retries on 5xx, and
// an endpoint whose name rebinds to an internal address refused at send.
#include <gtest/gtest.h>
#include <httplib.h>
#include <netdb.h>
#include <openssl/rand.h>

#include <mutex>
#include <thread>

#include "api/api_server.h"
#include "api/push_notice.h"
#include "notify/push_dispatcher.h"
#include "notify/web_push.h"
#include "support/store_fixture.h"

namespace maestro {
namespace {

using namespace std::chrono_literals;

// A browser's subscription keys: a real P-256 point and 16 random bytes.
struct BrowserKeys {
  std::string p256dh, auth;  // base64url
};
BrowserKeys NewBrowserKeys() {
  auto k = push::VapidKey::Generate();
  std::string auth(16, '\0');
  RAND_bytes(reinterpret_cast<unsigned char*>(auth.data()), 16);
  return {k->PublicKeyB64(), push::Base64UrlEncode(auth)};
}

// getaddrinfo, except for the names in `fixed` (a DNS the test controls).
EgressPolicy::ResolveFn Resolver(std::map<std::string, std::string> fixed) {
  return [fixed](const std::string& host) -> Result<std::vector<IpAddress>> {
    if (auto it = fixed.find(host); it != fixed.end()) {
      auto a = IpAddress::Parse(it->second);
      if (!a.ok()) return a.status();
      return std::vector<IpAddress>{*a};
    }
    addrinfo* res = nullptr;
    if (getaddrinfo(host.c_str(), nullptr, nullptr, &res) != 0) {
      return Unavailable("cannot resolve " + host);
    }
    std::vector<IpAddress> out;
    for (addrinfo* p = res; p; p = p->ai_next) {
      char buf[INET6_ADDRSTRLEN] = {0};
      if (p->ai_family == AF_INET) {
        inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(p->ai_addr)->sin_addr, buf, sizeof buf);
      } else if (p->ai_family == AF_INET6) {
        inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(p->ai_addr)->sin6_addr, buf,
                  sizeof buf);
      } else {
        continue;
      }
      if (auto a = IpAddress::Parse(buf); a.ok()) out.push_back(*a);
    }
    freeaddrinfo(res);
    return out;
  };
}

class PushRoutesTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    key_ = push::VapidKey::Generate().value();
    EgressPolicy strict;  // no internal destination at all
    strict.set_resolver(Resolver({{"push.example.net", "93.184.216.34"}}));
    ApiOptions o;
    o.http.port = 0;
    o.admin_token = "adm";
    o.push_public_key = key_.PublicKeyB64();
    o.push_max_subscriptions = 3;
    o.egress = std::make_shared<const EgressPolicy>(strict);
    api_ = std::make_unique<ApiServer>(*store_, notifier_, o);
    auto port = api_->Start();
    ASSERT_TRUE(port.ok());
    port_ = *port;
    alice_ = NewToken("alice");
    bob_ = NewToken("bob");
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
  Json Subscription(const std::string& endpoint, const BrowserKeys& k) {
    return {{"endpoint", endpoint},
            {"expirationTime", nullptr},
            {"keys", {{"p256dh", k.p256dh}, {"auth", k.auth}}}};
  }
  // POSTs `body`; returns {status, parsed body}.
  std::pair<int, Json> Post(const std::string& token, const Json& body) {
    auto r = Client(token).Post("/api/local/push/subscriptions", body.dump(), "application/json");
    if (!r) return {0, Json()};
    return {r->status, Json::parse(r->body, nullptr, false)};
  }
  Json List(const std::string& token) {
    auto r = Client(token).Get("/api/local/push/subscriptions");
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : "no response");
    return r ? Json::parse(r->body)["subscriptions"] : Json();
  }

  push::VapidKey key_;
  notify::Notifier notifier_;  // the streams' signal and hub; outlives api_
  std::unique_ptr<ApiServer> api_;
  int port_ = 0;
  std::string alice_, bob_;
};

TEST_F(PushRoutesTest, TheKeyIsTheServersAndASubscriptionIsItsOwnersOnly) {
  auto r = Client(alice_).Get("/api/local/push/key");
  ASSERT_TRUE(r && r->status == 200);
  EXPECT_EQ(Json::parse(r->body)["public_key"], key_.PublicKeyB64());
  EXPECT_EQ(Client("").Get("/api/local/push/key")->status, 401);

  auto [status, sub] =
      Post(alice_, Subscription("https://push.example.net/wpush/a1", NewBrowserKeys()));
  ASSERT_EQ(status, 201) << sub.dump();
  const std::string id = sub["id"];
  ASSERT_EQ(List(alice_).size(), 1u);
  EXPECT_EQ(List(alice_)[0]["endpoint"], "https://push.example.net/wpush/a1");
  EXPECT_TRUE(List(bob_).empty()) << "bob sees alice's subscription";
  auto del = Client(bob_).Delete("/api/local/push/subscriptions/" + id);
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 404) << "bob deleted alice's subscription";
  EXPECT_EQ(List(alice_).size(), 1u);
  EXPECT_EQ(Client(alice_).Delete("/api/local/push/subscriptions/" + id)->status, 200);
  EXPECT_TRUE(List(alice_).empty());
  EXPECT_EQ(Client(alice_).Delete("/api/local/push/subscriptions/" + id)->status, 404);
}

TEST_F(PushRoutesTest, BadSubscriptionsAreA400NamingTheField) {
  const BrowserKeys k = NewBrowserKeys();
  auto expect_400 = [&](const Json& body, const std::string& field) {
    auto [status, reply] = Post(alice_, body);
    EXPECT_EQ(status, 400) << body.dump() << " -> " << reply.dump();
    EXPECT_EQ(reply["error"]["field"], field) << body.dump() << " -> " << reply.dump();
  };
  Json no_endpoint = Subscription("x", k);
  no_endpoint.erase("endpoint");
  expect_400(no_endpoint, "endpoint");
  expect_400(Subscription("ftp://push.example.net/x", k), "endpoint");
  expect_400(Subscription("http://push.example.net/x", k), "endpoint");  // not https
  expect_400(Subscription("https://push.example.net/" + std::string(2100, 'a'), k), "endpoint");
  // Internal destinations, in every spelling: refused before anything is stored.
  for (const char* url :
       {"https://127.0.0.1/p", "https://127.1/p", "https://0x7f.1/p", "https://2130706433/p",
        "https://0177.0.0.1/p", "https://localhost/p", "https://[::1]/p",
        "https://[::ffff:127.0.0.1]/p", "https://169.254.169.254/latest/meta-data",
        "https://10.0.0.1/p", "https://192.168.1.1/p", "https://[fe80::1]/p", "https://[fd00::1]/p",
        "https://0.0.0.0/p", "https://user:pw@push.example.net/p"}) {
    expect_400(Subscription(url, k), "endpoint");
  }
  Json no_keys = Subscription("https://push.example.net/x", k);
  no_keys.erase("keys");
  expect_400(no_keys, "keys");
  expect_400(Subscription("https://push.example.net/x", {k.p256dh.substr(0, 80), k.auth}),
             "keys.p256dh");
  expect_400(Subscription("https://push.example.net/x", {"!!notbase64", k.auth}), "keys.p256dh");
  std::string off = push::Base64UrlDecode(k.p256dh).value();
  off[64] ^= 1;
  expect_400(Subscription("https://push.example.net/x", {push::Base64UrlEncode(off), k.auth}),
             "keys.p256dh");
  expect_400(Subscription("https://push.example.net/x",
                          {k.p256dh, push::Base64UrlEncode(std::string(15, 'a'))}),
             "keys.auth");
  Json extra = Subscription("https://push.example.net/x", k);
  extra["owner"] = "bob";
  auto [status, reply] = Post(alice_, extra);
  EXPECT_EQ(status, 400) << reply.dump();
  EXPECT_TRUE(List(alice_).empty()) << "a refused subscription was stored";
}

TEST_F(PushRoutesTest, OneBrowserOnceAndAtMostTheCapPerUser) {
  const BrowserKeys k1 = NewBrowserKeys(), k2 = NewBrowserKeys();
  auto [s1, first] = Post(alice_, Subscription("https://push.example.net/1", k1));
  ASSERT_EQ(s1, 201);
  // Padded base64url (some libraries add it) is the same key.
  auto [s2, again] =
      Post(alice_, Subscription("https://push.example.net/1", {k2.p256dh, k2.auth + "=="}));
  ASSERT_EQ(s2, 201) << again.dump();
  EXPECT_EQ(again["id"], first["id"]) << "a browser subscribing again is one subscription";
  auto stored = store_->ListPushSubscriptions("alice");
  ASSERT_TRUE(stored.ok());
  ASSERT_EQ(stored->size(), 1u);
  EXPECT_EQ((*stored)[0].p256dh, k2.p256dh) << "its keys are replaced";
  EXPECT_EQ(Post(alice_, Subscription("https://push.example.net/2", k1)).first, 201);
  EXPECT_EQ(Post(alice_, Subscription("https://push.example.net/3", k1)).first, 201);
  auto [s4, over] = Post(alice_, Subscription("https://push.example.net/4", k1));
  EXPECT_EQ(s4, 409) << over.dump();
  EXPECT_EQ(List(alice_).size(), 3u);
  EXPECT_EQ(Post(bob_, Subscription("https://push.example.net/4", k1)).first, 201)
      << "the cap is per user";
}

TEST_F(PushRoutesTest, PushOffAnswers503) {
  ApiOptions o;
  o.http.port = 0;
  o.admin_token = "adm";
  notify::Notifier notifier;  // its own: Stop() ends its hub
  ApiServer off(*store_, notifier, o);
  auto port = off.Start();
  ASSERT_TRUE(port.ok());
  httplib::Client c("127.0.0.1", *port);
  c.set_bearer_token_auth("adm");
  EXPECT_EQ(c.Get("/api/local/push/key")->status, 503);
  EXPECT_EQ(c.Post("/api/local/push/subscriptions", "{}", "application/json")->status, 503);
  off.Stop();
}

// The push service stand-in: records each POST by path; /push/gone answers
// 410, /push/flaky 500 once then 201, everything else 201.
class StandIn {
 public:
  StandIn() {
    // One handler thread: two of cpp-httplib's (uninstrumented) pool
    // threads touching its shared state is a TSan race report not ours.
    server_.new_task_queue = [] { return new httplib::ThreadPool(1); };
    server_.Post(R"(/push/(\w+))", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu_);
      const std::string name = req.matches[1];
      Seen s{req.body, req.get_header_value("Authorization"),
             req.get_header_value("Content-Encoding"), req.get_header_value("TTL"),
             req.get_header_value("Urgency")};
      seen_[name].push_back(s);
      if (name == "gone") {
        res.status = 410;
      } else if (name == "flaky" && seen_[name].size() == 1) {
        res.status = 500;
      } else {
        res.status = 201;
      }
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~StandIn() {
    server_.stop();
    thread_.join();
  }
  struct Seen {
    std::string body, authorization, encoding, ttl, urgency;
  };
  std::string Url(const std::string& host, const std::string& name) const {
    return "http://" + host + ":" + std::to_string(port_) + "/push/" + name;
  }
  std::vector<Seen> Of(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_[name];
  }
  bool WaitFor(const std::string& name, size_t n) {
    for (int i = 0; i < 500 && Of(name).size() < n; ++i) std::this_thread::sleep_for(10ms);
    return Of(name).size() >= n;
  }
  int port() const { return port_; }

 private:
  std::mutex mu_;
  std::map<std::string, std::vector<Seen>> seen_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

class PushDispatcherTest : public testing::StoreTest {
 protected:
  PushOptions Options() {
    PushOptions o;
    o.key = std::make_shared<const push::VapidKey>(push::VapidKey::Generate().value());
    o.subject = "mailto:ops@example.com";
    o.initial_backoff_ms = 5;
    o.poll_ms = 20;
    o.timeout_ms = 2000;
    Store* store = store_.get();
    o.compose = [store](const Event& e) { return api::ComposePushNotice(*store, e); };
    // The stand-in is admitted by NAME; rebind.test resolves to the same
    // address yet is not named, as a rebinding DNS answer would be.
    auto allow = EgressPolicy::WithAllowList({"standin.test"});
    EXPECT_TRUE(allow.ok());
    allow->set_resolver(Resolver({{"standin.test", "127.0.0.1"}, {"rebind.test", "127.0.0.1"}}));
    o.egress = std::make_shared<const EgressPolicy>(*allow);
    return o;
  }
  PushSubscription Subscribe(const std::string& owner, const std::string& endpoint) {
    const BrowserKeys k = NewBrowserKeys();
    PushSubscription s;
    s.owner = owner;
    s.endpoint = endpoint;
    s.p256dh = k.p256dh;
    s.auth = k.auth;
    auto added = store_->AddPushSubscription(s, 10);
    EXPECT_TRUE(added.ok()) << added.status().ToString();
    return added.ok() ? *added : s;
  }
  Store::CreatedTask AliceTask(const std::string& title) {
    NewTask t;
    t.title = title;
    t.instruction = "do it";
    t.owner = "alice";
    auto c = store_->CreateTask(t);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return *c;
  }
};

TEST_F(PushDispatcherTest, NeedsYouFinishedAndFailedReachTheOwnersBrowsersOnly) {
  StandIn standin;
  Subscribe("alice", standin.Url("standin.test", "alice"));
  Subscribe("bob", standin.Url("standin.test", "bob"));
  PushOptions o = Options();
  const std::string public_key = o.key->PublicKeyB64();
  PushDispatcher d(*store_, o);
  d.Start();

  auto c = AliceTask("Plan the trip");
  Job j = Claim();
  ASSERT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::WaitingHuman("ask", "")).ok());
  d.Notify();
  ASSERT_TRUE(standin.WaitFor("alice", 1));
  // The answer ends the job "succeeded": no news, no push.
  ASSERT_TRUE(store_->PostComment(c.task.id, "alice", "Tuesday", {}).ok());
  Job follow = Claim();
  ASSERT_TRUE(store_->FinishJob(LeaseOf(follow), JobOutcome::Succeeded("done")).ok());
  auto failing = AliceTask("Break it");
  Job fj = Claim();
  ASSERT_TRUE(store_->FinishJob(LeaseOf(fj), JobOutcome::Failed("boom")).ok());
  d.Notify();
  ASSERT_TRUE(standin.WaitFor("alice", 3));
  std::this_thread::sleep_for(100ms);
  d.Stop();

  auto seen = standin.Of("alice");
  ASSERT_EQ(seen.size(), 3u) << "needs you, finished, failed; not the answered question";
  EXPECT_EQ(seen[0].urgency, "high");
  EXPECT_EQ(seen[1].urgency, "normal");
  for (const auto& s : seen) {
    EXPECT_EQ(s.encoding, "aes128gcm");
    EXPECT_EQ(s.ttl, "86400");
    EXPECT_EQ(s.authorization.rfind("vapid t=", 0), 0u) << s.authorization;
    EXPECT_NE(s.authorization.find(", k=" + public_key), std::string::npos);
    // aud is the stand-in's origin as named (the claims are the JWT's 2nd part).
    const std::string jwt = s.authorization.substr(8, s.authorization.find(", k=") - 8);
    auto claims = ParseJson(
        push::Base64UrlDecode(jwt.substr(jwt.find('.') + 1, jwt.rfind('.') - jwt.find('.') - 1))
            .value_or(""));
    ASSERT_TRUE(claims.ok());
    EXPECT_EQ((*claims)["aud"], "http://standin.test:" + std::to_string(standin.port()));
    EXPECT_GT(s.body.size(), 86u + 16u);
    EXPECT_EQ(s.body.find("Plan the trip"), std::string::npos) << "the payload went out in clear";
  }
  EXPECT_TRUE(standin.Of("bob").empty()) << "bob's browser was told about alice's task";
}

TEST_F(PushDispatcherTest, GoneRemovesTheSubscriptionAndA500IsRetried) {
  StandIn standin;
  auto gone = Subscribe("alice", standin.Url("standin.test", "gone"));
  Subscribe("alice", standin.Url("standin.test", "flaky"));
  PushDispatcher d(*store_, Options());
  d.Start();
  AliceTask("t");
  Job j = Claim();
  ASSERT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::Failed("boom")).ok());
  d.Notify();
  ASSERT_TRUE(standin.WaitFor("gone", 1));
  ASSERT_TRUE(standin.WaitFor("flaky", 2)) << "a 500 is retried";
  for (int i = 0; i < 200; ++i) {
    auto subs = store_->ListPushSubscriptions("alice");
    if (subs.ok() && subs->size() == 1) break;
    std::this_thread::sleep_for(10ms);
  }
  d.Stop();
  auto subs = store_->ListPushSubscriptions("alice");
  ASSERT_TRUE(subs.ok());
  ASSERT_EQ(subs->size(), 1u) << "410 did not remove the subscription";
  EXPECT_NE((*subs)[0].id, gone.id);
  EXPECT_EQ(standin.Of("gone").size(), 1u) << "a 410 is not retried";
}

TEST_F(PushDispatcherTest, AnEndpointThatResolvesInternallyIsRefusedAtSend) {
  StandIn standin;
  // Stored directly, as if it passed the POST's check before its name
  // started resolving to an internal address.
  Subscribe("alice", standin.Url("rebind.test", "rebind"));
  Subscribe("alice", standin.Url("127.0.0.1", "literal"));
  Subscribe("alice", standin.Url("standin.test", "ok"));
  PushDispatcher d(*store_, Options());
  d.Start();
  AliceTask("t");
  Job j = Claim();
  ASSERT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::Failed("boom")).ok());
  d.Notify();
  ASSERT_TRUE(standin.WaitFor("ok", 1));
  std::this_thread::sleep_for(200ms);
  d.Stop();
  EXPECT_TRUE(standin.Of("rebind").empty()) << "a rebound name reached the internal address";
  EXPECT_TRUE(standin.Of("literal").empty()) << "an internal literal was reached";
}

TEST_F(PushDispatcherTest, ARestartSendsWhatCameWhileDownAndRepeatsNothing) {
  StandIn standin;
  Subscribe("alice", standin.Url("standin.test", "alice"));
  const PushOptions o = Options();
  {
    PushDispatcher d(*store_, o);
    d.Start();
    auto first = AliceTask("first");
    Job j = Claim();
    ASSERT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::Failed("boom")).ok());
    d.Notify();
    ASSERT_TRUE(standin.WaitFor("alice", 1));
    // Events that are nobody's notice move the saved cursor only at Stop.
    for (int i = 0; i < 5; ++i) {
      Event noise;
      noise.task_id = first.task.id;
      noise.type = "test.noise";
      ASSERT_TRUE(store_->AppendEvent(noise).ok());
    }
    std::this_thread::sleep_for(100ms);
    d.Stop();
  }
  AliceTask("while down");
  Job j2 = Claim();
  ASSERT_TRUE(store_->FinishJob(LeaseOf(j2), JobOutcome::Failed("boom")).ok());
  auto cursor = store_->GetCursor("push");
  ASSERT_TRUE(cursor.ok());
  EXPECT_FALSE(cursor->empty());
  PushDispatcher again(*store_, o);
  again.Start();
  ASSERT_TRUE(standin.WaitFor("alice", 2)) << "the notice of the down time was not sent";
  std::this_thread::sleep_for(200ms);
  again.Stop();
  EXPECT_EQ(standin.Of("alice").size(), 2u) << "a notice sent before the restart was repeated";
}

TEST_F(PushDispatcherTest, ABrowserSubscribedAfterTheEventIsNotToldOfIt) {
  StandIn standin;
  AliceTask("t");
  Job j = Claim();
  ASSERT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::Failed("boom")).ok());
  clock_.Advance(5);  // the store's clock
  Subscribe("alice", standin.Url("standin.test", "late"));
  PushDispatcher d(*store_, Options());
  d.Start();
  AliceTask("t2");
  Job j2 = Claim();
  ASSERT_TRUE(store_->FinishJob(LeaseOf(j2), JobOutcome::Failed("boom")).ok());
  d.Notify();
  ASSERT_TRUE(standin.WaitFor("late", 1));
  std::this_thread::sleep_for(100ms);
  d.Stop();
  EXPECT_EQ(standin.Of("late").size(), 1u);
}

}  // namespace
}  // namespace maestro
