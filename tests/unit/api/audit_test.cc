// api/audit.h without a server: AuditLog::Record stamps the clock's time and
// never fails its caller (a store that refuses is only logged), AuditJson's
// shape, and ParseAuditFilter — every parameter's bad values are a 400
// naming it, RFC 3339 times with offsets, fractions and leap days, and an
// unknown parameter (a typo must not widen the filter) is refused.
#include "api/audit.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "core/mutex.h"

namespace maestro {
namespace {

// The audit half of IdentityRecords in memory (or refusing every append).
class MemoryAudit : public IdentityRecords {
 public:
  explicit MemoryAudit(bool fail = false) : fail_(fail) {}
  Result<int64_t> AppendAudit(const AuditEntry& e) override {
    if (fail_) return Unavailable("database is locked");
    MutexLock lock(&mu_);
    entries_.push_back(e);
    entries_.back().id = static_cast<int64_t>(entries_.size());
    return entries_.back().id;
  }
  std::vector<AuditEntry> entries() {
    MutexLock lock(&mu_);
    return entries_;
  }

 private:
  const bool fail_;
  Mutex mu_;
  std::vector<AuditEntry> entries_ GUARDED_BY(mu_);
};

api::HttpRequest Query(std::vector<std::pair<std::string, std::string>> q) {
  api::HttpRequest r;
  r.method = "GET";
  r.path = "/api/local/audit";
  r.query = std::move(q);
  return r;
}

TEST(AuditLogTest, RecordsWithTheClocksTimeAndAnObjectDetail) {
  MemoryAudit store;
  FakeClock clock(1'765'000'000'000);
  api::AuditLog log(store, &clock);
  log.Record("alice", "token.create", "", "", Json{{"token_id", "01J"}, {"scopes", {"read"}}});
  clock.Advance(5);
  log.Record("bob", "task.cancel", "t-1", "platform", Json("not an object"));
  auto e = store.entries();
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].at, 1'765'000'000'000);
  EXPECT_EQ(e[0].actor, "alice");
  EXPECT_EQ(e[0].action, "token.create");
  EXPECT_EQ(Json::parse(e[0].detail), (Json{{"token_id", "01J"}, {"scopes", {"read"}}}));
  EXPECT_EQ(e[1].at, 1'765'000'000'005);
  EXPECT_EQ(e[1].task_id, "t-1");
  EXPECT_EQ(e[1].team, "platform");
  EXPECT_EQ(Json::parse(e[1].detail), (Json{{"value", "not an object"}}));
}

TEST(AuditLogTest, AStoreFailureNeverReachesTheCaller) {
  MemoryAudit store(/*fail=*/true);
  FakeClock clock;
  api::AuditLog log(store, &clock);
  // Returns (void) without throwing: the action it records goes on.
  EXPECT_NO_THROW(log.Record("alice", "task.create", "t", "", Json::object()));
  EXPECT_TRUE(store.entries().empty());
}

TEST(AuditLogTest, ConcurrentRecordsAllLand) {
  MemoryAudit store;
  FakeClock clock;
  api::AuditLog log(store, &clock);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&log, t] {
      for (int i = 0; i < 250; ++i) {
        log.Record("u" + std::to_string(t), "task.comment", "", "", Json{{"i", i}});
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(store.entries().size(), 1000u);
}

TEST(AuditJsonTest, HasEveryFieldAndKeepsABadDetailAsText) {
  AuditEntry e;
  e.id = 7;
  e.at = 42;
  e.actor = "alice";
  e.action = "request.decide";
  e.task_id = "t";
  e.team = "platform";
  e.detail = R"({"decision":"approve","args_sha256":"ab"})";
  Json j = api::AuditJson(e);
  EXPECT_EQ(j, (Json{{"id", 7},
                     {"at", 42},
                     {"actor", "alice"},
                     {"action", "request.decide"},
                     {"task_id", "t"},
                     {"team", "platform"},
                     {"detail", {{"decision", "approve"}, {"args_sha256", "ab"}}}}));
  e.detail = "{not json";
  EXPECT_EQ(api::AuditJson(e)["detail"], (Json{{"value", "{not json"}}));
}

TEST(AuditFilterTest, DefaultsAndEveryField) {
  auto none = api::ParseAuditFilter(Query({}));
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(none->limit, 100);
  EXPECT_EQ(none->since, 0);
  EXPECT_EQ(none->until, 0);
  EXPECT_EQ(none->before_id, 0);
  EXPECT_TRUE(none->actor.empty());
  EXPECT_TRUE(none->include_unteamed);
  EXPECT_TRUE(none->teams.empty());

  auto f = api::ParseAuditFilter(Query({{"actor", "alice"},
                                        {"action", "task."},
                                        {"task_id", "3f2b8c1e-5d4a-4b6f-9e21-7c0d8a9b1f23"},
                                        {"since", "1765000000000"},
                                        {"until", "2026-12-07T21:00:00.250+01:00"},
                                        {"before_id", "99"},
                                        {"limit", "1000"}}));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->actor, "alice");
  EXPECT_EQ(f->action, "task.");
  EXPECT_EQ(f->task_id, "3f2b8c1e-5d4a-4b6f-9e21-7c0d8a9b1f23");
  EXPECT_EQ(f->since, 1'765'000'000'000);
  // 2026-12-07T20:00:00.250Z
  EXPECT_EQ(f->until, 1'796'673'600'250);
  EXPECT_EQ(f->before_id, 99);
  EXPECT_EQ(f->limit, 1000);
}

TEST(AuditFilterTest, Rfc3339Times) {
  struct Case {
    const char* text;
    TimeMs want;
  } const good[] = {
      {"1970-01-01T00:00:00Z", 0},
      {"2026-12-07T21:00:00Z", 1'796'677'200'000},
      {"2026-12-07t21:00:00z", 1'796'677'200'000},
      {"2026-12-07 21:00:00Z", 1'796'677'200'000},
      {"2026-12-07T21:00:00.1Z", 1'796'677'200'100},
      {"2026-12-07T21:00:00.123456789Z", 1'796'677'200'123},
      {"2026-12-07T22:30:00+01:30", 1'796'677'200'000},
      {"2026-12-07T19:00:00-02:00", 1'796'677'200'000},
      {"2024-02-29T00:00:00Z", 1'709'164'800'000},
      {"0", 0},
      {"1796677200000", 1'796'677'200'000},
  };
  for (const Case& c : good) {
    auto t = api::ParseAuditTime(c.text, "since");
    ASSERT_TRUE(t.ok()) << c.text << ": " << t.status().ToString();
    EXPECT_EQ(*t, c.want) << c.text;
  }
  const char* bad[] = {"",
                       "yesterday",
                       "-5",
                       "1.5",
                       "2026-12-07",
                       "2026-12-07T21:00:00",  // no offset
                       "2026-12-07T21:00Z",
                       "2023-02-29T00:00:00Z",
                       "2026-13-01T00:00:00Z",
                       "2026-12-32T00:00:00Z",
                       "2026-12-07T24:00:00Z",
                       "2026-12-07T21:60:00Z",
                       "2026-12-07T21:00:00.Z",
                       "2026-12-07T21:00:00+1:00",
                       "2026-12-07T21:00:00Zjunk",
                       "1969-12-31T23:59:59Z",
                       "99999999999999999999"};
  for (const char* text : bad) {
    auto t = api::ParseAuditTime(text, "until");
    ASSERT_FALSE(t.ok()) << text;
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_EQ(t.status().field(), "until") << text;
  }
}

TEST(AuditFilterTest, EveryBadParameterIsNamed) {
  struct Case {
    std::vector<std::pair<std::string, std::string>> query;
    const char* field;
  } const cases[] = {
      {{{"limit", "0"}}, "limit"},
      {{{"limit", "1001"}}, "limit"},
      {{{"limit", "ten"}}, "limit"},
      {{{"limit", "-1"}}, "limit"},
      {{{"before_id", "0"}}, "before_id"},
      {{{"before_id", "x"}}, "before_id"},
      {{{"since", "last week"}}, "since"},
      {{{"until", "2026-02-30T00:00:00Z"}}, "until"},
      {{{"since", "2000"}, {"until", "1000"}}, "until"},
      {{{"since", "1000"}, {"until", "1000"}}, "until"},
      {{{"action", "task.%"}}, "action"},
      {{{"action", "task create"}}, "action"},
      {{{"actor", std::string(201, 'a')}}, "actor"},
      {{{"actor", "ali\nce"}}, "actor"},
      {{{"task_id", "\xff\xfe"}}, "task_id"},
      {{{"acter", "alice"}}, "acter"},
      {{{"team", "platform"}}, "team"},
  };
  for (const Case& c : cases) {
    auto f = api::ParseAuditFilter(Query(c.query));
    ASSERT_FALSE(f.ok()) << c.field;
    EXPECT_EQ(f.status().code(), StatusCode::kInvalidArgument) << c.field;
    EXPECT_EQ(f.status().field(), c.field) << f.status().ToString();
  }
}

}  // namespace
}  // namespace maestro
