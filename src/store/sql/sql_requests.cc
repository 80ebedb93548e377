// Approval requests (tool / package / spawn) and grants of SqlStore.
//
// A decision is a compare-and-set from pending, so two people clicking
// approve at once produce one decision and one grant; the loser gets
// kConflict. Grants are matched by (task, tool, canonical args hash), never by
// position, and a use is spent inside the same transaction that finds it.
#include <fmt/format.h>

#include "core/hash.h"
#include "core/ids.h"
#include "store/sql/rows.h"
#include "store/sql/sql_store.h"

namespace maestro {

namespace {

Result<Request> LoadRequest(sql::Conn& conn, const std::string& id) {
  auto s =
      conn.Prepare(std::string("SELECT ") + sql::kRequestCols + " FROM requests WHERE id = ?1");
  if (!s.ok()) return s.status();
  s->Bind(1, id);
  auto row = s->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound("request " + id + " not found");
  return sql::ReadRequest(*s);
}

Status InsertGrant(SqlStore::Tx& tx, Grant& g) {
  g.id = NewSortableId(tx.now);
  g.created_at = tx.now;
  auto s = tx.conn.Prepare(
      "INSERT INTO grants(id, task_id, tool_name, scope, args_hash, request_id, expires_at, "
      "uses_left, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  if (!s.ok()) return s.status();
  s->Bind(1, g.id)
      .Bind(2, g.task_id)
      .Bind(3, g.tool_name)
      .Bind(4, GrantScopeName(g.scope))
      .Bind(5, g.args_hash)
      .BindNullable(6, g.request_id)
      .BindNullable(7, g.expires_at);
  g.uses_left < 0 ? s->BindNull(8) : s->Bind(8, g.uses_left);
  s->Bind(9, g.created_at);
  Status st = s->Exec();
  if (st.code() == StatusCode::kConflict) return NotFound("task " + g.task_id + " not found");
  MAESTRO_RETURN_IF_ERROR(st);
  return sql::InsertEvent(tx, g.task_id, "", "grant.created",
                          {{"grant_id", g.id},
                           {"tool", g.tool_name},
                           {"scope", GrantScopeName(g.scope)},
                           {"request_id", g.request_id}});
}

}  // namespace

Result<Request> SqlStore::CreateRequest(const Request& in) {
  if (in.name.empty()) return InvalidArgument("name must not be empty", "name");
  Request r = in;
  r.status = RequestStatus::kPending;
  r.scope.reset();
  if (r.args_hash.empty()) r.args_hash = CanonicalJsonHash(r.args);
  Status st = Write([&](Tx& tx) -> Status {
    r.id = NewSortableId(tx.now);
    r.created_at = tx.now;
    auto s = tx.conn.Prepare(
        "INSERT INTO requests(id, task_id, job_id, kind, name, args, args_hash, reason, status, "
        "created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'pending', ?9)");
    if (!s.ok()) return s.status();
    s->Bind(1, r.id)
        .Bind(2, r.task_id)
        .BindNullable(3, r.job_id)
        .Bind(4, RequestKindName(r.kind))
        .Bind(5, r.name)
        .Bind(6, r.args.dump())
        .Bind(7, r.args_hash)
        .Bind(8, r.reason)
        .Bind(9, r.created_at);
    Status ins = s->Exec();
    if (ins.code() == StatusCode::kConflict) return NotFound("task " + r.task_id + " not found");
    MAESTRO_RETURN_IF_ERROR(ins);
    return sql::InsertEvent(
        tx, r.task_id, r.job_id, "request.created",
        {{"request_id", r.id}, {"kind", RequestKindName(r.kind)}, {"name", r.name}});
  });
  if (!st.ok()) return st;
  return r;
}

Result<Request> SqlStore::GetRequest(const std::string& request_id) {
  std::optional<Request> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto r = LoadRequest(conn, request_id);
    if (!r.ok()) return r.status();
    out = std::move(r).value();
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return *out;
}

Result<std::vector<Request>> SqlStore::ListRequests(const std::string& task_id,
                                                    std::optional<RequestKind> kind) {
  std::vector<Request> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare(std::string("SELECT ") + sql::kRequestCols +
                          " FROM requests WHERE task_id = ?1 AND (?2 = '' OR kind = ?2)"
                          " ORDER BY id");
    if (!s.ok()) return s.status();
    s->Bind(1, task_id).Bind(2, kind ? RequestKindName(*kind) : "");
    return sql::CollectRows(*s, sql::ReadRequest, &out);
  });
  if (!st.ok()) return st;
  return out;
}

Result<Request> SqlStore::DecideRequest(const std::string& request_id, const std::string& decision,
                                        const std::string& scope, const std::string& decided_by) {
  RequestStatus status;
  if (decision == "approve")
    status = RequestStatus::kApproved;
  else if (decision == "deny")
    status = RequestStatus::kDenied;
  else
    return InvalidArgument("decision must be approve or deny", "decision");
  std::optional<GrantScope> granted;
  if (!scope.empty()) {
    granted = ParseGrantScope(scope);
    if (!granted) return InvalidArgument("scope must be once or task", "scope");
  }
  std::optional<Request> out;
  Status st = Write([&](Tx& tx) -> Status {
    auto s = tx.conn.Prepare(
        "UPDATE requests SET status = ?2, scope = ?3, decided_by = ?4, decided_at = ?5 "
        "WHERE id = ?1 AND status = 'pending'");
    if (!s.ok()) return s.status();
    s->Bind(1, request_id)
        .Bind(2, RequestStatusName(status))
        .Bind(3, scope)
        .Bind(4, decided_by)
        .Bind(5, tx.now);
    MAESTRO_RETURN_IF_ERROR(s->Exec());
    bool won = tx.conn.Changes() == 1;
    auto r = LoadRequest(tx.conn, request_id);
    if (!r.ok()) return r.status();
    if (!won) {
      return Conflict(
          fmt::format("request {} was already {}", request_id, RequestStatusName(r->status)));
    }
    if (status == RequestStatus::kApproved && r->kind == RequestKind::kTool) {
      Grant g;
      g.task_id = r->task_id;
      g.tool_name = r->name;
      g.scope = granted.value_or(GrantScope::kOnce);
      g.args_hash = g.scope == GrantScope::kOnce ? r->args_hash : "";
      g.request_id = r->id;
      g.uses_left = g.scope == GrantScope::kOnce ? 1 : -1;
      MAESTRO_RETURN_IF_ERROR(InsertGrant(tx, g));
    }
    MAESTRO_RETURN_IF_ERROR(sql::InsertEvent(tx, r->task_id, r->job_id, "request.decided",
                                             {{"request_id", r->id},
                                              {"kind", RequestKindName(r->kind)},
                                              {"status", RequestStatusName(status)},
                                              {"scope", scope}}));
    // The parked job resumes in the same transaction: either way (approved or
    // denied) the agent re-enters its movement and learns the decision when it
    // re-issues the call (seed 001: decided requests short-circuit).
    if (!r->job_id.empty()) MAESTRO_RETURN_IF_ERROR(ResumeIfWaitingHuman(tx, r->job_id));
    out = std::move(r).value();
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return *out;
}

Result<Grant> SqlStore::AddGrant(const Grant& in) {
  if (in.scope == GrantScope::kOnce && in.args_hash.empty()) {
    return InvalidArgument("a once grant must be bound to an args hash", "args_hash");
  }
  Grant g = in;
  Status st = Write([&](Tx& tx) { return InsertGrant(tx, g); });
  if (!st.ok()) return st;
  return g;
}

Result<std::vector<Grant>> SqlStore::ListGrants(const std::string& task_id) {
  std::vector<Grant> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare(std::string("SELECT ") + sql::kGrantCols +
                          " FROM grants WHERE task_id = ?1 ORDER BY id");
    if (!s.ok()) return s.status();
    s->Bind(1, task_id);
    return sql::CollectRows(*s, sql::ReadGrant, &out);
  });
  if (!st.ok()) return st;
  return out;
}

Result<std::optional<Grant>> SqlStore::ConsumeGrant(const std::string& task_id,
                                                    const std::string& tool_name,
                                                    const std::string& args_hash) {
  std::optional<Grant> used;
  Status st = Write([&](Tx& tx) -> Status {
    // Prefer a once-grant bound to exactly these arguments (it is the answer
    // to this very request), then a task-wide grant.
    auto s = tx.conn.Prepare(std::string("SELECT ") + sql::kGrantCols +
                             " FROM grants WHERE task_id = ?1 AND tool_name = ?2"
                             " AND (expires_at IS NULL OR expires_at > ?4)"
                             " AND (uses_left IS NULL OR uses_left > 0)"
                             " AND ((scope = 'once' AND args_hash = ?3) OR scope = 'task')"
                             " ORDER BY CASE scope WHEN 'once' THEN 0 ELSE 1 END, id LIMIT 1");
    if (!s.ok()) return s.status();
    s->Bind(1, task_id).Bind(2, tool_name).Bind(3, args_hash).Bind(4, tx.now);
    auto row = s->Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
    Grant g = sql::ReadGrant(*s);
    MAESTRO_RETURN_IF_ERROR(s->Exec());
    if (g.uses_left > 0) {
      auto dec = tx.conn.Prepare("UPDATE grants SET uses_left = uses_left - 1 WHERE id = ?1");
      if (!dec.ok()) return dec.status();
      dec->Bind(1, g.id);
      MAESTRO_RETURN_IF_ERROR(dec->Exec());
      g.uses_left -= 1;
    }
    MAESTRO_RETURN_IF_ERROR(
        sql::InsertEvent(tx, task_id, "", "grant.used",
                         {{"grant_id", g.id}, {"tool", tool_name}, {"args_hash", args_hash}}));
    used = std::move(g);
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return used;
}

}  // namespace maestro
