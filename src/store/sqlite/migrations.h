// Versioned schema migrations for the SQLite store.
//
// Each migration runs once, inside its own IMMEDIATE transaction together
// with its row in schema_migrations, so a crash mid-migration leaves the
// previous version intact and a restart re-applies nothing twice. Concurrent
// processes starting against one file serialize on the write lock and the
// second sees the version already applied.
#pragma once

#include "core/status.h"
#include "store/sqlite/db.h"

namespace maestro::sqlite {

// Applies every migration newer than the database's version. Returns the
// number applied.
Result<int> ApplyMigrations(SqliteConn& conn, int64_t now_ms);

// The newest schema version this binary knows.
int LatestSchemaVersion();

}  // namespace maestro::sqlite
