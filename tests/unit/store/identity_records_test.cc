// IdentityRecords on both backends (issue 49, store/identity_records.h,
// shared schema change 14): scoped tokens are listed and revoked by their
// owner only, and the legacy two-column AddApiToken gets a revocable id; an
// OIDC (issuer, subject) binds to one user and a user to one pair; groups are
// replaced, sorted and unique; sessions expire; a pending sign-in is consumed
// once even by racing callbacks in two store objects, and stale ones go; the
// audit log filters by actor, action (prefix), task, team set, time, and pages
// by id; a database at schema 13 with a token row migrates to one whose row
// has the hash-derived id and every scope.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "store/postgres/pg_conn.h"
#include "support/store_fixture.h"

namespace maestro {
namespace {

using testing::StoreBackend;
using testing::StoreConformance;

constexpr TimeMs kLoginMaxAge = 600'000;

// A stand-in for the SHA-256 hex of a secret.
std::string FakeSha(char c) { return std::string(64, c); }

class IdentityRecordsTest : public StoreConformance {
 protected:
  // Runs `sql` on the test's database outside the store (the store closed).
  void RawExec(const std::string& sql) {
    if (backend_ == StoreBackend::kPostgres) {
      auto conn = postgres::PgConn::Open(pg_url_);
      ASSERT_TRUE(conn.ok()) << conn.status().ToString();
      Status st = (*conn)->ExecScript(sql);
      ASSERT_TRUE(st.ok()) << st.ToString();
      return;
    }
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(dir_.File("maestro.db").c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
    std::string message = err ? err : "";
    sqlite3_free(err);
    sqlite3_close(db);
    ASSERT_EQ(rc, SQLITE_OK) << message;
  }

  ApiTokenRecord Token(const std::string& id, const std::string& user,
                       const std::string& scopes = "read run") {
    ApiTokenRecord r;
    r.id = id;
    r.user = user;
    r.name = "ci " + id;
    r.scopes = scopes;
    return r;
  }

  int64_t Audit(const std::string& actor, const std::string& action, const std::string& task,
                const std::string& team, TimeMs at) {
    AuditEntry e;
    e.actor = actor;
    e.action = action;
    e.task_id = task;
    e.team = team;
    e.at = at;
    e.detail = R"({"n":1})";
    auto id = store_->AppendAudit(e);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }

  std::vector<int64_t> Ids(const AuditFilter& f) {
    auto got = store_->ListAudit(f);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    std::vector<int64_t> ids;
    if (got.ok()) {
      for (const auto& e : *got) ids.push_back(e.id);
    }
    return ids;
  }
};

TEST_P(IdentityRecordsTest, ScopedTokensAreListedAndRevokedByTheirOwnerOnly) {
  ApiTokenRecord a1 = Token("01JDW3K6V4Q8X2M7N5P0R9S1TA", "alice");
  a1.expires_at = clock_.NowMs() + 86'400'000;
  ASSERT_TRUE(store_->AddScopedToken(FakeSha('a'), a1).ok());
  clock_.Advance(10);
  ASSERT_TRUE(
      store_->AddScopedToken(FakeSha('b'), Token("01JDW3K6V4Q8X2M7N5P0R9S1TB", "alice", "read"))
          .ok());
  ASSERT_TRUE(
      store_->AddScopedToken(FakeSha('c'), Token("01JDW3K6V4Q8X2M7N5P0R9S1TC", "bob")).ok());
  // The hash is unique; an id is required.
  EXPECT_FALSE(
      store_->AddScopedToken(FakeSha('a'), Token("01JDW3K6V4Q8X2M7N5P0R9S1TD", "bob")).ok());
  EXPECT_EQ(store_->AddScopedToken(FakeSha('d'), Token("", "bob")).code(),
            StatusCode::kInvalidArgument);

  auto got = store_->TokenByHash(FakeSha('a'));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->id, a1.id);
  EXPECT_EQ((*got)->user, "alice");
  EXPECT_EQ((*got)->name, a1.name);
  EXPECT_EQ((*got)->scopes, "read run");
  EXPECT_EQ((*got)->created_at, clock_.NowMs() - 10);
  EXPECT_EQ((*got)->expires_at, a1.expires_at);
  EXPECT_EQ((*got)->revoked_at, 0);
  EXPECT_FALSE(store_->TokenByHash(FakeSha('z'))->has_value());

  auto mine = store_->ListTokens("alice");
  ASSERT_TRUE(mine.ok());
  ASSERT_EQ(mine->size(), 2u);
  EXPECT_EQ((*mine)[0].id, "01JDW3K6V4Q8X2M7N5P0R9S1TB") << "newest first";
  EXPECT_EQ((*mine)[1].id, a1.id);
  EXPECT_EQ(store_->ListTokens("bob")->size(), 1u);
  EXPECT_TRUE(store_->ListTokens("carol")->empty());

  // Bob cannot revoke Alice's token (nor can an empty id match anything).
  EXPECT_FALSE(*store_->RevokeToken("bob", a1.id, clock_.NowMs()));
  EXPECT_FALSE(*store_->RevokeToken("alice", "", clock_.NowMs()));
  EXPECT_FALSE(*store_->RevokeToken("alice", "01JDW3K6V4Q8X2M7N5P0R9S1TC", clock_.NowMs()));
  EXPECT_EQ((*store_->TokenByHash(FakeSha('a')))->revoked_at, 0);
  EXPECT_EQ(*store_->UserForToken(FakeSha('a')), "alice");
  clock_.Advance(5);
  EXPECT_TRUE(*store_->RevokeToken("alice", a1.id, clock_.NowMs()));
  EXPECT_FALSE(*store_->RevokeToken("alice", a1.id, clock_.NowMs())) << "already revoked";
  auto revoked = store_->TokenByHash(FakeSha('a'));
  ASSERT_TRUE(revoked.ok() && revoked->has_value());
  EXPECT_EQ((*revoked)->revoked_at, clock_.NowMs()) << "still listed, with when";
  EXPECT_EQ(store_->ListTokens("alice")->size(), 2u);
  // The legacy lookup no longer authenticates it; the others still do.
  EXPECT_FALSE(store_->UserForToken(FakeSha('a'))->has_value());
  EXPECT_EQ(*store_->UserForToken(FakeSha('b')), "alice");
  EXPECT_EQ(*store_->UserForToken(FakeSha('c')), "bob");
}

TEST_P(IdentityRecordsTest, AnExpiredTokenIsNoTokenToTheLegacyLookup) {
  ApiTokenRecord t = Token("01JDW3K6V4Q8X2M7N5P0R9S1TE", "alice");
  t.expires_at = clock_.NowMs() + 1000;
  ASSERT_TRUE(store_->AddScopedToken(FakeSha('e'), t).ok());
  EXPECT_EQ(*store_->UserForToken(FakeSha('e')), "alice");
  clock_.Advance(1000);
  EXPECT_FALSE(store_->UserForToken(FakeSha('e'))->has_value());
  // TokenByHash still returns it: the caller names the reason.
  auto got = store_->TokenByHash(FakeSha('e'));
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->expires_at, t.expires_at);
}

TEST_P(IdentityRecordsTest, LegacyAddApiTokenGetsARevocableId) {
  ASSERT_TRUE(store_->AddApiToken(FakeSha('1'), "alice").ok());
  ASSERT_TRUE(store_->AddApiToken(FakeSha('2'), "alice").ok());
  auto got = store_->TokenByHash(FakeSha('1'));
  ASSERT_TRUE(got.ok() && got->has_value());
  const std::string id = (*got)->id;
  ASSERT_EQ(id.size(), 26u);
  for (char c : id) EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z')) << id;
  EXPECT_EQ((*got)->scopes, "*");
  EXPECT_EQ((*got)->name, "");
  EXPECT_EQ((*got)->created_at, clock_.NowMs());
  EXPECT_NE((*store_->TokenByHash(FakeSha('2')))->id, id) << "ids are distinct";
  EXPECT_EQ(*store_->CountApiTokens(), 2);
  EXPECT_TRUE(*store_->RevokeToken("alice", id, clock_.NowMs()));
  EXPECT_FALSE(store_->UserForToken(FakeSha('1'))->has_value());
  EXPECT_EQ(*store_->UserForToken(FakeSha('2')), "alice");
}

TEST_P(IdentityRecordsTest, AnIdentityBindsToOneUserAndAUserToOneIdentity) {
  const std::string iss = "http://127.0.0.1:4455";
  EXPECT_TRUE(*store_->BindIdentity(iss, "sub-alice", "alice", clock_.NowMs()));
  EXPECT_TRUE(*store_->BindIdentity(iss, "sub-alice", "alice", clock_.NowMs())) << "again";
  // Another subject claiming alice's name: refused.
  EXPECT_FALSE(*store_->BindIdentity(iss, "sub-mallory", "alice", clock_.NowMs()));
  // Same subject at another issuer is another identity, also refused for alice.
  EXPECT_FALSE(*store_->BindIdentity("http://other", "sub-alice", "alice", clock_.NowMs()));
  // alice's pair to another user: refused.
  EXPECT_FALSE(*store_->BindIdentity(iss, "sub-alice", "bob", clock_.NowMs()));
  // bob can bind his own; the first binding is unchanged.
  EXPECT_TRUE(*store_->BindIdentity(iss, "sub-bob", "bob", clock_.NowMs()));
  EXPECT_TRUE(*store_->BindIdentity(iss, "sub-alice", "alice", clock_.NowMs()));
  EXPECT_FALSE(*store_->BindIdentity(iss, "sub-bob", "alice", clock_.NowMs()));
  EXPECT_EQ(store_->BindIdentity("", "s", "u", 0).status().code(), StatusCode::kInvalidArgument);
}

TEST_P(IdentityRecordsTest, GroupsAreReplacedSortedAndUnique) {
  auto none = store_->UserGroups("alice");
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->empty());
  ASSERT_TRUE(store_->SetUserGroups("alice", {"eng-platform", "admins", "eng-platform"}, 1).ok());
  EXPECT_EQ(*store_->UserGroups("alice"), (std::vector<std::string>{"admins", "eng-platform"}));
  ASSERT_TRUE(store_->SetUserGroups("alice", {"viewers \"quoted\""}, 2).ok());
  EXPECT_EQ(*store_->UserGroups("alice"), (std::vector<std::string>{"viewers \"quoted\""}));
  ASSERT_TRUE(store_->SetUserGroups("alice", {}, 3).ok());
  EXPECT_TRUE(store_->UserGroups("alice")->empty()) << "left every group";
  EXPECT_TRUE(store_->UserGroups("bob")->empty());
}

TEST_P(IdentityRecordsTest, SessionsExpireAndAreDeleted) {
  const TimeMs now = clock_.NowMs();
  ASSERT_TRUE(store_->AddSession(FakeSha('s'), {"alice", "csrf-1", now, now + 1000}).ok());
  auto got = store_->SessionByHash(FakeSha('s'), now + 999);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->user, "alice");
  EXPECT_EQ((*got)->csrf, "csrf-1");
  EXPECT_EQ((*got)->created_at, now);
  EXPECT_EQ((*got)->expires_at, now + 1000);
  EXPECT_FALSE(store_->SessionByHash(FakeSha('s'), now + 1000)->has_value()) << "expired";
  EXPECT_FALSE(store_->SessionByHash(FakeSha('x'), now)->has_value());

  ASSERT_TRUE(store_->AddSession(FakeSha('t'), {"bob", "csrf-2", now, now + 50'000}).ok());
  ASSERT_TRUE(store_->DeleteSession(FakeSha('t')).ok());
  EXPECT_FALSE(store_->SessionByHash(FakeSha('t'), now)->has_value()) << "logged out";
  EXPECT_EQ(store_->AddSession(FakeSha('u'), {"", "c", now, now + 1}).code(),
            StatusCode::kInvalidArgument);
}

TEST_P(IdentityRecordsTest, APendingLoginIsTakenOnceAndStaleOnesGo) {
  const TimeMs now = clock_.NowMs();
  PendingLogin l{"nonce-1", "verifier-1", "/tasks/x", now};
  ASSERT_TRUE(store_->AddPendingLogin(FakeSha('1'), l, now, kLoginMaxAge).ok());
  auto got = store_->TakePendingLogin(FakeSha('1'), now + 1000, kLoginMaxAge);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->nonce, "nonce-1");
  EXPECT_EQ((*got)->code_verifier, "verifier-1");
  EXPECT_EQ((*got)->return_to, "/tasks/x");
  EXPECT_EQ((*got)->created_at, now);
  EXPECT_FALSE(store_->TakePendingLogin(FakeSha('1'), now + 1000, kLoginMaxAge)->has_value())
      << "replayed state";

  // Too old when taken: not handed out, and gone.
  ASSERT_TRUE(
      store_->AddPendingLogin(FakeSha('2'), {"n2", "v2", "/", now}, now, kLoginMaxAge).ok());
  EXPECT_FALSE(
      store_->TakePendingLogin(FakeSha('2'), now + kLoginMaxAge + 1, kLoginMaxAge)->has_value());
  EXPECT_FALSE(store_->TakePendingLogin(FakeSha('2'), now, kLoginMaxAge)->has_value());

  // Stale ones are purged by the next AddPendingLogin.
  ASSERT_TRUE(
      store_->AddPendingLogin(FakeSha('3'), {"n3", "v3", "/", now}, now, kLoginMaxAge).ok());
  const TimeMs later = now + kLoginMaxAge + 1;
  ASSERT_TRUE(
      store_->AddPendingLogin(FakeSha('4'), {"n4", "v4", "/", later}, later, kLoginMaxAge).ok());
  // Taken with an age that would still accept it: it is not there any more.
  EXPECT_FALSE(store_->TakePendingLogin(FakeSha('3'), later, 10 * kLoginMaxAge)->has_value());
  EXPECT_TRUE(store_->TakePendingLogin(FakeSha('4'), later, kLoginMaxAge)->has_value());
}

// Two callbacks with one state, in two store objects (two processes'
// connections): exactly one gets the login, every round.
TEST_P(IdentityRecordsTest, RacingCallbacksTakeAStateExactlyOnce) {
  StoreOptions o;
  o.clock = &clock_;
  auto other = OpenAnother(o);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  constexpr int kRounds = 40;
  constexpr int kRacers = 4;
  const TimeMs now = clock_.NowMs();
  int total_wins = 0;
  for (int round = 0; round < kRounds; ++round) {
    const std::string state = FakeSha(static_cast<char>('a' + round % 6)) + std::to_string(round);
    ASSERT_TRUE(store_
                    ->AddPendingLogin(state, {"n" + std::to_string(round), "v", "/", now}, now,
                                      kLoginMaxAge)
                    .ok());
    std::atomic<int> ready{0};
    std::atomic<int> wins{0};
    std::atomic<int> errors{0};
    std::vector<std::thread> racers;
    for (int r = 0; r < kRacers; ++r) {
      Store* s = r % 2 == 0 ? static_cast<Store*>(store_.get()) : other->get();
      racers.emplace_back([&, s] {
        ++ready;
        while (ready.load() < kRacers) std::this_thread::yield();
        auto got = s->TakePendingLogin(state, now, kLoginMaxAge);
        if (!got.ok()) {
          ++errors;
        } else if (got->has_value()) {
          ++wins;
        }
      });
    }
    for (auto& t : racers) t.join();
    EXPECT_EQ(errors.load(), 0) << "round " << round;
    EXPECT_EQ(wins.load(), 1) << "round " << round;
    total_wins += wins.load();
  }
  EXPECT_EQ(total_wins, kRounds);
}

TEST_P(IdentityRecordsTest, TheAuditLogFiltersAndPagesNewestFirst) {
  const TimeMs t0 = clock_.NowMs();
  const int64_t e1 = Audit("alice", "task.create", "task-1", "platform", t0);
  const int64_t e2 = Audit("bob", "task.comment", "task-1", "platform", t0 + 10);
  const int64_t e3 = Audit("alice", "request.decide", "task-2", "", t0 + 20);
  const int64_t e4 = Audit("carol", "token.create", "", "", t0 + 30);
  const int64_t e5 = Audit("alice", "taskx.odd", "task-3", "data", t0 + 40);
  const int64_t e6 = Audit("system", "config.change", "", "", t0 + 50);
  EXPECT_LT(e1, e2);
  EXPECT_LT(e5, e6);

  AuditFilter all;
  EXPECT_EQ(Ids(all), (std::vector<int64_t>{e6, e5, e4, e3, e2, e1}));
  auto full = store_->ListAudit(all);
  ASSERT_TRUE(full.ok());
  const AuditEntry& last = full->back();
  EXPECT_EQ(last.actor, "alice");
  EXPECT_EQ(last.action, "task.create");
  EXPECT_EQ(last.task_id, "task-1");
  EXPECT_EQ(last.team, "platform");
  EXPECT_EQ(last.at, t0);
  EXPECT_EQ(last.detail, R"({"n":1})");

  AuditFilter f;
  f.actor = "alice";
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{e5, e3, e1}));
  f = {};
  f.action = "task.";  // a prefix: not "taskx.odd"
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{e2, e1}));
  f.action = "task";  // exact: nothing is called just "task"
  EXPECT_TRUE(Ids(f).empty());
  f.action = "token.create";
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{e4}));
  f = {};
  f.task_id = "task-1";
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{e2, e1}));

  // Team sets.
  f = {};
  f.teams = {"platform"};
  f.include_unteamed = false;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{e2, e1}));
  f.include_unteamed = true;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{e6, e4, e3, e2, e1}));
  f.teams = {"platform", "data"};
  f.include_unteamed = false;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{e5, e2, e1}));
  f.teams = {};
  f.include_unteamed = false;
  EXPECT_TRUE(Ids(f).empty()) << "no team and not the unteamed";
  f.teams = {"nobody's"};
  EXPECT_TRUE(Ids(f).empty());
  // Combined with an actor (a team admin's view plus its own actions is two
  // queries for the caller; here: alice in platform only).
  f.teams = {"platform"};
  f.actor = "alice";
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{e1}));

  // Time: since inclusive, until exclusive.
  f = {};
  f.since = t0 + 10;
  f.until = t0 + 40;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{e4, e3, e2}));

  // Paging by before_id, and the limit's clamp.
  f = {};
  f.limit = 2;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{e6, e5}));
  f.before_id = e5;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{e4, e3}));
  f.before_id = e3;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{e2, e1}));
  f.before_id = e1;
  EXPECT_TRUE(Ids(f).empty());
  f = {};
  f.limit = 0;  // clamped to 1
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{e6}));
  f.limit = -5;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{e6}));
  f.limit = 1'000'000;  // clamped to 1000: all six here
  EXPECT_EQ(Ids(f).size(), 6u);
}

TEST_P(IdentityRecordsTest, AuditAppendsTakeTheStoreClockAndPagesHoldAtMostAThousand) {
  AuditEntry e;
  e.actor = "alice";
  e.action = "auth.login";
  auto id = store_->AppendAudit(e);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  auto got = store_->ListAudit({});
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].at, clock_.NowMs()) << "at 0: the store's clock";
  EXPECT_EQ((*got)[0].detail, "{}");
  EXPECT_EQ(store_->AppendAudit(AuditEntry{}).status().code(), StatusCode::kInvalidArgument);

  // 200 more from 4 threads at once: ids unique and increasing per writer.
  std::vector<std::thread> writers;
  std::vector<std::vector<int64_t>> ids(4);
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < 50; ++i) {
        AuditEntry a;
        a.actor = "w" + std::to_string(w);
        a.action = "task.create";
        auto r = store_->AppendAudit(a);
        if (r.ok()) ids[w].push_back(*r);
      }
    });
  }
  for (auto& t : writers) t.join();
  std::set<int64_t> unique;
  for (const auto& v : ids) {
    EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
    unique.insert(v.begin(), v.end());
  }
  EXPECT_EQ(unique.size(), 200u);
  EXPECT_GT(*unique.begin(), *id);

  // 1,000 more written directly: a page holds at most 1,000, the next page
  // the rest, down to the first entry.
  RawExec(
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) "
      "INSERT INTO audit_log(at, actor, action, task_id, team, detail) "
      "SELECT 1, 'bulk', 'task.create', '', '', '{}' FROM n");
  AuditFilter f;
  f.limit = 5000;
  auto page = store_->ListAudit(f);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->size(), 1000u);
  f.before_id = page->back().id;
  auto rest = store_->ListAudit(f);
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(rest->size(), 201u);
  EXPECT_EQ(rest->back().id, *id);
}

// A database at schema 13 holding a token: after the migration the row has
// the id its hash gives (upper of the first 26 hex digits: a {ulid} to the
// router), every scope, no expiry, and its owner can revoke it.
TEST_P(IdentityRecordsTest, SchemaChange14GivesAnOldTokenAnIdAndEveryScope) {
  store_.reset();
  // Back to schema 13: change 14 undone, a token row as schema 13 wrote it.
  RawExec(
      "DROP TABLE audit_log; DROP TABLE oidc_logins; DROP TABLE sessions; "
      "DROP TABLE user_groups; DROP TABLE oidc_identities; "
      "DROP INDEX api_tokens_id; DROP INDEX api_tokens_by_user; "
      "ALTER TABLE api_tokens DROP COLUMN id; ALTER TABLE api_tokens DROP COLUMN name; "
      "ALTER TABLE api_tokens DROP COLUMN scopes; ALTER TABLE api_tokens DROP COLUMN expires_at; "
      "ALTER TABLE api_tokens DROP COLUMN revoked_at; "
      "DELETE FROM schema_migrations WHERE version = 14; "
      "INSERT INTO api_tokens(token_hash, \"user\", created_at) VALUES "
      "('0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'alice', 5), "
      "('fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210', 'bob', 6);");
  Reopen();
  ASSERT_NE(store_, nullptr);
  EXPECT_EQ(*store_->SchemaVersion(), 14);
  const std::string hash = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  auto got = store_->TokenByHash(hash);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->id, "0123456789ABCDEF0123456789");
  EXPECT_EQ((*got)->user, "alice");
  EXPECT_EQ((*got)->scopes, "*");
  EXPECT_EQ((*got)->name, "");
  EXPECT_EQ((*got)->created_at, 5);
  EXPECT_EQ((*got)->expires_at, 0);
  EXPECT_EQ((*got)->revoked_at, 0);
  EXPECT_EQ(*store_->UserForToken(hash), "alice");
  EXPECT_FALSE(*store_->RevokeToken("bob", "0123456789ABCDEF0123456789", clock_.NowMs()));
  EXPECT_TRUE(*store_->RevokeToken("alice", "0123456789ABCDEF0123456789", clock_.NowMs()));
  EXPECT_FALSE(store_->UserForToken(hash)->has_value());
  EXPECT_EQ((*store_->ListTokens("bob"))[0].id, "FEDCBA9876543210FEDCBA9876");
  // The new tables work after the migration.
  EXPECT_TRUE(*store_->BindIdentity("iss", "sub", "alice", 1));
  EXPECT_GT(Audit("alice", "token.revoke", "", "", clock_.NowMs()), 0);
}

MAESTRO_STORE_CONFORMANCE(IdentityRecordsTest);

}  // namespace
}  // namespace maestro
