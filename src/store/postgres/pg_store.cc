#include "store/postgres/pg_store.h"

#include "store/postgres/pg_engine.h"

namespace maestro {

Result<std::unique_ptr<PgStore>> PgStore::Open(const PgStoreOptions& pg, StoreOptions options) {
  auto hooks = std::make_unique<StoreOptions>(options);
  postgres::PgEngineOptions eo;
  eo.url = pg.url;
  eo.pool_size = pg.pool_size;
  eo.listen = pg.notify;
  eo.clock = options.clock;
  auto engine = postgres::PgEngine::Open(eo, hooks.get());
  if (!engine.ok()) return engine.status();
  return std::unique_ptr<PgStore>(
      new PgStore(std::move(engine).value(), std::move(hooks), std::move(options)));
}

PgStore::PgStore(std::unique_ptr<postgres::PgEngine> engine, std::unique_ptr<StoreOptions> hooks,
                 StoreOptions options)
    : SqlStore(std::move(engine), std::move(options)),
      pg_(static_cast<postgres::PgEngine*>(&this->engine())),
      hooks_(std::move(hooks)) {}

// The listener calls hooks_, which dies before the base class's engine:
// stop the listener first.
PgStore::~PgStore() { pg_->Stop(); }

Result<std::string> PgStore::DatabaseId() { return pg_->DatabaseId(); }

Status PgStore::Notify(const std::string& channel, const std::vector<std::string>& payloads) {
  return pg_->Notify(channel, payloads);
}

int64_t PgStore::Retries() const { return pg_->retries(); }

}  // namespace maestro
