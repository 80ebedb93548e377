// The web UI's sign-in end to end without a browser (issue 49): a real
// `maestro serve` with auth.oidc pointing at the real test identity provider
// (npm oidc-provider, tests/oidc), users signed in through the provider's
// login page by login.mjs, and the session cookies the callback sets used
// as a browser would: teams from the groups claim, roles on a team task,
// CSRF on session writes, a replayed or foreign callback refused, no open
// redirect, logout, and the audit log naming who did what.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/json.h"
#include "support/oidc_provider.h"
#include "support/serve_process.h"
#include "support/temp_dir.h"

namespace maestro {
namespace {

using namespace std::chrono_literals;
using testing::OidcProvider;

const std::string kSecret = "signin-test-secret";

// The value of cookie `name` set by `res` ("" when not set or expired).
std::string SetCookie(const httplib::Result& res, const std::string& name) {
  auto range = res->headers.equal_range("Set-Cookie");
  for (auto it = range.first; it != range.second; ++it) {
    const std::string& v = it->second;
    if (v.rfind(name + "=", 0) != 0) continue;
    if (v.find("Max-Age=0") != std::string::npos) continue;
    return v.substr(name.size() + 1, v.find(';') - name.size() - 1);
  }
  return "";
}

std::string SetCookieLine(const httplib::Result& res, const std::string& name) {
  auto range = res->headers.equal_range("Set-Cookie");
  for (auto it = range.first; it != range.second; ++it) {
    if (it->second.rfind(name + "=", 0) == 0) return it->second;
  }
  return "";
}

// The path and query of an absolute URL.
std::string PathOf(const std::string& url) {
  const size_t scheme = url.find("://");
  const size_t slash = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  return slash == std::string::npos ? "/" : url.substr(slash);
}

class OidcSigninTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (testing::NodeBinary().empty()) GTEST_SKIP() << "node is not installed";
    provider_ = std::make_unique<OidcProvider>(MAESTRO_OIDC_TEST_DIR, dir_, testing::FreePort(),
                                               Base() + "/auth/callback", kSecret);
    ASSERT_TRUE(provider_->MakeKey("k1", false));
    ASSERT_EQ(provider_->Start(), "");
    std::filesystem::create_directories(dir_.File("plat"));
    std::ofstream(dir_.File("maestro.yaml"))
        << "auth:\n"
        << "  default_role: viewer\n"
        << "  oidc:\n"
        << "    issuer: " << provider_->issuer() << "\n"
        << "    client_id: maestro\n"
        << "    redirect_uri: " << Base() << "/auth/callback\n"
        << "    scopes: [openid, profile, email, groups]\n"
        << "teams:\n"
        << "  platform:\n"
        << "    groups: {eng-platform: operator, platform-approvers: approver, "
           "platform-viewers: viewer}\n"
        << "spaces:\n"
        << "  plat: {path: " << dir_.File("plat") << ", team: platform}\n";
    ASSERT_EQ(serve_.Start(dir_.File("maestro.yaml"), {{"MAESTRO_OIDC_CLIENT_SECRET", kSecret}}),
              "");
  }

  std::string Base() const { return serve_.base(); }

  // A started sign-in: the provider URL and this browser's login cookie.
  struct Started {
    std::string url;
    std::string login_cookie;
  };
  Started StartLogin(const std::string& return_to = "/tasks") {
    httplib::Client c("127.0.0.1", serve_.port());
    auto r = c.Get("/auth/login?return_to=" + return_to);
    EXPECT_TRUE(r);
    if (!r) return {};
    EXPECT_EQ(r->status, 302) << r->body;
    const std::string line = SetCookieLine(r, "maestro_login");
    EXPECT_NE(line.find("HttpOnly"), std::string::npos) << line;
    return {r->get_header_value("Location"), SetCookie(r, "maestro_login")};
  }

  struct Session {
    std::string cookie, csrf, landed;
  };
  // The whole sign-in of `user`.
  Session SignIn(const std::string& user, const std::string& return_to = "/tasks") {
    Started s = StartLogin(return_to);
    auto login = provider_->SignIn(s.url, user, user);
    EXPECT_EQ(login.code, 0) << login.err;
    httplib::Client c("127.0.0.1", serve_.port());
    auto r = c.Get(PathOf(login.callback), {{"Cookie", "maestro_login=" + s.login_cookie}});
    EXPECT_TRUE(r);
    if (!r) return {};
    EXPECT_EQ(r->status, 302) << r->body;
    EXPECT_NE(SetCookieLine(r, "maestro_session").find("HttpOnly"), std::string::npos);
    EXPECT_NE(SetCookieLine(r, "maestro_session").find("SameSite=Lax"), std::string::npos);
    EXPECT_EQ(SetCookieLine(r, "maestro_csrf").find("HttpOnly"), std::string::npos);
    return {SetCookie(r, "maestro_session"), SetCookie(r, "maestro_csrf"),
            r->get_header_value("Location")};
  }

  using Answer = testing::ServeProcess::Answer;
  Answer As(const Session& s, const std::string& method, const std::string& path,
            const Json& body = Json(), bool with_csrf = true, const std::string& csrf = "") {
    httplib::Headers h = {{"Cookie", "maestro_session=" + s.cookie + "; maestro_csrf=" + s.csrf}};
    if (with_csrf) h.emplace("X-CSRF-Token", csrf.empty() ? s.csrf : csrf);
    return serve_.Call(method == "POST" ? "POST" : "GET", path, body, "", h);
  }

  testing::TempDir dir_;
  testing::ServeProcess serve_{dir_};
  std::unique_ptr<OidcProvider> provider_;
};

TEST_F(OidcSigninTest, TeamsRolesCsrfAndAudit) {
  Session alice = SignIn("alice");
  ASSERT_FALSE(alice.cookie.empty());
  EXPECT_EQ(alice.landed, "/tasks");
  auto me = As(alice, "GET", "/api/me");
  ASSERT_EQ(me.code, 200) << me.text;
  EXPECT_EQ(me.body["user"], "alice");
  EXPECT_EQ(me.body["via"], "session");
  ASSERT_EQ(me.body["teams"].size(), 1u) << me.text;
  EXPECT_EQ(me.body["teams"][0]["team"], "platform");
  EXPECT_EQ(me.body["teams"][0]["role"], "operator");

  // A session write needs the CSRF header, and the right one.
  const Json create = {{"instruction", "deploy the thing"}, {"space", "plat"}};
  EXPECT_EQ(As(alice, "POST", "/api/local/tasks", create, /*with_csrf=*/false).code, 403);
  EXPECT_EQ(As(alice, "POST", "/api/local/tasks", create, true, "wrong").code, 403);
  auto made = As(alice, "POST", "/api/local/tasks", create);
  ASSERT_EQ(made.code, 201) << made.text;
  const std::string task = made.body["task"]["id"];
  const std::string decide =
      "/api/local/tasks/" + task + "/tool-requests/01JDW3K6V4Q8X2M7N5P0R9S1TB/decide";

  Session bob = SignIn("bob");  // platform-approvers
  auto seen = As(bob, "GET", "/api/local/tasks/" + task);
  ASSERT_EQ(seen.code, 200) << seen.text;
  EXPECT_EQ(seen.body["task"]["can"]["decide"], true);
  EXPECT_EQ(seen.body["task"]["can"]["run"], false);
  // Past the role check (the request does not exist): 404, not 403.
  EXPECT_EQ(As(bob, "POST", decide, {{"decision", "approve"}}).code, 404);
  EXPECT_EQ(As(bob, "POST", "/api/local/tasks/" + task + "/cancel").code, 403);

  Session carol = SignIn("carol");  // platform-viewers
  auto viewed = As(carol, "GET", "/api/local/tasks/" + task);
  ASSERT_EQ(viewed.code, 200);
  EXPECT_EQ(viewed.body["task"]["can"]["decide"], false);
  auto refused = As(carol, "POST", decide, {{"decision", "approve"}});
  EXPECT_EQ(refused.code, 403) << refused.text;

  Session dave = SignIn("dave");  // another team's group
  auto hidden = As(dave, "GET", "/api/local/tasks/" + task);
  EXPECT_EQ(hidden.code, 404);
  EXPECT_EQ(hidden.text.find("deploy the thing"), std::string::npos);

  // The audit log (the admin's view) names both users' actions with times.
  httplib::Client admin("127.0.0.1", serve_.port());
  admin.set_bearer_token_auth("adm");
  auto audit = admin.Get("/api/local/audit?limit=100");
  ASSERT_TRUE(audit);
  ASSERT_EQ(audit->status, 200) << audit->body;
  bool alice_login = false, alice_create = false, bob_login = false;
  const Json entries = Json::parse(audit->body)["entries"];
  for (const auto& e : entries) {
    EXPECT_GT(e["at"].get<int64_t>(), 0);
    if (e["actor"] == "alice" && e["action"] == "auth.login") alice_login = true;
    if (e["actor"] == "alice" && e["action"] == "task.create") alice_create = true;
    if (e["actor"] == "bob" && e["action"] == "auth.login") bob_login = true;
  }
  EXPECT_TRUE(alice_login && alice_create && bob_login) << audit->body;

  // Logout ends the session (with its CSRF header, like any session write).
  EXPECT_EQ(As(alice, "POST", "/auth/logout", Json(), /*with_csrf=*/false).code, 403);
  EXPECT_EQ(As(alice, "POST", "/auth/logout").code, 200);
  EXPECT_EQ(As(alice, "GET", "/api/me").code, 401);
}

TEST_F(OidcSigninTest, ReplayedForeignAndRedirectingCallbacksAreRefused) {
  // A callback used twice: the state is consumed by the first.
  Started s = StartLogin();
  auto login = provider_->SignIn(s.url, "alice", "alice");
  ASSERT_EQ(login.code, 0) << login.err;
  httplib::Client c("127.0.0.1", serve_.port());
  httplib::Headers cookie = {{"Cookie", "maestro_login=" + s.login_cookie}};
  auto first = c.Get(PathOf(login.callback), cookie);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->status, 302);
  auto again = c.Get(PathOf(login.callback), cookie);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 401);
  EXPECT_NE(again->body.find("already used"), std::string::npos) << again->body;

  // A callback carried to another browser (login CSRF): its state is not
  // that browser's login cookie.
  Started mine = StartLogin();
  Started theirs = StartLogin();
  auto their_login = provider_->SignIn(theirs.url, "dave", "dave");
  ASSERT_EQ(their_login.code, 0);
  auto foreign =
      c.Get(PathOf(their_login.callback), {{"Cookie", "maestro_login=" + mine.login_cookie}});
  ASSERT_TRUE(foreign);
  EXPECT_EQ(foreign->status, 401);
  EXPECT_NE(foreign->body.find("state mismatch"), std::string::npos) << foreign->body;
  // Without any login cookie, too.
  auto bare = c.Get(PathOf(their_login.callback));
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->status, 401);

  // A made-up code with a real state: the provider refuses the exchange.
  Started made_up = StartLogin();
  const std::string state = made_up.url.substr(
      made_up.url.find("state=") + 6,
      made_up.url.find('&', made_up.url.find("state=")) - made_up.url.find("state=") - 6);
  auto bogus = c.Get("/auth/callback?code=bogus&state=" + state,
                     {{"Cookie", "maestro_login=" + made_up.login_cookie}});
  ASSERT_TRUE(bogus);
  EXPECT_EQ(bogus->status, 401) << bogus->body;

  // return_to is a local path only: another origin lands on "/".
  for (const std::string evil : {"//evil.example/x", "/\\evil.example", "https://evil.example"}) {
    Session s2 = SignIn("bob", evil);
    EXPECT_EQ(s2.landed, "/") << evil;
  }
  // The provider's own error comes back as a 401 naming it.
  auto denied = c.Get("/auth/callback?error=access_denied&state=x");
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->status, 401);
  EXPECT_NE(denied->body.find("access_denied"), std::string::npos);
}

}  // namespace
}  // namespace maestro
