// SqlStore: schedules and their fire claims (issue 20). The exactly-once
// rule is the UNIQUE (schedule_id, fire_at) key of schedule_fires: the claim
// is an INSERT … ON CONFLICT DO NOTHING in the same transaction that creates
// the task, so of two schedulers (or a restarted one) firing the same time
// exactly one inserts the row and creates the task; the other changes
// nothing and answers kAlreadyFired.
#include <fmt/format.h>

#include "core/ids.h"
#include "store/sql/rows.h"
#include "store/sql/sql_store.h"

namespace maestro {

namespace {

constexpr const char* kScheduleCols =
    "id, name, cron, timezone, instruction, piece, space, profile, visibility, owner, enabled, "
    "overlap, catch_up, budget, anchor_at, last_fire_at, last_task_id, held_fire_at, created_at, "
    "updated_at";

Schedule ReadSchedule(const sql::Stmt& s) {
  Schedule r;
  int c = 0;
  r.id = s.Text(c++);
  r.name = s.Text(c++);
  r.cron = s.Text(c++);
  r.timezone = s.Text(c++);
  r.instruction = s.Text(c++);
  r.piece = s.Text(c++);
  r.space = s.Text(c++);
  r.profile = s.Text(c++);
  r.visibility = s.Text(c++);
  r.owner = s.Text(c++);
  r.enabled = s.Int(c++) != 0;
  r.overlap = ParseScheduleOverlap(s.Text(c++)).value_or(ScheduleOverlap::kSkip);
  r.catch_up = ParseScheduleCatchUp(s.Text(c++)).value_or(ScheduleCatchUp::kNone);
  r.budget = Json::parse(s.Text(c++), nullptr, false);
  if (!r.budget.is_object()) r.budget = Json::object();
  r.anchor_at = s.Int(c++);
  r.last_fire_at = s.Int(c++);
  r.last_task_id = s.Text(c++);
  r.held_fire_at = s.Int(c++);
  r.created_at = s.Int(c++);
  r.updated_at = s.Int(c++);
  return r;
}

Result<std::optional<Schedule>> LoadSchedule(sql::Conn& conn, const std::string& id) {
  auto s = conn.Prepare(std::string("SELECT ") + kScheduleCols + " FROM schedules WHERE id = ?1");
  if (!s.ok()) return s.status();
  s->Bind(1, id);
  auto row = s->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<Schedule>();
  return std::optional<Schedule>(ReadSchedule(*s));
}

Status ScheduleNotFound(const std::string& id) { return NotFound("schedule " + id + " not found"); }

// The task a fire of `s` creates: the schedule's fields, its owner and
// visibility (so it is seen by whoever sees the schedule), its name as title.
NewTask TaskOf(const Schedule& s) {
  NewTask t;
  t.title = s.name;
  t.instruction = s.instruction;
  t.piece = s.piece;
  t.space = s.space;
  t.profile = s.profile;
  t.owner = s.owner;
  t.visibility = s.visibility;
  t.budget = s.budget;
  return t;
}

// Whether the schedule's previous task is still open (its newest job is not
// succeeded, failed or cancelled).
Result<bool> PreviousActive(sql::Conn& conn, const Schedule& s) {
  if (s.last_task_id.empty()) return false;
  auto st = conn.Prepare("SELECT status FROM tasks WHERE id = ?1");
  if (!st.ok()) return st.status();
  st->Bind(1, s.last_task_id);
  auto row = st->Step();
  if (!row.ok()) return row.status();
  if (!*row) return false;
  auto status = ParseJobStatus(st->Text(0));
  return status && !IsTerminal(*status);
}

}  // namespace

Result<Schedule> SqlStore::CreateSchedule(const Schedule& in) {
  if (in.instruction.empty())
    return InvalidArgument("instruction must not be empty", "instruction");
  const std::string id = NewUuid();
  Status st = Write([&](Tx& tx) -> Status {
    auto s = tx.conn.Prepare(
        "INSERT INTO schedules(id, name, cron, timezone, instruction, piece, space, profile, "
        "visibility, owner, enabled, overlap, catch_up, budget, anchor_at, created_at, updated_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?15, ?14, ?14, ?14)");
    if (!s.ok()) return s.status();
    s->Bind(1, id)
        .Bind(2, in.name)
        .Bind(3, in.cron)
        .Bind(4, in.timezone)
        .Bind(5, in.instruction)
        .Bind(6, in.piece)
        .Bind(7, in.space)
        .Bind(8, in.profile)
        .Bind(9, in.visibility)
        .Bind(10, in.owner)
        .Bind(11, in.enabled)
        .Bind(12, ScheduleOverlapName(in.overlap))
        .Bind(13, ScheduleCatchUpName(in.catch_up))
        .Bind(14, tx.now)
        .Bind(15, (in.budget.is_object() ? in.budget : Json::object()).dump());
    return s->Exec();
  });
  if (!st.ok()) return st;
  return GetSchedule(id);
}

Result<Schedule> SqlStore::GetSchedule(const std::string& id) {
  std::optional<Schedule> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = LoadSchedule(conn, id);
    if (!s.ok()) return s.status();
    out = std::move(*s);
    return Status::Ok();
  });
  if (!st.ok()) return st;
  if (!out) return ScheduleNotFound(id);
  return *out;
}

Result<std::vector<Schedule>> SqlStore::ListSchedules(
    const std::optional<std::string>& visible_to) {
  std::vector<Schedule> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare(std::string("SELECT ") + kScheduleCols +
                          " FROM schedules WHERE ?1 = 0 OR visibility = 'shared' OR owner = ''"
                          " OR owner = ?2 ORDER BY created_at, id");
    if (!s.ok()) return s.status();
    s->Bind(1, visible_to.has_value()).Bind(2, visible_to.value_or(""));
    return sql::CollectRows(*s, ReadSchedule, &out);
  });
  if (!st.ok()) return st;
  return out;
}

Result<Schedule> SqlStore::UpdateSchedule(const Schedule& in) {
  if (in.instruction.empty())
    return InvalidArgument("instruction must not be empty", "instruction");
  Status st = Write([&](Tx& tx) -> Status {
    auto old = LoadSchedule(tx.conn, in.id);
    if (!old.ok()) return old.status();
    if (!*old) return ScheduleNotFound(in.id);
    const Schedule& was = **old;
    // Re-enabling or a new time rule starts counting from now: the time it
    // was paused (or ruled differently) is not "missed".
    const bool restart =
        (in.enabled && !was.enabled) || in.cron != was.cron || in.timezone != was.timezone;
    auto s = tx.conn.Prepare(
        "UPDATE schedules SET name = ?2, cron = ?3, timezone = ?4, instruction = ?5, piece = ?6, "
        "space = ?7, profile = ?8, visibility = ?9, enabled = ?10, overlap = ?11, "
        "catch_up = ?12, anchor_at = ?13, updated_at = ?14, budget = ?15 WHERE id = ?1");
    if (!s.ok()) return s.status();
    s->Bind(1, in.id)
        .Bind(2, in.name)
        .Bind(3, in.cron)
        .Bind(4, in.timezone)
        .Bind(5, in.instruction)
        .Bind(6, in.piece)
        .Bind(7, in.space)
        .Bind(8, in.profile)
        .Bind(9, in.visibility)
        .Bind(10, in.enabled)
        .Bind(11, ScheduleOverlapName(in.overlap))
        .Bind(12, ScheduleCatchUpName(in.catch_up))
        .Bind(13, restart ? tx.now : was.anchor_at)
        .Bind(14, tx.now)
        .Bind(15, (in.budget.is_object() ? in.budget : Json::object()).dump());
    return s->Exec();
  });
  if (!st.ok()) return st;
  return GetSchedule(in.id);
}

Status SqlStore::DeleteSchedule(const std::string& id) {
  return Write([&](Tx& tx) -> Status {
    auto f = tx.conn.Prepare("DELETE FROM schedule_fires WHERE schedule_id = ?1");
    if (!f.ok()) return f.status();
    f->Bind(1, id);
    MAESTRO_RETURN_IF_ERROR(f->Exec());
    auto s = tx.conn.Prepare("DELETE FROM schedules WHERE id = ?1");
    if (!s.ok()) return s.status();
    s->Bind(1, id);
    MAESTRO_RETURN_IF_ERROR(s->Exec());
    if (tx.conn.Changes() == 0) return ScheduleNotFound(id);
    return Status::Ok();
  });
}

Result<Store::FireResult> SqlStore::FireSchedule(const std::string& schedule_id, TimeMs fire_at,
                                                 bool manual) {
  FireResult out;
  std::string task_id;
  Status st = Write([&](Tx& tx) -> Status {
    out = FireResult{};  // a retried transaction starts again
    out.fire.schedule_id = schedule_id;
    out.fire.fire_at = fire_at;
    out.fire.manual = manual;
    out.fire.created_at = tx.now;
    auto loaded = LoadSchedule(tx.conn, schedule_id);
    if (!loaded.ok()) return loaded.status();
    if (!*loaded) return ScheduleNotFound(schedule_id);
    const Schedule& s = **loaded;
    FireOutcome outcome = FireOutcome::kCreated;
    if (!manual && s.overlap != ScheduleOverlap::kAllow) {
      auto active = PreviousActive(tx.conn, s);
      if (!active.ok()) return active.status();
      if (*active) {
        outcome = s.overlap == ScheduleOverlap::kQueue && s.held_fire_at == 0
                      ? FireOutcome::kHeld
                      : FireOutcome::kSkipped;
      }
    }
    task_id = outcome == FireOutcome::kCreated ? NewUuid() : "";
    auto claim = tx.conn.Prepare(
        "INSERT INTO schedule_fires(schedule_id, fire_at, manual, outcome, task_id, created_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (schedule_id, fire_at) DO NOTHING");
    if (!claim.ok()) return claim.status();
    claim->Bind(1, schedule_id)
        .Bind(2, fire_at)
        .Bind(3, manual)
        .Bind(4, FireOutcomeName(outcome))
        .BindNullable(5, task_id)
        .Bind(6, tx.now);
    MAESTRO_RETURN_IF_ERROR(claim->Exec());
    if (tx.conn.Changes() == 0) {
      out.fire.outcome = FireOutcome::kAlreadyFired;
      task_id.clear();
      return Status::Ok();
    }
    out.fire.outcome = outcome;
    out.fire.task_id = task_id;
    if (outcome == FireOutcome::kCreated) {
      CreatedTask created;
      MAESTRO_RETURN_IF_ERROR(InsertTask(tx, TaskOf(s), &task_id, &created.job));
      out.created = std::move(created);
    }
    if (manual && outcome != FireOutcome::kCreated) return Status::Ok();
    // A cron fire moves the due count on; any created task is the one the
    // next fire's overlap rule looks at.
    auto up = tx.conn.Prepare(
        "UPDATE schedules SET last_fire_at = CASE WHEN ?2 = 1 OR last_fire_at > ?3 "
        "THEN last_fire_at ELSE ?3 END, "
        "last_task_id = CASE WHEN ?4 = '' THEN last_task_id ELSE ?4 END, "
        "held_fire_at = CASE WHEN ?5 = 1 THEN ?3 ELSE held_fire_at END WHERE id = ?1");
    if (!up.ok()) return up.status();
    up->Bind(1, schedule_id)
        .Bind(2, manual)
        .Bind(3, fire_at)
        .Bind(4, task_id)
        .Bind(5, outcome == FireOutcome::kHeld);
    return up->Exec();
  });
  if (!st.ok()) return st;
  if (out.created) {
    auto task = GetTask(task_id);
    if (!task.ok()) return task.status();
    out.created->task = std::move(task).value();
  }
  return out;
}

Result<std::optional<Store::CreatedTask>> SqlStore::ReleaseHeldFire(
    const std::string& schedule_id) {
  std::optional<CreatedTask> out;
  std::string task_id;
  Status st = Write([&](Tx& tx) -> Status {
    out.reset();
    auto loaded = LoadSchedule(tx.conn, schedule_id);
    if (!loaded.ok()) return loaded.status();
    if (!*loaded) return ScheduleNotFound(schedule_id);
    const Schedule& s = **loaded;
    if (s.held_fire_at == 0) return Status::Ok();
    auto active = PreviousActive(tx.conn, s);
    if (!active.ok()) return active.status();
    if (*active) return Status::Ok();
    task_id = NewUuid();
    auto fire = tx.conn.Prepare(
        "UPDATE schedule_fires SET outcome = ?3, task_id = ?4 "
        "WHERE schedule_id = ?1 AND fire_at = ?2 AND outcome = ?5");
    if (!fire.ok()) return fire.status();
    fire->Bind(1, schedule_id)
        .Bind(2, s.held_fire_at)
        .Bind(3, FireOutcomeName(FireOutcome::kCreated))
        .Bind(4, task_id)
        .Bind(5, FireOutcomeName(FireOutcome::kHeld));
    MAESTRO_RETURN_IF_ERROR(fire->Exec());
    const bool was_held = tx.conn.Changes() == 1;
    if (was_held) {
      CreatedTask created;
      MAESTRO_RETURN_IF_ERROR(InsertTask(tx, TaskOf(s), &task_id, &created.job));
      out = std::move(created);
    }
    auto up = tx.conn.Prepare(
        "UPDATE schedules SET held_fire_at = 0, "
        "last_task_id = CASE WHEN ?2 = '' THEN last_task_id ELSE ?2 END WHERE id = ?1");
    if (!up.ok()) return up.status();
    up->Bind(1, schedule_id).Bind(2, was_held ? task_id : std::string());
    return up->Exec();
  });
  if (!st.ok()) return st;
  if (out) {
    auto task = GetTask(task_id);
    if (!task.ok()) return task.status();
    out->task = std::move(task).value();
  }
  return out;
}

Result<ScheduleFire> SqlStore::SkipFireForQuota(const std::string& schedule_id, TimeMs fire_at) {
  ScheduleFire out;
  Status st = Write([&](Tx& tx) -> Status {
    out = ScheduleFire{};  // a retried transaction starts again
    out.schedule_id = schedule_id;
    out.fire_at = fire_at;
    out.created_at = tx.now;
    auto loaded = LoadSchedule(tx.conn, schedule_id);
    if (!loaded.ok()) return loaded.status();
    if (!*loaded) return ScheduleNotFound(schedule_id);
    auto claim = tx.conn.Prepare(
        "INSERT INTO schedule_fires(schedule_id, fire_at, manual, outcome, task_id, created_at) "
        "VALUES (?1, ?2, 0, ?3, NULL, ?4) ON CONFLICT (schedule_id, fire_at) DO NOTHING");
    if (!claim.ok()) return claim.status();
    claim->Bind(1, schedule_id)
        .Bind(2, fire_at)
        .Bind(3, FireOutcomeName(FireOutcome::kQuota))
        .Bind(4, tx.now);
    MAESTRO_RETURN_IF_ERROR(claim->Exec());
    if (tx.conn.Changes() == 0) {
      out.outcome = FireOutcome::kAlreadyFired;
      return Status::Ok();
    }
    out.outcome = FireOutcome::kQuota;
    // The refused time counts as fired: the next tick does not try it again.
    auto up = tx.conn.Prepare(
        "UPDATE schedules SET last_fire_at = CASE WHEN last_fire_at > ?2 THEN last_fire_at "
        "ELSE ?2 END WHERE id = ?1");
    if (!up.ok()) return up.status();
    up->Bind(1, schedule_id).Bind(2, fire_at);
    return up->Exec();
  });
  if (!st.ok()) return st;
  return out;
}

Result<std::vector<ScheduleFire>> SqlStore::ListScheduleFires(const std::string& schedule_id,
                                                              int limit) {
  std::vector<ScheduleFire> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare(
        "SELECT schedule_id, fire_at, manual, outcome, COALESCE(task_id, ''), created_at "
        "FROM schedule_fires WHERE schedule_id = ?1 ORDER BY fire_at DESC LIMIT ?2");
    if (!s.ok()) return s.status();
    s->Bind(1, schedule_id).Bind(2, limit);
    return sql::CollectRows(
        *s,
        [](const sql::Stmt& r) {
          ScheduleFire f;
          f.schedule_id = r.Text(0);
          f.fire_at = r.Int(1);
          f.manual = r.Int(2) != 0;
          const std::string o = r.Text(3);
          for (auto k : {FireOutcome::kCreated, FireOutcome::kSkipped, FireOutcome::kHeld,
                         FireOutcome::kQuota}) {
            if (FireOutcomeName(k) == o) f.outcome = k;
          }
          f.task_id = r.Text(4);
          f.created_at = r.Int(5);
          return f;
        },
        &out);
  });
  if (!st.ok()) return st;
  return out;
}

}  // namespace maestro
