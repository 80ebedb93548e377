#include "store/postgres/pg_engine.h"

#include <fmt/format.h>
#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <iterator>
#include <random>

#include "core/json.h"
#include "store/postgres/pg_migrations.h"

namespace maestro::postgres {
namespace {

// pg_advisory_xact_lock key of the event-order lock (CommitScript).
constexpr int64_t kEventOrderLock = 7283451;

constexpr const char* kJobsChannel = "maestro_jobs";
constexpr const char* kEventsChannel = "maestro_events";
constexpr const char* kDeltasChannel = "maestro_deltas";

// A write transaction's statements find their rows by key (ids, the claim
// order of jobs_queued); the planner is told to keep to those indexes. With
// statistics that lag a fast-changing jobs table (a queue grows from empty
// in seconds, autovacuum analyzes a minute later) it otherwise picks a
// bitmap scan of every queued job and a sort to take the first few, or a
// sequential scan — which under SERIALIZABLE also takes a predicate lock on
// the whole table and fails concurrent writers that touched none of the
// same rows (PostgreSQL's documentation suggests steering serializable
// work to index scans for that reason). The settings only price the other
// plans out; a statement that has no index path still runs.
//
// JIT stays off here as well as for the session (PgConn::Open): behind
// PgBouncer in transaction mode a session's SET reaches only the server
// connection it ran on, and a claim is the statement JIT hurts most.
constexpr const char* kKeyedPlans[] = {"SET LOCAL enable_seqscan = off",
                                       "SET LOCAL enable_bitmapscan = off", "SET LOCAL jit = off"};

// A claim's pick is planned once per connection, not per claim. Left to
// choose, PostgreSQL replans it on every execution (~0.3 ms, about as long
// as running it): with the worker's model and profile lists bound as NULL a
// custom plan folds the `? IS NULL OR …` filters away and prices lower than
// the generic plan, which keeps them and evaluates them per row — for a few
// microseconds. Both walk the same indexes in the same order. The claim's
// other statements are keyed lookups that reach their generic plan anyway.
constexpr const char* kGenericPlans = "SET LOCAL plan_cache_mode = force_generic_plan";

// Losing the race for the per-task running slot: another claimer committed
// first; a rerun sees its row and picks something else.
bool IsRetryableFailure(const Status& st, const PgConn& conn) {
  if (PgConn::IsRetryable(st) || PgConn::IsRetryableSqlstate(conn.last_sqlstate())) return true;
  return conn.last_sqlstate() == "23505" && conn.last_constraint() == "jobs_one_running_per_task";
}

// Jittered exponential backoff: uniform in [0, min(50, 2^attempt)] ms.
int64_t BackoffMs(int attempt) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  int64_t cap = std::min<int64_t>(50, int64_t{1} << std::min(attempt, 6));
  return std::uniform_int_distribution<int64_t>(0, cap)(rng);
}

Json EventJson(const CommittedEvent& e) {
  return Json{{"task_id", e.task_id}, {"job_id", e.job_id}, {"type", e.type}};
}

std::string StringField(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::vector<std::string> EventPayloads(const std::vector<CommittedEvent>& events,
                                       size_t max_bytes) {
  std::vector<std::string> out;
  std::string cur;
  for (const auto& e : events) {
    std::string one = DumpJson(EventJson(e));
    // "[" + one + "]" must fit; an event alone too big is dropped (its
    // fields are ids and a type: it cannot happen in practice).
    if (one.size() + 2 > max_bytes) continue;
    if (!cur.empty() && cur.size() + 1 + one.size() + 1 > max_bytes) {
      out.push_back(cur + "]");
      cur.clear();
    }
    cur += cur.empty() ? "[" : ",";
    cur += one;
  }
  if (!cur.empty()) out.push_back(cur + "]");
  return out;
}

std::vector<CommittedEvent> ParseEventPayload(const std::string& payload) {
  std::vector<CommittedEvent> out;
  auto parsed = ParseJson(payload);
  if (!parsed.ok() || !parsed->is_array()) return out;
  for (const auto& j : *parsed) {
    if (!j.is_object()) continue;
    out.push_back({StringField(j, "task_id"), StringField(j, "job_id"), StringField(j, "type")});
  }
  return out;
}

PgEngine::Lease::~Lease() {
  if (c_) e_->Release(std::move(c_));
}

PgEngine::PgEngine(const PgEngineOptions& options, StoreOptions* hooks)
    : options_(options),
      hooks_(hooks),
      clock_(options.clock ? options.clock : SystemClock::Default()) {
  if (options_.pool_size < 1) options_.pool_size = 1;
  if (options_.max_attempts < 1) options_.max_attempts = 1;
}

Result<std::unique_ptr<PgEngine>> PgEngine::Open(const PgEngineOptions& options,
                                                 StoreOptions* hooks) {
  std::unique_ptr<PgEngine> e(new PgEngine(options, hooks));
  {
    auto conn = e->Acquire();
    if (!conn.ok()) return conn.status();
    auto applied = ApplyPgMigrations(**conn, e->clock_->NowMs());
    if (!applied.ok()) return applied.status();
  }
  if (options.listen && hooks) e->listener_ = std::thread([p = e.get()] { p->ListenLoop(); });
  return e;
}

PgEngine::~PgEngine() { Stop(); }

void PgEngine::Stop() {
  {
    MutexLock lock(&stop_mu_);
    stop_ = true;
  }
  stop_cv_.SignalAll();
  if (listener_.joinable()) listener_.join();
}

Result<PgEngine::Lease> PgEngine::Acquire() {
  {
    MutexLock lock(&pool_mu_);
    pool_cv_.Wait(&pool_mu_, [&]() REQUIRES(pool_mu_) {
      return !idle_.empty() || open_ < options_.pool_size;
    });
    if (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(c));
    }
    ++open_;  // reserve the slot; connect outside the lock
  }
  auto c = PgConn::Open(options_.url);
  if (!c.ok()) {
    {
      MutexLock lock(&pool_mu_);
      --open_;
    }
    pool_cv_.Signal();
    return c.status();
  }
  return Lease(this, std::move(c).value());
}

void PgEngine::Release(std::unique_ptr<PgConn> conn) {
  {
    MutexLock lock(&pool_mu_);
    if (conn->broken()) {
      --open_;
    } else {
      idle_.push_back(std::move(conn));
    }
  }
  pool_cv_.Signal();
  // A broken connection is closed here, outside the lock.
}

// The end of a write transaction as ONE round trip: the deferred event rows
// (sql::DefersEvents) under the event-order lock, the NOTIFYs, COMMIT. The
// lock makes event-writing transactions commit one at a time, so event ids
// become visible in id order (readers resume with `id > last`); taking it
// here, in the commit's own message, holds it for server time only, not for
// client round trips.
std::string PgEngine::CommitScript(PgConn& conn, const sql::TxEffects& effects) {
  std::string script;
  if (!effects.deferred.empty()) {
    script += fmt::format("SELECT pg_advisory_xact_lock({});", kEventOrderLock);
    script += "INSERT INTO events(task_id, job_id, type, payload, created_at) VALUES ";
    for (size_t i = 0; i < effects.deferred.size(); ++i) {
      const sql::DeferredEvent& e = effects.deferred[i];
      script += fmt::format("{}({}, {}, {}, {}, {})", i ? ", " : "", conn.Quote(e.task_id),
                            e.job_id.empty() ? "NULL" : conn.Quote(e.job_id), conn.Quote(e.type),
                            conn.Quote(e.payload), e.created_at);
    }
    script += " RETURNING id;";
  }
  if (effects.job_available) script += "SELECT pg_notify('maestro_jobs', '');";
  for (const auto& payload : EventPayloads(effects.events)) {
    script += "SELECT pg_notify('maestro_events', " + conn.Quote(payload) + ");";
  }
  return script + "COMMIT";
}

Status PgEngine::Write(const sql::TxBody& body, sql::TxEffects* committed, sql::TxKind kind) {
  const char* begin = kind == sql::TxKind::kWrite ? "BEGIN ISOLATION LEVEL SERIALIZABLE"
                                                  : "BEGIN ISOLATION LEVEL READ COMMITTED";
  Status last;
  for (int attempt = 0; attempt < options_.max_attempts; ++attempt) {
    if (attempt > 0) {
      retries_.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(BackoffMs(attempt)));
    }
    auto lease = Acquire();
    if (!lease.ok()) return lease.status();
    PgConn& conn = **lease;
    conn.ClearLastError();
    sql::TxEffects effects;
    // BEGIN goes out with the body's first statement (or the commit script).
    std::vector<std::string> start = {begin};
    start.insert(start.end(), std::begin(kKeyedPlans), std::end(kKeyedPlans));
    if (kind == sql::TxKind::kClaim) start.push_back(kGenericPlans);
    conn.SendWithNext(std::move(start));
    Status st = body(conn, clock_->NowMs(), effects);
    if (st.ok() && conn.in_failed_transaction()) {
      // The body went on after a failed statement; nothing of it can commit.
      st = Internal(fmt::format("postgres: transaction failed ([{}]) but the body returned OK",
                                conn.last_sqlstate()));
    }
    bool commit_sent = false;
    if (st.ok()) {
      commit_sent = true;
      auto ids = conn.ExecScriptReturning(CommitScript(conn, effects));
      st = ids.status();
      if (st.ok() && conn.last_command_tag() != "COMMIT") {
        st = Internal("postgres: COMMIT rolled back (" + conn.last_command_tag() + ")");
      }
      if (st.ok() && ids->size() != effects.deferred.size()) {
        st = Internal(fmt::format("postgres: {} event ids for {} events", ids->size(),
                                  effects.deferred.size()));
      }
      if (st.ok()) {
        for (size_t i = 0; i < ids->size(); ++i) effects.deferred[i].id = (*ids)[i];
        if (committed) *committed = std::move(effects);
        return Status::Ok();
      }
    }
    bool retry = IsRetryableFailure(st, conn);
    if (conn.broken()) {
      // Release drops it; the next attempt gets a new connection. Whether a
      // COMMIT the connection died in took effect is unknown: not retried.
      retry = !commit_sent;
    } else {
      // A failed statement before COMMIT leaves the transaction open (and
      // failed); a body that failed before its first statement began none.
      conn.DropPending();
      if (conn.in_transaction()) conn.ExecScript("ROLLBACK").IgnoreError();
    }
    if (!retry) return st;
    last = st;
  }
  return Unavailable(fmt::format("postgres: write gave up after {} attempts: {}",
                                 options_.max_attempts, last.message()));
}

Status PgEngine::Read(const std::function<Status(sql::Conn&)>& body) {
  auto lease = Acquire();
  if (!lease.ok()) return lease.status();
  PgConn& conn = **lease;
  Status st = body(conn);
  // Nothing stays open for the next user, should the body have begun a
  // transaction.
  if (conn.in_transaction()) conn.ExecScript("ROLLBACK").IgnoreError();
  return st;
}

Result<int> PgEngine::SchemaVersion() {
  auto lease = Acquire();
  if (!lease.ok()) return lease.status();
  return PgSchemaVersion(**lease);
}

Status PgEngine::Notify(const std::string& channel, const std::vector<std::string>& payloads) {
  if (payloads.empty()) return Status::Ok();
  auto lease = Acquire();
  if (!lease.ok()) return lease.status();
  PgConn& conn = **lease;
  std::string script;
  for (const std::string& p : payloads) {
    script += "SELECT pg_notify(" + conn.Quote(channel) + ", " + conn.Quote(p) + ");";
  }
  return conn.ExecScript(script);
}

Result<std::string> PgEngine::DatabaseId() {
  auto lease = Acquire();
  if (!lease.ok()) return lease.status();
  return postgres::DatabaseId(**lease);
}

bool PgEngine::SleepUnlessStopped(int64_t ms) {
  MutexLock lock(&stop_mu_);
  return !stop_cv_.WaitFor(&stop_mu_, std::chrono::milliseconds(ms),
                           [&]() REQUIRES(stop_mu_) { return stop_.load(); });
}

void PgEngine::Dispatch(const std::string& channel, const std::string& payload) {
  if (channel == kJobsChannel) {
    if (hooks_->on_job_available) hooks_->on_job_available();
  } else if (channel == kEventsChannel) {
    if (hooks_->on_commit) hooks_->on_commit(ParseEventPayload(payload));
  } else if (channel == kDeltasChannel) {
    if (hooks_->on_deltas) hooks_->on_deltas(payload);
  }
}

void PgEngine::ListenLoop() {
  std::unique_ptr<PgConn> conn;
  int failures = 0;
  bool connected_before = false;
  while (!stop_) {
    if (!conn) {
      auto c = PgConn::Open(options_.url);
      const std::string listen = std::string("LISTEN maestro_jobs; LISTEN maestro_events") +
                                 (hooks_->on_deltas ? "; LISTEN maestro_deltas" : "");
      Status st = c.ok() ? (*c)->ExecScript(listen) : c.status();
      if (!st.ok()) {
        int64_t wait = std::min<int64_t>(5000, int64_t{100} << std::min(failures, 6));
        ++failures;
        if (!SleepUnlessStopped(wait)) break;
        continue;
      }
      conn = std::move(c).value();
      failures = 0;
      listening_ = true;
      // Notifications sent while no LISTEN was open are lost: wake the
      // workers once so they look for themselves.
      if (connected_before && hooks_->on_job_available) hooks_->on_job_available();
      connected_before = true;
    }
    PGconn* raw = conn->raw();
    pollfd pfd{PQsocket(raw), POLLIN, 0};
    int rc = pfd.fd >= 0 ? poll(&pfd, 1, 100) : -1;
    bool lost = rc < 0 && errno != EINTR;
    if (rc > 0 && PQconsumeInput(raw) == 0) lost = true;
    while (PGnotify* n = PQnotifies(raw)) {
      std::string channel = n->relname ? n->relname : "";
      std::string payload = n->extra ? n->extra : "";
      PQfreemem(n);
      Dispatch(channel, payload);
    }
    if (lost || conn->broken()) {
      listening_ = false;
      conn.reset();
      if (!SleepUnlessStopped(100)) break;
    }
  }
  listening_ = false;
}

}  // namespace maestro::postgres
