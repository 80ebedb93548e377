// SqlStore: A2A push-notification configs (shared schema change 12; the
// role: store/a2a_push_records.h). One row per (task, owner, id); every
// get, list, replace and delete names the owner, so one user never sees or
// changes another's config. The delivery claim is one conditional UPDATE of
// sent_key, so of several processes that saw the same status change exactly
// one is told to send.
#include <algorithm>

#include "store/sql/sql_store.h"

namespace maestro {

namespace {

constexpr const char* kA2aPushCols =
    "task_id, owner, id, url, token, auth_scheme, credentials, sent_key, done, created_at, "
    "updated_at";

A2aPushConfigRecord ReadA2aPush(sql::Stmt& s) {
  A2aPushConfigRecord c;
  c.task_id = s.Text(0);
  c.owner = s.Text(1);
  c.id = s.Text(2);
  c.url = s.Text(3);
  c.token = s.Text(4);
  c.auth_scheme = s.Text(5);
  c.credentials = s.Text(6);
  c.sent_key = s.Text(7);
  c.done = s.Int(8) != 0;
  c.created_at = s.Int(9);
  c.updated_at = s.Int(10);
  return c;
}

Status ReadAll(sql::Stmt& s, std::vector<A2aPushConfigRecord>* out) {
  for (;;) {
    auto row = s.Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
    out->push_back(ReadA2aPush(s));
  }
}

}  // namespace

Result<A2aPushConfigRecord> SqlStore::PutA2aPushConfig(const A2aPushConfigRecord& c,
                                                       int max_per_task) {
  if (c.task_id.empty()) return InvalidArgument("taskId must not be empty", "taskId");
  if (c.owner.empty()) return InvalidArgument("owner must not be empty", "owner");
  if (c.id.empty()) return InvalidArgument("id must not be empty", "id");
  if (c.url.empty()) return InvalidArgument("url must not be empty", "url");
  A2aPushConfigRecord out;
  Status st = Write([&](Tx& tx) -> Status {
    out = c;
    out.sent_key.clear();
    out.done = false;
    out.created_at = tx.now;
    out.updated_at = tx.now;
    auto found = tx.conn.Prepare(
        "SELECT created_at FROM a2a_push_configs WHERE task_id = ?1 AND owner = ?2 AND id = ?3");
    if (!found.ok()) return found.status();
    found->Bind(1, c.task_id).Bind(2, c.owner).Bind(3, c.id);
    auto row = found->Step();
    if (!row.ok()) return row.status();
    if (*row) {
      // A replaced config keeps its age and starts over: the task's current
      // status goes to its (maybe new) URL.
      out.created_at = found->Int(0);
      auto upd = tx.conn.Prepare(
          "UPDATE a2a_push_configs SET url = ?4, token = ?5, auth_scheme = ?6, credentials = ?7, "
          "sent_key = '', done = 0, updated_at = ?8 "
          "WHERE task_id = ?1 AND owner = ?2 AND id = ?3");
      if (!upd.ok()) return upd.status();
      upd->Bind(1, c.task_id).Bind(2, c.owner).Bind(3, c.id).Bind(4, c.url).Bind(5, c.token);
      upd->Bind(6, c.auth_scheme).Bind(7, c.credentials).Bind(8, tx.now);
      return upd->Exec();
    }
    auto count = tx.conn.Prepare(
        "SELECT COUNT(*), COALESCE(MAX(created_at), 0) FROM a2a_push_configs "
        "WHERE task_id = ?1 AND owner = ?2");
    if (!count.ok()) return count.status();
    count->Bind(1, c.task_id).Bind(2, c.owner);
    auto crow = count->Step();
    if (!crow.ok()) return crow.status();
    if (*crow && count->Int(0) >= max_per_task) {
      return Status(StatusCode::kResourceExhausted,
                    "a user may set at most " + std::to_string(max_per_task) +
                        " push notification configs on a task",
                    "pushNotificationConfig");
    }
    // After the owner's previous config on the task, even within one
    // millisecond: "the oldest" (a get without an id) is the first set.
    if (*crow) out.created_at = std::max<TimeMs>(tx.now, count->Int(1) + 1);
    auto ins = tx.conn.Prepare(
        "INSERT INTO a2a_push_configs(task_id, owner, id, url, token, auth_scheme, credentials, "
        "sent_key, done, created_at, updated_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, '', 0, ?8, ?9)");
    if (!ins.ok()) return ins.status();
    ins->Bind(1, c.task_id).Bind(2, c.owner).Bind(3, c.id).Bind(4, c.url).Bind(5, c.token);
    ins->Bind(6, c.auth_scheme).Bind(7, c.credentials).Bind(8, out.created_at).Bind(9, tx.now);
    return ins->Exec();
  });
  if (!st.ok()) return st;
  return out;
}

Result<A2aPushConfigRecord> SqlStore::GetA2aPushConfig(const std::string& task_id,
                                                       const std::string& owner,
                                                       const std::string& id) {
  std::vector<A2aPushConfigRecord> got;
  Status st = Read([&](sql::Conn& conn) -> Status {
    // "" is the owner's oldest (A2A's get without a config id).
    auto s = conn.Prepare(std::string("SELECT ") + kA2aPushCols +
                          " FROM a2a_push_configs WHERE task_id = ?1 AND owner = ?2" +
                          (id.empty() ? "" : " AND id = ?3") + " ORDER BY created_at, id LIMIT 1");
    if (!s.ok()) return s.status();
    s->Bind(1, task_id).Bind(2, owner);
    if (!id.empty()) s->Bind(3, id);
    return ReadAll(*s, &got);
  });
  if (!st.ok()) return st;
  if (got.empty()) return NotFound("push notification config not found");
  return got.front();
}

Result<std::vector<A2aPushConfigRecord>> SqlStore::ListA2aPushConfigs(const std::string& task_id,
                                                                      const std::string& owner) {
  std::vector<A2aPushConfigRecord> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare(std::string("SELECT ") + kA2aPushCols +
                          " FROM a2a_push_configs WHERE task_id = ?1 AND owner = ?2 "
                          "ORDER BY created_at, id");
    if (!s.ok()) return s.status();
    s->Bind(1, task_id).Bind(2, owner);
    return ReadAll(*s, &out);
  });
  if (!st.ok()) return st;
  return out;
}

Status SqlStore::DeleteA2aPushConfig(const std::string& task_id, const std::string& owner,
                                     const std::string& id) {
  return Write([&](Tx& tx) -> Status {
    auto s = tx.conn.Prepare(
        "DELETE FROM a2a_push_configs WHERE task_id = ?1 AND owner = ?2 AND id = ?3");
    if (!s.ok()) return s.status();
    s->Bind(1, task_id).Bind(2, owner).Bind(3, id);
    MAESTRO_RETURN_IF_ERROR(s->Exec());
    if (tx.conn.Changes() == 0) return NotFound("push notification config " + id + " not found");
    return Status::Ok();
  });
}

Result<std::vector<A2aPushConfigRecord>> SqlStore::ListOpenA2aPushConfigs(int limit) {
  std::vector<A2aPushConfigRecord> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare(std::string("SELECT ") + kA2aPushCols +
                          " FROM a2a_push_configs WHERE done = 0 "
                          "ORDER BY task_id, created_at, owner, id LIMIT ?1");
    if (!s.ok()) return s.status();
    s->Bind(1, limit);
    return ReadAll(*s, &out);
  });
  if (!st.ok()) return st;
  return out;
}

Result<bool> SqlStore::ClaimA2aPushDelivery(const std::string& task_id, const std::string& owner,
                                            const std::string& id, const std::string& expected,
                                            const std::string& key, bool terminal) {
  if (key == expected) return false;
  bool claimed = false;
  Status st = Write([&](Tx& tx) -> Status {
    claimed = false;
    auto s = tx.conn.Prepare(
        "UPDATE a2a_push_configs SET sent_key = ?5, done = ?6, updated_at = ?7 "
        "WHERE task_id = ?1 AND owner = ?2 AND id = ?3 AND sent_key = ?4");
    if (!s.ok()) return s.status();
    s->Bind(1, task_id).Bind(2, owner).Bind(3, id).Bind(4, expected).Bind(5, key);
    s->Bind(6, terminal).Bind(7, tx.now);
    MAESTRO_RETURN_IF_ERROR(s->Exec());
    claimed = tx.conn.Changes() == 1;
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return claimed;
}

}  // namespace maestro
