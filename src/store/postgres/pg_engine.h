// PgEngine: SqlStore's transactions on PostgreSQL.
//
// Writes run on a pooled connection, most as SERIALIZABLE transactions (the
// row code was written for serialized writers; SERIALIZABLE makes
// PostgreSQL abort every interleaving that could differ from some serial
// order); claims, finishes and enqueues at READ COMMITTED, kept apart by
// row locks (sql::TxKind in sql/engine.h). An
// attempt that fails with a serialization failure (40001), a deadlock
// (40P01) or a lost race for jobs_one_running_per_task (23505 on that index)
// is rolled back and the body runs again from scratch after a short jittered
// backoff — so a body must have no effect outside the transaction. Any other
// error rolls back and is returned. A connection found broken is dropped and
// a new one opened on the next use.
//
// A transaction's BEGIN travels with its first statement (PgConn::
// SendWithNext: one pipelined round trip), and it ends with ONE script
// (CommitScript): the event rows the row
// code deferred (sql::DefersEvents) inserted under the event-order advisory
// lock — so event ids become visible in id order, the cursor of SSE resume
// and webhooks — then the NOTIFYs, then COMMIT. Other processes hear about
// a commit through those NOTIFYs (delivered only when it commits):
// `maestro_jobs` when a job became claimable, `maestro_events` with a JSON
// array of {task_id, job_id, type} (split below PostgreSQL's 8000-byte
// payload limit). With `listen`, a background thread LISTENs on both and
// calls the hooks (on_job_available, on_commit) — and, when on_deltas is
// set, LISTENs on `maestro_deltas` too (other processes' live job deltas,
// notify/delta_relay.h); it also hears this
// process's own commits (the hooks are idempotent wake-ups) and calls
// on_job_available after every reconnect, since notifications may have been
// missed in between. Write does NOT call the hooks: SqlStore fires them for
// local commits. `listen` = false (PgBouncer in transaction mode, which
// cannot hold a LISTEN) leaves other processes' changes to polling.
//
// Thread safety: Write, Read, SchemaVersion and DatabaseId may be called
// from any thread concurrently; they block while all pool_size connections
// are in use.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/mutex.h"
#include "core/status.h"
#include "store/postgres/pg_conn.h"
#include "store/sql/engine.h"
#include "store/store.h"

namespace maestro::postgres {

struct PgEngineOptions {
  std::string url;  // libpq conninfo: "postgresql://user@host:port/db"
  int pool_size = 8;
  bool listen = true;
  Clock* clock = nullptr;  // nullptr: SystemClock::Default()
  int max_attempts = 50;   // per Write, counting the first
};

class PgEngine final : public sql::SqlEngine {
 public:
  // Connects, applies migrations, and starts the listener. `hooks` (may be
  // null) must outlive the engine.
  static Result<std::unique_ptr<PgEngine>> Open(const PgEngineOptions& options,
                                                StoreOptions* hooks);
  ~PgEngine() override;
  PgEngine(const PgEngine&) = delete;
  PgEngine& operator=(const PgEngine&) = delete;

  sql::Dialect dialect() const override { return sql::Dialect::kPostgres; }
  Status Write(const sql::TxBody& body, sql::TxEffects* committed, sql::TxKind kind) override;
  Status Read(const std::function<Status(sql::Conn&)>& body) override;
  Result<int> SchemaVersion() override;
  Result<std::string> DatabaseId();
  // NOTIFY `channel` with each payload (each under PostgreSQL's 8000-byte
  // limit), in one round trip on a pooled connection, outside any write
  // transaction — the delta relay (notify/delta_relay.h). In order: one
  // caller's payloads arrive in the order given.
  Status Notify(const std::string& channel, const std::vector<std::string>& payloads);

  // Ends the listener thread (idempotent; the destructor calls it).
  void Stop();
  // True while the listener holds an open LISTEN connection.
  bool listening() const { return listening_.load(); }

  // Attempts that were rolled back and rerun, since Open (for tests and
  // metrics).
  int64_t retries() const { return retries_.load(); }

 private:
  PgEngine(const PgEngineOptions& options, StoreOptions* hooks);

  // A pooled connection, returned to the pool (or dropped when broken) on
  // destruction.
  class Lease {
   public:
    Lease(PgEngine* e, std::unique_ptr<PgConn> c) : e_(e), c_(std::move(c)) {}
    ~Lease();
    Lease(Lease&& o) noexcept : e_(o.e_), c_(std::move(o.c_)) {}
    Lease(const Lease&) = delete;
    PgConn& operator*() { return *c_; }
    PgConn* operator->() { return c_.get(); }

   private:
    PgEngine* e_;
    std::unique_ptr<PgConn> c_;
  };
  Result<Lease> Acquire();
  void Release(std::unique_ptr<PgConn> conn);

  // The deferred events, NOTIFYs and COMMIT of a transaction, as one script.
  static std::string CommitScript(PgConn& conn, const sql::TxEffects& effects);
  void ListenLoop();
  void Dispatch(const std::string& channel, const std::string& payload);
  // Sleeps up to `ms`, returning early (false) when stopping.
  bool SleepUnlessStopped(int64_t ms);

  PgEngineOptions options_;
  StoreOptions* hooks_;
  Clock* clock_;

  Mutex pool_mu_;
  CondVar pool_cv_;
  std::vector<std::unique_ptr<PgConn>> idle_ GUARDED_BY(pool_mu_);
  int open_ GUARDED_BY(pool_mu_) = 0;  // connections handed out or idle

  Mutex stop_mu_;
  CondVar stop_cv_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> listening_{false};
  std::thread listener_;
  std::atomic<int64_t> retries_{0};
};

// The NOTIFY payloads for `events`: compact JSON arrays of
// {task_id, job_id, type}, each shorter than `max_bytes`.
std::vector<std::string> EventPayloads(const std::vector<CommittedEvent>& events,
                                       size_t max_bytes = 7900);
// Parses one payload; malformed input yields what could be read.
std::vector<CommittedEvent> ParseEventPayload(const std::string& payload);

}  // namespace maestro::postgres
