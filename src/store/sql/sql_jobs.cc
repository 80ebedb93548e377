// The job state machine of SqlStore (seed 000 §1–2):
//
//   queued ──claim──> running ──FinishJob──> succeeded | failed | cancelled
//     ^                 │  │                 retry (next_retry_at) ──claim──> running
//     │                 │  └─> waiting_human | waiting_subtasks ──resume──> queued
//     └──── released ───┘      (parent of children: requeued when the last child ends)
//   running with an expired lease ──sweeper──> retry | failed | cancelled
//
// Every transition is one IMMEDIATE transaction that (1) checks the fencing
// token where a worker writes, (2) updates the job, (3) mirrors the status on
// the task when the job is the task's newest, (4) appends a job.status event
// and (5) applies parent/child effects.
#include <fmt/format.h>

#include <map>
#include <unordered_map>

#include "core/ids.h"
#include "store/policy.h"
#include "store/sql/rows.h"
#include "store/sql/sql_store.h"

namespace maestro {

namespace {

Result<std::vector<Job>> QueryJobs(sql::Conn& conn, const std::string& where,
                                   const std::string& arg) {
  std::vector<Job> out;
  auto s = conn.Prepare(std::string("SELECT ") + sql::kJobCols + " FROM jobs WHERE " + where);
  if (!s.ok()) return s.status();
  s->Bind(1, arg);
  for (;;) {
    auto row = s->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    out.push_back(sql::ReadJob(*s));
  }
}

// AfterTransitions' task mirror: a task shows the status of its newest job.
// tasks.last_job_seq is that job's seq: a transition of an older job leaves
// the task as it is, and a new job (an insert passes through here too) takes
// its place. Reading the row it updates, instead of a MAX(seq) over the
// task's jobs, keeps the mirror off the jobs index, whose pages on
// PostgreSQL carry dead entries and SERIALIZABLE predicate locks that
// concurrent enqueues and finishes of other tasks conflict on.
// One job binds its fields (?1 task, ?3 status, ?4 error, ?5 seq); a batch
// passes them as JSON records in ?1, at most one per task — a cheaper
// statement for the single transition (an enqueue, most finishes), one
// statement for a batch.
std::string MirrorSet(std::string_view status, std::string_view error, std::string_view seq) {
  return fmt::format(
      "UPDATE tasks SET status = {0}, updated_at = ?2, last_job_seq = {2},"
      " completed_at = CASE WHEN {0} IN ('succeeded','failed','cancelled')"
      "                THEN CAST(?2 AS BIGINT) ELSE NULL END,"
      " error_message = CASE WHEN {0} = 'failed' THEN {1}"
      "                 WHEN {0} = 'succeeded' THEN '' ELSE tasks.error_message END",
      status, error, seq);
}
const std::string& MirrorOneSql() {
  static const std::string sql =
      MirrorSet("?3", "?4", "?5") + " WHERE tasks.id = ?1 AND tasks.last_job_seq <= ?5";
  return sql;
}
const std::string& MirrorBatchSql(sql::Dialect dialect) {
  return sql::PerDialect(dialect, [](sql::Dialect d) {
    static constexpr sql::RecordCol kCols[] = {
        {"n_task", "TEXT"}, {"n_seq", "BIGINT"}, {"n_status", "TEXT"}, {"n_error", "TEXT"}};
    return MirrorSet("v.n_status", "v.n_error", "v.n_seq") + " FROM " +
           sql::JsonRecords(d, "?1", kCols, "v") + " WHERE tasks.id = v.n_task" +
           sql::RecordsKeyFilter(d, "tasks.id", "?1", "TEXT", "n_task") +
           " AND tasks.last_job_seq <= v.n_seq";
  });
}

// Children of `parent_id` not yet terminal.
Result<int64_t> CountOpenChildren(sql::Conn& conn, const std::string& parent_id) {
  auto open = conn.Prepare(
      "SELECT COUNT(*) FROM jobs WHERE parent_job_id = ?1"
      " AND status NOT IN ('succeeded', 'failed', 'cancelled')");
  if (!open.ok()) return open.status();
  open->Bind(1, parent_id);
  auto row = open->Step();
  if (!row.ok()) return row.status();
  int64_t n = open->Int(0);
  MAESTRO_RETURN_IF_ERROR(open->Exec());
  return n;
}

// The job's row, after an update that changes nothing but takes its lock
// and makes it a write (AfterTransitions' fan-in).
Result<Job> TouchJob(SqlStore::Tx& tx, const std::string& job_id) {
  auto s = tx.conn.Prepare(std::string("UPDATE jobs SET updated_at = updated_at WHERE id = ?1"
                                       " RETURNING ") +
                           sql::kJobCols);
  if (!s.ok()) return s.status();
  s->Bind(1, job_id);
  auto row = s->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound("job " + job_id + " not found");
  Job job = sql::ReadJob(*s);
  MAESTRO_RETURN_IF_ERROR(s->Exec());
  return job;
}

// The first column of every row of `s`, as text (a list of ids).
Result<std::vector<std::string>> FirstColumn(sql::Stmt& s) {
  std::vector<std::string> out;
  for (;;) {
    auto row = s.Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    out.push_back(s.Text(0));
  }
}

Json NullIfEmpty(const std::string& v) { return v.empty() ? Json(nullptr) : Json(v); }

const std::string& InsertJobsSql(sql::Dialect dialect) {
  return sql::PerDialect(dialect, [](sql::Dialect d) {
    static constexpr sql::RecordCol kCols[] = {
        {"n_id", "TEXT"},     {"n_task", "TEXT"},  {"n_parent", "TEXT"},  {"n_cont", "TEXT"},
        {"n_piece", "TEXT"},  {"n_model", "TEXT"}, {"n_profile", "TEXT"}, {"n_worker", "TEXT"},
        {"n_resume", "TEXT"}, {"n_ask", "BIGINT"}, {"n_max", "BIGINT"},   {"n_prio", "BIGINT"}};
    // ORDER BY the ids (sortable, made in batch order): seq follows the batch.
    return "INSERT INTO jobs(id, task_id, parent_job_id, continued_from_job_id, status, piece, "
           "model, profile, required_worker, resume_movement, ask_count, max_attempts, "
           "created_at, updated_at, priority) SELECT v.n_id, v.n_task, v.n_parent, v.n_cont, "
           "'queued', v.n_piece, v.n_model, v.n_profile, v.n_worker, v.n_resume, v.n_ask, "
           "v.n_max, ?2, ?2, v.n_prio FROM " +
           sql::JsonRecords(d, "?1", kCols, "v") + " ORDER BY v.n_id RETURNING " + sql::kJobCols;
  });
}

}  // namespace

Result<Job> SqlStore::InsertJob(Tx& tx, const NewJob& in) {
  if (in.task_id.empty()) return InvalidArgument("task_id must not be empty", "task_id");
  std::string id = NewSortableId(tx.now);
  auto s = tx.conn.Prepare(
      "INSERT INTO jobs(id, task_id, parent_job_id, continued_from_job_id, status, piece, model, "
      "profile, required_worker, resume_movement, ask_count, max_attempts, created_at, "
      "updated_at, priority) VALUES (?1, ?2, ?3, ?4, 'queued', ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
      "?12, ?13) RETURNING " +
      std::string(sql::kJobCols));
  if (!s.ok()) return s.status();
  s->Bind(1, id)
      .Bind(2, in.task_id)
      .BindNullable(3, in.parent_job_id)
      .BindNullable(4, in.continued_from_job_id)
      .Bind(5, in.piece)
      .BindNullable(6, in.model)
      .BindNullable(7, in.profile)
      .BindNullable(8, in.required_worker)
      .Bind(9, in.resume_movement)
      .Bind(10, in.ask_count)
      .Bind(11, in.max_attempts > 0 ? in.max_attempts : options_.default_max_attempts)
      .Bind(12, tx.now)
      .Bind(13, in.priority);
  auto row = s->Step();
  if (row.status().code() == StatusCode::kConflict) {
    return NotFound(
        fmt::format("task {} or parent job {} not found", in.task_id, in.parent_job_id));
  }
  if (!row.ok()) return row.status();
  if (!*row) return Internal("inserted job " + id + " not returned");
  Job job = sql::ReadJob(*s);
  MAESTRO_RETURN_IF_ERROR(s->Exec());  // finish the RETURNING statement
  if (!in.adopt_children_of.empty()) {
    auto adopt = tx.conn.Prepare("UPDATE jobs SET parent_job_id = ?2 WHERE parent_job_id = ?1");
    if (!adopt.ok()) return adopt.status();
    adopt->Bind(1, in.adopt_children_of).Bind(2, id);
    MAESTRO_RETURN_IF_ERROR(adopt->Exec());
  }
  MAESTRO_RETURN_IF_ERROR(AfterTransitions(tx, {{job, JobStatus::kQueued}}));
  return job;
}

Result<std::vector<Job>> SqlStore::InsertJobRows(Tx& tx, const std::vector<NewJob>& in) {
  Json rows = Json::array();
  std::vector<std::string> ids;
  for (const NewJob& j : in) {
    if (j.task_id.empty()) return InvalidArgument("task_id must not be empty", "task_id");
    if (!j.adopt_children_of.empty()) {
      return InvalidArgument("a batched job cannot adopt children", "adopt_children_of");
    }
    ids.push_back(NewSortableId(tx.now));
    rows.push_back({{"n_id", ids.back()},
                    {"n_task", j.task_id},
                    {"n_parent", NullIfEmpty(j.parent_job_id)},
                    {"n_cont", NullIfEmpty(j.continued_from_job_id)},
                    {"n_piece", j.piece},
                    {"n_model", NullIfEmpty(j.model)},
                    {"n_profile", NullIfEmpty(j.profile)},
                    {"n_worker", NullIfEmpty(j.required_worker)},
                    {"n_resume", j.resume_movement},
                    {"n_ask", j.ask_count},
                    {"n_max", j.max_attempts > 0 ? j.max_attempts : options_.default_max_attempts},
                    {"n_prio", j.priority}});
  }
  auto s = tx.conn.Prepare(InsertJobsSql(dialect()));
  if (!s.ok()) return s.status();
  s->Bind(1, DumpJson(rows)).Bind(2, tx.now);
  std::vector<Job> inserted;
  Status st = sql::CollectRows(
      *s, [](const sql::Stmt& row) { return sql::ReadJob(row); }, &inserted);
  if (st.code() == StatusCode::kConflict) {
    return NotFound("a task or parent job of the batch was not found: " + st.message());
  }
  MAESTRO_RETURN_IF_ERROR(st);
  // RETURNING has no order: back into the batch's.
  std::unordered_map<std::string, Job> by_id;
  for (Job& j : inserted) by_id.emplace(j.id, std::move(j));
  std::vector<Job> out;
  for (const std::string& id : ids) {
    auto it = by_id.find(id);
    if (it == by_id.end()) return Internal("inserted job " + id + " not returned");
    out.push_back(std::move(it->second));
  }
  return out;
}

Result<Job> SqlStore::EnqueueJob(const NewJob& in) {
  std::optional<Job> out;
  Status st = Write(
      [&](Tx& tx) -> Status {
        auto job = InsertJob(tx, in);
        if (!job.ok()) return job.status();
        out = std::move(job).value();
        return Status::Ok();
      },
      nullptr, sql::TxKind::kRowLocked);
  if (!st.ok()) return st;
  return *out;
}

Result<std::vector<Job>> SqlStore::EnqueueJobs(const std::vector<NewJob>& in) {
  std::vector<Job> out;
  if (in.empty()) return out;
  Status st = Write(
      [&](Tx& tx) -> Status {
        MAESTRO_ASSIGN_OR_RETURN(out, InsertJobRows(tx, in));
        std::vector<Moved> moved;
        moved.reserve(out.size());
        for (const Job& j : out) moved.push_back({j, JobStatus::kQueued});
        // One mirror statement and one run of events for the whole batch.
        return AfterTransitions(tx, moved);
      },
      nullptr, sql::TxKind::kRowLocked);
  if (!st.ok()) return st;
  return out;
}

Result<Job> SqlStore::GetJob(const std::string& job_id) {
  std::optional<Job> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto job = sql::LoadJob(conn, job_id);
    if (!job.ok()) return job.status();
    out = std::move(job).value();
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return *out;
}

Result<std::vector<Job>> SqlStore::ListJobs(const std::string& task_id) {
  std::vector<Job> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto jobs = QueryJobs(conn, "task_id = ?1 ORDER BY seq", task_id);
    if (!jobs.ok()) return jobs.status();
    out = std::move(jobs).value();
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return out;
}

Result<std::vector<Job>> SqlStore::ListChildJobs(const std::string& parent_job_id) {
  std::vector<Job> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto jobs = QueryJobs(conn, "parent_job_id = ?1 ORDER BY seq", parent_job_id);
    if (!jobs.ok()) return jobs.status();
    out = std::move(jobs).value();
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return out;
}

Status SqlStore::AfterTransition(Tx& tx, const std::string& job_id, JobStatus from) {
  auto loaded = sql::LoadJob(tx.conn, job_id);
  if (!loaded.ok()) return loaded.status();
  return AfterTransitions(tx, {{std::move(loaded).value(), from}});
}

// Called after jobs' rows changed: mirrors each status on its task (one
// statement for all), records the events, and wakes a waiting parent when
// a job was its last open child.
Status SqlStore::AfterTransitions(Tx& tx, const std::vector<Moved>& moved) {
  if (moved.empty()) return Status::Ok();
  if (moved.size() == 1) {
    const Job& job = moved.front().job;
    auto task = tx.conn.Prepare(MirrorOneSql());
    if (!task.ok()) return task.status();
    task->Bind(1, job.task_id)
        .Bind(2, tx.now)
        .Bind(3, JobStatusName(job.status))
        .Bind(4, job.error_message)
        .Bind(5, job.seq);
    MAESTRO_RETURN_IF_ERROR(task->Exec());
  } else {
    // One record per task, its newest job's: an UPDATE … FROM that joins a
    // row to several records applies an arbitrary one of them. In task id
    // order: PostgreSQL locks the rows in the records' order, and two
    // transactions updating overlapping tasks in different orders (READ
    // COMMITTED enqueues, claims and finishes wait for each other's rows)
    // would deadlock, each waiting a second to be told.
    std::map<std::string, const Job*> newest;
    for (const Moved& m : moved) {
      const Job*& n = newest[m.job.task_id];
      if (!n || n->seq < m.job.seq) n = &m.job;
    }
    Json rows = Json::array();
    for (const auto& [task_id, job] : newest) {
      rows.push_back({{"n_task", task_id},
                      {"n_seq", job->seq},
                      {"n_status", JobStatusName(job->status)},
                      {"n_error", job->error_message}});
    }
    auto task = tx.conn.Prepare(MirrorBatchSql(dialect()));
    if (!task.ok()) return task.status();
    task->Bind(1, DumpJson(rows)).Bind(2, tx.now);
    MAESTRO_RETURN_IF_ERROR(task->Exec());
  }

  for (const Moved& m : moved) {
    const Job& job = m.job;
    Json payload = {{"job_id", job.id},
                    {"from", JobStatusName(m.from)},
                    {"to", JobStatusName(job.status)},
                    {"attempt", job.attempt}};
    if (!job.wait_reason.empty() && IsParked(job.status)) payload["wait_reason"] = job.wait_reason;
    if (!job.error_message.empty() && job.status != JobStatus::kSucceeded) {
      payload["error"] = job.error_message;
    }
    if (job.status == JobStatus::kRetry) payload["next_retry_at"] = job.next_retry_at;
    MAESTRO_RETURN_IF_ERROR(sql::InsertEvent(tx, job.task_id, job.id, "job.status", payload));
    if (job.status == JobStatus::kQueued) tx.effects.job_available = true;
    if (!IsTerminal(job.status) || job.parent_job_id.empty()) continue;
    // Fan-in (policy::ParentWakes): exactly once. SQLite's writers are
    // serialized. On PostgreSQL each child's end first writes its parent's
    // row (an update that changes nothing), so the ends of siblings take
    // turns: under READ COMMITTED (a finish) the next one counts, in a
    // later statement, what the one before committed; under SERIALIZABLE
    // (a cancel, an answer) the one that comes second fails retryably and
    // counts again. Only the last sees zero open siblings (and of two
    // ending in one batch, the first sees both ended and the second a
    // parent already queued). The parent's own finish locks its row too.
    MAESTRO_ASSIGN_OR_RETURN(Job parent, TouchJob(tx, job.parent_job_id));
    MAESTRO_ASSIGN_OR_RETURN(int64_t open, CountOpenChildren(tx.conn, parent.id));
    if (policy::ParentWakes(parent, open)) {
      auto wake = tx.conn.Prepare(
          "UPDATE jobs SET status = 'queued', wait_reason = '', updated_at = ?2"
          " WHERE id = ?1 AND status = 'waiting_subtasks'");
      if (!wake.ok()) return wake.status();
      wake->Bind(1, parent.id).Bind(2, tx.now);
      MAESTRO_RETURN_IF_ERROR(wake->Exec());
      MAESTRO_RETURN_IF_ERROR(AfterTransition(tx, parent.id, JobStatus::kWaitingSubtasks));
    }
  }
  return Status::Ok();
}

Result<HeartbeatReply> SqlStore::Heartbeat(const Lease& lease, int64_t lease_ms) {
  HeartbeatReply reply;
  Status st = Write([&](Tx& tx) -> Status {
    auto s = tx.conn.Prepare(
        "UPDATE jobs SET lease_expires_at = ?4 WHERE id = ?1 AND status = 'running' "
        "AND fencing_token = ?2 AND worker_id = ?3 RETURNING lease_expires_at, cancel_requested");
    if (!s.ok()) return s.status();
    s->Bind(1, lease.job_id).Bind(2, lease.fencing_token).Bind(3, lease.worker_id);
    s->Bind(4, tx.now + lease_ms);
    auto row = s->Step();
    if (!row.ok()) return row.status();
    if (!*row) {
      auto job = sql::LoadJob(tx.conn, lease.job_id);
      if (!job.ok()) return job.status();
      return sql::CheckLease(*job, lease);
    }
    reply.lease_expires_at = s->Int(0);
    reply.cancel_requested = s->Int(1) != 0;
    return s->Exec();
  });
  if (!st.ok()) return st;
  return reply;
}

Result<std::vector<Job>> SqlStore::RecoverExpiredLeases(
    const std::function<JobOutcome(const Job&)>& decide) {
  std::vector<Job> recovered;
  Status st = Write([&](Tx& tx) -> Status {
    recovered.clear();  // a retried transaction starts again
    auto s = tx.conn.Prepare(std::string("SELECT ") + sql::kJobCols + " FROM jobs" +
                             sql::IndexedBy(dialect(), "jobs_running") +
                             " WHERE status = 'running' AND lease_expires_at < ?1");
    if (!s.ok()) return s.status();
    s->Bind(1, tx.now);
    std::vector<Job> expired;
    for (;;) {
      auto row = s->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      expired.push_back(sql::ReadJob(*s));
    }
    // One batched finish for all: each job's fence is its own current
    // lease, so only a job that changed meanwhile is left out.
    std::vector<std::pair<Lease, JobOutcome>> items;
    for (const Job& job : expired) {
      items.emplace_back(
          Lease{job.id, job.worker_id, job.fencing_token},
          job.cancel_requested ? JobOutcome::Cancelled("cancelled (worker lost)") : decide(job));
    }
    MAESTRO_ASSIGN_OR_RETURN(std::vector<Status> results, FinishInTx(tx, items));
    for (size_t i = 0; i < expired.size(); ++i) {
      MAESTRO_RETURN_IF_ERROR(results[i]);
      auto after = sql::LoadJob(tx.conn, expired[i].id);
      if (!after.ok()) return after.status();
      recovered.push_back(std::move(after).value());
    }
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return recovered;
}

Status SqlStore::CancelOne(Tx& tx, const Job& job, CancelReport& report) {
  if (IsTerminal(job.status)) return Status::Ok();
  if (job.status == JobStatus::kRunning) {
    if (job.cancel_requested) return Status::Ok();
    auto s =
        tx.conn.Prepare("UPDATE jobs SET cancel_requested = 1, updated_at = ?2 WHERE seq = ?1");
    if (!s.ok()) return s.status();
    s->Bind(1, job.seq).Bind(2, tx.now);
    MAESTRO_RETURN_IF_ERROR(s->Exec());
    ++report.flagged;
    return sql::InsertEvent(tx, job.task_id, job.id, "job.cancel_requested", {{"job_id", job.id}});
  }
  auto s = tx.conn.Prepare(
      "UPDATE jobs SET status = 'cancelled', cancel_requested = 1, error_message = 'cancelled', "
      "finished_at = ?2, updated_at = ?2 WHERE seq = ?1");
  if (!s.ok()) return s.status();
  s->Bind(1, job.seq).Bind(2, tx.now);
  MAESTRO_RETURN_IF_ERROR(s->Exec());
  ++report.cancelled;
  return AfterTransition(tx, job.id, job.status);
}

Result<CancelReport> SqlStore::RequestCancel(const std::string& job_id) {
  CancelReport report;
  Status st = Write([&](Tx& tx) -> Status {
    report = {};  // a retried transaction starts again
    auto root = sql::LoadJob(tx.conn, job_id);
    if (!root.ok()) return root.status();
    // The root first, then descendants breadth-first: a cancelled parent is no
    // longer waiting_subtasks, so its children's ends never requeue it.
    auto s = tx.conn.Prepare(
        "WITH RECURSIVE tree(id, depth) AS ("
        "  SELECT id, 0 FROM jobs WHERE id = ?1"
        "  UNION ALL SELECT j.id, t.depth + 1 FROM jobs j JOIN tree t ON j.parent_job_id = t.id)"
        " SELECT id FROM tree ORDER BY depth");
    if (!s.ok()) return s.status();
    s->Bind(1, job_id);
    MAESTRO_ASSIGN_OR_RETURN(std::vector<std::string> ids, FirstColumn(*s));
    for (const auto& id : ids) {
      auto job = sql::LoadJob(tx.conn, id);
      if (!job.ok()) return job.status();
      MAESTRO_RETURN_IF_ERROR(CancelOne(tx, *job, report));
    }
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return report;
}

Result<bool> SqlStore::IsCancelRequested(const std::string& job_id) {
  auto job = GetJob(job_id);
  if (!job.ok()) return job.status();
  return job->cancel_requested || job->status == JobStatus::kCancelled;
}

Status SqlStore::ResumeParkedJob(const std::string& job_id) {
  return Write([&](Tx& tx) -> Status {
    auto job = sql::LoadJob(tx.conn, job_id);
    if (!job.ok()) return job.status();
    if (!IsParked(job->status)) {
      return Conflict(fmt::format("job {} is {}, not waiting", job_id, JobStatusName(job->status)));
    }
    auto s = tx.conn.Prepare(
        "UPDATE jobs SET status = 'queued', wait_reason = '', updated_at = ?2 WHERE seq = ?1");
    if (!s.ok()) return s.status();
    s->Bind(1, job->seq).Bind(2, tx.now);
    MAESTRO_RETURN_IF_ERROR(s->Exec());
    return AfterTransition(tx, job_id, job->status);
  });
}

Status SqlStore::SetCaptchaWait(const std::string& job_id, const std::string& space_id,
                                const std::string& screen) {
  return Write([&](Tx& tx) -> Status {
    auto s = tx.conn.Prepare(
        "UPDATE jobs SET captcha_space_id = ?2, captcha_screen = ?3, updated_at = ?4"
        " WHERE id = ?1");
    if (!s.ok()) return s.status();
    s->Bind(1, job_id).Bind(2, space_id).Bind(3, screen).Bind(4, tx.now);
    MAESTRO_RETURN_IF_ERROR(s->Exec());
    if (tx.conn.Changes() == 0) return NotFound("job " + job_id + " not found");
    return Status::Ok();
  });
}

Result<int> SqlStore::ResumeCaptchaJobs(const std::string& space_id, const std::string& screen,
                                        const std::optional<std::string>& resolved_by) {
  if (space_id.empty()) return InvalidArgument("space_id must not be empty", "space_id");
  if (screen.empty()) return InvalidArgument("screen must not be empty", "screen");
  int resumed = 0;
  Status st = Write([&](Tx& tx) -> Status {
    resumed = 0;  // a retried transaction starts again
    // Whose waits: a space's task when the resolver may see it; a space-less
    // task (its owner's personal pool) only when it is the resolver's own.
    auto s = tx.conn.Prepare(
        "SELECT j.id FROM jobs j JOIN tasks t ON t.id = j.task_id"
        " WHERE j.status = 'waiting_human' AND j.wait_reason = 'captcha'"
        " AND j.captcha_space_id = ?1 AND j.captcha_screen = ?2"
        " AND (?3 = 0 OR t.owner = '' OR t.owner = ?4"
        " OR (t.space <> '' AND t.visibility = 'shared'))"
        " ORDER BY j.seq");
    if (!s.ok()) return s.status();
    s->Bind(1, space_id).Bind(2, screen).Bind(3, resolved_by.has_value());
    s->Bind(4, resolved_by.value_or(""));
    MAESTRO_ASSIGN_OR_RETURN(std::vector<std::string> ids, FirstColumn(*s));
    // ResumeParkedJob's transition, the screen kept: the resumed job finds
    // its screen solved (captcha_space_id "", captcha_screen its screen).
    auto u = tx.conn.Prepare(
        "UPDATE jobs SET status = 'queued', wait_reason = '', captcha_space_id = '',"
        " updated_at = ?2 WHERE id = ?1 AND status = 'waiting_human'");
    if (!u.ok()) return u.status();
    for (const auto& id : ids) {
      u->Bind(1, id).Bind(2, tx.now);
      MAESTRO_RETURN_IF_ERROR(u->Exec());
      if (tx.conn.Changes() == 0) continue;
      MAESTRO_RETURN_IF_ERROR(AfterTransition(tx, id, JobStatus::kWaitingHuman));
      ++resumed;
    }
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return resumed;
}

Result<std::optional<TimeMs>> SqlStore::NextRetryDue() {
  std::optional<TimeMs> due;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare("SELECT MIN(next_retry_at) FROM jobs WHERE status = 'retry'");
    if (!s.ok()) return s.status();
    auto row = s->Step();
    if (!row.ok()) return row.status();
    if (!s->IsNull(0)) due = s->Int(0);
    return s->Exec();
  });
  if (!st.ok()) return st;
  return due;
}

}  // namespace maestro
