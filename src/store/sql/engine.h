// SqlEngine: how SqlStore's transactions run on one database — connections,
// BEGIN/COMMIT, retries, and telling other processes that something changed.
//
// SqliteEngine (store/sqlite/sqlite_engine.h) group-commits the writes of one
// process on one writer connection; PgEngine (store/postgres/pg_engine.h)
// runs each write on a pooled connection and retries it on a serialization
// failure or deadlock, so a body must be safe to run again from scratch.
//
// Thread safety: Write and Read may be called from any thread concurrently.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "store/sql/conn.h"
#include "store/store.h"

namespace maestro::sql {

// An event row an engine inserts at commit instead of in the body (see
// DefersEvents in dialect.h); `id` is the id it got, set once committed.
struct DeferredEvent {
  std::string task_id, job_id, type, payload;
  TimeMs created_at = 0;
  int64_t id = 0;
};

// What a write transaction did that others may want to hear after commit.
struct TxEffects {
  bool job_available = false;           // a job became claimable
  std::vector<CommittedEvent> events;   // the event rows it wrote
  std::vector<DeferredEvent> deferred;  // event rows still to insert at commit
};

// What a write transaction is for, which decides its isolation on
// PostgreSQL (SQLite's writers are serialized: all run alike).
enum class TxKind {
  // SERIALIZABLE: the row code was written for serialized writers.
  kWrite,
  // READ COMMITTED: under SERIALIZABLE concurrent claimers abort each other
  // (each read the queue head another took). SKIP LOCKED hands each claimer
  // its own row, the row lock re-checks its status, and the unique index
  // jobs_one_running_per_task keeps one running job per task (a lost race
  // is retried).
  kClaim,
  // READ COMMITTED, kept apart by row locks instead, for the hot writes of
  // jobs: finishes and enqueues. Under SERIALIZABLE two workers' batch
  // finishes failed each other about one time in three, and two producers'
  // batch enqueues one time in four: PostgreSQL keeps predicate locks on
  // index pages, not entries, and each writes new index entries next to
  // the ones the other read. The protocol:
  //  - a finish locks the jobs it ends before it reads, in a later
  //    statement, what their outcomes depend on: their undelivered comments
  //    and open children (FinishInTx);
  //  - a comment gate locks the job it decides on (NewestJob);
  //  - a child's end writes its parent's row before it counts the siblings
  //    (AfterTransitions' fan-in);
  //  - an enqueue decides on nothing it reads; the task mirror's update
  //    re-checks its row after waiting for it (`last_job_seq <= seq`).
  // A SERIALIZABLE writer that comes second on a locked row fails
  // retryably; a READ COMMITTED one reads the row as committed.
  kRowLocked,
};

// One attempt of a write transaction. `effects` starts empty on every attempt.
using TxBody = std::function<Status(Conn& conn, TimeMs now, TxEffects& effects)>;

class SqlEngine {
 public:
  virtual ~SqlEngine() = default;
  virtual Dialect dialect() const = 0;
  // Runs `body` atomically and durably; returns after the commit holding it,
  // with `*committed` set to the effects of the attempt that committed.
  virtual Status Write(const TxBody& body, TxEffects* committed, TxKind kind) = 0;
  // Runs `body` on a connection outside an explicit transaction.
  virtual Status Read(const std::function<Status(Conn&)>& body) = 0;
  // Schema version after migrations.
  virtual Result<int> SchemaVersion() = 0;
};

}  // namespace maestro::sql
