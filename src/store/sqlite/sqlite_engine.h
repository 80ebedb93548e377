// SqliteEngine: SqlStore's transactions on one SQLite file in WAL mode.
//
// One dedicated writer connection runs every write transaction (BEGIN
// IMMEDIATE), serialized inside the process: waiting on a mutex wakes at
// once, whereas SQLite's busy handler sleeps, and the writer's page cache
// stays warm because no other connection of ours writes. Concurrent writes
// are group-committed (see Write()): one transaction, one savepoint per
// caller, one commit for the batch. Reads use connections from a small pool
// and run in parallel with the writer (WAL). Across processes (`maestro
// worker` sharing the file) SQLite's own lock and busy_timeout serialize
// writers; a worker in another process learns of new jobs by polling. The
// WAL is checkpointed beside the writer (Checkpointer), not inside a commit.
//
// Thread safety: all methods are safe to call concurrently.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/mutex.h"
#include "store/sql/engine.h"
#include "store/sqlite/checkpointer.h"
#include "store/sqlite/db.h"

namespace maestro::sqlite {

class SqliteEngine final : public sql::SqlEngine {
 public:
  // Opens or creates the database at `path` and applies migrations.
  static Result<std::unique_ptr<SqliteEngine>> Open(const std::string& path, Clock* clock,
                                                    int lock_wait_ms);

  sql::Dialect dialect() const override { return sql::Dialect::kSqlite; }
  Status Write(const sql::TxBody& body, sql::TxEffects* committed, sql::TxKind kind) override;
  Status Read(const std::function<Status(sql::Conn&)>& body) override;
  Result<int> SchemaVersion() override;

 private:
  SqliteEngine(std::string path, Clock* clock, int lock_wait_ms)
      : path_(std::move(path)), clock_(clock), lock_wait_ms_(lock_wait_ms) {}

  // How many batches of others a leader runs after its own (Write()).
  static constexpr int kExtraLeadRounds = 4;

  struct PendingWrite {
    const sql::TxBody* body = nullptr;
    Status result;
    sql::TxEffects effects;
    bool done = false;  // guarded by queue_mu_
  };
  void RunBatch(const std::vector<PendingWrite*>& batch);

  class PooledConn;
  Result<PooledConn> Acquire();
  void Release(std::unique_ptr<SqliteConn> conn);

  const std::string path_;
  Clock* const clock_;
  const int lock_wait_ms_;
  Mutex queue_mu_;
  CondVar queue_cv_;
  std::vector<PendingWrite*> queue_ GUARDED_BY(queue_mu_);
  bool leader_active_ GUARDED_BY(queue_mu_) = false;
  Mutex write_mu_;  // held by the leader while it uses writer_
  std::unique_ptr<SqliteConn> writer_ GUARDED_BY(write_mu_);
  // Declared after writer_: destroyed first, while the writer is open.
  std::unique_ptr<Checkpointer> checkpointer_;
  Mutex pool_mu_;
  std::vector<std::unique_ptr<SqliteConn>> pool_ GUARDED_BY(pool_mu_);
};

}  // namespace maestro::sqlite
