// PgStore: the shared Store for scale-out — SqlStore's row code on
// PgEngine (PostgreSQL through libpq; see pg_engine.h). Selected by
// `database_url` / MAESTRO_DATABASE_URL; many `maestro worker` processes on
// many hosts claim from one database (docs/operations.md).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "store/sql/sql_store.h"

namespace maestro {

namespace postgres {
class PgEngine;
}

struct PgStoreOptions {
  std::string url;     // postgresql://user@host:port/db
  int pool_size = 8;   // connections per process
  bool notify = true;  // LISTEN/NOTIFY wake-ups; false behind PgBouncer (polling)
};

class PgStore final : public SqlStore {
 public:
  // Connects, applies migrations and starts the LISTEN thread.
  static Result<std::unique_ptr<PgStore>> Open(const PgStoreOptions& pg, StoreOptions options);
  ~PgStore() override;

  // The database's random id, written at its first migration: every host's
  // data dir records it, so a worker refuses a data dir of another database.
  Result<std::string> DatabaseId();
  // NOTIFY `channel` with each payload, in order (PgEngine::Notify).
  Status Notify(const std::string& channel, const std::vector<std::string>& payloads);
  // Write attempts rolled back and rerun on a serialization conflict.
  int64_t Retries() const;

 private:
  PgStore(std::unique_ptr<postgres::PgEngine> engine, std::unique_ptr<StoreOptions> hooks,
          StoreOptions options);

  postgres::PgEngine* pg_;               // owned by SqlStore
  std::unique_ptr<StoreOptions> hooks_;  // what the LISTEN thread calls
};

}  // namespace maestro
