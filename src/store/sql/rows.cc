#include "store/sql/rows.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/ids.h"
#include "store/policy.h"

namespace maestro::sql {

const char* const kTaskCols =
    "id, title, instruction, piece, space, visibility, owner, task_source, status, "
    "llm_provider, model, context_length, llm_call_count, tool_call_count, total_tokens, "
    "compression_count, error_message, process_id, hostname, created_at, "
    "COALESCE(started_at, 0), COALESCE(completed_at, 0), updated_at, budget, mission_id";

const char* const kJobCols =
    "seq, id, task_id, COALESCE(parent_job_id, ''), COALESCE(continued_from_job_id, ''), status, "
    "piece, COALESCE(model, ''), COALESCE(profile, ''), COALESCE(required_worker, ''), "
    "COALESCE(worker_id, ''), fencing_token, COALESCE(lease_expires_at, 0), attempt, "
    "max_attempts, COALESCE(next_retry_at, 0), wait_reason, resume_movement, ask_count, "
    "cancel_requested, error_message, result, created_at, COALESCE(started_at, 0), "
    "COALESCE(finished_at, 0), updated_at, priority, captcha_space_id, captcha_screen";

const char* const kCommentCols =
    "id, task_id, COALESCE(job_id, ''), author, kind, body, COALESCE(delivered_at, 0), "
    "created_at";

const char* const kRequestCols =
    "id, task_id, COALESCE(job_id, ''), kind, name, args, args_hash, reason, status, scope, "
    "decided_by, COALESCE(decided_at, 0), created_at";

const char* const kGrantCols =
    "id, task_id, tool_name, scope, args_hash, COALESCE(request_id, ''), "
    "COALESCE(expires_at, 0), COALESCE(uses_left, -1), created_at";

const char* const kEventCols = "id, task_id, COALESCE(job_id, ''), type, payload, created_at";

Task ReadTask(const Stmt& s) {
  Task t;
  int c = 0;
  t.id = s.Text(c++);
  t.title = s.Text(c++);
  t.instruction = s.Text(c++);
  t.piece = s.Text(c++);
  t.space = s.Text(c++);
  t.visibility = s.Text(c++);
  t.owner = s.Text(c++);
  t.task_source = s.Text(c++);
  t.status = ParseJobStatus(s.Text(c++)).value_or(JobStatus::kFailed);
  t.llm_provider = s.Text(c++);
  t.model = s.Text(c++);
  t.context_length = s.Int(c++);
  t.llm_call_count = s.Int(c++);
  t.tool_call_count = s.Int(c++);
  t.total_tokens = s.Int(c++);
  t.compression_count = s.Int(c++);
  t.error_message = s.Text(c++);
  t.process_id = s.Int(c++);
  t.hostname = s.Text(c++);
  t.created_at = s.Int(c++);
  t.started_at = s.Int(c++);
  t.completed_at = s.Int(c++);
  t.updated_at = s.Int(c++);
  t.budget = Json::parse(s.Text(c++), nullptr, /*allow_exceptions=*/false);
  if (!t.budget.is_object()) t.budget = Json::object();
  t.mission_id = s.Text(c++);
  return t;
}

Job ReadJob(const Stmt& s, int first_col) {
  Job j;
  int c = first_col;
  j.seq = s.Int(c++);
  j.id = s.Text(c++);
  j.task_id = s.Text(c++);
  j.parent_job_id = s.Text(c++);
  j.continued_from_job_id = s.Text(c++);
  j.status = ParseJobStatus(s.Text(c++)).value_or(JobStatus::kFailed);
  j.piece = s.Text(c++);
  j.model = s.Text(c++);
  j.profile = s.Text(c++);
  j.required_worker = s.Text(c++);
  j.worker_id = s.Text(c++);
  j.fencing_token = s.Int(c++);
  j.lease_expires_at = s.Int(c++);
  j.attempt = static_cast<int>(s.Int(c++));
  j.max_attempts = static_cast<int>(s.Int(c++));
  j.next_retry_at = s.Int(c++);
  j.wait_reason = s.Text(c++);
  j.resume_movement = s.Text(c++);
  j.ask_count = static_cast<int>(s.Int(c++));
  j.cancel_requested = s.Int(c++) != 0;
  j.error_message = s.Text(c++);
  j.result = s.Text(c++);
  j.created_at = s.Int(c++);
  j.started_at = s.Int(c++);
  j.finished_at = s.Int(c++);
  j.updated_at = s.Int(c++);
  j.priority = static_cast<int>(s.Int(c++));
  j.captcha_space_id = s.Text(c++);
  j.captcha_screen = s.Text(c++);
  return j;
}

Comment ReadComment(const Stmt& s) {
  Comment m;
  m.id = s.Text(0);
  m.task_id = s.Text(1);
  m.job_id = s.Text(2);
  m.author = s.Text(3);
  m.kind = ParseCommentKind(s.Text(4)).value_or(CommentKind::kNote);
  m.body = s.Text(5);
  m.delivered_at = s.Int(6);
  m.created_at = s.Int(7);
  return m;
}

Request ReadRequest(const Stmt& s) {
  Request r;
  r.id = s.Text(0);
  r.task_id = s.Text(1);
  r.job_id = s.Text(2);
  r.kind = ParseRequestKind(s.Text(3)).value_or(RequestKind::kTool);  // CHECKed by the schema
  r.name = s.Text(4);
  r.args = Json::parse(s.Text(5), nullptr, /*allow_exceptions=*/false);
  if (r.args.is_discarded()) r.args = Json::object();
  r.args_hash = s.Text(6);
  r.reason = s.Text(7);
  r.status = ParseRequestStatus(s.Text(8)).value_or(RequestStatus::kPending);
  r.scope = ParseGrantScope(s.Text(9));  // '' = not given
  r.decided_by = s.Text(10);
  r.decided_at = s.Int(11);
  r.created_at = s.Int(12);
  return r;
}

Grant ReadGrant(const Stmt& s) {
  Grant g;
  g.id = s.Text(0);
  g.task_id = s.Text(1);
  g.tool_name = s.Text(2);
  g.scope = ParseGrantScope(s.Text(3)).value_or(GrantScope::kOnce);  // CHECKed by the schema
  g.args_hash = s.Text(4);
  g.request_id = s.Text(5);
  g.expires_at = s.Int(6);
  g.uses_left = static_cast<int>(s.Int(7));
  g.created_at = s.Int(8);
  return g;
}

Event ReadEvent(const Stmt& s) {
  Event e;
  e.id = std::to_string(s.Int(0));
  e.task_id = s.Text(1);
  e.job_id = s.Text(2);
  e.type = s.Text(3);
  e.payload = Json::parse(s.Text(4), nullptr, /*allow_exceptions=*/false);
  if (e.payload.is_discarded()) e.payload = Json::object();
  e.created_at = s.Int(5);
  return e;
}

Result<Comment> InsertComment(SqlStore::Tx& tx, Comment c) {
  c.id = NewSortableId(tx.now);
  c.created_at = tx.now;
  auto s = tx.conn.Prepare(
      "INSERT INTO comments(id, task_id, job_id, author, kind, body, delivered_at, created_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  if (!s.ok()) return s.status();
  s->Bind(1, c.id)
      .Bind(2, c.task_id)
      .BindNullable(3, c.job_id)
      .Bind(4, c.author)
      .Bind(5, CommentKindName(c.kind))
      .Bind(6, c.body)
      .BindNullable(7, c.delivered_at)
      .Bind(8, c.created_at);
  Status ins = s->Exec();
  // The only constraint a comment can break is its task reference.
  if (ins.code() == StatusCode::kConflict) return NotFound("task " + c.task_id + " not found");
  MAESTRO_RETURN_IF_ERROR(ins);
  MAESTRO_RETURN_IF_ERROR(
      InsertEvent(tx, c.task_id, c.job_id, "comment.created",
                  {{"comment_id", c.id}, {"author", c.author}, {"kind", CommentKindName(c.kind)}}));
  return c;
}

const std::string& DeliveredKindsClause() {
  static const std::string clause = [] {
    std::vector<std::string> quoted;
    for (CommentKind k : policy::kDeliveredKinds) {
      quoted.push_back(fmt::format("'{}'", CommentKindName(k)));
    }
    return fmt::format(" AND kind IN ({})", fmt::join(quoted, ", "));
  }();
  return clause;
}

Result<Job> LoadJob(sql::Conn& conn, const std::string& job_id) {
  auto st = conn.Prepare(std::string("SELECT ") + kJobCols + " FROM jobs WHERE id = ?1");
  if (!st.ok()) return st.status();
  st->Bind(1, job_id);
  auto row = st->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound("job " + job_id + " not found");
  return ReadJob(*st);
}

Status InsertEvent(SqlStore::Tx& tx, const std::string& task_id, const std::string& job_id,
                   const std::string& type, const Json& payload, int64_t* id) {
  tx.effects.events.push_back(CommittedEvent{task_id, job_id, type});
  if (sql::DefersEvents(tx.conn.dialect())) {
    // The id is known only after commit (TxEffects::deferred).
    tx.effects.deferred.push_back({task_id, job_id, type, DumpJson(payload), tx.now, 0});
    return Status::Ok();
  }
  auto st = tx.conn.Prepare(
      "INSERT INTO events(task_id, job_id, type, payload, created_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id");
  if (!st.ok()) return st.status();
  st->Bind(1, task_id)
      .BindNullable(2, job_id)
      .Bind(3, type)
      .Bind(4, DumpJson(payload))
      .Bind(5, tx.now);
  auto row = st->Step();
  if (!row.ok()) return row.status();
  if (id != nullptr && *row) *id = st->Int(0);
  return st->Exec();
}

Status CheckLease(const Job& job, const Lease& lease) {
  if (job.status != JobStatus::kRunning || job.fencing_token != lease.fencing_token ||
      job.worker_id != lease.worker_id) {
    return LeaseLost(
        fmt::format("job {} is no longer held by {} (token {}): status={} worker={} token={}",
                    job.id, lease.worker_id, lease.fencing_token, JobStatusName(job.status),
                    job.worker_id, job.fencing_token));
  }
  return Status::Ok();
}

}  // namespace maestro::sql
