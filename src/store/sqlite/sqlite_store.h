// SqliteStore: the embedded Store — SqlStore's row code on SqliteEngine
// (one SQLite file in WAL mode; see sqlite_engine.h). The default backend.
#pragma once

#include <memory>
#include <string>

#include "store/sql/sql_store.h"

namespace maestro {

class SqliteStore final : public SqlStore {
 public:
  // Opens or creates the database at `path` and applies migrations.
  static Result<std::unique_ptr<SqliteStore>> Open(const std::string& path, StoreOptions options);

 private:
  using SqlStore::SqlStore;
};

}  // namespace maestro
