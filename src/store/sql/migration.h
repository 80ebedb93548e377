// Versioned schema migrations, the part both backends share: a migration's
// shape, applying one inside the caller's open transaction (checked against
// and recorded in schema_migrations), and reading the schema version. Each
// backend keeps its own list (SQL types differ) and its own transaction
// (SQLite: BEGIN IMMEDIATE; PostgreSQL: an advisory lock for processes that
// start together).
#pragma once

#include <cstdint>

#include "core/status.h"
#include "store/sql/conn.h"

namespace maestro::sql {

struct Migration {
  int version;
  const char* name;
  const char* sql;
};

// Applies `m` unless schema_migrations has its version. True when applied.
Result<bool> ApplyMigrationInTx(Conn& conn, const Migration& m, int64_t now_ms);

// The highest applied version (0 for an empty database).
Result<int> ReadSchemaVersion(Conn& conn);

}  // namespace maestro::sql
