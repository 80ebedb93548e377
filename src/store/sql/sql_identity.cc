// SqlStore: who a caller is (shared schema change 14; the role:
// store/identity_records.h) — scoped API tokens, OIDC identities and the
// groups the provider reported, browser sessions, pending OIDC sign-ins and
// the audit log. Each method is one read or one transaction; the secrets in
// the keys (token, session id, login state) arrive hashed.
#include <fmt/format.h>

#include <algorithm>

#include "core/json.h"
#include "store/sql/sql_store.h"

namespace maestro {

namespace {

constexpr const char* kTokenCols = "id, \"user\", name, scopes, created_at, expires_at, revoked_at";

ApiTokenRecord ReadTokenRow(sql::Stmt& s) {
  ApiTokenRecord r;
  r.id = s.Text(0);
  r.user = s.Text(1);
  r.name = s.Text(2);
  r.scopes = s.Text(3);
  r.created_at = s.Int(4);
  r.expires_at = s.Int(5);
  r.revoked_at = s.Int(6);
  return r;
}

constexpr const char* kAuditCols = "id, at, actor, action, task_id, team, detail";

AuditEntry ReadAuditRow(sql::Stmt& s) {
  AuditEntry e;
  e.id = s.Int(0);
  e.at = s.Int(1);
  e.actor = s.Text(2);
  e.action = s.Text(3);
  e.task_id = s.Text(4);
  e.team = s.Text(5);
  e.detail = s.Text(6);
  return e;
}

// The most entries one ListAudit returns (the header's 1..1000).
constexpr int kMaxAuditPage = 1000;

// PostgreSQL's advisory lock that orders audit appends (AppendAudit); the
// engine's event-order lock is 7283451.
constexpr int64_t kAuditOrderLock = 7283453;

}  // namespace

// ---- scoped tokens

Status SqlStore::AddScopedToken(const std::string& token_hash, const ApiTokenRecord& rec) {
  if (token_hash.empty()) return InvalidArgument("token hash must not be empty", "token_hash");
  if (rec.id.empty()) return InvalidArgument("token id must not be empty", "id");
  if (rec.user.empty()) return InvalidArgument("user must not be empty", "user");
  return Write([&](Tx& tx) -> Status {
    auto s = tx.conn.Prepare(
        "INSERT INTO api_tokens(token_hash, \"user\", created_at, id, name, scopes, expires_at, "
        "revoked_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    if (!s.ok()) return s.status();
    s->Bind(1, token_hash).Bind(2, rec.user).Bind(3, rec.created_at ? rec.created_at : tx.now);
    s->Bind(4, rec.id).Bind(5, rec.name).Bind(6, rec.scopes.empty() ? "*" : rec.scopes);
    s->Bind(7, rec.expires_at).Bind(8, rec.revoked_at);
    return s->Exec();
  });
}

Result<std::optional<ApiTokenRecord>> SqlStore::TokenByHash(const std::string& token_hash) {
  std::optional<ApiTokenRecord> got;
  Status st = Read([&](sql::Conn& conn) -> Status {
    got.reset();
    auto s = conn.Prepare(std::string("SELECT ") + kTokenCols +
                          " FROM api_tokens WHERE token_hash = ?1");
    if (!s.ok()) return s.status();
    s->Bind(1, token_hash);
    auto row = s->Step();
    if (!row.ok()) return row.status();
    if (*row) got = ReadTokenRow(*s);
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return got;
}

Result<std::vector<ApiTokenRecord>> SqlStore::ListTokens(const std::string& user) {
  std::vector<ApiTokenRecord> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    out.clear();
    auto s = conn.Prepare(std::string("SELECT ") + kTokenCols +
                          " FROM api_tokens WHERE \"user\" = ?1 "
                          "ORDER BY created_at DESC, id DESC");
    if (!s.ok()) return s.status();
    s->Bind(1, user);
    for (;;) {
      auto row = s->Step();
      if (!row.ok()) return row.status();
      if (!*row) return Status::Ok();
      out.push_back(ReadTokenRow(*s));
    }
  });
  if (!st.ok()) return st;
  return out;
}

Result<bool> SqlStore::RevokeToken(const std::string& user, const std::string& id, TimeMs now) {
  // '' is no token's id (a row an older binary wrote without one).
  if (user.empty() || id.empty()) return false;
  bool revoked = false;
  Status st = Write([&](Tx& tx) -> Status {
    auto s = tx.conn.Prepare(
        "UPDATE api_tokens SET revoked_at = ?3 "
        "WHERE \"user\" = ?1 AND id = ?2 AND revoked_at = 0");
    if (!s.ok()) return s.status();
    // revoked_at 0 means "not revoked": a revocation at time 0 (a test
    // clock) is stored as 1.
    s->Bind(1, user).Bind(2, id).Bind(3, std::max<TimeMs>(now, 1));
    MAESTRO_RETURN_IF_ERROR(s->Exec());
    revoked = tx.conn.Changes() == 1;
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return revoked;
}

// ---- OIDC identities and groups

Result<bool> SqlStore::BindIdentity(const std::string& issuer, const std::string& subject,
                                    const std::string& user, TimeMs now) {
  if (issuer.empty()) return InvalidArgument("issuer must not be empty", "issuer");
  if (subject.empty()) return InvalidArgument("subject must not be empty", "subject");
  if (user.empty()) return InvalidArgument("user must not be empty", "user");
  bool bound = false;
  Status st = Write([&](Tx& tx) -> Status {
    bound = false;
    // One statement decides against concurrent binders too: the primary
    // key (issuer, subject) and the unique user each refuse a second row.
    auto ins = tx.conn.Prepare(
        "INSERT INTO oidc_identities(issuer, subject, \"user\", created_at) "
        "VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING");
    if (!ins.ok()) return ins.status();
    ins->Bind(1, issuer).Bind(2, subject).Bind(3, user).Bind(4, now);
    MAESTRO_RETURN_IF_ERROR(ins->Exec());
    if (tx.conn.Changes() == 1) {
      bound = true;
      return Status::Ok();
    }
    // Not inserted: bound already, to this user (true) or otherwise.
    auto s = tx.conn.Prepare(
        "SELECT 1 FROM oidc_identities WHERE issuer = ?1 AND subject = ?2 AND \"user\" = ?3");
    if (!s.ok()) return s.status();
    s->Bind(1, issuer).Bind(2, subject).Bind(3, user);
    auto row = s->Step();
    if (!row.ok()) return row.status();
    bound = *row;
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return bound;
}

Status SqlStore::SetUserGroups(const std::string& user, const std::vector<std::string>& groups,
                               TimeMs now) {
  if (user.empty()) return InvalidArgument("user must not be empty", "user");
  std::vector<std::string> sorted = groups;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  const std::string text = DumpJson(Json(sorted));
  return Write([&](Tx& tx) -> Status {
    auto s = tx.conn.Prepare(
        "INSERT INTO user_groups(\"user\", \"groups\", updated_at) VALUES (?1, ?2, ?3) "
        "ON CONFLICT (\"user\") DO UPDATE SET \"groups\" = excluded.\"groups\", "
        "updated_at = excluded.updated_at");
    if (!s.ok()) return s.status();
    s->Bind(1, user).Bind(2, text).Bind(3, now);
    return s->Exec();
  });
}

Result<std::vector<std::string>> SqlStore::UserGroups(const std::string& user) {
  std::string text;
  Status st = Read([&](sql::Conn& conn) -> Status {
    text.clear();
    auto s = conn.Prepare("SELECT \"groups\" FROM user_groups WHERE \"user\" = ?1");
    if (!s.ok()) return s.status();
    s->Bind(1, user);
    auto row = s->Step();
    if (!row.ok()) return row.status();
    if (*row) text = s->Text(0);
    return Status::Ok();
  });
  if (!st.ok()) return st;
  std::vector<std::string> out;
  if (text.empty()) return out;
  auto parsed = ParseJson(text);
  if (!parsed.ok() || !parsed->is_array()) {
    return Internal("user_groups of " + user + " is not a JSON array");
  }
  for (const Json& g : *parsed) {
    if (g.is_string()) out.push_back(g.get<std::string>());
  }
  return out;
}

// ---- browser sessions

Status SqlStore::AddSession(const std::string& id_hash, const SessionRecord& rec) {
  if (id_hash.empty()) return InvalidArgument("session id must not be empty", "id_hash");
  if (rec.user.empty()) return InvalidArgument("user must not be empty", "user");
  return Write([&](Tx& tx) -> Status {
    // Bounded: expired sessions go with the next sign-in.
    auto old = tx.conn.Prepare("DELETE FROM sessions WHERE expires_at <= ?1");
    if (!old.ok()) return old.status();
    old->Bind(1, tx.now);
    MAESTRO_RETURN_IF_ERROR(old->Exec());
    auto s = tx.conn.Prepare(
        "INSERT INTO sessions(id_hash, \"user\", csrf, created_at, expires_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5)");
    if (!s.ok()) return s.status();
    s->Bind(1, id_hash).Bind(2, rec.user).Bind(3, rec.csrf);
    s->Bind(4, rec.created_at ? rec.created_at : tx.now).Bind(5, rec.expires_at);
    return s->Exec();
  });
}

Result<std::optional<SessionRecord>> SqlStore::SessionByHash(const std::string& id_hash,
                                                             TimeMs now) {
  std::optional<SessionRecord> got;
  Status st = Read([&](sql::Conn& conn) -> Status {
    got.reset();
    auto s = conn.Prepare(
        "SELECT \"user\", csrf, created_at, expires_at FROM sessions "
        "WHERE id_hash = ?1 AND expires_at > ?2");
    if (!s.ok()) return s.status();
    s->Bind(1, id_hash).Bind(2, now);
    auto row = s->Step();
    if (!row.ok()) return row.status();
    if (*row) got = SessionRecord{s->Text(0), s->Text(1), s->Int(2), s->Int(3)};
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return got;
}

Status SqlStore::DeleteSession(const std::string& id_hash) {
  return Write([&](Tx& tx) -> Status {
    auto s = tx.conn.Prepare("DELETE FROM sessions WHERE id_hash = ?1");
    if (!s.ok()) return s.status();
    s->Bind(1, id_hash);
    return s->Exec();
  });
}

// ---- pending OIDC sign-ins

Status SqlStore::AddPendingLogin(const std::string& state_hash, const PendingLogin& login,
                                 TimeMs now, TimeMs max_age) {
  if (state_hash.empty()) return InvalidArgument("state must not be empty", "state_hash");
  return Write([&](Tx& tx) -> Status {
    // Bounded: sign-ins nobody came back for go with the next one.
    auto old = tx.conn.Prepare("DELETE FROM oidc_logins WHERE created_at < ?1");
    if (!old.ok()) return old.status();
    old->Bind(1, now - max_age);
    MAESTRO_RETURN_IF_ERROR(old->Exec());
    auto s = tx.conn.Prepare(
        "INSERT INTO oidc_logins(state_hash, nonce, code_verifier, return_to, created_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5)");
    if (!s.ok()) return s.status();
    s->Bind(1, state_hash).Bind(2, login.nonce).Bind(3, login.code_verifier);
    s->Bind(4, login.return_to).Bind(5, login.created_at ? login.created_at : now);
    return s->Exec();
  });
}

Result<std::optional<PendingLogin>> SqlStore::TakePendingLogin(const std::string& state_hash,
                                                               TimeMs now, TimeMs max_age) {
  std::optional<PendingLogin> got;
  Status st = Write([&](Tx& tx) -> Status {
    got.reset();
    // One statement reads and deletes: of two callbacks with one state only
    // the one whose DELETE removed the row gets it (SQLite: writers are
    // serialized; PostgreSQL: the other waits for the row, then finds it
    // gone or fails serializable and re-runs to find it gone).
    auto s = tx.conn.Prepare(
        "DELETE FROM oidc_logins WHERE state_hash = ?1 "
        "RETURNING nonce, code_verifier, return_to, created_at");
    if (!s.ok()) return s.status();
    s->Bind(1, state_hash);
    auto row = s->Step();
    if (!row.ok()) return row.status();
    if (*row) got = PendingLogin{s->Text(0), s->Text(1), s->Text(2), s->Int(3)};
    return s->Exec();  // finish the RETURNING statement
  });
  if (!st.ok()) return st;
  // Too old: consumed all the same, and not handed out.
  if (got && got->created_at < now - max_age) got.reset();
  return got;
}

// ---- the audit log

Result<int64_t> SqlStore::AppendAudit(const AuditEntry& e) {
  if (e.actor.empty()) return InvalidArgument("actor must not be empty", "actor");
  if (e.action.empty()) return InvalidArgument("action must not be empty", "action");
  int64_t id = 0;
  Status st = Write([&](Tx& tx) -> Status {
    id = 0;
    if (dialect() == sql::Dialect::kPostgres) {
      // PostgreSQL assigns the id at the insert, not at the commit: without
      // this lock (held to the commit) a later id could become visible
      // first, and a reader paging down by before_id would pass the earlier
      // one for good. Appends are rare (human actions): serializing them is
      // cheap. SQLite's writers are serialized already.
      auto lock =
          tx.conn.Prepare("SELECT pg_advisory_xact_lock(" + std::to_string(kAuditOrderLock) + ")");
      if (!lock.ok()) return lock.status();
      MAESTRO_RETURN_IF_ERROR(lock->Exec());
    }
    auto s = tx.conn.Prepare(
        "INSERT INTO audit_log(at, actor, action, task_id, team, detail) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id");
    if (!s.ok()) return s.status();
    s->Bind(1, e.at ? e.at : tx.now).Bind(2, e.actor).Bind(3, e.action).Bind(4, e.task_id);
    s->Bind(5, e.team).Bind(6, e.detail.empty() ? "{}" : e.detail);
    auto row = s->Step();
    if (!row.ok()) return row.status();
    if (!*row) return Internal("audit insert returned no id");
    id = s->Int(0);
    return s->Exec();  // finish the RETURNING statement
  });
  if (!st.ok()) return st;
  return id;
}

Result<std::vector<AuditEntry>> SqlStore::ListAudit(const AuditFilter& f) {
  const sql::Dialect d = dialect();
  // The statement is assembled from the filters that are set: at most 2^7
  // texts, each prepared once per connection.
  std::string where = "at >= ?1";
  int next = 2;
  auto param = [&next] { return "?" + std::to_string(next++); };
  struct Arg {  // bound in order after ?1
    bool is_int;
    int64_t i;
    std::string s;
  };
  std::vector<Arg> args;
  auto add_text = [&](const std::string& v) { args.push_back({false, 0, v}); };
  auto add_int = [&](int64_t v) { args.push_back({true, v, ""}); };
  if (!f.actor.empty()) {
    where += " AND actor = " + param();
    add_text(f.actor);
  }
  if (!f.action.empty()) {
    if (f.action.back() == '.') {
      // A prefix compared as text (LIKE would need escaping and is case
      // blind on SQLite).
      const std::string len = param();
      where += " AND substr(action, 1, CAST(" + len + " AS INTEGER)) = " + param();
      add_int(static_cast<int64_t>(f.action.size()));
      add_text(f.action);
    } else {
      where += " AND action = " + param();
      add_text(f.action);
    }
  }
  if (!f.task_id.empty()) {
    where += " AND task_id = " + param();
    add_text(f.task_id);
  }
  if (!f.teams.empty()) {
    where += " AND (" + sql::InJsonArray(d, "team", param(), "TEXT") +
             (f.include_unteamed ? " OR team = '')" : ")");
    add_text(DumpJson(Json(f.teams)));
  } else if (!f.include_unteamed) {
    where += " AND 1 = 0";  // no team and not the unteamed: nothing
  }
  if (f.until > 0) {
    where += " AND at < " + param();
    add_int(f.until);
  }
  if (f.before_id > 0) {
    where += " AND id < " + param();
    add_int(f.before_id);
  }
  const std::string limit = param();
  add_int(std::clamp(f.limit, 1, kMaxAuditPage));
  const std::string text = fmt::format(
      "SELECT {} FROM audit_log WHERE {} ORDER BY id DESC LIMIT {}", kAuditCols, where, limit);

  std::vector<AuditEntry> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    out.clear();
    auto s = conn.Prepare(text);
    if (!s.ok()) return s.status();
    s->Bind(1, f.since);
    for (size_t i = 0; i < args.size(); ++i) {
      const int at = static_cast<int>(i) + 2;
      if (args[i].is_int) {
        s->Bind(at, args[i].i);
      } else {
        s->Bind(at, args[i].s);
      }
    }
    for (;;) {
      auto row = s->Step();
      if (!row.ok()) return row.status();
      if (!*row) return Status::Ok();
      out.push_back(ReadAuditRow(*s));
    }
  });
  if (!st.ok()) return st;
  return out;
}

}  // namespace maestro
