// `maestro backup OUT` and `maestro restore FILE`: the configured store's
// database to a file and back. Where it sits: cli wiring only — the config
// (--config, MAESTRO_DATA_DIR, the same as serve) names the database, and
// store/sqlite/sqlite_backup.h does the work. PostgreSQL is not backed up
// here: both commands print the documented pg_dump procedure and exit 2.
//
// Exit codes as every command: 0 done, 2 bad input (OUT exists without
// --force, FILE not a maestro database or newer than this binary, a
// database with tasks without --force, PostgreSQL configured), 1 failure
// (the database is open in a running maestro, I/O errors).
//
// Thread safety: main thread only.
#pragma once

#include <string>

namespace maestro::cli {

// Online backup of data_dir/maestro.db into `out`; prints what it wrote.
int Backup(const std::string& config_path, const std::string& out, bool force);

// Replaces data_dir/maestro.db with `file`, refusing while a maestro
// process has the database open; prints what it installed.
int Restore(const std::string& config_path, const std::string& file, bool force);

}  // namespace maestro::cli
