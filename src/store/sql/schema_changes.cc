#include "store/sql/schema_changes.h"

#include <string>

namespace maestro::sql {

namespace {

// Change 13's text: the same on both backends (BIGINT is INTEGER to SQLite).
constexpr const char* kBrowserCallsSql = R"sql(
CREATE TABLE browser_holders (
  job_id    TEXT PRIMARY KEY,
  worker_id TEXT NOT NULL,
  seen_at   BIGINT NOT NULL
);
CREATE TABLE browser_calls (
  id          TEXT PRIMARY KEY,
  job_id      TEXT NOT NULL,
  worker_id   TEXT NOT NULL,
  kind        TEXT NOT NULL,
  request     TEXT NOT NULL,
  status      TEXT NOT NULL,
  answer      TEXT NOT NULL,
  error_code  BIGINT NOT NULL,
  error       TEXT NOT NULL,
  error_field TEXT NOT NULL,
  created_at  BIGINT NOT NULL,
  answered_at BIGINT NOT NULL
);
CREATE INDEX browser_calls_pending ON browser_calls(job_id, worker_id, status);
)sql";

// Change 14's text but the audit log, the same on both backends: scoped
// tokens, OIDC identities and groups, browser sessions, pending OIDC logins
// (issue 49; store/identity_records.h). A token made before this change gets
// an id from its hash: 26 of [0-9A-F], inside the router's {ulid}
// ([0-9A-Z]{26}), so its owner can revoke it. The id index is partial: rows
// an older binary writes without an id ('') do not collide.
constexpr const char* kIdentitySql = R"sql(
ALTER TABLE api_tokens ADD COLUMN id TEXT NOT NULL DEFAULT '';
ALTER TABLE api_tokens ADD COLUMN name TEXT NOT NULL DEFAULT '';
ALTER TABLE api_tokens ADD COLUMN scopes TEXT NOT NULL DEFAULT '*';
ALTER TABLE api_tokens ADD COLUMN expires_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE api_tokens ADD COLUMN revoked_at BIGINT NOT NULL DEFAULT 0;
UPDATE api_tokens SET id = upper(substr(token_hash, 1, 26));
CREATE UNIQUE INDEX api_tokens_id ON api_tokens(id) WHERE id <> '';
CREATE INDEX api_tokens_by_user ON api_tokens("user", created_at);
CREATE TABLE oidc_identities (
  issuer     TEXT NOT NULL,
  subject    TEXT NOT NULL,
  "user"     TEXT NOT NULL UNIQUE,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (issuer, subject)
);
CREATE TABLE user_groups (
  "user"     TEXT PRIMARY KEY,
  "groups"   TEXT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE TABLE sessions (
  id_hash    TEXT PRIMARY KEY,
  "user"     TEXT NOT NULL,
  csrf       TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);
CREATE INDEX sessions_expiry ON sessions(expires_at);
CREATE TABLE oidc_logins (
  state_hash    TEXT PRIMARY KEY,
  nonce         TEXT NOT NULL,
  code_verifier TEXT NOT NULL,
  return_to     TEXT NOT NULL,
  created_at    BIGINT NOT NULL
);
CREATE INDEX oidc_logins_age ON oidc_logins(created_at);
)sql";

// The audit log after its id column (change 14 too). The id increases with
// every append and is never reused (the paging cursor `before_id`):
// AUTOINCREMENT on SQLite (a plain rowid may reuse the largest after a
// delete), a sequence on PostgreSQL.
constexpr const char* kAuditLogSqliteId =
    "\nCREATE TABLE audit_log (\n  id INTEGER PRIMARY KEY AUTOINCREMENT,";
constexpr const char* kAuditLogPostgresId =
    "\nCREATE TABLE audit_log (\n  id BIGSERIAL PRIMARY KEY,";
constexpr const char* kAuditLogRestSql = R"sql(
  at      BIGINT NOT NULL,
  actor   TEXT NOT NULL,
  action  TEXT NOT NULL,
  task_id TEXT NOT NULL,
  team    TEXT NOT NULL,
  detail  TEXT NOT NULL
);
CREATE INDEX audit_log_at ON audit_log(at);
CREATE INDEX audit_log_actor ON audit_log(actor, id);
CREATE INDEX audit_log_task ON audit_log(task_id, id);
)sql";

}  // namespace

// Append only: never edit a change that has shipped.
const std::vector<SchemaChange>& SchemaChanges() {
  static const std::string identity_sqlite =
      std::string(kIdentitySql) + kAuditLogSqliteId + kAuditLogRestSql;
  static const std::string identity_postgres =
      std::string(kIdentitySql) + kAuditLogPostgresId + kAuditLogRestSql;
  static const std::vector<SchemaChange> c = {
      {11, "web push subscriptions",
       // A browser's Web Push subscription (issue 45 item 6): the push
       // service's endpoint and the browser's keys (base64url), per user.
       R"sql(
CREATE TABLE push_subscriptions (
  id         TEXT PRIMARY KEY,
  owner      TEXT NOT NULL,
  endpoint   TEXT NOT NULL,
  p256dh     TEXT NOT NULL,
  auth       TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (owner, endpoint)
);
)sql",
       R"sql(
CREATE TABLE push_subscriptions (
  id         TEXT PRIMARY KEY,
  owner      TEXT NOT NULL,
  endpoint   TEXT NOT NULL,
  p256dh     TEXT NOT NULL,
  auth       TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  UNIQUE (owner, endpoint)
);
)sql"},
      {12, "a2a push configs",
       // A2A push-notification configs (issue 48 item 3), per task and
       // owner, with the status key last claimed for delivery (store/
       // a2a_push_records.h): durable across restarts and shared by the API
       // processes of one database.
       R"sql(
CREATE TABLE a2a_push_configs (
  task_id     TEXT NOT NULL,
  owner       TEXT NOT NULL,
  id          TEXT NOT NULL,
  url         TEXT NOT NULL,
  token       TEXT NOT NULL,
  auth_scheme TEXT NOT NULL,
  credentials TEXT NOT NULL,
  sent_key    TEXT NOT NULL,
  done        INTEGER NOT NULL,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL,
  PRIMARY KEY (task_id, owner, id)
);
CREATE INDEX a2a_push_configs_open ON a2a_push_configs(done, task_id);
)sql",
       R"sql(
CREATE TABLE a2a_push_configs (
  task_id     TEXT NOT NULL,
  owner       TEXT NOT NULL,
  id          TEXT NOT NULL,
  url         TEXT NOT NULL,
  token       TEXT NOT NULL,
  auth_scheme TEXT NOT NULL,
  credentials TEXT NOT NULL,
  sent_key    TEXT NOT NULL,
  done        BIGINT NOT NULL,
  created_at  BIGINT NOT NULL,
  updated_at  BIGINT NOT NULL,
  PRIMARY KEY (task_id, owner, id)
);
CREATE INDEX a2a_push_configs_open ON a2a_push_configs(done, task_id);
)sql"},
      {13, "browser calls",
       // The store-routed BrowseWeb live view (issue 48 item 2; store/
       // browser_call_records.h): which worker process holds a job's open
       // browser, and the screenshot/input/done calls an API process asks of
       // it.
       kBrowserCallsSql, kBrowserCallsSql},
      {14, "identity",
       // Teams (issue 49; store/identity_records.h): scoped, revocable,
       // expiring API tokens; OIDC identities bound to user names and the
       // groups the provider reported; browser sessions; pending sign-ins;
       // the audit log.
       identity_sqlite.c_str(), identity_postgres.c_str()},
  };
  return c;
}

std::vector<Migration> WithSharedChanges(std::vector<Migration> history, bool postgres) {
  for (const SchemaChange& c : SchemaChanges()) {
    history.push_back(Migration{c.version, c.name, postgres ? c.postgres : c.sqlite});
  }
  return history;
}

}  // namespace maestro::sql
