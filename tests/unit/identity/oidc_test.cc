// OidcClient against a real OpenID Connect provider: npm oidc-provider
// (tests/oidc/provider.mjs, pinned; installed by scripts/npm_pinned.sh
// tests/oidc) started on a free 127.0.0.1 port. Real code flows go through
// tests/oidc/login.mjs (the provider's own login page, posted without a
// browser); forged, expired and mis-addressed tokens come from the provider's
// test-only /test/sign (its real key, or a stranger key it never publishes).
#include "identity/oidc.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include "core/base64.h"
#include "support/oidc_provider.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace maestro::identity {
namespace {

using maestro::testing::FreePort;
using maestro::testing::NodeBinary;
using maestro::testing::OidcProvider;
using maestro::testing::ReadWholeFile;
using maestro::testing::TempDir;
using maestro::testing::WriteFile;
using namespace std::chrono_literals;

const std::string kDir = MAESTRO_OIDC_TEST_DIR;
const std::string kRedirect = "http://127.0.0.1:9/auth/callback";
const std::string kSecret = "s3cret with spaces & symbols:/";

// The value of query parameter `name` in `url` (no percent-decoding: the
// values here are base64url).
std::string Param(const std::string& url, const std::string& name) {
  for (const char* sep : {"?", "&"}) {
    const size_t at = url.find(std::string(sep) + name + "=");
    if (at == std::string::npos) continue;
    const size_t start = at + 1 + name.size() + 1;
    return url.substr(start, url.find('&', start) - start);
  }
  return "";
}

std::string B64UrlJson(const Json& j) { return Base64UrlEncode(j.dump()); }

class OidcTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (NodeBinary().empty()) return;
    dir_ = new TempDir();
    provider_ = new OidcProvider(kDir, *dir_, FreePort(), kRedirect, kSecret);
    ASSERT_TRUE(provider_->MakeKey("k1", false));
    ASSERT_EQ(provider_->Start(), "");
  }
  static void TearDownTestSuite() {
    if (provider_) provider_->Stop();
    delete provider_;
    delete dir_;
    provider_ = nullptr;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (NodeBinary().empty())
      GTEST_SKIP() << "node is not installed (scripts/setup.sh): no OIDC test";
    ASSERT_TRUE(std::filesystem::exists(kDir + "/node_modules/oidc-provider/package.json"))
        << "oidc-provider is not installed: run scripts/npm_pinned.sh tests/oidc";
    ASSERT_NE(provider_, nullptr);
    now_s_ = std::chrono::duration_cast<std::chrono::seconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
    clock_.Set(now_s_ * 1000);
  }

  OidcSettings Settings() const {
    OidcSettings s;
    s.issuer = provider_->issuer();
    s.client_id = "maestro";
    s.client_secret = kSecret;
    s.redirect_uri = kRedirect;
    s.scopes = {"openid", "profile", "email", "groups"};
    s.http_timeout_ms = 5000;
    return s;
  }

  // Claims a good ID token for this client would carry.
  Json GoodClaims() const {
    return {{"iss", provider_->issuer()},
            {"aud", "maestro"},
            {"sub", "alice"},
            {"exp", now_s_ + 300},
            {"iat", now_s_},
            {"nonce", "n-1"},
            {"preferred_username", "alice"},
            {"email", "alice@example.test"},
            {"groups", {"eng-platform"}}};
  }

  // A refusal whose message contains `words`.
  void ExpectRefused(OidcClient& client, const std::string& token, const std::string& words,
                     const std::string& nonce = "n-1") {
    auto r = client.VerifyIdToken(token, nonce);
    ASSERT_FALSE(r.ok()) << "accepted: " << words;
    EXPECT_EQ(r.status().code(), StatusCode::kUnauthenticated) << r.status().message();
    EXPECT_NE(r.status().message().find(words), std::string::npos) << r.status().message();
    if (token.size() > 20) {
      EXPECT_EQ(r.status().message().find(token), std::string::npos) << "the token in a message";
    }
  }

  static TempDir* dir_;
  static OidcProvider* provider_;
  FakeClock clock_;
  int64_t now_s_ = 0;
};
TempDir* OidcTest::dir_ = nullptr;
OidcProvider* OidcTest::provider_ = nullptr;

TEST_F(OidcTest, DiscoveryReadsTheProvidersEndpointsAndRefusesAnotherIssuer) {
  OidcClient client(Settings(), &clock_);
  ASSERT_TRUE(client.Discover().ok());
  EXPECT_EQ(client.EndSessionEndpoint(), provider_->issuer() + "/session/end");

  // The issuer must be the provider's exactly: a trailing slash is another one.
  OidcSettings slash = Settings();
  slash.issuer += "/";
  Status st = OidcClient(slash, &clock_).Discover();
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find("names issuer"), std::string::npos) << st.message();

  // Nobody listening: kUnavailable naming the URL, and Start fails with it.
  OidcSettings gone = Settings();
  gone.issuer = "http://127.0.0.1:" + std::to_string(FreePort());
  OidcClient nobody(gone, &clock_);
  st = nobody.Discover();
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find(gone.issuer + "/.well-known/openid-configuration"), std::string::npos)
      << st.message();
  EXPECT_FALSE(nobody.Start().ok());
  EXPECT_EQ(nobody.EndSessionEndpoint(), "");
}

TEST_F(OidcTest, ARealCodeFlowSignsInWithUsernameAndGroups) {
  OidcClient client(Settings(), &clock_);
  auto start = client.Start();
  ASSERT_TRUE(start.ok()) << start.status().message();
  // 256-bit random values, base64url: 43 characters, all different.
  EXPECT_EQ(start->state.size(), 43u);
  EXPECT_EQ(start->nonce.size(), 43u);
  EXPECT_EQ(start->code_verifier.size(), 43u);
  EXPECT_NE(start->state, start->nonce);
  EXPECT_EQ(start->url.rfind(provider_->issuer() + "/auth?", 0), 0u) << start->url;
  EXPECT_NE(start->url.find("code_challenge_method=S256"), std::string::npos);
  EXPECT_EQ(start->url.find(start->code_verifier), std::string::npos) << "the verifier leaked";

  for (const auto& [user, group] : std::vector<std::pair<std::string, std::string>>{
           {"alice", "eng-platform"}, {"bob", "platform-approvers"}}) {
    auto s = client.Start();
    ASSERT_TRUE(s.ok());
    auto login = provider_->SignIn(s->url, user, user);
    ASSERT_EQ(login.code, 0) << login.err;
    ASSERT_EQ(login.callback.rfind(kRedirect + "?", 0), 0u) << login.callback;
    EXPECT_EQ(Param(login.callback, "state"), s->state);
    const std::string code = Param(login.callback, "code");
    ASSERT_FALSE(code.empty()) << login.callback;
    auto id = client.Finish(code, s->code_verifier, s->nonce);
    ASSERT_TRUE(id.ok()) << id.status().message();
    EXPECT_EQ(id->username, user);
    EXPECT_EQ(id->subject, user);
    EXPECT_EQ(id->issuer, provider_->issuer());
    EXPECT_EQ(id->email, user + "@example.test");
    EXPECT_EQ(id->groups, std::vector<std::string>{group});
    EXPECT_EQ(id->claims.value("nonce", ""), s->nonce);

    // The code is spent: a replay is refused by the provider.
    auto again = client.Finish(code, s->code_verifier, s->nonce);
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.status().code(), StatusCode::kUnauthenticated);
    EXPECT_NE(again.status().message().find("invalid_grant"), std::string::npos)
        << again.status().message();
  }

  // A wrong password stays at the provider's login page.
  auto s = client.Start();
  ASSERT_TRUE(s.ok());
  auto refused = provider_->SignIn(s->url, "alice", "bob");
  EXPECT_NE(refused.code, 0);
  EXPECT_NE(refused.err.find("login refused"), std::string::npos) << refused.err;
}

TEST_F(OidcTest, PkceNonceAndClientSecretAreChecked) {
  OidcClient client(Settings(), &clock_);
  auto code_for = [&](const OidcStart& s) {
    auto login = provider_->SignIn(s.url, "carol", "carol");
    EXPECT_EQ(login.code, 0) << login.err;
    return Param(login.callback, "code");
  };
  // Another login's verifier: the provider's PKCE check says no (HTTP 400).
  auto a = client.Start();
  auto b = client.Start();
  ASSERT_TRUE(a.ok() && b.ok());
  const std::string code_a = code_for(*a);
  auto wrong = client.Finish(code_a, b->code_verifier, a->nonce);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(wrong.status().message().find("invalid_grant"), std::string::npos)
      << wrong.status().message();
  EXPECT_FALSE(client.Finish(code_a, "", a->nonce).ok());
  // It was the verifier: the same code with its own verifier goes through.
  auto right = client.Finish(code_a, a->code_verifier, a->nonce);
  ASSERT_TRUE(right.ok()) << right.status().message();
  EXPECT_EQ(right->username, "carol");
  EXPECT_EQ(right->groups, std::vector<std::string>{"platform-viewers"});

  // The right verifier but another login's nonce: the ID token is refused.
  auto c = client.Start();
  ASSERT_TRUE(c.ok());
  auto replay = client.Finish(code_for(*c), c->code_verifier, b->nonce);
  ASSERT_FALSE(replay.ok());
  EXPECT_EQ(replay.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(replay.status().message().find("nonce"), std::string::npos);

  // A wrong client secret: the token endpoint's 401 (invalid_client).
  OidcSettings bad = Settings();
  bad.client_secret = "not-the-secret";
  OidcClient impostor(bad, &clock_);
  auto d = impostor.Start();
  ASSERT_TRUE(d.ok());
  auto refused = impostor.Finish(code_for(*d), d->code_verifier, d->nonce);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(refused.status().message().find("HTTP 401"), std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("invalid_client"), std::string::npos);
  EXPECT_EQ(refused.status().message().find(bad.client_secret), std::string::npos);
}

TEST_F(OidcTest, VerifyIdTokenRefusesEveryForgery) {
  OidcClient client(Settings(), &clock_);
  const Json good = GoodClaims();
  auto ok = client.VerifyIdToken(provider_->Sign(good), "n-1");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->username, "alice");

  auto with = [&](const char* name, Json value) {
    Json c = good;
    c[name] = std::move(value);
    return provider_->Sign(c);
  };
  auto without = [&](const char* name) {
    Json c = good;
    c.erase(name);
    return provider_->Sign(c);
  };
  // Time, with 60 s of skew either way.
  ExpectRefused(client, with("exp", now_s_ - 61), "has expired");
  EXPECT_TRUE(client.VerifyIdToken(with("exp", now_s_ - 30), "n-1").ok());
  ExpectRefused(client, without("exp"), "no expiry");
  ExpectRefused(client, with("exp", "tomorrow"), "no expiry");
  ExpectRefused(client, with("iat", now_s_ + 120), "issued in the future");
  EXPECT_TRUE(client.VerifyIdToken(with("iat", now_s_ + 30), "n-1").ok());
  ExpectRefused(client, without("iat"), "no issue time");
  ExpectRefused(client, with("nbf", now_s_ + 120), "not valid yet");
  // Issuer and audience.
  ExpectRefused(client, with("iss", "http://evil.example"), "issuer");
  ExpectRefused(client, with("iss", provider_->issuer() + "/"), "issuer");
  ExpectRefused(client, without("iss"), "issuer");
  ExpectRefused(client, with("aud", "someone-else"), "audience is not maestro");
  ExpectRefused(client, with("aud", Json::array({"someone-else"})), "audience is not maestro");
  ExpectRefused(client, with("aud", Json::array({"someone-else", "maestro"})), "azp");
  ExpectRefused(client, without("aud"), "audience");
  {
    Json c = good;
    c["aud"] = {"someone-else", "maestro"};
    c["azp"] = "maestro";
    EXPECT_TRUE(client.VerifyIdToken(provider_->Sign(c), "n-1").ok());
    c["azp"] = "someone-else";
    ExpectRefused(client, provider_->Sign(c), "authorized party");
  }
  EXPECT_TRUE(client.VerifyIdToken(with("aud", Json::array({"maestro"})), "n-1").ok());
  // Nonce: this login's only.
  ExpectRefused(client, with("nonce", "n-2"), "nonce");
  ExpectRefused(client, without("nonce"), "nonce");
  ExpectRefused(client, provider_->Sign(good), "nonce", "");
  ExpectRefused(client, without("sub"), "subject");

  // Signatures: a stranger's key under the provider's kid, or its own kid.
  const std::string kid = "k1";
  ExpectRefused(client, provider_->Sign(good, {{"key", "stranger"}, {"kid", kid}}),
                "bad signature");
  ExpectRefused(client, provider_->Sign(good, {{"key", "stranger"}}), "bad signature");
  // A genuine token with its payload swapped.
  const std::string genuine = provider_->Sign(good);
  const size_t d1 = genuine.find('.'), d2 = genuine.rfind('.');
  Json admin = good;
  admin["sub"] = "root";
  admin["preferred_username"] = "root";
  ExpectRefused(client, genuine.substr(0, d1 + 1) + B64UrlJson(admin) + genuine.substr(d2),
                "bad signature");
  ExpectRefused(client, genuine.substr(0, d2 + 1) + "AAAA", "bad signature");
  ExpectRefused(client, genuine.substr(0, d2 + 1), "no signature");
  // Algorithms off the list: none, and HMAC keyed with the public key's PEM.
  ExpectRefused(client, provider_->Sign(good, {{"alg", "none"}}), "\"none\" is not allowed");
  ExpectRefused(client, provider_->Sign(good, {{"alg", "HS256"}}), "\"HS256\" is not allowed");
  // An EC algorithm naming the RSA key: never handed to cjose with that key.
  ExpectRefused(client,
                B64UrlJson({{"alg", "ES256"}, {"kid", kid}}) + "." + B64UrlJson(good) + "." +
                    Base64UrlEncode(std::string(64, 'x')),
                "bad signature");
  // The provider's JWK says alg RS256: a PS256 signature by the same key is
  // not accepted under it.
  ExpectRefused(client, provider_->Sign(good, {{"alg", "PS256"}}), "bad signature");
  // Not a JWS at all.
  ExpectRefused(client, "", "not a compact JWS");
  ExpectRefused(client, "a.b", "not a compact JWS");
  ExpectRefused(client, genuine + ".x", "not a compact JWS");
  ExpectRefused(client, "e30." + B64UrlJson(good) + ".sig", "header");
  ExpectRefused(client, "!!!." + B64UrlJson(good) + ".sig", "header");
  ExpectRefused(client,
                B64UrlJson({{"alg", "RS256"}, {"crit", {"exp"}}, {"exp", 1}}) + "." +
                    B64UrlJson(good) + ".sig",
                "critical");
  ExpectRefused(client, std::string(70'000, 'a'), "too large");
}

TEST_F(OidcTest, GroupsAreStringsCappedInNumberAndLength) {
  OidcClient client(Settings(), &clock_);
  auto groups_of = [&](Json groups) {
    Json c = GoodClaims();
    c["groups"] = std::move(groups);
    auto id = client.VerifyIdToken(provider_->Sign(c), "n-1");
    EXPECT_TRUE(id.ok()) << id.status().message();
    return id.ok() ? id->groups : std::vector<std::string>{"<refused>"};
  };
  EXPECT_EQ(groups_of("solo"), std::vector<std::string>{"solo"});
  EXPECT_EQ(groups_of(Json::array({1, "a", nullptr, {{"x", 1}}, Json::array({"n"}), "b", ""})),
            (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(groups_of(42), std::vector<std::string>{});
  Json many = Json::array();
  for (int i = 0; i < 250; ++i) many.push_back("g" + std::to_string(i));
  auto capped = groups_of(many);
  ASSERT_EQ(capped.size(), 200u);
  EXPECT_EQ(capped.back(), "g199");
  EXPECT_EQ(groups_of(Json::array({std::string(201, 'x'), std::string(200, 'y')})),
            std::vector<std::string>{std::string(200, 'y')});
  {
    Json c = GoodClaims();
    c.erase("groups");
    c["preferred_username"] = 7;
    auto id = client.VerifyIdToken(provider_->Sign(c), "n-1");
    ASSERT_TRUE(id.ok());
    EXPECT_TRUE(id->groups.empty());
    EXPECT_EQ(id->username, "");
  }
  // Other claim names from the settings.
  OidcSettings other = Settings();
  other.username_claim = "email";
  other.groups_claim = "roles";
  OidcClient renamed(other, &clock_);
  Json c = GoodClaims();
  c["roles"] = {"r1"};
  auto id = renamed.VerifyIdToken(provider_->Sign(c), "n-1");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(id->username, "alice@example.test");
  EXPECT_EQ(id->groups, std::vector<std::string>{"r1"});
}

TEST_F(OidcTest, ConcurrentVerificationsShareOneKeyCache) {
  OidcClient client(Settings(), &clock_);
  const int64_t hits_before = provider_->JwksHits();
  const std::string token = provider_->Sign(GoodClaims());
  const std::string forged = provider_->Sign(GoodClaims(), {{"key", "stranger"}, {"kid", "k1"}});
  std::atomic<int> accepted{0}, refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        if (client.VerifyIdToken(token, "n-1").ok()) ++accepted;
        if (!client.VerifyIdToken(forged, "n-1").ok()) ++refused;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(accepted.load(), 100);
  EXPECT_EQ(refused.load(), 100);
  // The first callers waited for one fetch instead of each asking.
  EXPECT_EQ(provider_->JwksHits() - hits_before, 1);
}

// A hostile or broken provider: documents served by the test itself, keys
// (and signatures) from the real provider.
class FakeProvider {
 public:
  FakeProvider() {
    server_.Get("/.well-known/openid-configuration",
                [this](const httplib::Request&, httplib::Response& res) {
                  res.set_content(Get(discovery_), "application/json");
                });
    server_.Get("/jwks", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(Get(jwks_), "application/json");
    });
    server_.Post("/token", [this](const httplib::Request& req, httplib::Response& res) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        authorization_ = req.get_header_value("Authorization");
        form_ = req.body;
      }
      res.status = token_status_;
      res.set_content(Get(token_reply_), "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    Set(discovery_, Json{{"issuer", issuer()},
                         {"authorization_endpoint", issuer() + "/auth"},
                         {"token_endpoint", issuer() + "/token"},
                         {"jwks_uri", issuer() + "/jwks"}}
                        .dump());
  }
  ~FakeProvider() {
    server_.stop();
    thread_.join();
  }
  std::string issuer() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void Set(std::string& field, std::string value) {
    std::lock_guard<std::mutex> lock(mu_);
    field = std::move(value);
  }
  std::string Get(const std::string& field) {
    std::lock_guard<std::mutex> lock(mu_);
    return field;
  }

  std::string discovery_, jwks_, token_reply_, authorization_, form_;
  int token_status_ = 200;

 private:
  std::mutex mu_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

TEST_F(OidcTest, AHostileProvidersDocumentsAreRefused) {
  FakeProvider fake;
  OidcSettings s = Settings();
  s.issuer = fake.issuer();
  // Discovery: too big, not JSON, a jwks_uri that is no http(s) URL.
  const std::string good_discovery = fake.Get(fake.discovery_);
  fake.Set(fake.discovery_,
           Json{{"issuer", fake.issuer()}, {"pad", std::string(2 << 20, 'x')}}.dump());
  EXPECT_EQ(OidcClient(s, &clock_).Discover().code(), StatusCode::kUnavailable);
  fake.Set(fake.discovery_, "<html>");
  EXPECT_NE(OidcClient(s, &clock_).Discover().message().find("not a JSON object"),
            std::string::npos);
  Json file_jwks = Json::parse(good_discovery);
  file_jwks["jwks_uri"] = "file:///etc/passwd";
  fake.Set(fake.discovery_, file_jwks.dump());
  Status st = OidcClient(s, &clock_).Discover();
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find("jwks_uri"), std::string::npos) << st.message();
  fake.Set(fake.discovery_, good_discovery);

  // Keys: the real provider's, tampered with. Tokens: signed by its real key.
  auto real = HttpClient().Request("GET", provider_->issuer() + "/jwks");
  ASSERT_TRUE(real.ok());
  const Json jwks = Json::parse(real->body);
  Json claims = GoodClaims();
  claims["iss"] = fake.issuer();
  const std::string token = provider_->Sign(claims);
  {
    Json enc = jwks;
    enc["keys"][0]["use"] = "enc";  // an encryption key never verifies a signature
    fake.Set(fake.jwks_, enc.dump());
    OidcClient client(s, &clock_);
    ExpectRefused(client, token, "bad signature");
    fake.Set(fake.jwks_, jwks.dump());
    ExpectRefused(client, token, "bad signature");  // the kid was just looked for
    clock_.Advance(10'000);
    EXPECT_TRUE(client.VerifyIdToken(token, "n-1").ok()) << "refetched after the window";
  }
  {
    Json pinned = jwks;
    pinned["keys"][0]["alg"] = "RS512";  // the key is only for RS512
    fake.Set(fake.jwks_, pinned.dump());
    OidcClient client(s, &clock_);
    ExpectRefused(client, token, "bad signature");
  }
  {
    Json oct = {{"keys", {{{"kty", "oct"}, {"kid", "k1"}, {"k", Base64UrlEncode("secret")}}}}};
    fake.Set(fake.jwks_, oct.dump());
    OidcClient client(s, &clock_);
    ExpectRefused(client, token, "bad signature");
    fake.Set(fake.jwks_, "[]");
    clock_.Advance(10'000);
    auto r = OidcClient(s, &clock_).VerifyIdToken(token, "n-1");
    EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().message();
  }

  // The token endpoint: Basic over the form-urlencoded id and secret, the
  // form; its error words cleaned and cut; a reply without an ID token.
  fake.Set(fake.jwks_, jwks.dump());
  fake.token_status_ = 400;
  fake.Set(fake.token_reply_,
           Json{{"error", "invalid_grant"},
                {"error_description", "bad\n\x1b[31mred " + std::string(1000, 'x')}}
               .dump());
  OidcClient client(s, &clock_);
  auto refused = client.Finish("the-code", "the-verifier", "n-1");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnauthenticated);
  const std::string& m = refused.status().message();
  EXPECT_NE(m.find("invalid_grant: bad??[31mred xxx"), std::string::npos) << m;
  EXPECT_LT(m.size(), 400u);
  EXPECT_EQ(fake.Get(fake.authorization_),
            "Basic " + Base64Encode("maestro:s3cret%20with%20spaces%20%26%20symbols%3A%2F"));
  const std::string form = fake.Get(fake.form_);
  EXPECT_NE(form.find("grant_type=authorization_code"), std::string::npos) << form;
  EXPECT_NE(form.find("code=the-code"), std::string::npos) << form;
  EXPECT_NE(form.find("code_verifier=the-verifier"), std::string::npos) << form;
  EXPECT_NE(form.find("redirect_uri=" + UrlEncode(kRedirect)), std::string::npos) << form;
  fake.token_status_ = 200;
  fake.Set(fake.token_reply_, Json{{"access_token", "x"}}.dump());
  auto no_id = client.Finish("the-code", "the-verifier", "n-1");
  ASSERT_FALSE(no_id.ok());
  EXPECT_NE(no_id.status().message().find("no id_token"), std::string::npos);
  fake.Set(fake.token_reply_, Json{{"id_token", token}}.dump());
  auto fine = client.Finish("the-code", "the-verifier", "n-1");
  ASSERT_TRUE(fine.ok()) << fine.status().message();
  EXPECT_EQ(fine->issuer, fake.issuer());
}

// A provider with its users from a file (what the UI's end-to-end tests use).
TEST(OidcUsersFileTest, AUsersFileGivesItsUsersAndTheirClaims) {
  if (NodeBinary().empty())
    GTEST_SKIP() << "node is not installed (scripts/setup.sh): no OIDC test";
  TempDir dir;
  WriteFile(dir.File("users.json"),
            Json{{"erin",
                  {{"password", "pw-erin"}, {"email", "erin@corp.test"}, {"groups", "solo-group"}}},
                 {"frank",
                  {{"password", "pw-frank"},
                   {"claims", {{"preferred_username", "frank.f"}, {"groups", {"g1", 5, "g2"}}}}}}}
                .dump());
  OidcProvider provider(kDir, dir, FreePort(), kRedirect, kSecret, dir.File("users.json"));
  ASSERT_TRUE(provider.MakeKey("k", false));
  ASSERT_EQ(provider.Start(), "");
  OidcSettings s;
  s.issuer = provider.issuer();
  s.client_id = "maestro";
  s.client_secret = kSecret;
  s.redirect_uri = kRedirect;
  s.scopes = {"profile", "email", "groups"};  // openid is added
  OidcClient client(s);
  auto sign_in = [&](const std::string& user, const std::string& password) {
    auto start = client.Start();
    EXPECT_TRUE(start.ok());
    auto login = provider.SignIn(start->url, user, password);
    if (login.code != 0) return Result<OidcIdentity>(Unauthenticated(login.err));
    return client.Finish(Param(login.callback, "code"), start->code_verifier, start->nonce);
  };
  auto erin = sign_in("erin", "pw-erin");
  ASSERT_TRUE(erin.ok()) << erin.status().message();
  EXPECT_EQ(erin->username, "erin");
  EXPECT_EQ(erin->email, "erin@corp.test");
  EXPECT_EQ(erin->groups, std::vector<std::string>{"solo-group"});
  auto frank = sign_in("frank", "pw-frank");
  ASSERT_TRUE(frank.ok()) << frank.status().message();
  EXPECT_EQ(frank->username, "frank.f");
  EXPECT_EQ(frank->subject, "frank");
  EXPECT_EQ(frank->groups, (std::vector<std::string>{"g1", "g2"}));
  // The built-in users are gone.
  auto alice = sign_in("alice", "alice");
  ASSERT_FALSE(alice.ok());
  EXPECT_NE(alice.status().message().find("login refused"), std::string::npos);
  provider.Stop();
}

// Its own provider: restarted with a rotated key file.
TEST(OidcRotationTest, ARotatedKeyIsFetchedOnceAndAFloodOfUnknownKidsIsRateLimited) {
  if (NodeBinary().empty())
    GTEST_SKIP() << "node is not installed (scripts/setup.sh): no OIDC test";
  TempDir dir;
  OidcProvider provider(kDir, dir, FreePort(), kRedirect, kSecret);
  ASSERT_TRUE(provider.MakeKey("old", false));
  ASSERT_EQ(provider.Start(), "");
  FakeClock clock(std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count());
  const int64_t now_s = clock.NowMs() / 1000;
  OidcSettings s;
  s.issuer = provider.issuer();
  s.client_id = "maestro";
  s.client_secret = kSecret;
  s.redirect_uri = kRedirect;
  s.jwks_min_refresh_s = 10;
  OidcClient client(s, &clock);
  const Json claims = {{"iss", s.issuer},
                       {"aud", "maestro"},
                       {"sub", "dave"},
                       {"exp", now_s + 3600},
                       {"iat", now_s},
                       {"nonce", "n"},
                       {"preferred_username", "dave"}};
  const std::string old_token = provider.Sign(claims);
  ASSERT_TRUE(client.VerifyIdToken(old_token, "n").ok());
  EXPECT_EQ(provider.JwksHits(), 1);
  ASSERT_TRUE(client.VerifyIdToken(old_token, "n").ok());
  EXPECT_EQ(provider.JwksHits(), 1) << "a known kid needs no fetch";

  // Rotation: a new first key, the old one still published.
  provider.Stop();
  ASSERT_TRUE(provider.MakeKey("new", true));
  ASSERT_EQ(provider.Start(), "");
  const std::string new_token = provider.Sign(claims);
  ASSERT_EQ(Json::parse(ReadWholeFile(provider.keys_file()))["keys"][0]["kid"], "new");
  // Within jwks_min_refresh_s of the last fetch the unknown kid is not fetched...
  clock.Advance(5'000);
  auto early = client.VerifyIdToken(new_token, "n");
  EXPECT_FALSE(early.ok());
  EXPECT_EQ(provider.JwksHits(), 0);
  // ... after it, once, and the new key verifies; the old one still does.
  clock.Advance(5'000);
  auto rotated = client.VerifyIdToken(new_token, "n");
  ASSERT_TRUE(rotated.ok()) << rotated.status().message();
  EXPECT_EQ(provider.JwksHits(), 1);
  EXPECT_TRUE(client.VerifyIdToken(old_token, "n").ok());
  EXPECT_TRUE(client.VerifyIdToken(new_token, "n").ok());
  EXPECT_EQ(provider.JwksHits(), 1);

  // A flood of forged kids: at most one fetch per 10 s window.
  auto flood = [&](int n) {
    for (int i = 0; i < n; ++i) {
      const std::string forged =
          provider.Sign(claims, {{"key", "stranger"}, {"kid", "forged-" + std::to_string(i)}});
      EXPECT_FALSE(client.VerifyIdToken(forged, "n").ok());
    }
  };
  clock.Advance(10'000);
  flood(40);
  EXPECT_EQ(provider.JwksHits(), 2) << "40 unknown kids in one window: one fetch";
  clock.Advance(9'000);
  flood(20);
  EXPECT_EQ(provider.JwksHits(), 2);
  clock.Advance(1'000);
  flood(20);
  EXPECT_EQ(provider.JwksHits(), 3);
  // Genuine tokens kept verifying throughout.
  EXPECT_TRUE(client.VerifyIdToken(new_token, "n").ok());
  EXPECT_TRUE(client.VerifyIdToken(old_token, "n").ok());
  provider.Stop();
}

}  // namespace
}  // namespace maestro::identity
