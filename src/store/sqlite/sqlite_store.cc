#include "store/sqlite/sqlite_store.h"

#include "store/sqlite/sqlite_engine.h"

namespace maestro {

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path,
                                                       StoreOptions options) {
  auto engine = sqlite::SqliteEngine::Open(path, options.clock, options.lock_wait_ms);
  if (!engine.ok()) return engine.status();
  return std::unique_ptr<SqliteStore>(
      new SqliteStore(std::move(engine).value(), std::move(options)));
}

}  // namespace maestro
