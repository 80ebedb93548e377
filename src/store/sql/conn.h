// The SQL seam between SqlStore (the store's row code, shared by both
// backends) and a database driver: SQLite (store/sqlite/db.h) or PostgreSQL
// through libpq (store/postgres/pg_conn.h).
//
// Statements are written once, in the SQL both databases accept, with
// numbered parameters `?1 … ?N` (a driver rewrites them to its own form:
// PostgreSQL's `$N`). Where a parameter's type cannot be inferred from its
// context (`?3 IS NULL`, a bare SELECT of a parameter) the statement casts it
// (`CAST(?3 AS TEXT)`), which both accept. The few constructs the two spell
// differently come from dialect.h.
//
// Stmt is a borrowed handle to a statement cached by its Conn; destroying it
// resets the statement for the next use. A Conn and its statements are used
// by one thread at a time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"
#include "store/sql/dialect.h"

namespace maestro::sql {

// What a driver implements for one prepared statement.
class StmtImpl {
 public:
  virtual ~StmtImpl() = default;
  // 1-based parameter index.
  virtual void BindText(int i, std::string_view v) = 0;
  virtual void BindInt(int i, int64_t v) = 0;
  virtual void BindDouble(int i, double v) = 0;
  virtual void BindNull(int i) = 0;
  // The first Step executes; true while a row is available.
  virtual Result<bool> Step() = 0;
  virtual std::string Text(int col) const = 0;
  // Booleans read as 0/1 (PostgreSQL returns `t`/`f`).
  virtual int64_t Int(int col) const = 0;
  virtual double Double(int col) const = 0;
  virtual bool IsNull(int col) const = 0;
  // Clears bindings and results so the statement can run again.
  virtual void Reset() = 0;
};

class Stmt {
 public:
  explicit Stmt(StmtImpl* s) : s_(s) {}
  ~Stmt() {
    if (s_) s_->Reset();
  }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  Stmt(Stmt&& o) noexcept : s_(o.s_) { o.s_ = nullptr; }

  // Empty strings bind as '' (use BindNullable for NULL).
  Stmt& Bind(int i, std::string_view v) {
    s_->BindText(i, v);
    return *this;
  }
  Stmt& Bind(int i, const std::string& v) { return Bind(i, std::string_view(v)); }
  Stmt& Bind(int i, const char* v) { return Bind(i, std::string_view(v)); }
  Stmt& Bind(int i, int64_t v) {
    s_->BindInt(i, v);
    return *this;
  }
  Stmt& Bind(int i, int v) { return Bind(i, static_cast<int64_t>(v)); }
  Stmt& Bind(int i, bool v) { return Bind(i, static_cast<int64_t>(v ? 1 : 0)); }
  Stmt& Bind(int i, double v) {
    s_->BindDouble(i, v);
    return *this;
  }
  Stmt& BindNull(int i) {
    s_->BindNull(i);
    return *this;
  }
  // Binds NULL for "" — used for optional foreign-key-like columns.
  Stmt& BindNullable(int i, std::string_view v) { return v.empty() ? BindNull(i) : Bind(i, v); }
  Stmt& BindNullable(int i, int64_t v) { return v == 0 ? BindNull(i) : Bind(i, v); }  // 0 -> NULL

  // Returns true when a row is available, false when done.
  Result<bool> Step() { return s_->Step(); }
  // Steps to completion, discarding any rows, then resets the statement, so
  // a loop of Bind + Exec over one prepared statement runs each binding
  // (SQLite refuses binds on a statement that ran and is not reset, and
  // would re-run the old ones). Changes() is counted before the reset.
  Status Exec() {
    Status st = Status::Ok();
    for (;;) {
      auto row = Step();
      if (!row.ok()) {
        st = row.status();
        break;
      }
      if (!*row) break;
    }
    s_->Reset();
    return st;
  }

  std::string Text(int col) const { return s_->Text(col); }
  int64_t Int(int col) const { return s_->Int(col); }
  double Double(int col) const { return s_->Double(col); }
  bool IsNull(int col) const { return s_->IsNull(col); }

 private:
  StmtImpl* s_;
};

class Conn {
 public:
  virtual ~Conn() = default;
  virtual Dialect dialect() const = 0;
  // Executes one or more statements without parameters or results (DDL,
  // BEGIN, COMMIT).
  virtual Status ExecScript(const std::string& sql) = 0;
  // A cached prepared statement for `sql`, ready to bind.
  virtual Result<Stmt> Prepare(const std::string& sql) = 0;
  // Rows inserted, updated or deleted by the last statement that finished.
  virtual int64_t Changes() const = 0;
};

}  // namespace maestro::sql
