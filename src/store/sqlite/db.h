// The SQLite driver behind the sql::Conn seam (store/sql/conn.h).
//
// SqliteConn owns one sqlite3* connection and caches its prepared
// statements (one SqliteStmt each). Errors become Status: SQLITE_BUSY/LOCKED
// map to kUnavailable (another process holds the write lock past
// busy_timeout), constraint violations to kConflict, everything else
// kInternal.
//
// Thread safety: a connection is used by one thread at a time; SqliteEngine
// hands them out.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/status.h"
#include "store/sql/conn.h"

namespace maestro::sqlite {

class SqliteStmt final : public sql::StmtImpl {
 public:
  explicit SqliteStmt(sqlite3_stmt* s) : s_(s) {}
  ~SqliteStmt() override { sqlite3_finalize(s_); }
  SqliteStmt(const SqliteStmt&) = delete;
  SqliteStmt& operator=(const SqliteStmt&) = delete;

  void BindText(int i, std::string_view v) override;
  void BindInt(int i, int64_t v) override;
  void BindDouble(int i, double v) override;
  void BindNull(int i) override;
  Result<bool> Step() override;
  std::string Text(int col) const override;
  int64_t Int(int col) const override;
  double Double(int col) const override;
  bool IsNull(int col) const override;
  void Reset() override;

 private:
  sqlite3_stmt* s_;
};

// The WAL size (pages) at which it is checkpointed: SQLite's own
// wal_autocheckpoint on every connection, the Checkpointer's signal on the
// engine's writer.
inline constexpr int kWalCheckpointPages = 4'000;

class SqliteConn final : public sql::Conn {
 public:
  // Opens (creating) `path` with WAL, foreign keys and a busy timeout of
  // `lock_wait_ms` (another process may hold the write lock).
  static Result<std::unique_ptr<SqliteConn>> Open(const std::string& path, int lock_wait_ms);
  ~SqliteConn() override;
  SqliteConn(const SqliteConn&) = delete;
  SqliteConn& operator=(const SqliteConn&) = delete;

  sql::Dialect dialect() const override { return sql::Dialect::kSqlite; }
  Status ExecScript(const std::string& sql) override;
  Result<sql::Stmt> Prepare(const std::string& sql) override;
  int64_t Changes() const override;

  // For the driver's own hooks (Checkpointer); not for SQL.
  sqlite3* handle() const { return db_; }

 private:
  explicit SqliteConn(sqlite3* db) : db_(db) {}
  sqlite3* db_;
  std::unordered_map<std::string, std::unique_ptr<SqliteStmt>> cache_;
};

Status ErrorFromSqlite(sqlite3* db, int rc, std::string_view what);

}  // namespace maestro::sqlite
