// The schema's changes from version 11 on: ONE list for both backends, each
// change written in both dialects under one version number, so "schema 12"
// means the same tables on SQLite and PostgreSQL (issue 46).
//
// Where it sits: below the two backends' migrators (sqlite/migrations.cc,
// postgres/pg_migrations.cc), which apply their own history first — SQLite
// 1–10 and PostgreSQL 1–8, numbered differently because PostgreSQL's first
// migration consolidated SQLite's first three; never edited — and then this
// list, in order, each change in its own transaction with its
// schema_migrations row. A new change goes at the end of this list only.
//
// Thread safety: an immutable static list.
#pragma once

#include <vector>

#include "store/sql/migration.h"

namespace maestro::sql {

// The first version the backends share.
inline constexpr int kFirstSharedSchemaVersion = 11;

struct SchemaChange {
  int version;
  const char* name;
  const char* sqlite;    // SQLite's dialect
  const char* postgres;  // PostgreSQL's (BIGINT for INTEGER, quoted "user", ...)
};

const std::vector<SchemaChange>& SchemaChanges();

// `history` (a backend's own migrations, all below kFirstSharedSchemaVersion)
// followed by the shared changes in that backend's dialect.
std::vector<Migration> WithSharedChanges(std::vector<Migration> history, bool postgres);

}  // namespace maestro::sql
