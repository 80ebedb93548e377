// SqlStore: Web Push subscriptions (migration 11 / postgres 9). One row per
// (owner, endpoint); every read and delete is scoped to the owner, so one
// user never sees or removes another's subscription.
#include "core/ids.h"
#include "store/sql/sql_store.h"

namespace maestro {

namespace {

constexpr const char* kPushCols = "id, owner, endpoint, p256dh, auth, created_at";

PushSubscription ReadSubscription(sql::Stmt& s) {
  PushSubscription p;
  p.id = s.Text(0);
  p.owner = s.Text(1);
  p.endpoint = s.Text(2);
  p.p256dh = s.Text(3);
  p.auth = s.Text(4);
  p.created_at = s.Int(5);
  return p;
}

}  // namespace

Result<PushSubscription> SqlStore::AddPushSubscription(const PushSubscription& sub,
                                                       int max_per_owner) {
  if (sub.owner.empty()) return InvalidArgument("owner must not be empty", "owner");
  PushSubscription out;
  Status st = Write([&](Tx& tx) -> Status {
    // The same browser subscribing again: its keys change, its id stays.
    auto found = tx.conn.Prepare(std::string("SELECT ") + kPushCols +
                                 " FROM push_subscriptions WHERE owner = ?1 AND endpoint = ?2");
    if (!found.ok()) return found.status();
    found->Bind(1, sub.owner).Bind(2, sub.endpoint);
    auto row = found->Step();
    if (!row.ok()) return row.status();
    if (*row) {
      out = ReadSubscription(*found);
      auto upd =
          tx.conn.Prepare("UPDATE push_subscriptions SET p256dh = ?1, auth = ?2 WHERE id = ?3");
      if (!upd.ok()) return upd.status();
      upd->Bind(1, sub.p256dh).Bind(2, sub.auth).Bind(3, out.id);
      out.p256dh = sub.p256dh;
      out.auth = sub.auth;
      return upd->Exec();
    }
    auto count = tx.conn.Prepare("SELECT COUNT(*) FROM push_subscriptions WHERE owner = ?1");
    if (!count.ok()) return count.status();
    count->Bind(1, sub.owner);
    auto crow = count->Step();
    if (!crow.ok()) return crow.status();
    if (*crow && count->Int(0) >= max_per_owner) {
      return Status(StatusCode::kResourceExhausted,
                    "at most " + std::to_string(max_per_owner) +
                        " push subscriptions per user; delete one first");
    }
    out = sub;
    out.id = NewSortableId(tx.now);
    out.created_at = tx.now;
    auto ins = tx.conn.Prepare(
        "INSERT INTO push_subscriptions(id, owner, endpoint, p256dh, auth, created_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    if (!ins.ok()) return ins.status();
    ins->Bind(1, out.id).Bind(2, out.owner).Bind(3, out.endpoint).Bind(4, out.p256dh);
    ins->Bind(5, out.auth).Bind(6, out.created_at);
    return ins->Exec();
  });
  if (!st.ok()) return st;
  return out;
}

Result<std::vector<PushSubscription>> SqlStore::ListPushSubscriptions(const std::string& owner) {
  std::vector<PushSubscription> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare(std::string("SELECT ") + kPushCols +
                          " FROM push_subscriptions WHERE owner = ?1 ORDER BY created_at, id");
    if (!s.ok()) return s.status();
    s->Bind(1, owner);
    for (;;) {
      auto row = s->Step();
      if (!row.ok()) return row.status();
      if (!*row) return Status::Ok();
      out.push_back(ReadSubscription(*s));
    }
  });
  if (!st.ok()) return st;
  return out;
}

Status SqlStore::DeletePushSubscription(const std::string& owner, const std::string& id) {
  return Write([&](Tx& tx) -> Status {
    auto s = tx.conn.Prepare("DELETE FROM push_subscriptions WHERE owner = ?1 AND id = ?2");
    if (!s.ok()) return s.status();
    s->Bind(1, owner).Bind(2, id);
    MAESTRO_RETURN_IF_ERROR(s->Exec());
    if (tx.conn.Changes() == 0) return NotFound("push subscription " + id + " not found");
    return Status::Ok();
  });
}

}  // namespace maestro
