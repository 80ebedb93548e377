#include "store/sqlite/sqlite_engine.h"

#include <spdlog/spdlog.h>

#include "store/sql/migration.h"
#include "store/sqlite/migrations.h"

namespace maestro::sqlite {

// Returns its connection to the pool on destruction.
class SqliteEngine::PooledConn {
 public:
  PooledConn(SqliteEngine* engine, std::unique_ptr<SqliteConn> conn)
      : engine_(engine), conn_(std::move(conn)) {}
  PooledConn(PooledConn&& o) noexcept = default;
  ~PooledConn() {
    if (conn_) engine_->Release(std::move(conn_));
  }
  SqliteConn& operator*() { return *conn_; }

 private:
  SqliteEngine* engine_;
  std::unique_ptr<SqliteConn> conn_;
};

Result<std::unique_ptr<SqliteEngine>> SqliteEngine::Open(const std::string& path, Clock* clock,
                                                         int lock_wait_ms) {
  std::unique_ptr<SqliteEngine> engine(new SqliteEngine(path, clock, lock_wait_ms));
  auto conn = SqliteConn::Open(path, lock_wait_ms);
  if (!conn.ok()) return conn.status();
  auto applied = ApplyMigrations(**conn, clock->NowMs());
  if (!applied.ok()) return applied.status();
  if (*applied > 0) spdlog::info("store: applied {} migration(s) to {}", *applied, path);
  MutexLock lock(&engine->write_mu_);  // not shared yet; the lock keeps writer_'s annotation true
  engine->writer_ = std::move(conn).value();
  // The writer itself checkpoints only at 4x the signal size.
  engine->checkpointer_ = std::make_unique<Checkpointer>(path, lock_wait_ms, kWalCheckpointPages,
                                                         4 * kWalCheckpointPages);
  engine->checkpointer_->Attach(*engine->writer_);
  return engine;
}

Result<SqliteEngine::PooledConn> SqliteEngine::Acquire() {
  {
    MutexLock lock(&pool_mu_);
    if (!pool_.empty()) {
      auto conn = std::move(pool_.back());
      pool_.pop_back();
      return PooledConn(this, std::move(conn));
    }
  }
  auto conn = SqliteConn::Open(path_, lock_wait_ms_);
  if (!conn.ok()) return conn.status();
  return PooledConn(this, std::move(conn).value());
}

void SqliteEngine::Release(std::unique_ptr<SqliteConn> conn) {
  MutexLock lock(&pool_mu_);
  pool_.push_back(std::move(conn));
}

// Group commit. Each caller queues its body; whoever finds no leader
// becomes the leader, takes every queued body, runs them one after another
// inside ONE transaction (each in its own savepoint, so a failing body rolls
// back only itself) and commits once. Followers sleep until their body has
// been committed by a leader. Under concurrency the hot pages (queue index,
// events, tasks) are written to the WAL once per batch instead of once per
// caller; alone, a caller leads its own batch of one with no hand-off.
Status SqliteEngine::Write(const sql::TxBody& body, sql::TxEffects* committed,
                           sql::TxKind /*kind: writers are serialized*/) {
  PendingWrite op;
  op.body = &body;
  MutexLock lock(&queue_mu_);
  queue_.push_back(&op);
  while (!op.done) {
    if (leader_active_) {
      queue_cv_.Wait(&queue_mu_);
      continue;
    }
    leader_active_ = true;
    // The leader's own body is in the first batch. Bodies queued meanwhile
    // are run at once by this thread, already awake, for a few more
    // batches: handing the lead to a sleeping waiter would leave the
    // database idle for a wake-up on every batch.
    for (int round = 0;; ++round) {
      std::vector<PendingWrite*> batch;
      batch.swap(queue_);
      lock.Unlock();
      RunBatch(batch);
      lock.Lock();
      for (PendingWrite* w : batch) w->done = true;
      queue_cv_.SignalAll();
      if (queue_.empty() || round == kExtraLeadRounds) break;
    }
    leader_active_ = false;
  }
  lock.Unlock();
  if (op.result.ok()) *committed = std::move(op.effects);
  return op.result;
}

namespace {

// Transaction control through the connection's statement cache: one parse
// per connection instead of one per write (a loop commits twice an iteration).
Status ExecCached(SqliteConn& conn, const std::string& sql) {
  auto s = conn.Prepare(sql);
  if (!s.ok()) return s.status();
  return s->Exec();
}

}  // namespace

void SqliteEngine::RunBatch(const std::vector<PendingWrite*>& batch) {
  MutexLock lock(&write_mu_);
  SqliteConn& conn = *writer_;
  Status begin = ExecCached(conn, "BEGIN IMMEDIATE");
  if (!begin.ok()) {
    for (PendingWrite* w : batch) w->result = begin;
    return;
  }
  const bool single = batch.size() == 1;
  for (PendingWrite* w : batch) {
    const TimeMs now = clock_->NowMs();
    if (single) {
      w->result = (*w->body)(conn, now, w->effects);
    } else {
      w->result = ExecCached(conn, "SAVEPOINT w");
      if (w->result.ok()) w->result = (*w->body)(conn, now, w->effects);
      if (w->result.ok()) {
        w->result = ExecCached(conn, "RELEASE w");
      } else {
        conn.ExecScript("ROLLBACK TO w; RELEASE w").IgnoreError();
      }
    }
    if (!w->result.ok()) w->effects = {};  // a rolled-back body wrote nothing
  }
  if (single && !batch[0]->result.ok()) {
    conn.ExecScript("ROLLBACK").IgnoreError();
    return;
  }
  Status commit = ExecCached(conn, "COMMIT");
  if (!commit.ok()) {
    conn.ExecScript("ROLLBACK").IgnoreError();
    for (PendingWrite* w : batch) {
      if (w->result.ok()) w->result = commit;  // nothing of the batch was kept
    }
  }
}

Status SqliteEngine::Read(const std::function<Status(sql::Conn&)>& body) {
  auto pooled = Acquire();
  if (!pooled.ok()) return pooled.status();
  return body(**pooled);
}

Result<int> SqliteEngine::SchemaVersion() {
  int version = 0;
  Status st = Read([&](sql::Conn& conn) -> Status {
    MAESTRO_ASSIGN_OR_RETURN(version, sql::ReadSchemaVersion(conn));
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return version;
}

}  // namespace maestro::sqlite
