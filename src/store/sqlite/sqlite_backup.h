// SQLite backup and restore: the file half of `maestro backup` and `maestro
// restore` (cli/backup.h reads the config and prints). Where it sits: beside
// the SQLite driver, below the CLI; nothing else calls it. PostgreSQL is not
// here — its backup is pg_dump (docs/operations.md "Backup and restore").
//
// Backup is online: SQLite's backup API copies the live database page by
// page from a read snapshot (WAL: the server's writers are never blocked)
// into `out` + ".tmp", which is made a self-contained rollback-journal file,
// fsynced and renamed over `out` (then the directory is fsynced). A
// committed transaction is in the backup iff it committed before the
// snapshot the copy finished from, so every task committed before the
// backup started is in it.
//
// Restore replaces `db_path` with a checked copy of `file`: the header
// ("SQLite format 3\0") is read first through a descriptor that refuses a
// symlink, a FIFO or a device; SQLite's integrity_check must say "ok"; the
// file must hold maestro's schema_migrations table at a version this binary
// knows. It refuses while any process has the database open — maestro
// keeps no lock file; every serve, worker or --db command holds SQLite's
// own lock on the file while it is open, so restore takes SQLite's
// exclusive lock (locking_mode=EXCLUSIVE, BEGIN EXCLUSIVE, no busy wait)
// and holds it until the new file is in place. The copy goes through a temp
// file beside the database, fsync and rename; then the stale -wal and -shm
// are unlinked (a symlink planted there is unlinked itself, its target
// never touched). The next `maestro serve` migrates the file forward.
//
// Thread safety: reentrant; one call per database at a time (the
// command-line tools call each once).
#pragma once

#include <cstdint>
#include <string>

#include "core/env.h"
#include "core/status.h"

namespace maestro::sqlite {

// What a backup wrote or a restore installed.
struct DatabaseFileReport {
  std::string path;
  uint64_t bytes = 0;
  int schema_version = 0;
  int64_t tasks = 0;
  int restarts = 0;  // backup: copies restarted by a commit between two steps
};

struct BackupOptions {
  bool force = false;  // replace an existing `out`
  // Pages copied per backup step. If another connection commits between two
  // steps SQLite restarts the copy; after kMaxRestarts restarts the rest is
  // copied in one step (one read snapshot), so a busy server cannot starve it.
  int pages_per_step = 1024;
  int lock_wait_ms = 5000;  // busy wait on the source (WAL recovery only)
};

// Copies the live database at `db_path` into `out`. kInvalidArgument when
// `out` exists and !force, kNotFound when there is no database at `db_path`.
Result<DatabaseFileReport> BackupDatabase(Env& env, const std::string& db_path,
                                          const std::string& out, const BackupOptions& options);

struct RestoreOptions {
  bool force = false;  // replace a database that holds tasks
};

struct RestoreReport {
  DatabaseFileReport installed;  // path = db_path
  int64_t replaced_tasks = -1;   // tasks in the database it replaced; -1: none, or unreadable
};

// Replaces the database at `db_path` with `file`. kInvalidArgument for a
// file that is not a maestro database of a known version (naming both
// versions when it is newer) or not a regular file, or for a database with
// tasks and !force; kConflict while a process has `db_path` open.
Result<RestoreReport> RestoreDatabase(Env& env, const std::string& file, const std::string& db_path,
                                      const RestoreOptions& options);

}  // namespace maestro::sqlite
