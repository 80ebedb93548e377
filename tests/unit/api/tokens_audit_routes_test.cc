// The scoped-token and audit routes (issue 49 items 4–5; routes_tokens.cc,
// routes_audit.cc) on an in-process ApiServer (port 0) over a real
// SqliteStore, with teams configured and the server's clock a FakeClock
// (expiry without sleeping):
//   tokens — made with scopes and shown once, a read token refused on a run
//   route and unable to mint a run token, expiry, revocation refused at its
//   very next use, another user's token a 404 to list or revoke, every bad
//   field a 400 naming it, the admin's old {"user"} call;
//   audit — token.create / token.revoke entries with actor and time, the
//   filters and paging, 403 for a non-admin and for a token without the
//   admin scope, a team admin never seeing another team's entries (seeded
//   straight into the store), the JSON-lines export.
#include <gtest/gtest.h>
#include <httplib.h>

#include <map>
#include <set>
#include <sstream>

#include "api/access.h"
#include "api/api_server.h"
#include "core/hash.h"
#include "support/store_fixture.h"

namespace maestro {
namespace {

using namespace std::chrono_literals;

class TokensAuditRoutesTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    api::AccessSettings settings;
    settings.teams["platform"].members = {{"alice", api::Role::kAdmin},
                                          {"bob", api::Role::kOperator}};
    settings.teams["data"].members = {{"carol", api::Role::kAdmin}};
    ApiOptions o;
    o.http.port = 0;
    o.admin_token = "adm";
    o.clock = &clock_;
    o.access = std::make_shared<const api::Access>(settings, store_.get(), &clock_);
    api_ = std::make_unique<ApiServer>(*store_, notifier_, o);
    auto port = api_->Start();
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    port_ = *port;
    for (const char* u : {"alice", "bob", "carol"}) {
      auto [code, out] = Call("POST", "/api/local/tokens", Json{{"user", u}});
      ASSERT_EQ(code, 201) << out.dump();
      tokens_[u] = out["token"];
    }
  }
  void TearDown() override { api_->Stop(); }

  struct Answer {
    int code = 0;
    Json body;
    std::string text;
    std::string content_type;
    std::string disposition;
  };
  Answer Raw(const std::string& method, const std::string& path, const Json& body = Json(),
             const std::string& token = "adm") {
    httplib::Client c("127.0.0.1", port_);
    if (!token.empty()) c.set_bearer_token_auth(token);
    c.set_read_timeout(10s);
    const std::string text = body.is_null() ? "" : body.dump();
    httplib::Result r = method == "POST"     ? c.Post(path, text, "application/json")
                        : method == "DELETE" ? c.Delete(path)
                                             : c.Get(path);
    Answer a;
    if (!r) return a;
    a.code = r->status;
    a.text = r->body;
    a.body = Json::parse(r->body, nullptr, false);
    a.content_type = r->get_header_value("Content-Type");
    a.disposition = r->get_header_value("Content-Disposition");
    return a;
  }
  std::pair<int, Json> Call(const std::string& method, const std::string& path,
                            const Json& body = Json(), const std::string& token = "adm") {
    Answer a = Raw(method, path, body, token);
    return {a.code, a.body};
  }
  static std::string Field(const Json& error) {
    return error.is_object() && error.contains("error") ? error["error"].value("field", "") : "";
  }
  // A token alice makes for herself with `body`.
  Json Mint(const Json& body, const std::string& with) {
    auto [code, out] = Call("POST", "/api/local/tokens", body, with);
    EXPECT_EQ(code, 201) << out.dump();
    return out;
  }
  void Seed(const std::string& actor, const std::string& action, const std::string& team) {
    AuditEntry e;
    e.at = clock_.NowMs();
    e.actor = actor;
    e.action = action;
    e.team = team;
    e.detail = "{}";
    ASSERT_TRUE(store_->AppendAudit(e).ok());
  }

  notify::Notifier notifier_;
  std::unique_ptr<ApiServer> api_;
  int port_ = 0;
  std::map<std::string, std::string> tokens_;
};

TEST_F(TokensAuditRoutesTest, AScopedTokenIsShownOnceAndActsOnlyWithinItsScopes) {
  const std::string alice = tokens_["alice"];
  Json made = Mint({{"name", "ci"}, {"scopes", {"read"}}, {"expires_in_s", 3600}}, alice);
  const std::string read_token = made["token"];
  EXPECT_EQ(read_token.size(), 64u);
  EXPECT_EQ(made["user"], "alice");
  EXPECT_EQ(made["name"], "ci");
  EXPECT_EQ(made["scopes"], Json::array({"read"}));
  EXPECT_EQ(made["created_at"], clock_.NowMs());
  EXPECT_EQ(made["expires_at"], clock_.NowMs() + 3'600'000);
  EXPECT_EQ(made["revoked_at"], 0);
  const std::string id = made["id"];
  EXPECT_EQ(id.size(), 26u);

  // Listed without its plain value; the store has only the hash.
  auto [lc, list] = Call("GET", "/api/local/tokens", Json(), alice);
  ASSERT_EQ(lc, 200) << list.dump();
  bool found = false;
  for (const Json& t : list["tokens"]) {
    EXPECT_FALSE(t.contains("token")) << t.dump();
    found = found || t["id"] == id;
  }
  EXPECT_TRUE(found) << list.dump();
  EXPECT_EQ(list.dump().find(read_token), std::string::npos);
  auto rec = store_->TokenByHash(Sha256Hex(read_token));
  ASSERT_TRUE(rec.ok() && rec->has_value());
  EXPECT_EQ((*rec)->scopes, "read");

  // Reads work; a run route and minting a run token are 403.
  EXPECT_EQ(Call("GET", "/api/local/tasks", Json(), read_token).first, 200);
  auto [rc, refused] =
      Call("POST", "/api/local/tasks", {{"instruction", "hi"}, {"piece", "chat"}}, read_token);
  EXPECT_EQ(rc, 403) << refused.dump();
  auto [mc, mint_run] = Call("POST", "/api/local/tokens", {{"scopes", {"run"}}}, read_token);
  EXPECT_EQ(mc, 403) << mint_run.dump();
  // A read token may mint a read token — which never outlives it.
  Json child = Mint({{"scopes", {"read"}}, {"expires_in_s", 86400}}, read_token);
  EXPECT_EQ(child["expires_at"], made["expires_at"]) << child.dump();
  // Without scopes, a token gets the maker's credential's: read only.
  Json same = Mint({{"name", "same"}}, read_token);
  EXPECT_EQ(same["scopes"], Json::array({"read"}));
  // The audit log is the admin's: a read token is refused it (scope).
  EXPECT_EQ(Call("GET", "/api/local/audit", Json(), read_token).first, 403);
}

TEST_F(TokensAuditRoutesTest, ExpiredAndRevokedTokensAreRefusedAtOnce) {
  const std::string alice = tokens_["alice"];
  Json shortlived = Mint({{"scopes", {"read"}}, {"expires_in_s", 1}}, alice);
  const std::string t1 = shortlived["token"];
  EXPECT_EQ(Call("GET", "/api/local/tasks", Json(), t1).first, 200);  // now cached
  clock_.Advance(1'500);
  EXPECT_EQ(Call("GET", "/api/local/tasks", Json(), t1).first, 401);

  Json revocable = Mint({{"name", "laptop"}, {"scopes", {"read", "run"}}}, alice);
  const std::string t2 = revocable["token"];
  const std::string id = revocable["id"];
  EXPECT_EQ(Call("GET", "/api/local/tasks", Json(), t2).first, 200);  // now cached
  Answer del = Raw("DELETE", "/api/local/tokens/" + id, Json(), alice);
  EXPECT_EQ(del.code, 204) << del.text;
  EXPECT_TRUE(del.text.empty());
  EXPECT_EQ(Call("GET", "/api/local/tasks", Json(), t2).first, 401);
  // Listed as revoked; a second revoke is a 404.
  auto [lc, list] = Call("GET", "/api/local/tokens", Json(), alice);
  ASSERT_EQ(lc, 200);
  for (const Json& t : list["tokens"]) {
    if (t["id"] == id) {
      EXPECT_EQ(t["revoked_at"], clock_.NowMs());
    }
  }
  EXPECT_EQ(Call("DELETE", "/api/local/tokens/" + id, Json(), alice).first, 404);
  // A token can revoke itself.
  Json self = Mint({{"scopes", {"read"}}}, alice);
  EXPECT_EQ(
      Call("DELETE", "/api/local/tokens/" + self["id"].get<std::string>(), Json(), self["token"])
          .first,
      204);
  EXPECT_EQ(Call("GET", "/api/local/tokens", Json(), self["token"]).first, 401);
}

TEST_F(TokensAuditRoutesTest, AnotherUsersTokenIsNeitherListedNorRevocable) {
  Json alices = Mint({{"name", "alice-ci"}, {"scopes", {"read"}}}, tokens_["alice"]);
  const std::string id = alices["id"];
  auto [lc, bobs] = Call("GET", "/api/local/tokens", Json(), tokens_["bob"]);
  ASSERT_EQ(lc, 200);
  for (const Json& t : bobs["tokens"]) EXPECT_EQ(t["user"], "bob") << bobs.dump();
  EXPECT_EQ(bobs.dump().find(id), std::string::npos);
  auto [dc, gone] = Call("DELETE", "/api/local/tokens/" + id, Json(), tokens_["bob"]);
  EXPECT_EQ(dc, 404);
  EXPECT_EQ(gone["error"]["message"], "no such token");
  // Not even the admin revokes someone else's token through this route.
  EXPECT_EQ(Call("DELETE", "/api/local/tokens/" + id).first, 404);
  EXPECT_EQ(
      Call("DELETE", "/api/local/tokens/01ARZ3NDEKTSV4RRFFQ69G5FAV", Json(), tokens_["bob"]).first,
      404);
  EXPECT_EQ(Call("GET", "/api/local/tasks", Json(), alices["token"]).first, 200);
  // Only the admin makes tokens for other users.
  auto [oc, other] = Call("POST", "/api/local/tokens", {{"user", "eve"}}, tokens_["bob"]);
  EXPECT_EQ(oc, 403) << other.dump();
  auto [sc, own] = Call("POST", "/api/local/tokens", {{"user", "bob"}}, tokens_["bob"]);
  EXPECT_EQ(sc, 201) << own.dump();
}

TEST_F(TokensAuditRoutesTest, BadFieldsAre400NamingThem) {
  struct Case {
    Json body;
    const char* field;
  } const cases[] = {
      {{{"name", std::string(101, 'n')}}, "name"},
      {{{"name", "tab\there"}}, "name"},
      {{{"name", "\x7f"}}, "name"},
      {{{"name", 5}}, "name"},
      {{{"scopes", "read"}}, "scopes"},
      {{{"scopes", Json::array()}}, "scopes"},
      {{{"scopes", {"read", "write"}}}, "scopes"},
      {{{"scopes", {1}}}, "scopes"},
      {{{"scopes", {"*"}}}, "scopes"},
      {{{"expires_in_s", 0}}, "expires_in_s"},
      {{{"expires_in_s", -5}}, "expires_in_s"},
      {{{"expires_in_s", 31'536'001}}, "expires_in_s"},
      {{{"expires_in_s", "60"}}, "expires_in_s"},
      {{{"expires_in_s", 1.5}}, "expires_in_s"},
      {{{"user", ""}}, "user"},
      {{{"user", 7}}, "user"},
      {{{"colour", "red"}}, "colour"},
  };
  for (const Case& c : cases) {
    auto [code, out] = Call("POST", "/api/local/tokens", c.body, tokens_["alice"]);
    EXPECT_EQ(code, 400) << c.body.dump() << " " << out.dump();
    EXPECT_EQ(Field(out), c.field) << c.body.dump() << " " << out.dump();
  }
  // 100 characters (not bytes) is fine.
  std::string hundred;
  for (int i = 0; i < 100; ++i) hundred += "é";
  EXPECT_EQ(Call("POST", "/api/local/tokens", {{"name", hundred}}, tokens_["alice"]).first, 201);
  EXPECT_EQ(Call("POST", "/api/local/tokens", "not an object", tokens_["alice"]).first, 400);
  // The longest expiry is fine too.
  Json year = Mint({{"expires_in_s", 31'536'000}}, tokens_["alice"]);
  EXPECT_EQ(year["expires_at"], clock_.NowMs() + 31'536'000'000LL);
  // Absent: 90 days.
  Json dflt = Mint({{"name", "default"}}, tokens_["alice"]);
  EXPECT_EQ(dflt["expires_at"], clock_.NowMs() + 90LL * 86'400'000);
}

TEST_F(TokensAuditRoutesTest, TheAdminsOldCallStillMakesANeverExpiringToken) {
  auto [code, out] = Call("POST", "/api/local/tokens", {{"user", "dave"}});
  ASSERT_EQ(code, 201) << out.dump();
  EXPECT_EQ(out["user"], "dave");
  EXPECT_EQ(out["expires_at"], 0);
  EXPECT_EQ(out["scopes"], Json::array({"read", "run", "decide", "admin"}));
  const std::string dave = out["token"];
  clock_.Advance(400LL * 86'400'000);
  auto [tc, tasks] = Call("GET", "/api/local/tasks", Json(), dave);
  EXPECT_EQ(tc, 200) << tasks.dump();
  // The admin may name scopes and an expiry for someone else too.
  Json scoped = Mint({{"user", "dave"}, {"scopes", {"read"}}, {"expires_in_s", 60}}, "adm");
  EXPECT_EQ(scoped["user"], "dave");
  EXPECT_EQ(scoped["expires_at"], clock_.NowMs() + 60'000);
}

TEST_F(TokensAuditRoutesTest, TokenChangesAreAuditedAndFiltered) {
  const TimeMs t0 = clock_.NowMs();
  clock_.Advance(1000);
  Json made = Mint({{"name", "ci"}, {"scopes", {"read", "run"}}}, tokens_["alice"]);
  clock_.Advance(1000);
  ASSERT_EQ(
      Raw("DELETE", "/api/local/tokens/" + made["id"].get<std::string>(), Json(), tokens_["alice"])
          .code,
      204);
  auto [code, page] = Call("GET", "/api/local/audit?actor=alice&action=token.");
  ASSERT_EQ(code, 200) << page.dump();
  ASSERT_EQ(page["entries"].size(), 2u) << page.dump();
  const Json& revoke = page["entries"][0];  // newest first
  const Json& create = page["entries"][1];
  EXPECT_EQ(revoke["action"], "token.revoke");
  EXPECT_EQ(create["action"], "token.create");
  EXPECT_EQ(create["actor"], "alice");
  EXPECT_EQ(create["at"], t0 + 1000);
  EXPECT_EQ(revoke["at"], t0 + 2000);
  EXPECT_EQ(create["detail"]["token_id"], made["id"]);
  EXPECT_EQ(create["detail"]["name"], "ci");
  EXPECT_EQ(create["detail"]["scopes"], Json::array({"read", "run"}));
  EXPECT_EQ(create["detail"]["user"], "alice");
  EXPECT_EQ(page["next_before_id"], nullptr);
  EXPECT_EQ(page.dump().find(made["token"].get<std::string>()), std::string::npos);
  // The admin's own token.create entries (SetUp) are the admin's.
  auto [ac, adm] = Call("GET", "/api/local/audit?actor=admin&action=token.create");
  ASSERT_EQ(ac, 200);
  EXPECT_EQ(adm["entries"].size(), 3u) << adm.dump();
  EXPECT_EQ(adm["entries"][0]["detail"]["user"], "carol");
  // Time filters (ms and RFC 3339), exact action.
  auto [sc, since] =
      Call("GET", "/api/local/audit?action=token.revoke&since=" + std::to_string(t0 + 2000));
  ASSERT_EQ(sc, 200);
  EXPECT_EQ(since["entries"].size(), 1u);
  auto [uc, until] = Call("GET", "/api/local/audit?actor=alice&until=" + FormatIso8601(t0 + 1500));
  ASSERT_EQ(uc, 200) << until.dump();
  ASSERT_EQ(until["entries"].size(), 1u) << until.dump();
  EXPECT_EQ(until["entries"][0]["action"], "token.create");
  // Paging: limit 2 over the 5 entries.
  std::vector<int64_t> ids;
  std::string next;
  for (int i = 0; i < 5; ++i) {
    auto [pc, p] = Call("GET", "/api/local/audit?limit=2" + next);
    ASSERT_EQ(pc, 200) << p.dump();
    for (const Json& e : p["entries"]) ids.push_back(e["id"]);
    if (p["next_before_id"].is_null()) break;
    next = "&before_id=" + std::to_string(p["next_before_id"].get<int64_t>());
  }
  ASSERT_EQ(ids.size(), 5u);
  for (size_t i = 1; i < ids.size(); ++i) EXPECT_GT(ids[i - 1], ids[i]);
  // Bad filters name the parameter.
  EXPECT_EQ(Field(Call("GET", "/api/local/audit?limit=0").second), "limit");
  EXPECT_EQ(Field(Call("GET", "/api/local/audit?since=yesterday").second), "since");
  EXPECT_EQ(Field(Call("GET", "/api/local/audit/export?actr=x").second), "actr");
}

TEST_F(TokensAuditRoutesTest, ATeamAdminSeesItsTeamAndItsOwnActionsOnly) {
  Seed("bob", "task.create", "platform");
  Seed("carol", "task.create", "data");
  Seed("dave", "task.cancel", "data");
  Seed("dave", "task.comment", "");
  Seed("alice", "task.comment", "data");  // alice's own, in a team she does not run
  auto actions = [](const Json& page) {
    std::multiset<std::string> out;
    for (const Json& e : page["entries"]) {
      out.insert(e["actor"].get<std::string>() + ":" + e["action"].get<std::string>() + "@" +
                 e["team"].get<std::string>());
    }
    return out;
  };
  // bob (operator) has no admin role anywhere: 403.
  auto [bc, bob] = Call("GET", "/api/local/audit", Json(), tokens_["bob"]);
  EXPECT_EQ(bc, 403) << bob.dump();
  EXPECT_EQ(Call("GET", "/api/local/audit/export", Json(), tokens_["bob"]).first, 403);
  // alice: platform's entries and her own.
  auto [ac, alice] = Call("GET", "/api/local/audit?action=task.", Json(), tokens_["alice"]);
  ASSERT_EQ(ac, 200) << alice.dump();
  EXPECT_EQ(actions(alice),
            (std::multiset<std::string>{"bob:task.create@platform", "alice:task.comment@data"}));
  // Asking for another actor does not widen it.
  auto [dc, dave] = Call("GET", "/api/local/audit?actor=dave", Json(), tokens_["alice"]);
  ASSERT_EQ(dc, 200);
  EXPECT_TRUE(dave["entries"].empty()) << dave.dump();
  // carol: data's entries (alice's comment there too), none of platform's
  // and not dave's entry of no team.
  auto [cc, carol] = Call("GET", "/api/local/audit?action=task.", Json(), tokens_["carol"]);
  ASSERT_EQ(cc, 200);
  EXPECT_EQ(actions(carol),
            (std::multiset<std::string>{"carol:task.create@data", "dave:task.cancel@data",
                                        "alice:task.comment@data"}));
  // The export obeys the same rule.
  Answer ex = Raw("GET", "/api/local/audit/export?action=task.", Json(), tokens_["carol"]);
  ASSERT_EQ(ex.code, 200);
  std::istringstream lines(ex.text);
  std::string line;
  int n = 0;
  for (; std::getline(lines, line); ++n) EXPECT_EQ(Json::parse(line)["team"], "data") << line;
  EXPECT_EQ(n, 3);
  // The admin sees all five.
  auto [mc, all] = Call("GET", "/api/local/audit?action=task.");
  ASSERT_EQ(mc, 200);
  EXPECT_EQ(all["entries"].size(), 5u) << all.dump();
}

TEST_F(TokensAuditRoutesTest, TheExportIsJsonLinesOldestFirst) {
  for (int i = 0; i < 1'203; ++i) {
    clock_.Advance(1);
    Seed(i % 2 ? "bob" : "carol", "task.comment", i % 3 ? "platform" : "");
  }
  Answer ex = Raw("GET", "/api/local/audit/export?action=task.comment");
  ASSERT_EQ(ex.code, 200) << ex.text.substr(0, 200);
  EXPECT_EQ(ex.content_type, "application/x-ndjson");
  EXPECT_EQ(ex.disposition, "attachment; filename=\"maestro-audit.jsonl\"");
  std::istringstream lines(ex.text);
  std::string line;
  int n = 0;
  int64_t last_id = 0;
  while (std::getline(lines, line)) {
    Json e = Json::parse(line, nullptr, false);
    ASSERT_TRUE(e.is_object()) << "line " << n << ": " << line;
    for (const char* k : {"id", "at", "actor", "action", "task_id", "team", "detail"}) {
      EXPECT_TRUE(e.contains(k)) << line;
    }
    EXPECT_GT(e["id"].get<int64_t>(), last_id) << "oldest first";
    last_id = e["id"];
    ++n;
  }
  EXPECT_EQ(n, 1'203) << "more than one store page (1,000)";
  EXPECT_EQ(ex.text.back(), '\n');
  // alice (platform admin) exports platform's entries only: 802 of them.
  Answer mine = Raw("GET", "/api/local/audit/export?action=task.comment", Json(), tokens_["alice"]);
  ASSERT_EQ(mine.code, 200);
  int platform = 0;
  std::istringstream ml(mine.text);
  while (std::getline(ml, line)) {
    EXPECT_EQ(Json::parse(line)["team"], "platform") << line;
    ++platform;
  }
  EXPECT_EQ(platform, 802);
}

}  // namespace
}  // namespace maestro
