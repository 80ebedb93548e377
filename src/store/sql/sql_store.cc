// SqlStore: transactions through the engine, tasks, comments and events.
// The job state machine is in sql_jobs.cc; the comment and continue gates in
// sql_gates.cc; requests and grants in sql_requests.cc.
#include "store/sql/sql_store.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <charconv>

#include "core/ids.h"
#include "store/sql/rows.h"
#include "store/title.h"

namespace maestro {

SqlStore::SqlStore(std::unique_ptr<sql::SqlEngine> engine, StoreOptions options)
    : engine_(std::move(engine)), dialect_(engine_->dialect()), options_(std::move(options)) {}

SqlStore::~SqlStore() = default;

Status SqlStore::Write(const std::function<Status(Tx&)>& body, sql::TxEffects* committed_out,
                       sql::TxKind kind) {
  sql::TxEffects committed;
  Status st = engine_->Write(
      [&](sql::Conn& conn, TimeMs now, sql::TxEffects& effects) -> Status {
        Tx tx{conn, now, effects};
        return body(tx);
      },
      &committed, kind);
  if (!st.ok()) return st;
  if (committed.job_available && options_.on_job_available) options_.on_job_available();
  if (options_.on_commit) options_.on_commit(committed.events);
  if (committed_out) *committed_out = std::move(committed);
  return st;
}

Status SqlStore::Read(const std::function<Status(sql::Conn&)>& body) { return engine_->Read(body); }

Result<int> SqlStore::SchemaVersion() { return engine_->SchemaVersion(); }

// ---- tasks

namespace {

// A subtask belongs to whoever owns its parent: without this a SpinOffTask
// child had owner "" and any user could read, comment on and cancel it. It
// also runs on the parent job's profile and priority unless it names its own.
Status InheritFromParentJob(sql::Conn& conn, NewTask* t) {
  auto s = conn.Prepare(
      "SELECT t.owner, t.visibility, COALESCE(j.profile, ''), COALESCE(j.model, ''), j.priority "
      "FROM jobs j JOIN tasks t ON t.id = j.task_id WHERE j.id = ?1");
  if (!s.ok()) return s.status();
  s->Bind(1, t->parent_job_id);
  auto row = s->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound("parent job " + t->parent_job_id + " not found");
  t->owner = s->Text(0);
  t->visibility = s->Text(1);
  if (t->profile.empty() && t->model.empty()) {
    t->profile = s->Text(2);
    t->model = s->Text(3);
  }
  if (t->priority == 0) t->priority = static_cast<int>(s->Int(4));
  return Status::Ok();
}

}  // namespace

Result<std::optional<Job>> SqlStore::FindSpawned(Tx& tx, const std::string& spawn_key) {
  auto s = tx.conn.Prepare(
      "SELECT j.id FROM tasks t JOIN jobs j ON j.task_id = t.id WHERE t.spawn_key = ?1"
      " ORDER BY j.seq LIMIT 1");
  if (!s.ok()) return s.status();
  s->Bind(1, spawn_key);
  auto row = s->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<Job>();
  std::string job_id = s->Text(0);
  MAESTRO_RETURN_IF_ERROR(s->Exec());
  MAESTRO_ASSIGN_OR_RETURN(Job job, sql::LoadJob(tx.conn, job_id));
  return std::optional<Job>(std::move(job));
}

Result<Store::CreatedTask> SqlStore::CreateTask(const NewTask& request) {
  if (request.instruction.empty()) {
    return InvalidArgument("instruction must not be empty", "instruction");
  }
  if (request.piece.empty()) return InvalidArgument("piece must not be empty", "piece");
  if (request.priority < kMinPriority || request.priority > kMaxPriority) {
    return InvalidArgument(
        fmt::format("priority must be between {} and {}", kMinPriority, kMaxPriority), "priority");
  }
  CreatedTask out;
  std::string task_id = request.id.empty() ? NewUuid() : request.id;
  // Every create path (API, MCP, CLI, subtasks) names an untitled task here.
  const std::string title = request.title.empty() ? AutoTitle(request.instruction) : request.title;
  Status st = Write([&](Tx& tx) -> Status {
    NewTask in = request;  // a retried transaction starts again from the request
    in.title = title;
    return InsertTask(tx, std::move(in), &task_id, &out.job);
  });
  if (!st.ok()) return st;
  auto task = GetTask(task_id);
  if (!task.ok()) return task.status();
  out.task = std::move(task).value();
  return out;
}

Status SqlStore::InsertTask(Tx& tx, NewTask in, std::string* task_id_out, Job* job_out) {
  const std::string& task_id = *task_id_out;
  if (!in.parent_job_id.empty()) MAESTRO_RETURN_IF_ERROR(InheritFromParentJob(tx.conn, &in));
  if (!in.spawn_key.empty()) {
    auto found = FindSpawned(tx, in.spawn_key);
    if (!found.ok()) return found.status();
    if (*found) {
      *task_id_out = (*found)->task_id;
      *job_out = std::move(**found);
      return Status::Ok();
    }
  }
  auto ins = tx.conn.Prepare(
      "INSERT INTO tasks(id, title, instruction, piece, space, visibility, owner, status, "
      "llm_provider, model, context_length, created_at, updated_at, spawn_key, budget, "
      "task_source, mission_id) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'queued', ?8, ?9, ?10, ?11, ?11, ?12, ?13, ?14, ?15)");
  if (!ins.ok()) return ins.status();
  ins->Bind(1, task_id)
      .Bind(2, in.title)
      .Bind(3, in.instruction)
      .Bind(4, in.piece)
      .Bind(5, in.space)
      .Bind(6, in.visibility)
      .Bind(7, in.owner)
      .Bind(8, in.llm_provider)
      .Bind(9, in.model)
      .Bind(10, in.context_length)
      .Bind(11, tx.now)
      .BindNullable(12, in.spawn_key)
      .Bind(13, (in.budget.is_object() ? in.budget : Json::object()).dump())
      .Bind(14, in.task_source.empty() ? std::string("local") : in.task_source)
      .Bind(15, in.mission_id);
  MAESTRO_RETURN_IF_ERROR(ins->Exec());
  auto com = tx.conn.Prepare(
      "INSERT INTO comments(id, task_id, author, kind, body, created_at) "
      "VALUES (?1, ?2, 'user', ?5, ?3, ?4)");
  if (!com.ok()) return com.status();
  std::string comment_id = NewSortableId(tx.now);
  com->Bind(1, comment_id)
      .Bind(2, task_id)
      .Bind(3, in.instruction)
      .Bind(4, tx.now)
      .Bind(5, CommentKindName(CommentKind::kInstruction));
  MAESTRO_RETURN_IF_ERROR(com->Exec());
  MAESTRO_RETURN_IF_ERROR(sql::InsertEvent(tx, task_id, "", "task.created",
                                           {{"piece", in.piece}, {"title", in.title}}));
  MAESTRO_RETURN_IF_ERROR(sql::InsertEvent(tx, task_id, "", "comment.created",
                                           {{"comment_id", comment_id},
                                            {"author", "user"},
                                            {"kind", CommentKindName(CommentKind::kInstruction)}}));
  MAESTRO_RETURN_IF_ERROR(InsertAttachments(tx, task_id, comment_id, in.attachments));
  NewJob job;
  job.task_id = task_id;
  job.piece = in.piece;
  job.model = in.model;
  job.profile = in.profile;
  job.parent_job_id = in.parent_job_id;
  job.priority = in.priority;
  auto created_job = InsertJob(tx, job);
  if (!created_job.ok()) return created_job.status();
  *job_out = std::move(created_job).value();
  return Status::Ok();
}

Result<Task> SqlStore::GetTask(const std::string& task_id) {
  std::optional<Task> task;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare(std::string("SELECT ") + sql::kTaskCols + " FROM tasks WHERE id = ?1");
    if (!s.ok()) return s.status();
    s->Bind(1, task_id);
    auto row = s->Step();
    if (!row.ok()) return row.status();
    if (*row) task = sql::ReadTask(*s);
    return Status::Ok();
  });
  if (!st.ok()) return st;
  if (!task) return NotFound("task " + task_id + " not found");
  return *task;
}

Result<std::vector<Task>> SqlStore::ListTasks(std::optional<JobStatus> status, int limit) {
  std::vector<Task> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare(std::string("SELECT ") + sql::kTaskCols +
                          " FROM tasks WHERE (?1 = '' OR status = ?1)"
                          " ORDER BY created_at DESC, id LIMIT ?2");
    if (!s.ok()) return s.status();
    s->Bind(1, status ? JobStatusName(*status) : "").Bind(2, limit);
    return sql::CollectRows(*s, sql::ReadTask, &out);
  });
  if (!st.ok()) return st;
  return out;
}

namespace {

bool IsZero(const TaskStatsDelta& d) {
  return d.llm_calls == 0 && d.tool_calls == 0 && d.tokens == 0 && d.compressions == 0 &&
         d.llm_provider.empty() && d.model.empty() && d.context_length == 0;
}

Status UpdateTaskStats(SqlStore::Tx& tx, const std::string& task_id, const TaskStatsDelta& d) {
  auto s = tx.conn.Prepare(
      "UPDATE tasks SET llm_call_count = llm_call_count + ?2, "
      "tool_call_count = tool_call_count + ?3, total_tokens = total_tokens + ?4, "
      "compression_count = compression_count + ?5, updated_at = ?6, "
      "llm_provider = CASE WHEN llm_provider = '' THEN ?7 ELSE llm_provider END, "
      "model = CASE WHEN model = '' THEN ?8 ELSE model END, "
      "context_length = CASE WHEN context_length = 0 THEN ?9 ELSE context_length END "
      "WHERE id = ?1");
  if (!s.ok()) return s.status();
  s->Bind(1, task_id)
      .Bind(2, d.llm_calls)
      .Bind(3, d.tool_calls)
      .Bind(4, d.tokens)
      .Bind(5, d.compressions)
      .Bind(6, tx.now)
      .Bind(7, d.llm_provider)
      .Bind(8, d.model)
      .Bind(9, d.context_length);
  MAESTRO_RETURN_IF_ERROR(s->Exec());
  if (tx.conn.Changes() == 0) return NotFound("task " + task_id + " not found");
  return Status::Ok();
}

}  // namespace

Status SqlStore::AddTaskStats(const std::string& task_id, const TaskStatsDelta& d) {
  return Write([&](Tx& tx) -> Status { return UpdateTaskStats(tx, task_id, d); });
}

Result<Task> SqlStore::SetTaskTitle(const std::string& task_id, const std::string& title) {
  std::string clean;
  MAESTRO_RETURN_IF_ERROR(CheckTitle(title, &clean));
  Status st = Write([&](Tx& tx) -> Status {
    auto s = tx.conn.Prepare("UPDATE tasks SET title = ?2, updated_at = ?3 WHERE id = ?1");
    if (!s.ok()) return s.status();
    s->Bind(1, task_id).Bind(2, clean).Bind(3, tx.now);
    MAESTRO_RETURN_IF_ERROR(s->Exec());
    if (tx.conn.Changes() == 0) return NotFound("task " + task_id + " not found");
    // Live views (the task-events stream) refresh on it.
    return sql::InsertEvent(tx, task_id, "", "task.updated", {{"title", clean}});
  });
  if (!st.ok()) return st;
  return GetTask(task_id);
}

// ---- comments

Result<Comment> SqlStore::AddComment(const Comment& in) {
  if (in.body.empty()) return InvalidArgument("body must not be empty", "body");
  Comment out;
  Status st = Write([&](Tx& tx) -> Status {
    auto c = sql::InsertComment(tx, in);
    if (!c.ok()) return c.status();
    out = std::move(c).value();
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return out;
}

Result<std::vector<Comment>> SqlStore::ListComments(const std::string& task_id) {
  std::vector<Comment> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare(std::string("SELECT ") + sql::kCommentCols +
                          " FROM comments WHERE task_id = ?1 ORDER BY id");
    if (!s.ok()) return s.status();
    s->Bind(1, task_id);
    return sql::CollectRows(*s, sql::ReadComment, &out);
  });
  if (!st.ok()) return st;
  return out;
}

// ---- events

Result<Event> SqlStore::AppendEvent(const Event& in, const TaskStatsDelta& stats) {
  Event e = in;
  int64_t id = 0;
  sql::TxEffects committed;
  Status st = Write(
      [&](Tx& tx) -> Status {
        e.created_at = tx.now;
        if (!IsZero(stats)) MAESTRO_RETURN_IF_ERROR(UpdateTaskStats(tx, e.task_id, stats));
        return sql::InsertEvent(tx, e.task_id, e.job_id, e.type, e.payload, &id);
      },
      &committed);
  if (!st.ok()) return st;
  if (!committed.deferred.empty()) id = committed.deferred.front().id;
  e.id = std::to_string(id);
  return e;
}

Result<std::vector<Event>> SqlStore::ListEvents(const std::string& task_id,
                                                const std::string& after_id, int limit) {
  int64_t after = 0;
  if (!after_id.empty()) {
    auto [p, ec] = std::from_chars(after_id.data(), after_id.data() + after_id.size(), after);
    if (ec != std::errc() || p != after_id.data() + after_id.size() || after < 0) {
      return InvalidArgument("event id must be a non-negative integer", "after_id");
    }
  }
  std::vector<Event> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare(std::string("SELECT ") + sql::kEventCols +
                          " FROM events WHERE task_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3");
    if (!s.ok()) return s.status();
    s->Bind(1, task_id).Bind(2, after).Bind(3, limit);
    return sql::CollectRows(*s, sql::ReadEvent, &out);
  });
  if (!st.ok()) return st;
  return out;
}

}  // namespace maestro
