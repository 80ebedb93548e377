// PgConn: the sql::Conn driver over libpq, one PostgreSQL connection.
//
// Statements written for the seam (`?N`, bare `?`) are rewritten to
// PostgreSQL's `$N` outside string literals, quoted identifiers and `--`
// comments, and prepared once per distinct SQL text per connection (named
// s1, s2, …) with every parameter type left for the server to infer from
// context. Parameters go as text (doubles with 17 significant digits), so
// one binding works whatever type the server inferred; a parameter that is
// never bound is NULL. Results come back as text: Int reads `t`/`f` as 1/0.
//
// Errors become Status with the SQLSTATE in the message:
//   23xxx (integrity: unique, foreign key, check, not null) → kConflict;
//   40001 serialization_failure, 40P01 deadlock → kUnavailable, message
//     starting "retryable:" (IsRetryable) — the whole transaction must be
//     run again;
//   a lost connection (08xxx, 57P0x, PQstatus bad) → kUnavailable;
//   anything else → kInternal.
// The SQLSTATE and constraint name of the error that aborted the current
// transaction stay readable (last_sqlstate, last_constraint) until
// ClearLastError, so an engine can classify a failure even when the row
// code reported it differently.
//
// Thread safety: one thread at a time (PgEngine's pool hands them out).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "store/sql/conn.h"

typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;

namespace maestro::postgres {

class PgStmt;

class PgConn final : public sql::Conn {
 public:
  // `url`: a libpq conninfo, e.g. "postgresql://user@127.0.0.1:5432/db".
  static Result<std::unique_ptr<PgConn>> Open(const std::string& url);
  ~PgConn() override;
  PgConn(const PgConn&) = delete;
  PgConn& operator=(const PgConn&) = delete;

  sql::Dialect dialect() const override { return sql::Dialect::kPostgres; }
  // PQexec: several statements allowed, no parameters; results discarded.
  Status ExecScript(const std::string& sql) override;
  Result<sql::Stmt> Prepare(const std::string& sql) override;
  // Like ExecScript (one round trip for all statements), but keeps the
  // first column of the rows every INSERT … RETURNING returned, in order.
  // The first failing statement's error is returned (PostgreSQL skips the
  // rest of the script).
  Result<std::vector<int64_t>> ExecScriptReturning(const std::string& sql);
  // Statements (no parameters, no rows: BEGIN, SET LOCAL) sent in the same
  // round trip as the next statement or script, instead of one each: a
  // transaction's start costs no round trip of its own. A parameterized
  // statement takes them along through libpq's pipeline mode, a script as
  // its first statements. DropPending forgets statements not yet sent.
  void SendWithNext(std::vector<std::string> statements) { pending_ = std::move(statements); }
  void DropPending() { pending_.clear(); }

  // `v` as an SQL string literal ('…', escaped for this connection), for
  // scripts, which take no parameters.
  std::string Quote(std::string_view v);
  // Rows of the last INSERT/UPDATE/DELETE/MERGE that finished (a SELECT
  // leaves it unchanged, as in SQLite).
  int64_t Changes() const override { return changes_; }

  // SQLSTATE ("40001") / constraint name of the error that failed the
  // current transaction; "" when none since ClearLastError. A follow-on
  // 25P02 (in_failed_sql_transaction) does not replace the cause.
  const std::string& last_sqlstate() const { return last_sqlstate_; }
  const std::string& last_constraint() const { return last_constraint_; }
  void ClearLastError();
  // True once the connection is unusable; the owner should discard it.
  bool broken() const;
  // PQtransactionStatus == PQTRANS_INERROR: a statement failed since BEGIN.
  bool in_failed_transaction() const;
  // Inside a transaction block (failed or not).
  bool in_transaction() const;
  // The command tag of the last ExecScript ("COMMIT", "ROLLBACK", …).
  const std::string& last_command_tag() const { return last_tag_; }
  PGconn* raw() { return conn_; }

  // Status of a kUnavailable error that a rerun of the transaction may fix
  // (serialization failure or deadlock).
  static bool IsRetryable(const Status& st);
  static bool IsRetryableSqlstate(std::string_view sqlstate);
  // `?N` → `$N`, bare `?` → `$<highest so far + 1>` outside '…', "…" and
  // `--` comments. `*max_param` gets the highest parameter number.
  static std::string RewriteParams(std::string_view sql, int* max_param = nullptr);

 private:
  friend class PgStmt;
  explicit PgConn(PGconn* conn);  // out of line: PgStmt is incomplete here
  // Status for a failed result (`res` may be null: connection trouble).
  Status ErrorFrom(const PGresult* res, std::string_view what);
  // Executes prepared statement `name` as PQexecPrepared does, preceded in
  // the same round trip by the pending statements. The result is the
  // statement's; an error is the first any of them raised.
  Result<PGresult*> ExecPreparedAfterPending(const std::string& name,
                                             const std::vector<const char*>& values);
  // The pending statements as a script prefix ("" when none), cleared.
  std::string TakePendingScript();
  void NoteChanges(const PGresult* res);

  PGconn* conn_;
  std::unordered_map<std::string, std::unique_ptr<PgStmt>> cache_;
  int next_stmt_ = 1;
  int64_t changes_ = 0;
  std::string last_sqlstate_;
  std::string last_constraint_;
  std::string last_tag_;
  std::vector<std::string> pending_;
  bool pipeline_stuck_ = false;  // a pipeline that could not be left: discard the conn
};

}  // namespace maestro::postgres
