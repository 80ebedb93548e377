#include "store/sqlite/sqlite_backup.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <cctype>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "core/durable_file.h"
#include "store/sqlite/db.h"
#include "store/sqlite/migrations.h"

namespace maestro::sqlite {
namespace {

// The first 16 bytes of every SQLite 3 database file (fileformat.html).
constexpr char kSqliteMagic[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f',
                                   'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};
// A restore's copy, beside the database it replaces.
constexpr char kRestoreTempSuffix[] = ".restore-tmp";
// SQLite's side files of a database: a stale one would be replayed (WAL)
// or rolled back (journal) into the restored file.
constexpr const char* kSideSuffixes[] = {"-wal", "-shm", "-journal"};
constexpr int kMaxBackupRestarts = 3;

// One raw connection, closed on destruction. Backup and restore need
// sqlite3* itself (the backup API, locking pragmas), not the Conn seam.
class RawDb {
 public:
  RawDb() = default;
  ~RawDb() { sqlite3_close(db_); }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  Status Open(const std::string& name, int flags, int busy_ms) {
    int rc = sqlite3_open_v2(name.c_str(), &db_, flags, nullptr);
    if (rc != SQLITE_OK) return ErrorFromSqlite(db_, rc, "open " + name);
    sqlite3_busy_timeout(db_, busy_ms);
    // The file may come from anywhere: no SQL functions with side effects
    // from its schema (views, triggers), no writes to sqlite_schema.
    sqlite3_db_config(db_, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
    sqlite3_db_config(db_, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    return Status::Ok();
  }
  Status Exec(const std::string& sql) {
    int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
    return rc == SQLITE_OK ? Status::Ok() : ErrorFromSqlite(db_, rc, sql);
  }
  // The first column of the first row, as text ("" when there is no row).
  Result<std::string> QueryText(const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr);
    if (rc != SQLITE_OK) return ErrorFromSqlite(db_, rc, sql);
    std::string out;
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
      const unsigned char* t = sqlite3_column_text(s, 0);
      if (t) out.assign(reinterpret_cast<const char*>(t), sqlite3_column_bytes(s, 0));
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return ErrorFromSqlite(db_, rc, sql);
    return out;
  }
  Result<int64_t> QueryInt(const std::string& sql) {
    MAESTRO_ASSIGN_OR_RETURN(std::string text, QueryText(sql));
    return text.empty() ? 0 : std::stoll(text);
  }
  sqlite3* get() const { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

bool IsLockError(const Status& st) { return st.code() == StatusCode::kUnavailable; }

// lstat: true when something (a dangling symlink included) is at `path`.
bool SomethingAt(const std::string& path) {
  std::error_code ec;
  return std::filesystem::symlink_status(path, ec).type() != std::filesystem::file_type::not_found;
}

bool IsRegularNotLink(const std::string& path) {
  std::error_code ec;
  return std::filesystem::symlink_status(path, ec).type() == std::filesystem::file_type::regular;
}

std::string DirOf(const std::string& path) {
  auto dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

// An SQLite URI that opens `path` read-only as immutable: no lock, no -wal
// or -shm created beside it.
std::string ImmutableUri(const std::string& path) {
  std::string uri = "file:";
  for (unsigned char c : path) {
    if (std::isalnum(c) || std::strchr("/-._~", c)) {
      uri += static_cast<char>(c);
    } else {
      uri += fmt::format("%{:02X}", c);
    }
  }
  return uri + "?immutable=1";
}

// The schema version and task count of a maestro database, after checking
// that it is one: integrity_check ok, schema_migrations and tasks present,
// a version this binary knows. `what` names the file in errors.
Result<DatabaseFileReport> InspectCopy(const std::string& path, const std::string& what) {
  RawDb db;
  auto not_maestro = [&](const std::string& why) {
    return InvalidArgument(fmt::format("{} is not a maestro database: {}", what, why), "FILE");
  };
  Status opened =
      db.Open(ImmutableUri(path), SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOFOLLOW, 0);
  if (!opened.ok()) return not_maestro(opened.message());
  auto integrity = db.QueryText("PRAGMA integrity_check(1)");
  if (!integrity.ok()) return not_maestro(integrity.status().message());
  if (*integrity != "ok") return not_maestro("integrity_check says: " + *integrity);
  for (const char* table : {"schema_migrations", "tasks"}) {
    auto n = db.QueryInt(fmt::format(
        "SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = '{}'", table));
    if (!n.ok()) return not_maestro(n.status().message());
    if (*n == 0) return not_maestro(fmt::format("it has no {} table", table));
  }
  DatabaseFileReport report;
  auto version = db.QueryInt("SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
  if (!version.ok()) return not_maestro(version.status().message());
  report.schema_version = static_cast<int>(*version);
  if (report.schema_version > LatestSchemaVersion()) {
    return InvalidArgument(
        fmt::format("{} has schema version {}, newer than this maestro's {}: restore it with the "
                    "maestro that wrote it (or a newer one)",
                    what, report.schema_version, LatestSchemaVersion()),
        "FILE");
  }
  auto tasks = db.QueryInt("SELECT COUNT(*) FROM tasks");
  if (!tasks.ok()) return not_maestro(tasks.status().message());
  report.tasks = *tasks;
  return report;
}

// Reads the header through `file` (already opened without following links).
Status CheckSqliteHeader(ReadableFile& file, const std::string& what) {
  char head[sizeof(kSqliteMagic)] = {};
  MAESTRO_ASSIGN_OR_RETURN(size_t n, file.ReadAt(0, head, sizeof(head)));
  if (n < sizeof(head) || std::memcmp(head, kSqliteMagic, sizeof(head)) != 0) {
    return InvalidArgument(
        what + " is not a SQLite database (it does not start with \"SQLite format 3\\0\")", "FILE");
  }
  return Status::Ok();
}

// Copies all of `from` into a new `to` (refusing a symlink there) and
// fsyncs it. Returns the bytes copied.
Result<uint64_t> CopyInto(Env& env, ReadableFile& from, const std::string& to) {
  MAESTRO_RETURN_IF_ERROR(env.RemoveFile(to));  // a leftover, or a link planted there
  MAESTRO_ASSIGN_OR_RETURN(auto out, env.NewWritableFile(to, 0644, /*follow_symlinks=*/false));
  std::string buf(1 << 20, '\0');
  uint64_t offset = 0;
  for (;;) {
    MAESTRO_ASSIGN_OR_RETURN(size_t n, from.ReadAt(offset, buf.data(), buf.size()));
    if (n == 0) break;
    MAESTRO_RETURN_IF_ERROR(out->Append(std::string_view(buf.data(), n)));
    offset += n;
  }
  MAESTRO_RETURN_IF_ERROR(out->Sync());
  MAESTRO_RETURN_IF_ERROR(out->Close());
  return offset;
}

// Copies every page of `src` into `dest` with SQLite's backup API, in steps
// of pages_per_step, each from a fresh snapshot, so the copy never holds one
// read transaction for long. A commit by another connection between two
// steps restarts the copy (counted in *restarts); after kMaxBackupRestarts the
// rest is copied in one step, one snapshot (in WAL mode a reader still blocks
// no writer), so a busy server cannot starve it.
Status CopyPages(sqlite3* src, sqlite3* dest, const BackupOptions& options, int* restarts) {
  sqlite3_backup* b = sqlite3_backup_init(dest, "main", src, "main");
  if (!b) return ErrorFromSqlite(dest, sqlite3_errcode(dest), "backup init");
  int last_remaining = -1, busy_ms = 0, rc;
  for (;;) {
    rc = sqlite3_backup_step(b, *restarts >= kMaxBackupRestarts ? -1 : options.pages_per_step);
    if (rc == SQLITE_DONE) break;
    if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
      if ((busy_ms += 10) > options.lock_wait_ms) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    if (rc != SQLITE_OK) break;
    int remaining = sqlite3_backup_remaining(b);
    if (last_remaining >= 0 && remaining >= last_remaining) ++*restarts;
    last_remaining = remaining;
  }
  sqlite3_backup_finish(b);
  return rc == SQLITE_DONE ? Status::Ok() : ErrorFromSqlite(dest, rc, "backup step");
}

// Holds SQLite's exclusive lock on an existing database while a restore
// replaces it: no serve, worker or --db command can have it open meanwhile.
// The guard first folds the database out of WAL mode (journal_mode=DELETE
// needs every other connection gone), so closing it deletes no side file
// by name that a server started after the rename might own.
class ExclusiveGuard {
 public:
  // kConflict when another process has the database open. `tasks` gets the
  // database's task count (-1 when it cannot be read: not a database).
  Status Acquire(const std::string& db_path, int64_t* tasks) {
    *tasks = -1;
    Status st = db_.Open(db_path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, 0);
    if (st.ok()) st = db_.Exec("PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=DELETE;");
    if (st.ok()) st = db_.Exec("BEGIN EXCLUSIVE");
    if (IsLockError(st)) {
      return Conflict(db_path +
                      " is open in a running maestro (serve, worker or a --db command): stop it, "
                      "then restore");
    }
    if (!st.ok()) return Status::Ok();  // unreadable (not a database): nothing holds it
    auto has_tasks =
        db_.QueryInt("SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = 'tasks'");
    if (has_tasks.ok()) {
      auto n = *has_tasks ? db_.QueryInt("SELECT COUNT(*) FROM tasks") : Result<int64_t>(0);
      if (n.ok()) *tasks = *n;
    }
    return Status::Ok();
  }

 private:
  RawDb db_;  // closing it (destruction) releases the lock
};

}  // namespace

Result<DatabaseFileReport> BackupDatabase(Env& env, const std::string& db_path,
                                          const std::string& out, const BackupOptions& options) {
  if (!options.force && SomethingAt(out)) {
    return InvalidArgument(out + " exists; pass --force to replace it", "OUT");
  }
  if (!env.FileExists(db_path)) {
    return NotFound("no database at " + db_path + " (is data_dir right?)");
  }
  RawDb src;
  MAESTRO_RETURN_IF_ERROR(src.Open(db_path, SQLITE_OPEN_READWRITE, options.lock_wait_ms));
  const std::string tmp = out + ".tmp";
  // A crashed earlier backup's leftovers (a stale -wal would be replayed into the copy).
  MAESTRO_RETURN_IF_ERROR(env.RemoveFile(tmp));
  for (const char* side : kSideSuffixes) MAESTRO_RETURN_IF_ERROR(env.RemoveFile(tmp + side));
  int restarts = 0;
  Status copied = [&]() -> Status {
    RawDb dest;
    MAESTRO_RETURN_IF_ERROR(
        dest.Open(tmp, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW, 0));
    MAESTRO_RETURN_IF_ERROR(CopyPages(src.get(), dest.get(), options, &restarts));
    // One self-contained file: the copy carries the source's WAL mark.
    MAESTRO_RETURN_IF_ERROR(dest.Exec("PRAGMA journal_mode=DELETE"));
    return Status::Ok();
  }();
  Result<DatabaseFileReport> report = copied.ok() ? InspectCopy(tmp, "the backup of " + db_path)
                                                  : Result<DatabaseFileReport>(copied);
  if (report.ok()) {
    // fsync the copy, then the rename and the directory entry.
    Status synced = [&]() -> Status {
      MAESTRO_ASSIGN_OR_RETURN(auto f, env.NewAppendableFile(tmp));
      MAESTRO_RETURN_IF_ERROR(f->Sync());
      MAESTRO_RETURN_IF_ERROR(f->Close());
      MAESTRO_ASSIGN_OR_RETURN(report->bytes, FileSize(env, tmp));
      MAESTRO_RETURN_IF_ERROR(env.RenameFile(tmp, out));
      return env.SyncDir(DirOf(out));
    }();
    if (!synced.ok()) report = synced;
  }
  if (!report.ok()) {
    env.RemoveFile(tmp).IgnoreError();
    return report.status();
  }
  report->path = out;
  report->restarts = restarts;
  return report;
}

Result<RestoreReport> RestoreDatabase(Env& env, const std::string& file, const std::string& db_path,
                                      const RestoreOptions& options) {
  // Refused before a byte is copied: a link, a FIFO, a device, a directory,
  // anything that does not start like a SQLite file.
  auto in = env.NewReadableFile(file, /*follow_symlinks=*/false);
  if (!in.ok()) {
    if (in.status().code() == StatusCode::kNotFound) return in.status();
    return InvalidArgument(fmt::format("{}: not a regular file ({})", file, in.status().message()),
                           "FILE");
  }
  MAESTRO_RETURN_IF_ERROR(CheckSqliteHeader(**in, file));
  if (SomethingAt(db_path) && !IsRegularNotLink(db_path)) {
    return InvalidArgument(db_path + " is not a regular file (a symlink?): remove it, then restore",
                           "data_dir");
  }
  MAESTRO_RETURN_IF_ERROR(env.CreateDirs(DirOf(db_path)));
  // What is checked is the copy that is installed, not the path again.
  const std::string tmp = db_path + kRestoreTempSuffix;
  RestoreReport report;
  Status st = [&]() -> Status {
    MAESTRO_ASSIGN_OR_RETURN(uint64_t bytes, CopyInto(env, **in, tmp));
    MAESTRO_ASSIGN_OR_RETURN(report.installed, InspectCopy(tmp, file));
    report.installed.bytes = bytes;
    report.installed.path = db_path;
    ExclusiveGuard guard;  // held until the new file is in place
    if (SomethingAt(db_path)) {
      // A planted side file is removed before SQLite could open it.
      for (const char* side : kSideSuffixes) {
        if (SomethingAt(db_path + side) && !IsRegularNotLink(db_path + side)) {
          MAESTRO_RETURN_IF_ERROR(env.RemoveFile(db_path + side));
        }
      }
      MAESTRO_RETURN_IF_ERROR(guard.Acquire(db_path, &report.replaced_tasks));
      if (report.replaced_tasks != 0 && !options.force) {
        return InvalidArgument(
            report.replaced_tasks > 0
                ? fmt::format("{} holds {} task(s); pass --force to replace it", db_path,
                              report.replaced_tasks)
                : db_path + " exists but cannot be read as a database; pass --force to replace it",
            "force");
      }
    }
    // remove(3) unlinks a symlink itself, never its target.
    for (const char* side : kSideSuffixes) MAESTRO_RETURN_IF_ERROR(env.RemoveFile(db_path + side));
    MAESTRO_RETURN_IF_ERROR(env.RenameFile(tmp, db_path));
    return env.SyncDir(DirOf(db_path));
  }();
  if (!st.ok()) {
    env.RemoveFile(tmp).IgnoreError();
    return st;
  }
  return report;
}

}  // namespace maestro::sqlite
