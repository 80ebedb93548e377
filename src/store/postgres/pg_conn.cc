#include "store/postgres/pg_conn.h"

#include <fmt/format.h>
#include <libpq-fe.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "core/strings.h"

namespace maestro::postgres {

// One prepared statement on one PgConn; owned by the conn's cache.
class PgStmt final : public sql::StmtImpl {
 public:
  PgStmt(PgConn* conn, std::string name, int nparams)
      : conn_(conn), name_(std::move(name)), params_(static_cast<size_t>(nparams)) {}
  ~PgStmt() override { Clear(); }

  void BindText(int i, std::string_view v) override { Slot(i) = std::string(v); }
  void BindInt(int i, int64_t v) override { Slot(i) = std::to_string(v); }
  void BindDouble(int i, double v) override {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    Slot(i) = std::string(buf);
  }
  void BindNull(int i) override { Slot(i).reset(); }

  Result<bool> Step() override {
    if (!executed_) {
      executed_ = true;
      std::vector<const char*> values(params_.size());
      for (size_t i = 0; i < params_.size(); ++i) {
        values[i] = params_[i] ? params_[i]->c_str() : nullptr;
      }
      if (!conn_->pending_.empty()) {
        auto r = conn_->ExecPreparedAfterPending(name_, values);
        if (!r.ok()) {
          Clear();
          return r.status();
        }
        res_ = *r;
      } else {
        res_ = PQexecPrepared(conn_->conn_, name_.c_str(), static_cast<int>(values.size()),
                              values.data(), nullptr, nullptr, 0);
      }
      ExecStatusType st = res_ ? PQresultStatus(res_) : PGRES_FATAL_ERROR;
      if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
        Status err = conn_->ErrorFrom(res_, "step");
        Clear();
        return err;
      }
      conn_->NoteChanges(res_);
      rows_ = st == PGRES_TUPLES_OK ? PQntuples(res_) : 0;
      row_ = -1;
    }
    if (row_ < rows_) ++row_;
    return row_ < rows_;
  }

  std::string Text(int col) const override {
    if (!Valid(col)) return {};
    return std::string(PQgetvalue(res_, row_, col),
                       static_cast<size_t>(PQgetlength(res_, row_, col)));
  }
  int64_t Int(int col) const override {
    if (!Valid(col) || PQgetisnull(res_, row_, col)) return 0;
    const char* v = PQgetvalue(res_, row_, col);
    if (v[0] == 't' && v[1] == '\0') return 1;
    if (v[0] == 'f' && v[1] == '\0') return 0;
    return std::strtoll(v, nullptr, 10);
  }
  double Double(int col) const override {
    if (!Valid(col) || PQgetisnull(res_, row_, col)) return 0;
    return std::strtod(PQgetvalue(res_, row_, col), nullptr);
  }
  bool IsNull(int col) const override { return !Valid(col) || PQgetisnull(res_, row_, col); }

  void Reset() override {
    Clear();
    for (auto& p : params_) p.reset();
  }

 private:
  std::optional<std::string>& Slot(int i) {
    if (i < 1) i = 1;  // a caller bug; keep memory safe
    if (static_cast<size_t>(i) > params_.size()) params_.resize(static_cast<size_t>(i));
    return params_[static_cast<size_t>(i - 1)];
  }
  bool Valid(int col) const {
    return res_ && row_ >= 0 && row_ < rows_ && col >= 0 && col < PQnfields(res_);
  }
  void Clear() {
    if (res_) PQclear(res_);
    res_ = nullptr;
    executed_ = false;
    rows_ = 0;
    row_ = -1;
  }

  PgConn* conn_;
  std::string name_;
  std::vector<std::optional<std::string>> params_;
  PGresult* res_ = nullptr;
  bool executed_ = false;
  int rows_ = 0;
  int row_ = -1;
};

namespace {

void IgnoreNotice(void*, const char*) {}

}  // namespace

Result<std::unique_ptr<PgConn>> PgConn::Open(const std::string& url) {
  PGconn* c = PQconnectdb(url.c_str());
  if (!c) return Unavailable("postgres connect: out of memory");
  if (PQstatus(c) != CONNECTION_OK) {
    std::string msg(TrimRight(PQerrorMessage(c), " \n"));
    PQfinish(c);
    return Unavailable("postgres connect: " + msg);
  }
  PQsetNoticeProcessor(c, IgnoreNotice, nullptr);
  std::unique_ptr<PgConn> conn(new PgConn(c));
  // Keep text output stable whatever the server's defaults. JIT off: the
  // store's statements touch a few rows by index, but the planner prices a
  // claim's LIMITed walk of jobs_queued by the whole index, which passes
  // jit_above_cost once the table holds some ten thousand jobs or a claim
  // asks for a batch; every claim then spent ~15 ms compiling code to save
  // microseconds (PostgreSQL caches no JIT code between executions).
  MAESTRO_RETURN_IF_ERROR(
      conn->ExecScript("SET client_encoding = 'UTF8'; SET extra_float_digits = 3; "
                       "SET TIME ZONE 'UTC'; SET jit = off"));
  return conn;
}

PgConn::PgConn(PGconn* conn) : conn_(conn) {}

PgConn::~PgConn() {
  cache_.clear();  // PQclear the statements' results before the connection goes
  PQfinish(conn_);
}

void PgConn::ClearLastError() {
  last_sqlstate_.clear();
  last_constraint_.clear();
}

bool PgConn::broken() const { return pipeline_stuck_ || PQstatus(conn_) != CONNECTION_OK; }

bool PgConn::in_failed_transaction() const { return PQtransactionStatus(conn_) == PQTRANS_INERROR; }

bool PgConn::in_transaction() const {
  PGTransactionStatusType t = PQtransactionStatus(conn_);
  return t == PQTRANS_INTRANS || t == PQTRANS_INERROR;
}

bool PgConn::IsRetryableSqlstate(std::string_view s) { return s == "40001" || s == "40P01"; }

bool PgConn::IsRetryable(const Status& st) {
  return st.code() == StatusCode::kUnavailable && st.message().rfind("retryable:", 0) == 0;
}

Status PgConn::ErrorFrom(const PGresult* res, std::string_view what) {
  const char* state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
  const char* constraint = res ? PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME) : nullptr;
  std::string sqlstate = state ? state : "";
  std::string detail(TrimRight(res ? PQresultErrorMessage(res) : "", " \n"));
  if (detail.empty()) detail = TrimRight(PQerrorMessage(conn_), " \n");
  if (sqlstate != "25P02" || last_sqlstate_.empty()) {
    last_sqlstate_ = sqlstate;
    last_constraint_ = constraint ? constraint : "";
  }
  std::string msg = fmt::format("postgres {}: [{}] {}", what, sqlstate, detail);
  if (IsRetryableSqlstate(sqlstate)) return Unavailable("retryable: " + msg);
  if (sqlstate.rfind("23", 0) == 0) return Conflict(msg);
  if (sqlstate.rfind("08", 0) == 0 || sqlstate.rfind("57P0", 0) == 0 || broken()) {
    return Unavailable(msg);
  }
  return Internal(msg);
}

void PgConn::NoteChanges(const PGresult* res) {
  const char* tag = PQcmdStatus(const_cast<PGresult*>(res));
  if (!tag) return;
  for (const char* verb : {"INSERT", "UPDATE", "DELETE", "MERGE"}) {
    if (std::strncmp(tag, verb, std::strlen(verb)) == 0) {
      changes_ = std::strtoll(PQcmdTuples(const_cast<PGresult*>(res)), nullptr, 10);
      return;
    }
  }
}

std::string PgConn::TakePendingScript() {
  std::string prefix;
  for (const auto& q : pending_) prefix += q + ";";
  pending_.clear();
  return prefix;
}

Result<PGresult*> PgConn::ExecPreparedAfterPending(const std::string& name,
                                                   const std::vector<const char*>& values) {
  std::vector<std::string> pending = std::move(pending_);
  pending_.clear();
  if (PQenterPipelineMode(conn_) != 1) return ErrorFrom(nullptr, "pipeline");
  bool sent = true;
  for (const auto& q : pending) {
    sent = sent && PQsendQueryParams(conn_, q.c_str(), 0, nullptr, nullptr, nullptr, nullptr, 0);
  }
  sent = sent && PQsendQueryPrepared(conn_, name.c_str(), static_cast<int>(values.size()),
                                     values.data(), nullptr, nullptr, 0);
  sent = sent && PQpipelineSync(conn_);
  // Results come per query, each list ended by a NULL, then the sync; after
  // an error the queries left report PGRES_PIPELINE_ABORTED. A broken
  // connection returns NULLs: the loop is bounded by the queries sent.
  PGresult* out = nullptr;
  Status first = sent ? Status::Ok() : ErrorFrom(nullptr, "pipeline send");
  const size_t queries = pending.size() + 1;
  size_t ended = 0;
  while (sent && ended <= queries) {
    PGresult* r = PQgetResult(conn_);
    if (r == nullptr) {
      ++ended;
      if (broken()) break;
      continue;
    }
    ExecStatusType st = PQresultStatus(r);
    if (st == PGRES_PIPELINE_SYNC) {
      PQclear(r);
      break;
    }
    if (ended == pending.size() && out == nullptr &&
        (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK)) {
      out = r;  // the statement's own result
      continue;
    }
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && first.ok()) {
      first = st == PGRES_PIPELINE_ABORTED ? Internal("postgres: pipeline aborted")
                                           : ErrorFrom(r, "step");
    }
    PQclear(r);
  }
  if (PQexitPipelineMode(conn_) != 1) pipeline_stuck_ = true;
  if (first.ok() && out == nullptr) first = ErrorFrom(nullptr, "pipeline");
  if (!first.ok()) {
    if (out) PQclear(out);
    return first;
  }
  return out;
}

Status PgConn::ExecScript(const std::string& sql) {
  PGresult* res = PQexec(conn_, (TakePendingScript() + sql).c_str());
  ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && st != PGRES_EMPTY_QUERY) {
    Status err = ErrorFrom(res, "exec");
    if (res) PQclear(res);
    last_tag_.clear();
    return err;
  }
  last_tag_ = PQcmdStatus(res);
  NoteChanges(res);
  PQclear(res);
  return Status::Ok();
}

Result<std::vector<int64_t>> PgConn::ExecScriptReturning(const std::string& sql) {
  std::vector<int64_t> ids;
  last_tag_.clear();
  if (PQsendQuery(conn_, (TakePendingScript() + sql).c_str()) != 1) {
    return ErrorFrom(nullptr, "exec");
  }
  Status first_error;
  while (PGresult* res = PQgetResult(conn_)) {
    ExecStatusType st = PQresultStatus(res);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && st != PGRES_EMPTY_QUERY) {
      if (first_error.ok()) first_error = ErrorFrom(res, "exec");
    } else {
      last_tag_ = PQcmdStatus(res);
      NoteChanges(res);
      if (st == PGRES_TUPLES_OK && last_tag_.rfind("INSERT", 0) == 0) {
        for (int r = 0; r < PQntuples(res); ++r) {
          ids.push_back(std::strtoll(PQgetvalue(res, r, 0), nullptr, 10));
        }
      }
    }
    PQclear(res);
  }
  if (!first_error.ok()) return first_error;
  return ids;
}

std::string PgConn::Quote(std::string_view v) {
  char* q = PQescapeLiteral(conn_, v.data(), v.size());
  if (q == nullptr) return "NULL";  // only for invalid input encoding; the statement then fails
  std::string out(q);
  PQfreemem(q);
  return out;
}

Result<sql::Stmt> PgConn::Prepare(const std::string& sql) {
  auto it = cache_.find(sql);
  if (it != cache_.end()) return sql::Stmt(it->second.get());
  int nparams = 0;
  std::string text = RewriteParams(sql, &nparams);
  std::string name = fmt::format("s{}", next_stmt_);
  PGresult* res = PQprepare(conn_, name.c_str(), text.c_str(), 0, nullptr);
  if (!res || PQresultStatus(res) != PGRES_COMMAND_OK) {
    Status err = ErrorFrom(res, "prepare");
    if (res) PQclear(res);
    return Status(err.code(), err.message() + " in: " + sql);
  }
  PQclear(res);
  ++next_stmt_;
  auto stmt = std::make_unique<PgStmt>(this, std::move(name), nparams);
  PgStmt* raw = stmt.get();
  cache_.emplace(sql, std::move(stmt));
  return sql::Stmt(raw);
}

std::string PgConn::RewriteParams(std::string_view sql, int* max_param) {
  std::string out;
  out.reserve(sql.size() + 8);
  int highest = 0;
  size_t i = 0;
  while (i < sql.size()) {
    char c = sql[i];
    if (c == '\'' || c == '"') {
      // A literal or quoted identifier; a doubled quote stays inside it.
      size_t j = i + 1;
      while (j < sql.size()) {
        if (sql[j] == c) {
          if (j + 1 < sql.size() && sql[j + 1] == c) {
            j += 2;
            continue;
          }
          break;
        }
        ++j;
      }
      size_t end = j < sql.size() ? j + 1 : sql.size();
      out.append(sql.substr(i, end - i));
      i = end;
    } else if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      size_t j = sql.find('\n', i);
      size_t end = j == std::string_view::npos ? sql.size() : j;
      out.append(sql.substr(i, end - i));
      i = end;
    } else if (c == '?') {
      size_t j = i + 1;
      int n = 0;
      while (j < sql.size() && sql[j] >= '0' && sql[j] <= '9') {
        n = n * 10 + (sql[j] - '0');
        ++j;
      }
      if (j == i + 1) n = highest + 1;
      if (n > highest) highest = n;
      out += '$';
      out += std::to_string(n);
      i = j;
    } else {
      out += c;
      ++i;
    }
  }
  if (max_param) *max_param = highest;
  return out;
}

}  // namespace maestro::postgres
