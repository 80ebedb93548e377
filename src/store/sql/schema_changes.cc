#include "store/sql/schema_changes.h"

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

}  // namespace

// Append only: never edit a change that has shipped.
const std::vector<SchemaChange>& SchemaChanges() {
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
