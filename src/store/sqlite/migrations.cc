#include "store/sqlite/migrations.h"

#include <fmt/format.h>

#include <vector>

#include "store/sql/migration.h"
#include "store/sql/schema_changes.h"

namespace maestro::sqlite {
namespace {

using sql::Migration;

// Append only: never edit a migration that has shipped. The history ends at
// 10: later changes are in the list both backends share
// (store/sql/schema_changes.cc).
const std::vector<Migration>& Migrations() {
  static const std::vector<Migration> m = sql::WithSharedChanges(
      {
          {1, "initial schema", R"sql(
CREATE TABLE tasks (
  id                TEXT PRIMARY KEY,
  title             TEXT NOT NULL DEFAULT '',
  instruction       TEXT NOT NULL,
  piece             TEXT NOT NULL,
  space             TEXT NOT NULL DEFAULT '',
  visibility        TEXT NOT NULL DEFAULT 'private',
  owner             TEXT NOT NULL DEFAULT '',
  task_source       TEXT NOT NULL DEFAULT 'local',
  status            TEXT NOT NULL,
  llm_provider      TEXT NOT NULL DEFAULT '',
  model             TEXT NOT NULL DEFAULT '',
  context_length    INTEGER NOT NULL DEFAULT 0,
  llm_call_count    INTEGER NOT NULL DEFAULT 0,
  tool_call_count   INTEGER NOT NULL DEFAULT 0,
  total_tokens      INTEGER NOT NULL DEFAULT 0,
  compression_count INTEGER NOT NULL DEFAULT 0,
  error_message     TEXT NOT NULL DEFAULT '',
  process_id        INTEGER NOT NULL DEFAULT 0,
  hostname          TEXT NOT NULL DEFAULT '',
  created_at        INTEGER NOT NULL,
  started_at        INTEGER,
  completed_at      INTEGER,
  updated_at        INTEGER NOT NULL
);
CREATE INDEX tasks_by_created ON tasks(created_at);

CREATE TABLE comments (
  id           TEXT PRIMARY KEY,
  task_id      TEXT NOT NULL REFERENCES tasks(id),
  job_id       TEXT,
  author       TEXT NOT NULL,
  kind         TEXT NOT NULL,
  body         TEXT NOT NULL,
  delivered_at INTEGER,
  created_at   INTEGER NOT NULL
);
CREATE INDEX comments_by_task ON comments(task_id, id);

CREATE TABLE jobs (
  seq                   INTEGER PRIMARY KEY,  -- rowid; jobs are never deleted
  id                    TEXT NOT NULL UNIQUE,
  task_id               TEXT NOT NULL REFERENCES tasks(id),
  parent_job_id         TEXT REFERENCES jobs(id),
  continued_from_job_id TEXT,
  status                TEXT NOT NULL,
  piece                 TEXT NOT NULL DEFAULT '',
  model                 TEXT,
  profile               TEXT,
  required_worker       TEXT,
  worker_id             TEXT,
  fencing_token         INTEGER NOT NULL DEFAULT 0,
  lease_expires_at      INTEGER,
  attempt               INTEGER NOT NULL DEFAULT 0,
  max_attempts          INTEGER NOT NULL,
  next_retry_at         INTEGER,
  wait_reason           TEXT NOT NULL DEFAULT '',
  resume_movement       TEXT NOT NULL DEFAULT '',
  ask_count             INTEGER NOT NULL DEFAULT 0,
  cancel_requested      INTEGER NOT NULL DEFAULT 0,
  error_message         TEXT NOT NULL DEFAULT '',
  result                TEXT NOT NULL DEFAULT '',
  created_at            INTEGER NOT NULL,
  started_at            INTEGER,
  finished_at           INTEGER,
  updated_at            INTEGER NOT NULL
);
-- Claims walk these in order and stop at the first eligible row. Partial
-- indexes stay small (only jobs in that state) and cost nothing for the rest.
CREATE INDEX jobs_queued ON jobs(seq) WHERE status = 'queued';
CREATE INDEX jobs_retry ON jobs(next_retry_at, seq) WHERE status = 'retry';
-- Running jobs are few (one per busy worker): one small index serves both the
-- per-task lock and the lease sweeper's scan.
CREATE INDEX jobs_running ON jobs(task_id) WHERE status = 'running';
CREATE INDEX jobs_by_task ON jobs(task_id, seq);
CREATE INDEX jobs_by_parent ON jobs(parent_job_id) WHERE parent_job_id IS NOT NULL;

CREATE TABLE requests (
  id          TEXT PRIMARY KEY,
  task_id     TEXT NOT NULL REFERENCES tasks(id),
  job_id      TEXT,
  kind        TEXT NOT NULL CHECK (kind IN ('tool', 'package', 'spawn')),
  name        TEXT NOT NULL,
  args        TEXT NOT NULL DEFAULT '{}',
  args_hash   TEXT NOT NULL DEFAULT '',
  reason      TEXT NOT NULL DEFAULT '',
  status      TEXT NOT NULL DEFAULT 'pending',
  scope       TEXT NOT NULL DEFAULT '',
  decided_by  TEXT NOT NULL DEFAULT '',
  decided_at  INTEGER,
  created_at  INTEGER NOT NULL
);
CREATE INDEX requests_by_task ON requests(task_id, kind, id);

CREATE TABLE grants (
  id          TEXT PRIMARY KEY,
  task_id     TEXT NOT NULL REFERENCES tasks(id),
  tool_name   TEXT NOT NULL,
  scope       TEXT NOT NULL CHECK (scope IN ('once', 'task')),
  args_hash   TEXT NOT NULL DEFAULT '',
  request_id  TEXT,
  expires_at  INTEGER,
  uses_left   INTEGER,
  created_at  INTEGER NOT NULL
);
CREATE INDEX grants_by_task_tool ON grants(task_id, tool_name);

-- Events are appended in id order: the table's rowid is the event id (an
-- increasing integer, the SSE id), so appends fill the last page and one
-- commit of several events writes it once. Per-task reads use the index.
CREATE TABLE events (
  id         INTEGER PRIMARY KEY,
  task_id    TEXT NOT NULL,
  job_id     TEXT,
  type       TEXT NOT NULL,
  payload    TEXT NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL
);
CREATE INDEX events_by_task ON events(task_id, id);
)sql"},
          {2, "api tokens, webhook deliveries, notification reads", R"sql(
-- Bearer tokens: only the SHA-256 hex of a token is stored.
CREATE TABLE api_tokens (
  token_hash TEXT PRIMARY KEY,
  user       TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
-- Durable named cursors (the webhook dispatcher's last delivered event id).
CREATE TABLE cursors (
  name  TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE webhook_deliveries (
  id          INTEGER PRIMARY KEY,
  event_id    INTEGER NOT NULL,
  url         TEXT NOT NULL,
  attempt     INTEGER NOT NULL,
  http_status INTEGER NOT NULL DEFAULT 0,
  ok          INTEGER NOT NULL,
  error       TEXT NOT NULL DEFAULT '',
  created_at  INTEGER NOT NULL
);
CREATE TABLE notification_reads (
  user     TEXT NOT NULL,
  event_id INTEGER NOT NULL,
  PRIMARY KEY (user, event_id)
);
CREATE INDEX events_by_type ON events(type, id);
)sql"},
          {3, "subtask spawn keys, undelivered comments", R"sql(
-- A subtask's (parent job, tool call) key: creating it twice (a crash after
-- the commit, before the call's result was written) yields the first one.
ALTER TABLE tasks ADD COLUMN spawn_key TEXT;
CREATE UNIQUE INDEX tasks_by_spawn_key ON tasks(spawn_key) WHERE spawn_key IS NOT NULL;
-- The agent loop asks for a job's undelivered comments every iteration and
-- FinishJob at every end: an index walk over the few pending ones, not a
-- scan of every comment ever written.
CREATE INDEX comments_undelivered ON comments(job_id) WHERE delivered_at IS NULL;
)sql"},
          {4, "job priority", R"sql(
-- Higher runs first among queued jobs; the claim walks this index in order.
ALTER TABLE jobs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
DROP INDEX jobs_queued;
CREATE INDEX jobs_queued ON jobs(priority DESC, seq) WHERE status = 'queued';
)sql"},
          {5, "task budgets", R"sql(
-- The effective budget limits of a task (store/budget.h), JSON.
ALTER TABLE tasks ADD COLUMN budget TEXT NOT NULL DEFAULT '{}';
-- Daily quotas count a user's tasks since UTC midnight.
CREATE INDEX tasks_by_owner ON tasks(owner, created_at);
)sql"},
          {6, "schedules", R"sql(
-- Scheduled tasks (issue 20): a cron expression in a time zone and the task
-- each fire creates. The loop is schedule/scheduler.h.
CREATE TABLE schedules (
  id           TEXT PRIMARY KEY,
  name         TEXT NOT NULL,
  cron         TEXT NOT NULL,
  timezone     TEXT NOT NULL,
  instruction  TEXT NOT NULL,
  piece        TEXT NOT NULL,
  space        TEXT NOT NULL DEFAULT '',
  profile      TEXT NOT NULL DEFAULT '',
  visibility   TEXT NOT NULL DEFAULT 'private',
  owner        TEXT NOT NULL DEFAULT '',
  enabled      INTEGER NOT NULL DEFAULT 1,
  overlap      TEXT NOT NULL DEFAULT 'skip',
  catch_up     TEXT NOT NULL DEFAULT 'none',
  budget       TEXT NOT NULL DEFAULT '{}',
  anchor_at    INTEGER NOT NULL,
  last_fire_at INTEGER NOT NULL DEFAULT 0,
  last_task_id TEXT NOT NULL DEFAULT '',
  held_fire_at INTEGER NOT NULL DEFAULT 0,
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL
);
-- One row per claimed fire time: the unique key is the exactly-once claim
-- (a second scheduler's or a restarted one's INSERT changes nothing).
CREATE TABLE schedule_fires (
  schedule_id TEXT NOT NULL REFERENCES schedules(id) ON DELETE CASCADE,
  fire_at     INTEGER NOT NULL,
  manual      INTEGER NOT NULL DEFAULT 0,
  outcome     TEXT NOT NULL,
  task_id     TEXT,
  created_at  INTEGER NOT NULL,
  UNIQUE (schedule_id, fire_at)
);
)sql"},
          {7, "attachments", R"sql(
-- Files sent with a task's instruction or a comment; the bytes are in the
-- task's workspace at `path`. delivered_at: when a prompt listed the file.
CREATE TABLE attachments (
  id           TEXT PRIMARY KEY,
  task_id      TEXT NOT NULL REFERENCES tasks(id),
  comment_id   TEXT REFERENCES comments(id),
  name         TEXT NOT NULL,
  path         TEXT NOT NULL,
  size         INTEGER NOT NULL,
  content_type TEXT NOT NULL,
  sha256       TEXT NOT NULL,
  created_at   INTEGER NOT NULL,
  delivered_at INTEGER
);
CREATE UNIQUE INDEX attachments_by_task ON attachments(task_id, path);
CREATE INDEX attachments_undelivered ON attachments(task_id) WHERE delivered_at IS NULL;
)sql"},
          {8, "lessons, missions", R"sql(
-- What Reflection tasks (and people) learned, given to later tasks of the
-- space (scope 'space') or of one piece in it (scope 'piece').
CREATE TABLE lessons (
  id             TEXT PRIMARY KEY,
  space          TEXT NOT NULL,
  piece          TEXT NOT NULL DEFAULT '',
  scope          TEXT NOT NULL,
  lesson         TEXT NOT NULL,
  evidence       TEXT NOT NULL DEFAULT '[]',
  source_task_id TEXT NOT NULL DEFAULT '',
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL
);
CREATE INDEX lessons_by_space ON lessons(space, created_at);
-- Missions: long-lived goals; a task may belong to one, and its jobs get the
-- mission's notes and its recent results in their dynamic context.
CREATE TABLE missions (
  id         TEXT PRIMARY KEY,
  title      TEXT NOT NULL,
  notes      TEXT NOT NULL DEFAULT '',
  space      TEXT NOT NULL DEFAULT '',
  owner      TEXT NOT NULL DEFAULT '',
  visibility TEXT NOT NULL DEFAULT 'private',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
ALTER TABLE tasks ADD COLUMN mission_id TEXT NOT NULL DEFAULT '';
CREATE INDEX tasks_by_mission ON tasks(mission_id, created_at);
)sql"},
          {9, "captcha pool", R"sql(
-- The CAPTCHA screen a job parked with wait_reason 'captcha' waits on
-- (Store::SetCaptchaWait); solving it requeues every job waiting on the same
-- (space, screen) (Store::ResumeCaptchaJobs).
ALTER TABLE jobs ADD COLUMN captcha_space_id TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN captcha_screen TEXT NOT NULL DEFAULT '';
CREATE INDEX jobs_captcha ON jobs(captcha_space_id, captcha_screen)
  WHERE status = 'waiting_human';
)sql"},
          {10, "the task's newest job", R"sql(
-- The seq of the task's newest job: the task mirror (SqlStore::
-- AfterTransitions) applies a job's status only when it is this one, read
-- from the row it updates instead of a MAX(seq) over the task's jobs.
ALTER TABLE tasks ADD COLUMN last_job_seq INTEGER NOT NULL DEFAULT 0;
UPDATE tasks SET last_job_seq =
  COALESCE((SELECT MAX(seq) FROM jobs WHERE jobs.task_id = tasks.id), 0);
)sql"},
      },
      /*postgres=*/false);
  return m;
}

}  // namespace

int LatestSchemaVersion() { return Migrations().back().version; }

Result<int> ApplyMigrations(SqliteConn& conn, int64_t now_ms) {
  MAESTRO_RETURN_IF_ERROR(conn.ExecScript(
      "CREATE TABLE IF NOT EXISTS schema_migrations ("
      " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)"));
  int applied = 0;
  for (const auto& m : Migrations()) {
    MAESTRO_RETURN_IF_ERROR(conn.ExecScript("BEGIN IMMEDIATE"));
    auto r = sql::ApplyMigrationInTx(conn, m, now_ms);
    if (!r.ok()) {
      conn.ExecScript("ROLLBACK").IgnoreError();
      return Status(r.status().code(),
                    fmt::format("migration {} ({}): {}", m.version, m.name, r.status().message()));
    }
    MAESTRO_RETURN_IF_ERROR(conn.ExecScript("COMMIT"));
    if (*r) ++applied;
  }
  return applied;
}

}  // namespace maestro::sqlite
