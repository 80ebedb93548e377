#include "store/sqlite/migrations.h"

#include <sqlite3.h>

#include "store/sql/schema_changes.h"
#include "support/store_fixture.h"

namespace maestro {
namespace {

using testing::StoreTest;

int CountRows(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr);
  int n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0) : -1;
  sqlite3_finalize(s);
  sqlite3_close(db);
  return n;
}

TEST_F(StoreTest, MigrationsApplyToAnEmptyDatabase) {
  auto v = store_->SchemaVersion();
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, sqlite::LatestSchemaVersion());
  std::string path = dir_.File("maestro.db");
  for (const char* table : {"tasks", "comments", "jobs", "requests", "grants", "events"}) {
    EXPECT_EQ(CountRows(path, std::string("SELECT COUNT(*) FROM sqlite_master WHERE name='") +
                                  table + "'"),
              1)
        << table;
  }
  // Seed 002 statistics columns exist on tasks.
  for (const char* col :
       {"llm_call_count", "tool_call_count", "total_tokens", "compression_count", "error_message",
        "process_id", "hostname", "model", "started_at", "completed_at"}) {
    EXPECT_EQ(CountRows(path, std::string("SELECT COUNT(*) FROM pragma_table_info('tasks') "
                                          "WHERE name='") +
                                  col + "'"),
              1)
        << col;
  }
}

// From version 11 on the backends share one list (schema_changes.h): SQLite
// records each shared change under its shared number, the last is the
// schema's version. (pg_conn_test checks the same on PostgreSQL.)
TEST_F(StoreTest, SharedSchemaChangesKeepTheirVersionNumbers) {
  std::string path = dir_.File("maestro.db");
  const auto& shared = sql::SchemaChanges();
  ASSERT_FALSE(shared.empty());
  EXPECT_EQ(shared.front().version, sql::kFirstSharedSchemaVersion);
  for (const auto& c : shared) {
    EXPECT_EQ(CountRows(path, "SELECT COUNT(*) FROM schema_migrations WHERE version = " +
                                  std::to_string(c.version)),
              1)
        << c.name;
  }
  EXPECT_EQ(sqlite::LatestSchemaVersion(), shared.back().version);
  EXPECT_EQ(CountRows(path, "SELECT COUNT(*) FROM schema_migrations WHERE version < " +
                                std::to_string(sql::kFirstSharedSchemaVersion)),
            sql::kFirstSharedSchemaVersion - 1);
}

TEST_F(StoreTest, MigrationsAreIdempotentAcrossRestartsAndKeepData) {
  auto created = NewTaskWith("ok");
  std::string path = dir_.File("maestro.db");
  int before = CountRows(path, "SELECT COUNT(*) FROM schema_migrations");
  Reopen();
  Reopen();
  EXPECT_EQ(CountRows(path, "SELECT COUNT(*) FROM schema_migrations"), before);
  auto task = store_->GetTask(created.task.id);
  ASSERT_TRUE(task.ok());
  EXPECT_EQ(task->instruction, "do ok");
}

void ExecSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

// A database from before migration 10 gets each task's newest job filled in,
// so the mirror goes on ignoring an older job's transition.
TEST_F(StoreTest, MigrationTenFillsInEachTasksNewestJob) {
  auto created = NewTaskWith("ok");
  Job first = Claim();
  NewJob next;
  next.task_id = created.task.id;
  next.piece = "ok";
  auto second = store_->EnqueueJob(next);
  ASSERT_TRUE(second.ok()) << second.status().ToString();

  store_.reset();
  std::string path = dir_.File("maestro.db");
  ExecSql(path,
          "ALTER TABLE tasks DROP COLUMN last_job_seq;"
          "DELETE FROM schema_migrations WHERE version = 10");
  Reopen();
  EXPECT_EQ(CountRows(path, "SELECT last_job_seq FROM tasks"), second->seq);

  ASSERT_TRUE(store_->FinishJob(LeaseOf(first), JobOutcome::Succeeded("done")).ok());
  auto task = store_->GetTask(created.task.id);
  ASSERT_TRUE(task.ok());
  EXPECT_EQ(task->status, JobStatus::kQueued);  // the newest job's, not the finished one's
  Job claimed = Claim();
  EXPECT_EQ(claimed.id, second->id);
  task = store_->GetTask(created.task.id);
  ASSERT_TRUE(task.ok());
  EXPECT_EQ(task->status, JobStatus::kRunning);
}

TEST_F(StoreTest, DatabaseIsInWalMode) {
  sqlite3* db = nullptr;
  sqlite3_open(dir_.File("maestro.db").c_str(), &db);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &s, nullptr);
  ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)), "wal");
  sqlite3_finalize(s);
  sqlite3_close(db);
}

}  // namespace
}  // namespace maestro
