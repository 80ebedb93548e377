// The task gates of seed 000 §1 on SqlStore: what a user comment does
// depending on the task's newest job (the write gate), Continue, and the
// interjection mailbox the agent loop drains at each iteration boundary.
// Each gate decides and acts in one transaction, so a comment racing a job
// state change is never lost or doubled.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "core/ids.h"
#include "store/policy.h"
#include "store/sql/rows.h"
#include "store/sql/sql_store.h"

namespace maestro {

namespace {

// Locked: a gate decides on this job's state, and on PostgreSQL the finish
// that may be ending it runs under READ COMMITTED (sql::TxKind::kRowLocked).
// Whichever locks the job first goes first; a gate that comes second fails
// retryably (the job changed since its snapshot) and decides again.
Result<std::optional<Job>> NewestJob(sql::Conn& conn, const std::string& task_id) {
  auto s = conn.Prepare(std::string("SELECT ") + sql::kJobCols +
                        " FROM jobs WHERE task_id = ?1 ORDER BY seq DESC LIMIT 1" +
                        sql::ForNoKeyUpdate(conn.dialect()));
  if (!s.ok()) return s.status();
  s->Bind(1, task_id);
  auto row = s->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<Job>();
  return std::optional<Job>(sql::ReadJob(*s));
}

Result<Task> LoadTask(sql::Conn& conn, const std::string& task_id) {
  auto s = conn.Prepare(std::string("SELECT ") + sql::kTaskCols + " FROM tasks WHERE id = ?1");
  if (!s.ok()) return s.status();
  s->Bind(1, task_id);
  auto row = s->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound("task " + task_id + " not found");
  return sql::ReadTask(*s);
}

}  // namespace

Status SqlStore::ResumeIfWaitingHuman(Tx& tx, const std::string& job_id) {
  auto s = tx.conn.Prepare(
      "UPDATE jobs SET status = 'queued', wait_reason = '', updated_at = ?2"
      " WHERE id = ?1 AND status = 'waiting_human'");
  if (!s.ok()) return s.status();
  s->Bind(1, job_id).Bind(2, tx.now);
  MAESTRO_RETURN_IF_ERROR(s->Exec());
  if (tx.conn.Changes() == 0) return Status::Ok();
  return AfterTransition(tx, job_id, JobStatus::kWaitingHuman);
}

Result<Store::CommentResult> SqlStore::PostComment(const std::string& task_id,
                                                   const std::string& author,
                                                   const std::string& body,
                                                   const std::vector<Attachment>& attachments) {
  if (attachments.empty() && body.find_first_not_of(" \t\r\n") == std::string::npos) {
    return InvalidArgument("body must not be empty", "body");
  }
  CommentResult out;
  Status st = Write([&](Tx& tx) -> Status {
    auto task = LoadTask(tx.conn, task_id);
    if (!task.ok()) return task.status();
    auto newest = NewestJob(tx.conn, task_id);
    if (!newest.ok()) return newest.status();
    const std::optional<Job>& job = *newest;
    const policy::CommentGate gate = policy::DecideCommentGate(job);
    if (gate == policy::CommentGate::kDecideFirst) {
      if (job->wait_reason == "budget_exceeded") {
        return Conflict(
            fmt::format("job {} is parked on its budget: raise the budget or cancel", job->id));
      }
      return Conflict(fmt::format("job {} waits for a {} decision: decide the request first",
                                  job->id, job->wait_reason));
    }
    Comment c;
    c.task_id = task_id;
    c.author = author;
    c.body = body;
    c.kind = policy::KindFor(gate);
    out.outcome = policy::GateOutcome(gate);
    if (gate == policy::CommentGate::kInterjection || gate == policy::CommentGate::kReused) {
      c.job_id = job->id;
      out.job = *job;
    } else {
      NewJob next;
      if (job) {
        next = policy::FollowUpOf(*job);
      } else {
        next.task_id = task_id;
        next.piece = task->piece;
        next.model = task->model;
      }
      if (gate == policy::CommentGate::kAnswer) {
        // The ASK is answered: its job ends, the follow-up carries on.
        auto close = tx.conn.Prepare(
            "UPDATE jobs SET status = 'succeeded', result = ?2, finished_at = ?3, updated_at = ?3,"
            " wait_reason = '' WHERE seq = ?1");
        if (!close.ok()) return close.status();
        close->Bind(1, job->seq).Bind(2, policy::kAnsweredResult).Bind(3, tx.now);
        MAESTRO_RETURN_IF_ERROR(close->Exec());
        MAESTRO_RETURN_IF_ERROR(AfterTransition(tx, job->id, JobStatus::kWaitingHuman));
      }
      auto created = InsertJob(tx, next);
      if (!created.ok()) return created.status();
      // What the ended job never delivered (it failed, or was cancelled,
      // with a comment pending) goes with this one.
      if (job) MAESTRO_RETURN_IF_ERROR(MoveUndelivered(tx, *job, created->id));
      c.job_id = created->id;
      out.job = std::move(created).value();
    }
    auto comment = sql::InsertComment(tx, c);
    if (!comment.ok()) return comment.status();
    out.comment = std::move(comment).value();
    return InsertAttachments(tx, task_id, out.comment.id, attachments);
  });
  if (!st.ok()) return st;
  return out;
}

Result<int64_t> SqlStore::CountUndelivered(Tx& tx, const std::string& job_id) {
  auto s =
      tx.conn.Prepare("SELECT COUNT(*) FROM comments WHERE job_id = ?1 AND delivered_at IS NULL" +
                      sql::DeliveredKindsClause());
  if (!s.ok()) return s.status();
  s->Bind(1, job_id);
  auto row = s->Step();
  if (!row.ok()) return row.status();
  return s->Int(0);
}

Status SqlStore::HandOnUndelivered(Tx& tx, const Job& job) {
  MAESTRO_ASSIGN_OR_RETURN(int64_t n, CountUndelivered(tx, job.id));
  if (n == 0) return Status::Ok();
  // A handoff queued its continuation inside the run: the comments go there.
  auto cont = tx.conn.Prepare(
      "SELECT id FROM jobs WHERE continued_from_job_id = ?1 AND status IN ('queued', 'retry')"
      " ORDER BY seq DESC LIMIT 1");
  if (!cont.ok()) return cont.status();
  cont->Bind(1, job.id);
  auto row = cont->Step();
  if (!row.ok()) return row.status();
  std::string to = *row ? cont->Text(0) : "";
  MAESTRO_RETURN_IF_ERROR(cont->Exec());
  if (to.empty()) {
    auto created = InsertJob(tx, policy::FollowUpOf(job));
    if (!created.ok()) return created.status();
    to = created->id;
  }
  return MoveUndelivered(tx, job, to);
}

Status SqlStore::MoveUndelivered(Tx& tx, const Job& from, const std::string& to_job_id) {
  auto move =
      tx.conn.Prepare("UPDATE comments SET job_id = ?2 WHERE job_id = ?1 AND delivered_at IS NULL" +
                      sql::DeliveredKindsClause());
  if (!move.ok()) return move.status();
  move->Bind(1, from.id).Bind(2, to_job_id);
  MAESTRO_RETURN_IF_ERROR(move->Exec());
  int64_t n = tx.conn.Changes();
  if (n == 0) return Status::Ok();
  return sql::InsertEvent(tx, from.task_id, to_job_id, "comments.handed_on",
                          {{"from_job_id", from.id}, {"count", n}});
}

Result<std::vector<Comment>> SqlStore::ListUndeliveredComments(const std::string& job_id) {
  std::vector<Comment> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare(std::string("SELECT ") + sql::kCommentCols +
                          " FROM comments WHERE job_id = ?1 AND delivered_at IS NULL" +
                          sql::DeliveredKindsClause() + " ORDER BY id");
    if (!s.ok()) return s.status();
    s->Bind(1, job_id);
    return sql::CollectRows(*s, sql::ReadComment, &out);
  });
  if (!st.ok()) return st;
  return out;
}

Status SqlStore::AckDeliveredComments(const std::vector<std::string>& comment_ids) {
  if (comment_ids.empty()) return Status::Ok();
  return Write([&](Tx& tx) -> Status {
    auto s = tx.conn.Prepare(
        "UPDATE comments SET delivered_at = ?2 WHERE id = ?1 AND delivered_at IS NULL");
    if (!s.ok()) return s.status();
    for (const auto& id : comment_ids) {
      s->Bind(1, id).Bind(2, tx.now);
      MAESTRO_RETURN_IF_ERROR(s->Exec());
    }
    return Status::Ok();
  });
}

Result<Store::ContinueResult> SqlStore::ContinueTask(const std::string& task_id,
                                                     const std::string& piece,
                                                     const std::string& author,
                                                     const std::string& note) {
  ContinueResult out;
  Status st = Write([&](Tx& tx) -> Status {
    auto task = LoadTask(tx.conn, task_id);
    if (!task.ok()) return task.status();
    auto newest = NewestJob(tx.conn, task_id);
    if (!newest.ok()) return newest.status();
    MAESTRO_RETURN_IF_ERROR(policy::CheckContinue(task_id, *newest));
    const Job& prev = **newest;
    NewJob next = policy::ContinuationOf(prev, piece);
    auto created = InsertJob(tx, next);
    if (!created.ok()) return created.status();
    MAESTRO_RETURN_IF_ERROR(MoveUndelivered(tx, prev, created->id));
    Comment c;
    c.task_id = task_id;
    c.job_id = created->id;
    c.author = author;
    c.kind = CommentKind::kHandoff;
    c.body = note.empty() ? fmt::format("Continue from job {} ({}) with piece {}", prev.id,
                                        JobStatusName(prev.status), next.piece)
                          : note;
    auto comment = sql::InsertComment(tx, c);
    if (!comment.ok()) return comment.status();
    out.job = std::move(created).value();
    out.handoff = std::move(comment).value();
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return out;
}

Result<std::map<std::string, int64_t>> SqlStore::CountJobsByStatus() {
  std::map<std::string, int64_t> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare("SELECT status, COUNT(*) FROM jobs GROUP BY status");
    if (!s.ok()) return s.status();
    for (;;) {
      auto row = s->Step();
      if (!row.ok()) return row.status();
      if (!*row) return Status::Ok();
      out[s->Text(0)] = s->Int(1);
    }
  });
  if (!st.ok()) return st;
  return out;
}

// ---- the budget gate (issue 18)

Result<Job> SqlStore::RaiseTaskBudget(const std::string& task_id, const Json& budget) {
  if (!budget.is_object()) return InvalidArgument("budget must be an object", "budget");
  Job out;
  Status st = Write([&](Tx& tx) -> Status {
    auto task = LoadTask(tx.conn, task_id);
    if (!task.ok()) return task.status();
    auto newest = NewestJob(tx.conn, task_id);
    if (!newest.ok()) return newest.status();
    if (!*newest || (*newest)->status != JobStatus::kWaitingHuman ||
        (*newest)->wait_reason != "budget_exceeded") {
      return Conflict("the task has no job parked on its budget (wait_reason budget_exceeded)");
    }
    auto s = tx.conn.Prepare("UPDATE tasks SET budget = ?2, updated_at = ?3 WHERE id = ?1");
    if (!s.ok()) return s.status();
    s->Bind(1, task_id).Bind(2, budget.dump()).Bind(3, tx.now);
    MAESTRO_RETURN_IF_ERROR(s->Exec());
    MAESTRO_RETURN_IF_ERROR(sql::InsertEvent(tx, task_id, (*newest)->id, "budget.raised",
                                             {{"budget", budget}, {"job_id", (*newest)->id}}));
    MAESTRO_RETURN_IF_ERROR(ResumeIfWaitingHuman(tx, (*newest)->id));
    out = **newest;
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return GetJob(out.id);
}

}  // namespace maestro
