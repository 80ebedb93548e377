#include "store/sqlite/db.h"

#include <fmt/format.h>

namespace maestro::sqlite {

Status ErrorFromSqlite(sqlite3* db, int rc, std::string_view what) {
  int primary = rc & 0xFF;
  std::string msg =
      fmt::format("sqlite {}: {} ({})", what, db ? sqlite3_errmsg(db) : "", sqlite3_errstr(rc));
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) return Unavailable(msg);
  if (primary == SQLITE_CONSTRAINT) return Conflict(msg);
  return Internal(msg);
}

void SqliteStmt::Reset() {
  sqlite3_reset(s_);
  sqlite3_clear_bindings(s_);
}

void SqliteStmt::BindText(int i, std::string_view v) {
  sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}
void SqliteStmt::BindInt(int i, int64_t v) { sqlite3_bind_int64(s_, i, v); }
void SqliteStmt::BindDouble(int i, double v) { sqlite3_bind_double(s_, i, v); }
void SqliteStmt::BindNull(int i) { sqlite3_bind_null(s_, i); }

Result<bool> SqliteStmt::Step() {
  int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return ErrorFromSqlite(sqlite3_db_handle(s_), rc, "step");
}

std::string SqliteStmt::Text(int col) const {
  const unsigned char* t = sqlite3_column_text(s_, col);
  if (!t) return {};
  return std::string(reinterpret_cast<const char*>(t), sqlite3_column_bytes(s_, col));
}
int64_t SqliteStmt::Int(int col) const { return sqlite3_column_int64(s_, col); }
double SqliteStmt::Double(int col) const { return sqlite3_column_double(s_, col); }
bool SqliteStmt::IsNull(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }

Result<std::unique_ptr<SqliteConn>> SqliteConn::Open(const std::string& path, int lock_wait_ms) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Status st = ErrorFromSqlite(db, rc, "open " + path);
    sqlite3_close(db);
    return st;
  }
  std::unique_ptr<SqliteConn> conn(new SqliteConn(db));
  sqlite3_busy_timeout(db, lock_wait_ms);
  // WAL: readers never block the writer. synchronous=NORMAL keeps every
  // commit across a process crash (only an OS crash can lose the newest ones).
  // No mmap (mmap_size=0): in WAL mode a connection that sees another
  // connection's commit unmaps its whole mapping at its next read
  // transaction (sqlite3PagerSharedLock), and every write-then-read turn of
  // the agent loop paid that munmap and the page faults after it (measured:
  // 270 -> 153 us CPU per loop_bench iteration without it). The page cache
  // (cache_size) serves the reads instead.
  MAESTRO_RETURN_IF_ERROR(conn->ExecScript(
      "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"
      "PRAGMA mmap_size=0; PRAGMA cache_size=-16000; PRAGMA temp_store=MEMORY; "
      "PRAGMA wal_autocheckpoint=" +
      std::to_string(kWalCheckpointPages) + "; PRAGMA journal_size_limit=67108864;"));
  return conn;
}

SqliteConn::~SqliteConn() {
  cache_.clear();  // finalize every statement before closing
  sqlite3_close(db_);
}

Status SqliteConn::ExecScript(const std::string& sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : "";
    sqlite3_free(err);
    Status st = ErrorFromSqlite(db_, rc, "exec");
    return Status(st.code(), st.message() + ": " + msg);
  }
  return Status::Ok();
}

Result<sql::Stmt> SqliteConn::Prepare(const std::string& sql) {
  auto it = cache_.find(sql);
  if (it != cache_.end()) return sql::Stmt(it->second.get());
  sqlite3_stmt* s = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &s, nullptr);
  if (rc != SQLITE_OK) return ErrorFromSqlite(db_, rc, "prepare");
  auto [pos, _] = cache_.emplace(sql, std::make_unique<SqliteStmt>(s));
  return sql::Stmt(pos->second.get());
}

int64_t SqliteConn::Changes() const { return sqlite3_changes64(db_); }

}  // namespace maestro::sqlite
