// A thin RAII layer over the SQLite C API used by SqliteStore.
//
// SqliteConn owns one sqlite3* connection and caches its prepared
// statements; Stmt is a borrowed, reset-on-destruction handle to one of them.
// Errors become Status: SQLITE_BUSY/LOCKED map to kUnavailable (another
// process holds the write lock past busy_timeout), everything else kInternal.
//
// Thread safety: a connection is used by one thread at a time; SqliteStore's
// pool hands them out.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include <sqlite3.h>

#include "core/status.h"

namespace maestro::sqlite {

class Stmt {
 public:
  explicit Stmt(sqlite3_stmt* s) : s_(s) {}
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  Stmt(Stmt&& o) noexcept : s_(o.s_) { o.s_ = nullptr; }

  // 1-based parameter index. Empty strings bind as '' (use BindNullable for NULL).
  Stmt& Bind(int i, std::string_view v);
  Stmt& Bind(int i, int64_t v);
  Stmt& Bind(int i, int v) { return Bind(i, static_cast<int64_t>(v)); }
  Stmt& Bind(int i, double v);
  Stmt& BindNull(int i);
  // Binds NULL for "" — used for optional foreign-key-like columns.
  Stmt& BindNullable(int i, std::string_view v);
  Stmt& BindNullable(int i, int64_t v);  // 0 -> NULL

  // Returns true when a row is available, false when done.
  Result<bool> Step();
  // Steps to completion, expecting no rows.
  Status Exec();

  std::string Text(int col) const;
  int64_t Int(int col) const;
  double Double(int col) const;
  bool IsNull(int col) const;

 private:
  sqlite3_stmt* s_;
};

class SqliteConn {
 public:
  // Opens (creating) `path` with WAL, foreign keys and a busy timeout.
  static Result<std::unique_ptr<SqliteConn>> Open(const std::string& path);
  ~SqliteConn();
  SqliteConn(const SqliteConn&) = delete;
  SqliteConn& operator=(const SqliteConn&) = delete;

  // Executes one or more statements without results (DDL, BEGIN, COMMIT).
  Status ExecScript(const std::string& sql);
  // A cached prepared statement for `sql`, ready to bind.
  Result<Stmt> Prepare(const std::string& sql);
  int64_t Changes() const;
  sqlite3* raw() { return db_; }

 private:
  explicit SqliteConn(sqlite3* db) : db_(db) {}
  sqlite3* db_;
  std::unordered_map<std::string, sqlite3_stmt*> cache_;
};

Status ErrorFromSqlite(sqlite3* db, int rc, std::string_view what);

}  // namespace maestro::sqlite
