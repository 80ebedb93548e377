// Claim and finish of SqlStore, batched (store.h: ClaimNextJob, ClaimJobs,
// FinishJob, FinishJobs, FinishAndClaimNext).
//
// The hottest writes run a fixed number of statements however many jobs
// they move: a claim is one pick, one job update, one task update and
// AfterTransitions' one mirror; a finish is (on PostgreSQL) one lock of the
// jobs, one read of them with the facts their outcomes depend on, one job
// update and the mirror. On
// PostgreSQL each statement is a round trip, so a batch of 16 costs what one
// job did, and a single job costs half of what it did when every row was
// read and written on its own. The batch goes to the database as a JSON
// array parameter (sql::JsonRecords / JsonTextArray). The policy stays pure:
// which jobs are eligible is the pick's WHERE, what an outcome does is
// policy::MapOutcome on the row read in this transaction.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <array>
#include <set>
#include <string_view>
#include <unordered_map>

#include "store/policy.h"
#include "store/sql/rows.h"
#include "store/sql/sql_store.h"

namespace maestro {

namespace {

std::optional<std::string> JsonListOrNull(const std::vector<std::string>& items) {
  if (items.empty()) return std::nullopt;
  return Json(items).dump();
}

// The per-task lock as a filter on the job row `alias`: its task has no
// running job.
std::string TaskHasNoRunningJob(std::string_view alias) {
  return fmt::format(
      "(SELECT COUNT(*) FROM jobs r WHERE r.task_id = {}.task_id AND r.status = 'running') = 0",
      alias);
}

// Worker/model/profile match and the per-task lock (a task runs at most one
// job at a time; on PostgreSQL the unique index jobs_one_running_per_task
// also holds it against claimers that ran at the same moment). The lock is
// a COUNT, not NOT EXISTS: PostgreSQL turns NOT EXISTS into an anti-join
// that may read the whole running index once per pick — every entry a
// finished job left there until vacuum — where a subquery per candidate
// looks up its own task only. On PostgreSQL a claimer also passes over the
// tasks another claim is taking (sql::TaskFreeAndLocked).
std::string Eligible(sql::Dialect d) {
  return " AND (j.required_worker IS NULL OR j.required_worker = ?2)"
         " AND (j.model IS NULL OR CAST(?3 AS TEXT) IS NULL OR j.model IN (" +
         sql::JsonTextArray(d, "?3") +
         "))"
         " AND (j.profile IS NULL OR CAST(?4 AS TEXT) IS NULL OR j.profile IN (" +
         sql::JsonTextArray(d, "?4") +
         "))"
         " AND " +
         sql::TaskFreeAndLocked(d, TaskHasNoRunningJob("j"));
}

// The candidates, in claim order: due retries first (oldest due first),
// then queued jobs by priority (higher first), oldest first within one
// priority; k = 0 for a retry, 1 for a queued job. Several may belong to one
// task: the caller keeps the first of each. On PostgreSQL a claimer skips
// the rows another claimer holds instead of queueing behind it.
//
// The limits are literals, not parameters: with `LIMIT $n` PostgreSQL's
// generic plan guesses a tenth of the table and may sort every queued row
// (and the dead index entries the claimed ones leave at the head of
// jobs_queued) instead of walking the index to the first few.
std::string PickSql(sql::Dialect dialect, int retries, int queued) {
  static const auto parts = [](sql::Dialect d) {
    return std::array<std::string, 3>{
        "WITH r AS (SELECT j.seq, j.task_id, j.next_retry_at AS o FROM jobs j"
        " WHERE j.status = 'retry' AND j.next_retry_at <= ?1" +
            Eligible(d) + " ORDER BY j.next_retry_at, j.seq LIMIT ",
        sql::ForUpdateSkipLocked(d) +
            std::string("),"
                        " q AS (SELECT j.seq, j.task_id, -j.priority AS o FROM jobs j"
                        " WHERE j.status = 'queued'") +
            Eligible(d) + " ORDER BY j.priority DESC, j.seq LIMIT ",
        sql::ForUpdateSkipLocked(d) +
            std::string(")"
                        " SELECT seq, task_id, k FROM (SELECT seq, task_id, 0 AS k, o FROM r"
                        " UNION ALL SELECT seq, task_id, 1 AS k, o FROM q) u ORDER BY k, o, seq")};
  };
  static const auto sqlite = parts(sql::Dialect::kSqlite);
  static const auto postgres = parts(sql::Dialect::kPostgres);
  const auto& p = dialect == sql::Dialect::kPostgres ? postgres : sqlite;
  return p[0] + std::to_string(retries) + p[1] + std::to_string(queued) + p[2];
}

// The picked jobs, on PostgreSQL only those whose task has, as this later
// statement sees it, still no running job: a claim that committed between
// the pick's snapshot and its task lock (sql::TaskFreeAndLocked) may have
// started one, and setting a second running would fail the whole claim on
// jobs_one_running_per_task. Such a job stays queued. SQLite's one writer
// sees what the pick saw.
const std::string& ClaimJobsSql(sql::Dialect dialect) {
  return sql::PerDialect(dialect, [](sql::Dialect d) {
    return std::string(
               "UPDATE jobs SET status = 'running', worker_id = ?2, "
               "fencing_token = fencing_token + 1, lease_expires_at = ?3, "
               "attempt = attempt + 1, next_retry_at = NULL, cancel_requested = 0, "
               "started_at = COALESCE(started_at, ?4), updated_at = ?4 WHERE ") +
           sql::InJsonArray(d, "seq", "?1", "BIGINT") +
           (d == sql::Dialect::kPostgres ? " AND " + TaskHasNoRunningJob("jobs") : "") +
           " RETURNING " + sql::kJobCols;
  });
}

// Only the tasks whose row changes: a task whose next job is claimed by the
// same process (the common case) keeps its row untouched. On PostgreSQL an
// UPDATE that rewrites equal values still writes a new row version and
// holds the row's lock until COMMIT, queueing the producers' and other
// workers' mirror updates of that task behind it.
const std::string& ClaimTasksSql(sql::Dialect dialect) {
  return sql::PerDialect(dialect, [](sql::Dialect d) {
    return "UPDATE tasks SET started_at = COALESCE(started_at, ?2), process_id = ?3, "
           "hostname = ?4 WHERE " +
           sql::InJsonArray(d, "id", "?1", "TEXT") +
           " AND (started_at IS NULL OR process_id <> ?3 OR hostname <> ?4)";
  });
}

// The jobs of a finish, locked in seq order before LoadForFinishSql reads
// their facts in a later statement (TxKind::kRowLocked: under READ COMMITTED
// each statement reads what was committed when it began, so the facts are
// read once no comment gate holds the jobs any more).
const std::string& LockForFinishSql(sql::Dialect dialect) {
  return sql::PerDialect(dialect, [](sql::Dialect d) {
    return "SELECT seq FROM jobs WHERE " + sql::InJsonArray(d, "id", "?1", "TEXT") +
           " ORDER BY seq" + sql::ForNoKeyUpdate(d);
  });
}

// The jobs of a finish with the facts policy::MapOutcome may need
// (OutcomeFacts: undelivered user comments, open children), then kJobCols.
const std::string& LoadForFinishSql(sql::Dialect dialect) {
  return sql::PerDialect(dialect, [](sql::Dialect d) {
    return "SELECT (SELECT COUNT(*) FROM comments c WHERE c.job_id = jobs.id"
           " AND c.delivered_at IS NULL" +
           sql::DeliveredKindsClause() +
           "),"
           " (SELECT COUNT(*) FROM jobs c WHERE c.parent_job_id = jobs.id"
           " AND c.status NOT IN ('succeeded', 'failed', 'cancelled')), " +
           sql::kJobCols + " FROM jobs WHERE " + sql::InJsonArray(d, "id", "?1", "TEXT");
  });
}

// Writes each policy::Transition, fenced: a row that is no longer running
// under the token read at the start of the transaction is left as it is.
const std::string& FinishJobsSql(sql::Dialect dialect) {
  return sql::PerDialect(dialect, [](sql::Dialect d) {
    static constexpr sql::RecordCol kCols[] = {
        {"n_seq", "BIGINT"}, {"n_token", "BIGINT"},   {"n_status", "TEXT"},    {"n_result", "TEXT"},
        {"n_error", "TEXT"}, {"n_retry", "BIGINT"},   {"n_wait", "TEXT"},      {"n_resume", "TEXT"},
        {"n_ask", "BIGINT"}, {"n_attempt", "BIGINT"}, {"n_finished", "BIGINT"}};
    return "UPDATE jobs SET status = v.n_status, result = v.n_result, error_message = v.n_error,"
           " next_retry_at = v.n_retry, wait_reason = v.n_wait, resume_movement = v.n_resume,"
           " ask_count = v.n_ask, attempt = v.n_attempt, finished_at = v.n_finished,"
           " lease_expires_at = NULL, updated_at = ?2 FROM " +
           sql::JsonRecords(d, "?1", kCols, "v") + " WHERE jobs.seq = v.n_seq" +
           sql::RecordsKeyFilter(d, "jobs.seq", "?1", "BIGINT", "n_seq") +
           " AND jobs.status = 'running' AND jobs.fencing_token = v.n_token RETURNING " +
           sql::kJobCols;
  });
}

Json NullIfZero(int64_t v) { return v == 0 ? Json(nullptr) : Json(v); }

// The rows an `UPDATE … RETURNING kJobCols` gave back, by seq (RETURNING
// has no order).
Result<std::unordered_map<int64_t, Job>> JobsBySeq(sql::Stmt& s) {
  std::vector<Job> rows;
  MAESTRO_RETURN_IF_ERROR(sql::CollectRows(
      s, [](const sql::Stmt& row) { return sql::ReadJob(row); }, &rows));
  std::unordered_map<int64_t, Job> out;
  for (Job& job : rows) out.emplace(job.seq, std::move(job));
  return out;
}

}  // namespace

Result<std::vector<Job>> SqlStore::ClaimInTx(Tx& tx, const ClaimFilter& filter, int64_t lease_ms,
                                             int max) {
  std::vector<Job> claimed;
  if (max <= 0) return claimed;
  auto models = JsonListOrNull(filter.models);
  auto profiles = JsonListOrNull(filter.profiles);
  // Twice as many queued candidates as wanted: a task's later jobs sort
  // right behind its first, and skipping them should not end the batch
  // early.
  auto pick = tx.conn.Prepare(PickSql(dialect(), max, max * 2));
  if (!pick.ok()) return pick.status();
  pick->Bind(1, tx.now).Bind(2, filter.worker_id);
  models ? pick->Bind(3, *models) : pick->BindNull(3);
  profiles ? pick->Bind(4, *profiles) : pick->BindNull(4);
  std::vector<std::pair<int64_t, JobStatus>> picked;  // seq, the status it leaves
  std::set<std::string> tasks;
  Json seqs = Json::array();
  Json task_ids = Json::array();
  for (;;) {
    auto row = pick->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    if (static_cast<int>(picked.size()) == max) continue;  // read to the end
    std::string task = pick->Text(1);
    if (!tasks.insert(task).second) continue;  // one job per task
    picked.emplace_back(pick->Int(0), pick->Int(2) == 0 ? JobStatus::kRetry : JobStatus::kQueued);
    seqs.push_back(picked.back().first);
    task_ids.push_back(std::move(task));
  }
  if (picked.empty()) return claimed;

  auto upd = tx.conn.Prepare(ClaimJobsSql(dialect()));
  if (!upd.ok()) return upd.status();
  upd->Bind(1, DumpJson(seqs)).Bind(2, filter.worker_id).Bind(3, tx.now + lease_ms).Bind(4, tx.now);
  MAESTRO_ASSIGN_OR_RETURN(auto by_seq, JobsBySeq(*upd));
  if (by_seq.empty()) return claimed;  // another claim took each task meanwhile
  if (by_seq.size() != picked.size()) {
    task_ids = Json::array();
    for (const auto& [seq, job] : by_seq) task_ids.push_back(job.task_id);
  }

  auto task = tx.conn.Prepare(ClaimTasksSql(dialect()));
  if (!task.ok()) return task.status();
  task->Bind(1, DumpJson(task_ids))
      .Bind(2, tx.now)
      .Bind(3, filter.process_id)
      .Bind(4, filter.hostname);
  MAESTRO_RETURN_IF_ERROR(task->Exec());

  std::vector<Moved> moved;
  for (const auto& [seq, from] : picked) {
    auto it = by_seq.find(seq);
    if (it == by_seq.end()) continue;
    claimed.push_back(std::move(it->second));
    moved.push_back({claimed.back(), from});
  }
  MAESTRO_RETURN_IF_ERROR(AfterTransitions(tx, moved));
  return claimed;
}

Result<std::vector<Status>> SqlStore::FinishInTx(
    Tx& tx, const std::vector<std::pair<Lease, JobOutcome>>& items) {
  std::vector<Status> results(items.size(), Status::Ok());
  if (items.empty()) return results;

  // 1. The jobs as they are now, with the facts their outcomes depend on.
  struct Loaded {
    Job job;
    policy::OutcomeFacts facts;
  };
  Json ids = Json::array();
  for (const auto& item : items) ids.push_back(item.first.job_id);
  std::unordered_map<std::string, Loaded> loaded;
  if (*sql::ForNoKeyUpdate(dialect())) {
    auto lock = tx.conn.Prepare(LockForFinishSql(dialect()));
    if (!lock.ok()) return lock.status();
    lock->Bind(1, DumpJson(ids));
    MAESTRO_RETURN_IF_ERROR(lock->Exec());
  }
  {
    auto s = tx.conn.Prepare(LoadForFinishSql(dialect()));
    if (!s.ok()) return s.status();
    s->Bind(1, DumpJson(ids));
    for (;;) {
      auto row = s->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      Loaded l{sql::ReadJob(*s, 2), {}};
      l.facts.undelivered_comments = s->Int(0);
      l.facts.open_children = s->Int(1);
      std::string id = l.job.id;
      loaded.emplace(std::move(id), std::move(l));
    }
  }

  // 2. The fence and the policy, item by item.
  struct Ending {
    size_t item;
    const Loaded* was;
    policy::Transition t;
  };
  std::vector<Ending> endings;
  std::set<std::string> seen;
  Json rows = Json::array();
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& [lease, outcome] = items[i];
    auto it = loaded.find(lease.job_id);
    if (it == loaded.end()) {
      results[i] = NotFound("job " + lease.job_id + " not found");
      continue;
    }
    if (!seen.insert(lease.job_id).second) {
      results[i] = LeaseLost("job " + lease.job_id + " appears twice in one finish");
      continue;
    }
    const Job& job = it->second.job;
    results[i] = sql::CheckLease(job, lease);  // the fence of every worker write
    if (!results[i].ok()) continue;
    // The one decision of the job's end (retry or fail included), on the
    // row as this transaction read it.
    MAESTRO_ASSIGN_OR_RETURN(
        policy::Transition t,
        policy::MapOutcome(job, outcome, it->second.facts, tx.now, options_.retry));
    rows.push_back({{"n_seq", job.seq},
                    {"n_token", job.fencing_token},
                    {"n_status", JobStatusName(t.to)},
                    {"n_result", t.result},
                    {"n_error", t.error_message},
                    {"n_retry", NullIfZero(t.next_retry_at)},
                    {"n_wait", t.wait_reason},
                    {"n_resume", t.resume_movement},
                    {"n_ask", t.ask_count},
                    {"n_attempt", t.attempt},
                    {"n_finished", NullIfZero(t.finished_at)}});
    endings.push_back({i, &it->second, std::move(t)});
  }
  if (endings.empty()) return results;

  // 3. One fenced write for all of them.
  std::unordered_map<int64_t, Job> after;
  {
    auto s = tx.conn.Prepare(FinishJobsSql(dialect()));
    if (!s.ok()) return s.status();
    s->Bind(1, DumpJson(rows)).Bind(2, tx.now);
    MAESTRO_ASSIGN_OR_RETURN(after, JobsBySeq(*s));
  }
  std::vector<Moved> moved;
  std::vector<const Ending*> applied;
  for (const Ending& e : endings) {
    auto it = after.find(e.was->job.seq);
    if (it == after.end()) {
      // Read in this transaction and changed since: only a writer outside
      // the fence could do that; the item is not applied.
      results[e.item] = LeaseLost("job " + e.was->job.id + " changed concurrently");
      continue;
    }
    moved.push_back({it->second, JobStatus::kRunning});
    applied.push_back(&e);
  }
  MAESTRO_RETURN_IF_ERROR(AfterTransitions(tx, moved));

  // 4. A job that ended well hands its undelivered comments on.
  for (const Ending* e : applied) {
    if (!e->t.hands_on_comments || e->was->facts.undelivered_comments == 0) continue;
    Job ended = e->was->job;
    ended.resume_movement = e->t.resume_movement;
    ended.ask_count = e->t.ask_count;
    MAESTRO_RETURN_IF_ERROR(HandOnUndelivered(tx, ended));
  }
  return results;
}

Result<std::optional<Job>> SqlStore::ClaimNextJob(const ClaimFilter& filter, int64_t lease_ms) {
  auto claimed = ClaimJobs(filter, lease_ms, 1);
  if (!claimed.ok()) return claimed.status();
  if (claimed->empty()) return std::optional<Job>();
  return std::optional<Job>(std::move(claimed->front()));
}

Result<std::vector<Job>> SqlStore::ClaimJobs(const ClaimFilter& filter, int64_t lease_ms, int max) {
  std::vector<Job> claimed;
  Status st = Write(
      [&](Tx& tx) -> Status {
        MAESTRO_ASSIGN_OR_RETURN(claimed, ClaimInTx(tx, filter, lease_ms, max));
        return Status::Ok();
      },
      nullptr, sql::TxKind::kClaim);
  if (!st.ok()) return st;
  return claimed;
}

Status SqlStore::FinishJob(const Lease& lease, const JobOutcome& outcome) {
  return Write(
      [&](Tx& tx) -> Status {
        MAESTRO_ASSIGN_OR_RETURN(std::vector<Status> results, FinishInTx(tx, {{lease, outcome}}));
        return results.front();
      },
      nullptr, sql::TxKind::kRowLocked);
}

Result<std::vector<Status>> SqlStore::FinishJobs(
    const std::vector<std::pair<Lease, JobOutcome>>& items) {
  std::vector<Status> results;
  Status st = Write(
      [&](Tx& tx) -> Status {
        MAESTRO_ASSIGN_OR_RETURN(results, FinishInTx(tx, items));
        return Status::Ok();
      },
      nullptr, sql::TxKind::kRowLocked);
  if (!st.ok()) return st;
  return results;
}

Result<std::optional<Job>> SqlStore::FinishAndClaimNext(const Lease& lease,
                                                        const JobOutcome& outcome,
                                                        const ClaimFilter& filter,
                                                        int64_t lease_ms) {
  if (dialect() != sql::Dialect::kSqlite) {
    // The finish and the claim follow different rules (kRowLocked takes row
    // locks, kClaim skips them): two transactions. One commit for both pays
    // off only with SQLite's single writer.
    MAESTRO_RETURN_IF_ERROR(FinishJob(lease, outcome));
    // The finish is committed: a failed claim must not read as a result
    // that was not recorded. The worker's loop claims again.
    auto claimed = ClaimNextJob(filter, lease_ms);
    if (!claimed.ok()) {
      spdlog::warn("store: job {} finished; claiming the next failed: {}", lease.job_id,
                   claimed.status().ToString());
      return std::optional<Job>();
    }
    return claimed;
  }
  std::optional<Job> next;
  Status st = Write([&](Tx& tx) -> Status {
    MAESTRO_ASSIGN_OR_RETURN(std::vector<Status> results, FinishInTx(tx, {{lease, outcome}}));
    MAESTRO_RETURN_IF_ERROR(results.front());
    MAESTRO_ASSIGN_OR_RETURN(std::vector<Job> claimed, ClaimInTx(tx, filter, lease_ms, 1));
    next.reset();
    if (!claimed.empty()) next = std::move(claimed.front());
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return next;
}

}  // namespace maestro
