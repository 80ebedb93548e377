// The PostgreSQL driver (store/postgres) against a real server started by
// tests/support/pg_server.h: parameter rewriting, binding and reading,
// error classification, migrations, PgEngine retries and LISTEN/NOTIFY.
#include "store/postgres/pg_conn.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "store/postgres/pg_engine.h"
#include "store/postgres/pg_migrations.h"
#include "store/sql/schema_changes.h"
#include "support/pg_server.h"

namespace maestro {
namespace {

using postgres::PgConn;
using postgres::PgEngine;
using postgres::PgEngineOptions;
using testing::PgServer;

std::unique_ptr<PgConn> MustOpen(const std::string& url) {
  auto c = PgConn::Open(url);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(c).value() : nullptr;
}

// Each test gets a fresh database on the shared server.
class PgTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MAESTRO_PG_SERVER_OR_SKIP(server);
    auto url = server->CreateDatabase();
    ASSERT_TRUE(url.ok()) << url.status().ToString();
    url_ = *url;
    conn_ = MustOpen(url_);
    ASSERT_NE(conn_, nullptr);
  }
  std::string url_;
  std::unique_ptr<PgConn> conn_;
};

TEST(PgRewriteTest, NumbersBareAndQuotedQuestionMarks) {
  int n = 0;
  EXPECT_EQ(PgConn::RewriteParams("SELECT ?1, ?12, ?2", &n), "SELECT $1, $12, $2");
  EXPECT_EQ(n, 12);
  EXPECT_EQ(PgConn::RewriteParams("VALUES (?, ?, ?)", &n), "VALUES ($1, $2, $3)");
  EXPECT_EQ(n, 3);
  EXPECT_EQ(PgConn::RewriteParams("SELECT '?', 'it''s ?1', \"a?\", ?1 -- why?\n, ?", &n),
            "SELECT '?', 'it''s ?1', \"a?\", $1 -- why?\n, $2");
  EXPECT_EQ(n, 2);
  EXPECT_EQ(PgConn::RewriteParams("SELECT 1", &n), "SELECT 1");
  EXPECT_EQ(n, 0);
}

TEST(PgPayloadTest, EventsSplitBelowTheLimitAndParseBack) {
  std::vector<CommittedEvent> events;
  for (int i = 0; i < 300; ++i) {
    events.push_back(
        {"task-" + std::to_string(i), i % 2 ? "job-" + std::to_string(i) : "", "job.status"});
  }
  auto payloads = postgres::EventPayloads(events, 1000);
  ASSERT_GT(payloads.size(), 1u);
  std::vector<CommittedEvent> back;
  for (const auto& p : payloads) {
    EXPECT_LT(p.size(), 1000u);
    for (auto& e : postgres::ParseEventPayload(p)) back.push_back(e);
  }
  ASSERT_EQ(back.size(), events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(back[i].task_id, events[i].task_id);
    EXPECT_EQ(back[i].job_id, events[i].job_id);
    EXPECT_EQ(back[i].type, events[i].type);
  }
  EXPECT_TRUE(postgres::ParseEventPayload("not json").empty());
  EXPECT_TRUE(postgres::EventPayloads({}).empty());
}

TEST_F(PgTest, BindsAndReadsEveryTypeWithNumberedParams) {
  ASSERT_TRUE(
      conn_->ExecScript("CREATE TABLE t (a TEXT, b BIGINT, c DOUBLE PRECISION, d TEXT)").ok());
  {
    auto ins = conn_->Prepare("INSERT INTO t(a, b, c, d) VALUES (?1, ?2, ?3, ?4)");
    ASSERT_TRUE(ins.ok()) << ins.status().ToString();
    ins->Bind(1, "héllo 'q' ?").Bind(2, int64_t{-9007199254740993}).Bind(3, 0.1).BindNull(4);
    ASSERT_TRUE(ins->Exec().ok());
    EXPECT_EQ(conn_->Changes(), 1);
  }
  {
    // Same SQL again: the cached statement, rebound.
    auto ins = conn_->Prepare("INSERT INTO t(a, b, c, d) VALUES (?1, ?2, ?3, ?4)");
    ASSERT_TRUE(ins.ok());
    ins->Bind(1, "").Bind(2, 7).Bind(3, 1e300).Bind(4, "x");
    ASSERT_TRUE(ins->Exec().ok());
  }
  auto sel = conn_->Prepare("SELECT a, b, c, d FROM t ORDER BY b");
  ASSERT_TRUE(sel.ok());
  auto row = sel->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(sel->Text(0), "héllo 'q' ?");
  EXPECT_EQ(sel->Int(1), -9007199254740993);
  EXPECT_EQ(sel->Double(2), 0.1);  // 17 significant digits round-trip exactly
  EXPECT_TRUE(sel->IsNull(3));
  EXPECT_EQ(sel->Text(3), "");
  EXPECT_EQ(sel->Int(3), 0);
  row = sel->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(sel->Text(0), "");
  EXPECT_FALSE(sel->IsNull(0));
  EXPECT_EQ(sel->Int(1), 7);
  EXPECT_EQ(sel->Double(2), 1e300);
  EXPECT_EQ(sel->Text(3), "x");
  row = sel->Step();
  ASSERT_TRUE(row.ok());
  EXPECT_FALSE(*row);
}

TEST_F(PgTest, BareParamsAndQuestionMarksInLiterals) {
  auto s = conn_->Prepare("SELECT CAST(? AS TEXT), '?', 'a''?', CAST(? AS BIGINT) + 1");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  s->Bind(1, "first").Bind(2, 41);
  auto row = s->Step();
  ASSERT_TRUE(row.ok() && *row) << row.status().ToString();
  EXPECT_EQ(s->Text(0), "first");
  EXPECT_EQ(s->Text(1), "?");
  EXPECT_EQ(s->Text(2), "a'?");
  EXPECT_EQ(s->Int(3), 42);
}

TEST_F(PgTest, ParamTypesAreInferredFromContext) {
  ASSERT_TRUE(conn_->ExecScript("CREATE TABLE t (id TEXT PRIMARY KEY, n BIGINT NOT NULL)").ok());
  auto ins = conn_->Prepare("INSERT INTO t(id, n) VALUES (?1, ?2)");
  ASSERT_TRUE(ins.ok());
  ins->Bind(1, "a").Bind(2, true);  // a bool binds as 1
  ASSERT_TRUE(ins->Exec().ok());
  {
    auto sel = conn_->Prepare("SELECT n + ?2, id FROM t WHERE id = ?1 AND n < ?3");
    ASSERT_TRUE(sel.ok()) << sel.status().ToString();
    sel->Bind(1, "a").Bind(2, 10).Bind(3, 2);
    auto row = sel->Step();
    ASSERT_TRUE(row.ok() && *row) << row.status().ToString();
    EXPECT_EQ(sel->Int(0), 11);
  }
  {
    // Unlike SQLite, a parameter inferred as BIGINT refuses a fraction: the
    // row code casts such a parameter to the type it means.
    auto sel = conn_->Prepare("SELECT id FROM t WHERE n < ?1");
    ASSERT_TRUE(sel.ok());
    sel->Bind(1, 2.5);
    auto row = sel->Step();
    EXPECT_FALSE(row.ok());
    EXPECT_EQ(conn_->last_sqlstate(), "22P02");
  }
  auto sel = conn_->Prepare("SELECT id FROM t WHERE n < CAST(?1 AS DOUBLE PRECISION)");
  ASSERT_TRUE(sel.ok());
  sel->Bind(1, 2.5);
  auto row = sel->Step();
  ASSERT_TRUE(row.ok() && *row) << row.status().ToString();
  EXPECT_EQ(sel->Text(0), "a");
}

TEST_F(PgTest, BooleansReadAsInt) {
  auto s = conn_->Prepare("SELECT 1 = 1, 1 = 2, CAST(NULL AS BOOLEAN), EXISTS (SELECT 1)");
  ASSERT_TRUE(s.ok());
  auto row = s->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(s->Int(0), 1);
  EXPECT_EQ(s->Int(1), 0);
  EXPECT_EQ(s->Int(2), 0);
  EXPECT_TRUE(s->IsNull(2));
  EXPECT_EQ(s->Int(3), 1);
}

TEST_F(PgTest, ChangesCountsTheLastWrite) {
  ASSERT_TRUE(conn_->ExecScript("CREATE TABLE t (n BIGINT)").ok());
  ASSERT_TRUE(conn_->ExecScript("INSERT INTO t VALUES (1), (2), (3)").ok());
  EXPECT_EQ(conn_->Changes(), 3);
  {
    auto up = conn_->Prepare("UPDATE t SET n = n + 10 WHERE n >= ?1");
    ASSERT_TRUE(up.ok());
    up->Bind(1, 2);
    ASSERT_TRUE(up->Exec().ok());
  }
  EXPECT_EQ(conn_->Changes(), 2);
  {
    auto sel = conn_->Prepare("SELECT n FROM t");
    ASSERT_TRUE(sel.ok());
    ASSERT_TRUE(sel->Exec().ok());
  }
  EXPECT_EQ(conn_->Changes(), 2);  // a SELECT leaves it, as in SQLite
  {
    auto del = conn_->Prepare("DELETE FROM t WHERE n = ?1 RETURNING n");
    ASSERT_TRUE(del.ok());
    del->Bind(1, 1);
    auto row = del->Step();
    ASSERT_TRUE(row.ok() && *row);
    EXPECT_EQ(del->Int(0), 1);
  }
  EXPECT_EQ(conn_->Changes(), 1);
  {
    auto up = conn_->Prepare("UPDATE t SET n = 0 WHERE n < 0");
    ASSERT_TRUE(up.ok());
    ASSERT_TRUE(up->Exec().ok());
  }
  EXPECT_EQ(conn_->Changes(), 0);
}

TEST_F(PgTest, PendingStatementsRideWithTheNextStatementOrScript) {
  ASSERT_TRUE(conn_->ExecScript("CREATE TABLE kv(k INT PRIMARY KEY, v TEXT)").ok());
  // With a parameterized statement (one pipelined round trip): BEGIN and a
  // SET LOCAL take effect before it, and the transaction stays open.
  conn_->SendWithNext({"BEGIN ISOLATION LEVEL SERIALIZABLE", "SET LOCAL enable_seqscan = off"});
  EXPECT_FALSE(conn_->in_transaction());
  auto ins = conn_->Prepare("INSERT INTO kv(k, v) VALUES (?1, ?2) RETURNING k");
  ASSERT_TRUE(ins.ok());
  ins->Bind(1, 1).Bind(2, "one");
  auto row = ins->Step();
  ASSERT_TRUE(row.ok()) << row.status().ToString();
  ASSERT_TRUE(*row);
  EXPECT_EQ(ins->Int(0), 1);
  EXPECT_TRUE(conn_->in_transaction());
  auto setting = conn_->Prepare("SELECT current_setting('enable_seqscan'), CAST(?1 AS INT)");
  ASSERT_TRUE(setting.ok());
  setting->Bind(1, 0);
  ASSERT_TRUE(*setting->Step());
  EXPECT_EQ(setting->Text(0), "off");
  ASSERT_TRUE(conn_->ExecScript("COMMIT").ok());

  // With a script: the pending statements are its first.
  conn_->SendWithNext({"BEGIN"});
  ASSERT_TRUE(conn_->ExecScript("INSERT INTO kv(k, v) VALUES (2, 'two'); COMMIT").ok());
  EXPECT_EQ(conn_->last_command_tag(), "COMMIT");
  EXPECT_FALSE(conn_->in_transaction());

  // A failing pending statement fails the statement that carried it, with
  // its own SQLSTATE; the connection stays usable.
  conn_->SendWithNext({"BEGIN", "SELECT 1/0"});
  {
    auto read = conn_->Prepare("SELECT v FROM kv WHERE k = ?1");
    ASSERT_TRUE(read.ok());
    read->Bind(1, 1);
    auto failed = read->Step();
    EXPECT_FALSE(failed.ok());
    EXPECT_EQ(conn_->last_sqlstate(), "22012");
    EXPECT_TRUE(conn_->in_failed_transaction());
  }
  ASSERT_TRUE(conn_->ExecScript("ROLLBACK").ok());
  EXPECT_FALSE(conn_->broken());
  auto read = conn_->Prepare("SELECT v FROM kv WHERE k = ?1");
  ASSERT_TRUE(read.ok());
  read->Bind(1, 2);
  auto ok = read->Step();
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  ASSERT_TRUE(*ok);
  EXPECT_EQ(read->Text(0), "two");

  // Dropped statements are never sent.
  conn_->SendWithNext({"BEGIN"});
  conn_->DropPending();
  ASSERT_TRUE(conn_->ExecScript("SELECT 1").ok());
  EXPECT_FALSE(conn_->in_transaction());
}

TEST_F(PgTest, UniqueViolationIsConflictWithSqlstate) {
  ASSERT_TRUE(conn_->ExecScript("CREATE TABLE t (id TEXT PRIMARY KEY)").ok());
  {
    auto ins = conn_->Prepare("INSERT INTO t(id) VALUES (?1)");
    ASSERT_TRUE(ins.ok());
    ins->Bind(1, "a");
    ASSERT_TRUE(ins->Exec().ok());
  }  // (a statement is cached per SQL: one live handle at a time)
  auto again = conn_->Prepare("INSERT INTO t(id) VALUES (?1)");
  ASSERT_TRUE(again.ok());
  again->Bind(1, "a");
  Status st = again->Exec();
  EXPECT_EQ(st.code(), StatusCode::kConflict) << st.ToString();
  EXPECT_NE(st.message().find("23505"), std::string::npos) << st.message();
  EXPECT_FALSE(PgConn::IsRetryable(st));
  EXPECT_EQ(conn_->last_sqlstate(), "23505");
  EXPECT_EQ(conn_->last_constraint(), "t_pkey");
  // A syntax error is an internal error; the connection stays usable.
  Status bad = conn_->ExecScript("SELEC 1");
  EXPECT_EQ(bad.code(), StatusCode::kInternal);
  EXPECT_EQ(conn_->last_sqlstate(), "42601");
  EXPECT_FALSE(conn_->broken());
  auto p = conn_->Prepare("SELECT nope FROM t");
  EXPECT_FALSE(p.ok());
  EXPECT_TRUE(conn_->ExecScript("SELECT 1").ok());
}

TEST_F(PgTest, SerializationFailureIsRetryable) {
  ASSERT_TRUE(conn_->ExecScript("CREATE TABLE x (v BIGINT); INSERT INTO x VALUES (1)").ok());
  auto other = MustOpen(url_);
  ASSERT_NE(other, nullptr);
  // Write skew: both read everything, both insert; SERIALIZABLE aborts one.
  ASSERT_TRUE(conn_->ExecScript("BEGIN ISOLATION LEVEL SERIALIZABLE; SELECT SUM(v) FROM x").ok());
  ASSERT_TRUE(other->ExecScript("BEGIN ISOLATION LEVEL SERIALIZABLE; SELECT SUM(v) FROM x").ok());
  ASSERT_TRUE(conn_->ExecScript("INSERT INTO x VALUES (2)").ok());
  Status st = other->ExecScript("INSERT INTO x VALUES (3)");
  ASSERT_TRUE(conn_->ExecScript("COMMIT").ok());
  EXPECT_EQ(conn_->last_command_tag(), "COMMIT");
  if (st.ok()) st = other->ExecScript("COMMIT");
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_TRUE(PgConn::IsRetryable(st)) << st.ToString();
  EXPECT_EQ(st.message().rfind("retryable:", 0), 0u) << st.message();
  EXPECT_EQ(other->last_sqlstate(), "40001");
  EXPECT_TRUE(PgConn::IsRetryableSqlstate(other->last_sqlstate()));
  other->ExecScript("ROLLBACK").IgnoreError();
}

TEST_F(PgTest, MigrationsApplyOnceAndKeepADatabaseId) {
  auto first = postgres::ApplyPgMigrations(*conn_, 1000);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(*first, postgres::PgMigrationCount());
  auto second = postgres::ApplyPgMigrations(*conn_, 2000);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(*second, 0);
  auto v = postgres::PgSchemaVersion(*conn_);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, postgres::LatestPgSchemaVersion());
  auto id = postgres::DatabaseId(*conn_);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(id->size(), 36u);
  auto again = postgres::DatabaseId(*MustOpen(url_));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *id);
  // The tables SqlStore uses are there, with the sqlite names.
  for (const char* table :
       {"tasks", "comments", "jobs", "requests", "grants", "events", "api_tokens", "cursors",
        "webhook_deliveries", "notification_reads", "schema_migrations", "meta"}) {
    auto s = conn_->Prepare("SELECT to_regclass(CAST(?1 AS TEXT)) IS NOT NULL");
    ASSERT_TRUE(s.ok());
    s->Bind(1, table);
    auto row = s->Step();
    ASSERT_TRUE(row.ok() && *row);
    EXPECT_EQ(s->Int(0), 1) << table;
  }
}

TEST_F(PgTest, ConcurrentMigratorsApplyEachVersionOnce) {
  constexpr int kThreads = 6;
  std::vector<std::thread> threads;
  std::vector<Status> results(kThreads);
  std::atomic<int> applied{0};
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      auto c = PgConn::Open(url_);
      if (!c.ok()) {
        results[i] = c.status();
        return;
      }
      auto r = postgres::ApplyPgMigrations(**c, 1000 + i);
      if (r.ok()) {
        applied += *r;
      } else {
        results[i] = r.status();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& st : results) EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(applied.load(), postgres::PgMigrationCount());
  auto s = conn_->Prepare("SELECT COUNT(*) FROM schema_migrations");
  ASSERT_TRUE(s.ok());
  auto row = s->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(s->Int(0), postgres::PgMigrationCount());
  // From version 11 on, the shared list's numbers (schema_changes.h), as on
  // SQLite; the history below them is PostgreSQL's own 1-8.
  for (const auto& c : sql::SchemaChanges()) {
    auto one = conn_->Prepare("SELECT COUNT(*) FROM schema_migrations WHERE version = ?1");
    ASSERT_TRUE(one.ok());
    one->Bind(1, c.version);
    auto got = one->Step();
    ASSERT_TRUE(got.ok() && *got);
    EXPECT_EQ(one->Int(0), 1) << c.name;
  }
  EXPECT_EQ(postgres::LatestPgSchemaVersion(), sql::SchemaChanges().back().version);
}

std::unique_ptr<PgEngine> MustOpenEngine(const std::string& url, StoreOptions* hooks, bool listen) {
  PgEngineOptions o;
  o.url = url;
  o.pool_size = 4;
  o.listen = listen;
  auto e = PgEngine::Open(o, hooks);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return e.ok() ? std::move(e).value() : nullptr;
}

Status SeedTask(sql::Conn& conn, const std::string& id, TimeMs now) {
  auto s = conn.Prepare(
      "INSERT INTO tasks(id, instruction, piece, status, created_at, updated_at) "
      "VALUES (?1, 'do', 'p', 'queued', ?2, ?2)");
  if (!s.ok()) return s.status();
  s->Bind(1, id).Bind(2, now);
  return s->Exec();
}

Status InsertJob(sql::Conn& conn, const std::string& id, const std::string& task,
                 const std::string& status, TimeMs now) {
  auto s = conn.Prepare(
      "INSERT INTO jobs(id, task_id, status, max_attempts, created_at, updated_at) "
      "VALUES (?1, ?2, ?3, 3, ?4, ?4)");
  if (!s.ok()) return s.status();
  s->Bind(1, id).Bind(2, task).Bind(3, status).Bind(4, now);
  return s->Exec();
}

TEST_F(PgTest, EngineWriteRetriesASerializationFailureAndCommitsOnce) {
  auto engine = MustOpenEngine(url_, nullptr, false);
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(*engine->SchemaVersion(), postgres::LatestPgSchemaVersion());
  ASSERT_TRUE(conn_->ExecScript("INSERT INTO cursors(name, value) VALUES ('c', '0')").ok());
  auto other = MustOpen(url_);
  ASSERT_NE(other, nullptr);
  int attempts = 0;
  sql::TxEffects committed;
  Status st = engine->Write(
      [&](sql::Conn& conn, TimeMs, sql::TxEffects& fx) -> Status {
        ++attempts;
        fx.events.push_back({"t", "", "attempt " + std::to_string(attempts)});
        auto read = conn.Prepare("SELECT value FROM cursors WHERE name = 'c'");
        if (!read.ok()) return read.status();
        auto row = read->Step();
        if (!row.ok()) return row.status();
        std::string v = read->Text(0);
        if (attempts == 1) {
          // Someone else commits a change to the row after our snapshot.
          MAESTRO_RETURN_IF_ERROR(
              other->ExecScript("UPDATE cursors SET value = value || '+other' WHERE name = 'c'"));
        }
        auto up = conn.Prepare("UPDATE cursors SET value = ?1 WHERE name = 'c'");
        if (!up.ok()) return up.status();
        up->Bind(1, v + "+mine");
        return up->Exec();
      },
      &committed, sql::TxKind::kWrite);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(attempts, 2);
  EXPECT_EQ(engine->retries(), 1);
  ASSERT_EQ(committed.events.size(), 1u);
  EXPECT_EQ(committed.events[0].type, "attempt 2");  // the effects of the attempt that committed
  auto s = conn_->Prepare("SELECT value FROM cursors WHERE name = 'c'");
  ASSERT_TRUE(s.ok());
  auto row = s->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(s->Text(0), "0+other+mine");
}

// The settings every transaction runs under: no JIT anywhere (a claim's
// plan once priced past jit_above_cost and compiled for ~15 ms per claim),
// and a claim's statements on their generic plans (its pick was replanned on
// every claim); other writes and reads leave the plan cache to choose.
TEST_F(PgTest, EngineRunsWithoutJitAndClaimsOnGenericPlans) {
  auto engine = MustOpenEngine(url_, nullptr, false);
  ASSERT_NE(engine, nullptr);
  auto show = [](sql::Conn& conn, const std::string& name, std::string* out) -> Status {
    auto s = conn.Prepare("SELECT current_setting('" + name + "')");
    if (!s.ok()) return s.status();
    auto row = s->Step();
    if (!row.ok()) return row.status();
    *out = s->Text(0);
    return Status::Ok();
  };
  for (sql::TxKind kind : {sql::TxKind::kClaim, sql::TxKind::kWrite}) {
    std::string jit, plans;
    Status st = engine->Write(
        [&](sql::Conn& conn, TimeMs, sql::TxEffects&) -> Status {
          MAESTRO_RETURN_IF_ERROR(show(conn, "jit", &jit));
          return show(conn, "plan_cache_mode", &plans);
        },
        nullptr, kind);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(jit, "off");
    EXPECT_EQ(plans, kind == sql::TxKind::kClaim ? "force_generic_plan" : "auto");
  }
  std::string jit, plans;
  ASSERT_TRUE(engine
                  ->Read([&](sql::Conn& conn) -> Status {
                    MAESTRO_RETURN_IF_ERROR(show(conn, "jit", &jit));
                    return show(conn, "plan_cache_mode", &plans);
                  })
                  .ok());
  EXPECT_EQ(jit, "off");
  EXPECT_EQ(plans, "auto");  // SET LOCAL ended with the claim's transaction
}

TEST_F(PgTest, EngineRetriesLosingTheRunningSlotButNotOtherConflicts) {
  auto engine = MustOpenEngine(url_, nullptr, false);
  ASSERT_NE(engine, nullptr);
  sql::TxEffects fx;
  ASSERT_TRUE(engine
                  ->Write(
                      [](sql::Conn& c, TimeMs now, sql::TxEffects&) -> Status {
                        MAESTRO_RETURN_IF_ERROR(SeedTask(c, "T", now));
                        return InsertJob(c, "J1", "T", "running", now);
                      },
                      &fx, sql::TxKind::kWrite)
                  .ok());
  // A second running job for T: the unique index refuses it; the engine
  // reruns the body, which now sees the running job and backs off.
  int attempts = 0;
  Status st = engine->Write(
      [&](sql::Conn& c, TimeMs now, sql::TxEffects&) -> Status {
        if (++attempts == 1) return InsertJob(c, "J2", "T", "running", now);
        return InsertJob(c, "J2", "T", "queued", now);
      },
      &fx, sql::TxKind::kWrite);
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(attempts, 2);
  // Any other unique violation is the caller's conflict, not retried.
  attempts = 0;
  st = engine->Write(
      [&](sql::Conn& c, TimeMs now, sql::TxEffects&) -> Status {
        ++attempts;
        return InsertJob(c, "J2", "T", "queued", now);
      },
      &fx, sql::TxKind::kWrite);
  EXPECT_EQ(st.code(), StatusCode::kConflict) << st.ToString();
  EXPECT_EQ(attempts, 1);
  // An error of the body's own is returned as is, after a rollback.
  st = engine->Write(
      [&](sql::Conn& c, TimeMs now, sql::TxEffects&) -> Status {
        MAESTRO_RETURN_IF_ERROR(SeedTask(c, "T2", now));
        return NotFound("no such thing");
      },
      &fx, sql::TxKind::kWrite);
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  // A body that swallows a failed statement cannot commit.
  st = engine->Write(
      [&](sql::Conn& c, TimeMs now, sql::TxEffects&) -> Status {
        MAESTRO_RETURN_IF_ERROR(SeedTask(c, "T3", now));
        InsertJob(c, "J2", "T", "queued", now).IgnoreError();
        return Status::Ok();
      },
      &fx, sql::TxKind::kWrite);
  EXPECT_FALSE(st.ok());
  Status read = engine->Read([](sql::Conn& c) -> Status {
    auto s = c.Prepare("SELECT COUNT(*) FROM tasks WHERE id IN ('T2', 'T3')");
    if (!s.ok()) return s.status();
    auto row = s->Step();
    if (!row.ok()) return row.status();
    return s->Int(0) == 0 ? Status::Ok() : Internal("a rolled-back task is visible");
  });
  EXPECT_TRUE(read.ok()) << read.ToString();
}

TEST_F(PgTest, PoolBoundsConnectionsAndServesConcurrentWriters) {
  auto engine = MustOpenEngine(url_, nullptr, false);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(conn_->ExecScript("INSERT INTO cursors(name, value) VALUES ('n', '0')").ok());
  constexpr int kThreads = 8, kEach = 10;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) {
        sql::TxEffects fx;
        Status st = engine->Write(
            [](sql::Conn& c, TimeMs, sql::TxEffects&) -> Status {
              auto s = c.Prepare(
                  "UPDATE cursors SET value = CAST(CAST(value AS BIGINT) + 1 AS TEXT) "
                  "WHERE name = 'n'");
              if (!s.ok()) return s.status();
              return s->Exec();
            },
            &fx, sql::TxKind::kWrite);
        if (!st.ok()) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  auto s = conn_->Prepare(
      "SELECT (SELECT value FROM cursors WHERE name = 'n'), "
      "(SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database())");
  ASSERT_TRUE(s.ok());
  auto row = s->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(s->Text(0), std::to_string(kThreads * kEach));
  EXPECT_LE(s->Int(1), 4 + 1);  // the pool plus this test's connection
}

TEST_F(PgTest, NotifyFromAnotherEngineReachesTheHooks) {
  std::mutex mu;
  int jobs_available = 0;
  std::vector<CommittedEvent> heard;
  StoreOptions hooks;
  hooks.on_job_available = [&] {
    std::lock_guard<std::mutex> lock(mu);
    ++jobs_available;
  };
  hooks.on_commit = [&](const std::vector<CommittedEvent>& events) {
    std::lock_guard<std::mutex> lock(mu);
    heard.insert(heard.end(), events.begin(), events.end());
  };
  auto listener = MustOpenEngine(url_, &hooks, true);
  ASSERT_NE(listener, nullptr);
  auto writer = MustOpenEngine(url_, nullptr, false);
  ASSERT_NE(writer, nullptr);
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!listener->listening() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(listener->listening());

  sql::TxEffects fx;
  auto start = std::chrono::steady_clock::now();
  Status st = writer->Write(
      [](sql::Conn& c, TimeMs now, sql::TxEffects& effects) -> Status {
        MAESTRO_RETURN_IF_ERROR(SeedTask(c, "T", now));
        effects.job_available = true;
        effects.events.push_back({"T", "J", "job.status"});
        effects.events.push_back({"T", "", "task.created"});
        return Status::Ok();
      },
      &fx, sql::TxKind::kWrite);
  ASSERT_TRUE(st.ok()) << st.ToString();
  bool got = false;
  while (!got && std::chrono::steady_clock::now() < start + std::chrono::seconds(1)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::lock_guard<std::mutex> lock(mu);
    got = jobs_available >= 1 && heard.size() >= 2;
  }
  EXPECT_TRUE(got) << "no notification within a second";
  int before = 0;
  {
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_EQ(heard.size(), 2u);
    EXPECT_EQ(heard[0].task_id, "T");
    EXPECT_EQ(heard[0].job_id, "J");
    EXPECT_EQ(heard[0].type, "job.status");
    EXPECT_EQ(heard[1].job_id, "");
    EXPECT_EQ(heard[1].type, "task.created");
    before = jobs_available;
  }

  // A write that fails notifies nobody (NOTIFY is sent only by a commit).
  st = writer->Write(
      [](sql::Conn& c, TimeMs now, sql::TxEffects& effects) -> Status {
        MAESTRO_RETURN_IF_ERROR(SeedTask(c, "T", now));  // duplicate: 23505
        effects.job_available = true;
        return Status::Ok();
      },
      &fx, sql::TxKind::kWrite);
  EXPECT_EQ(st.code(), StatusCode::kConflict);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(jobs_available, before);
}

TEST_F(PgTest, ListenerReconnectsAfterItsConnectionIsKilled) {
  std::atomic<int> jobs_available{0};
  StoreOptions hooks;
  hooks.on_job_available = [&] { ++jobs_available; };
  auto listener = MustOpenEngine(url_, &hooks, true);
  ASSERT_NE(listener, nullptr);
  auto wait_for = [](const std::function<bool()>& cond, int ms) {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (!cond() && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return cond();
  };
  ASSERT_TRUE(wait_for([&] { return listener->listening(); }, 5000));
  EXPECT_EQ(jobs_available.load(), 0);  // no wake-up for the first connect
  // Kill the listening backend (the one that LISTENs).
  ASSERT_TRUE(conn_
                  ->ExecScript("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                               "WHERE datname = current_database() AND pid <> pg_backend_pid() "
                               "AND query LIKE 'LISTEN%'")
                  .ok());
  // The reconnect wakes the workers once (notifications may have been lost).
  ASSERT_TRUE(wait_for([&] { return jobs_available.load() >= 1; }, 5000));
  ASSERT_TRUE(wait_for([&] { return listener->listening(); }, 5000));
  int before = jobs_available.load();
  ASSERT_TRUE(conn_->ExecScript("NOTIFY maestro_jobs").ok());
  EXPECT_TRUE(wait_for([&] { return jobs_available.load() > before; }, 1000));
  listener->Stop();
  listener->Stop();  // idempotent
  EXPECT_FALSE(listener->listening());
}

}  // namespace
}  // namespace maestro
