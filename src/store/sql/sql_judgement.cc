// The judgement rows of SqlStore (issue 21; types: store/judgement_types.h):
// lessons — one table, read by space; the evidence is a JSON array of task
// ids —, missions and their tasks, and the piece a router chose for a task.
#include "core/ids.h"
#include "core/json.h"
#include "store/sql/rows.h"
#include "store/sql/sql_store.h"

namespace maestro {

namespace {

constexpr const char* kLessonCols =
    "id, space, piece, scope, lesson, evidence, source_task_id, created_at, updated_at";

Lesson ReadLesson(const sql::Stmt& s) {
  Lesson l;
  l.id = s.Text(0);
  l.space = s.Text(1);
  l.piece = s.Text(2);
  l.scope = ParseLessonScope(s.Text(3)).value_or(LessonScope::kSpace);
  l.lesson = s.Text(4);
  Json ev = Json::parse(s.Text(5), nullptr, /*allow_exceptions=*/false);
  if (ev.is_array()) {
    for (const Json& e : ev) {
      if (e.is_string()) l.evidence.push_back(e.get<std::string>());
    }
  }
  l.source_task_id = s.Text(6);
  l.created_at = s.Int(7);
  l.updated_at = s.Int(8);
  return l;
}

Status CheckLesson(const Lesson& l) {
  if (l.lesson.empty()) return InvalidArgument("lesson must not be empty", "lesson");
  if (l.scope == LessonScope::kPiece && l.piece.empty()) {
    return InvalidArgument("a lesson with scope piece needs a piece", "piece");
  }
  return Status::Ok();
}

std::string EvidenceText(const Lesson& l) { return DumpJson(Json(l.evidence)); }

Status LessonNotFound(const std::string& id) { return NotFound("lesson " + id + " not found"); }

constexpr const char* kMissionCols =
    "id, title, notes, space, owner, visibility, created_at, updated_at";

Mission ReadMission(const sql::Stmt& s) {
  Mission m;
  m.id = s.Text(0);
  m.title = s.Text(1);
  m.notes = s.Text(2);
  m.space = s.Text(3);
  m.owner = s.Text(4);
  m.visibility = s.Text(5);
  m.created_at = s.Int(6);
  m.updated_at = s.Int(7);
  return m;
}

Status MissionNotFound(const std::string& id) { return NotFound("mission " + id + " not found"); }

}  // namespace

Result<Mission> SqlStore::CreateMission(const Mission& in) {
  if (in.title.empty()) return InvalidArgument("title must not be empty", "title");
  Mission m = in;
  Status st = Write([&](Tx& tx) -> Status {
    m.id = NewUuid();
    m.created_at = m.updated_at = tx.now;
    auto s = tx.conn.Prepare(
        "INSERT INTO missions(id, title, notes, space, owner, visibility, created_at, updated_at)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)");
    if (!s.ok()) return s.status();
    s->Bind(1, m.id)
        .Bind(2, m.title)
        .Bind(3, m.notes)
        .Bind(4, m.space)
        .Bind(5, m.owner)
        .Bind(6, m.visibility)
        .Bind(7, tx.now);
    return s->Exec();
  });
  if (!st.ok()) return st;
  return m;
}

Result<Mission> SqlStore::GetMission(const std::string& id) {
  std::vector<Mission> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare(std::string("SELECT ") + kMissionCols + " FROM missions WHERE id = ?1");
    if (!s.ok()) return s.status();
    s->Bind(1, id);
    return sql::CollectRows(*s, ReadMission, &out);
  });
  if (!st.ok()) return st;
  if (out.empty()) return MissionNotFound(id);
  return out.front();
}

Result<std::vector<Mission>> SqlStore::ListMissions(const std::optional<std::string>& visible_to) {
  std::vector<Mission> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare(std::string("SELECT ") + kMissionCols +
                          " FROM missions WHERE ?1 = 0 OR visibility = 'shared' OR owner = ''"
                          " OR owner = ?2 ORDER BY created_at, id");
    if (!s.ok()) return s.status();
    s->Bind(1, visible_to.has_value()).Bind(2, visible_to.value_or(""));
    return sql::CollectRows(*s, ReadMission, &out);
  });
  if (!st.ok()) return st;
  return out;
}

Result<Mission> SqlStore::UpdateMission(const Mission& in) {
  if (in.title.empty()) return InvalidArgument("title must not be empty", "title");
  Status st = Write([&](Tx& tx) -> Status {
    auto s = tx.conn.Prepare(
        "UPDATE missions SET title = ?2, notes = ?3, updated_at = ?4 WHERE id = ?1");
    if (!s.ok()) return s.status();
    s->Bind(1, in.id).Bind(2, in.title).Bind(3, in.notes).Bind(4, tx.now);
    MAESTRO_RETURN_IF_ERROR(s->Exec());
    if (tx.conn.Changes() == 0) return MissionNotFound(in.id);
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return GetMission(in.id);
}

Result<std::vector<Task>> SqlStore::ListMissionTasks(const std::string& mission_id, int limit) {
  std::vector<Task> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare(std::string("SELECT ") + sql::kTaskCols +
                          " FROM tasks WHERE mission_id = ?1 ORDER BY created_at DESC, id DESC"
                          " LIMIT ?2");
    if (!s.ok()) return s.status();
    s->Bind(1, mission_id).Bind(2, limit);
    return sql::CollectRows(*s, sql::ReadTask, &out);
  });
  if (!st.ok()) return st;
  return out;
}

Status SqlStore::SetTaskPiece(const std::string& task_id, const std::string& piece,
                              const Json& event) {
  return Write([&](Tx& tx) -> Status {
    auto t = tx.conn.Prepare(
        "UPDATE tasks SET piece = ?2, updated_at = ?3 WHERE id = ?1 AND piece = ?4");
    if (!t.ok()) return t.status();
    t->Bind(1, task_id).Bind(2, piece).Bind(3, tx.now).Bind(4, kRoutedPiece);
    MAESTRO_RETURN_IF_ERROR(t->Exec());
    if (tx.conn.Changes() == 0) return Conflict("task " + task_id + " is routed already");
    auto j = tx.conn.Prepare("UPDATE jobs SET piece = ?2 WHERE task_id = ?1 AND piece = ?3");
    if (!j.ok()) return j.status();
    j->Bind(1, task_id).Bind(2, piece).Bind(3, kRoutedPiece);
    MAESTRO_RETURN_IF_ERROR(j->Exec());
    return sql::InsertEvent(tx, task_id, "", "task.routed", event);
  });
}

Result<Lesson> SqlStore::AddLesson(const Lesson& in) {
  MAESTRO_RETURN_IF_ERROR(CheckLesson(in));
  Lesson l = in;
  if (l.scope == LessonScope::kSpace) l.piece.clear();
  Status st = Write([&](Tx& tx) -> Status {
    l.id = NewSortableId(tx.now);
    l.created_at = l.updated_at = tx.now;
    auto s = tx.conn.Prepare(
        "INSERT INTO lessons(id, space, piece, scope, lesson, evidence, source_task_id, "
        "created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)");
    if (!s.ok()) return s.status();
    s->Bind(1, l.id)
        .Bind(2, l.space)
        .Bind(3, l.piece)
        .Bind(4, std::string(LessonScopeName(l.scope)))
        .Bind(5, l.lesson)
        .Bind(6, EvidenceText(l))
        .Bind(7, l.source_task_id)
        .Bind(8, tx.now);
    return s->Exec();
  });
  if (!st.ok()) return st;
  return l;
}

Result<Lesson> SqlStore::GetLesson(const std::string& id) {
  std::vector<Lesson> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare(std::string("SELECT ") + kLessonCols + " FROM lessons WHERE id = ?1");
    if (!s.ok()) return s.status();
    s->Bind(1, id);
    return sql::CollectRows(*s, ReadLesson, &out);
  });
  if (!st.ok()) return st;
  if (out.empty()) return LessonNotFound(id);
  return out.front();
}

Result<std::vector<Lesson>> SqlStore::ListLessons(const std::string& space,
                                                  const std::optional<std::string>& piece,
                                                  int limit) {
  std::vector<Lesson> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare(std::string("SELECT ") + kLessonCols +
                          " FROM lessons WHERE space = ?1 AND (?2 = 0 OR scope = 'space' OR"
                          " piece = ?3) ORDER BY created_at DESC, id DESC LIMIT ?4");
    if (!s.ok()) return s.status();
    s->Bind(1, space).Bind(2, piece.has_value()).Bind(3, piece.value_or("")).Bind(4, limit);
    return sql::CollectRows(*s, ReadLesson, &out);
  });
  if (!st.ok()) return st;
  return out;
}

Result<std::vector<Lesson>> SqlStore::ListAllLessons(int limit) {
  std::vector<Lesson> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare(std::string("SELECT ") + kLessonCols +
                          " FROM lessons ORDER BY created_at DESC, id DESC LIMIT ?1");
    if (!s.ok()) return s.status();
    s->Bind(1, limit);
    return sql::CollectRows(*s, ReadLesson, &out);
  });
  if (!st.ok()) return st;
  return out;
}

Result<Lesson> SqlStore::UpdateLesson(const Lesson& in) {
  MAESTRO_RETURN_IF_ERROR(CheckLesson(in));
  Status st = Write([&](Tx& tx) -> Status {
    auto s = tx.conn.Prepare(
        "UPDATE lessons SET lesson = ?2, scope = ?3, piece = ?4, evidence = ?5, updated_at = ?6"
        " WHERE id = ?1");
    if (!s.ok()) return s.status();
    s->Bind(1, in.id)
        .Bind(2, in.lesson)
        .Bind(3, std::string(LessonScopeName(in.scope)))
        .Bind(4, in.scope == LessonScope::kSpace ? std::string() : in.piece)
        .Bind(5, EvidenceText(in))
        .Bind(6, tx.now);
    MAESTRO_RETURN_IF_ERROR(s->Exec());
    if (tx.conn.Changes() == 0) return LessonNotFound(in.id);
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return GetLesson(in.id);
}

Status SqlStore::DeleteLesson(const std::string& id) {
  return Write([&](Tx& tx) -> Status {
    auto s = tx.conn.Prepare("DELETE FROM lessons WHERE id = ?1");
    if (!s.ok()) return s.status();
    s->Bind(1, id);
    MAESTRO_RETURN_IF_ERROR(s->Exec());
    if (tx.conn.Changes() == 0) return LessonNotFound(id);
    return Status::Ok();
  });
}

}  // namespace maestro
