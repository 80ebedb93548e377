// SqlStore: the API-support tables of migration 2 — bearer tokens (hashed),
// durable cursors, the webhook delivery log, notification read marks — and
// the aggregates /metrics reads. Each method is one read or one transaction.
#include <charconv>

#include "core/ids.h"
#include "store/sql/rows.h"
#include "store/sql/sql_store.h"

namespace maestro {

namespace {

Result<int64_t> ParseEventId(const std::string& id, const char* field) {
  int64_t v = 0;
  if (id.empty()) return v;
  auto [p, ec] = std::from_chars(id.data(), id.data() + id.size(), v);
  if (ec != std::errc() || p != id.data() + id.size() || v < 0) {
    return InvalidArgument("event id must be a non-negative integer", field);
  }
  return v;
}

// SUM of an integer field of `llm.call` payloads in `col`. The engine writes
// camelCase (seed 000 `cachedPromptTokens`); snake_case is accepted too.
std::string SumLlmField(sql::Dialect d, const char* col, const char* camel, const char* snake) {
  return "COALESCE(SUM(COALESCE(" + sql::JsonInt(d, col, camel) + ", " +
         sql::JsonInt(d, col, snake) + ")), 0)";
}

// A single-row, single-integer query.
Result<int64_t> ScalarInt(sql::Conn& conn, const std::string& sql) {
  auto s = conn.Prepare(sql);
  if (!s.ok()) return s.status();
  auto row = s->Step();
  if (!row.ok()) return row.status();
  return *row ? s->Int(0) : 0;
}

}  // namespace

Status SqlStore::AddApiToken(const std::string& token_hash, const std::string& user) {
  if (user.empty()) return InvalidArgument("user must not be empty", "user");
  return Write([&](Tx& tx) -> Status {
    // With an id (schema change 14), so its owner can list and revoke it.
    auto s = tx.conn.Prepare(
        "INSERT INTO api_tokens(token_hash, \"user\", created_at, id) VALUES (?1, ?2, ?3, ?4)");
    if (!s.ok()) return s.status();
    s->Bind(1, token_hash).Bind(2, user).Bind(3, tx.now).Bind(4, NewSortableId(tx.now));
    return s->Exec();
  });
}

Result<std::optional<std::string>> SqlStore::UserForToken(const std::string& token_hash) {
  std::optional<std::string> user;
  Status st = Read([&](sql::Conn& conn) -> Status {
    // A revoked or expired token is no token (IdentityRecords::TokenByHash
    // returns those too, for a caller that names the reason).
    auto s = conn.Prepare(
        "SELECT \"user\" FROM api_tokens WHERE token_hash = ?1 AND revoked_at = 0 "
        "AND (expires_at = 0 OR expires_at > ?2)");
    if (!s.ok()) return s.status();
    s->Bind(1, token_hash).Bind(2, options_.clock->NowMs());
    auto row = s->Step();
    if (!row.ok()) return row.status();
    if (*row) user = s->Text(0);
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return user;
}

Result<int64_t> SqlStore::CountApiTokens() {
  int64_t n = 0;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto r = ScalarInt(conn, "SELECT COUNT(*) FROM api_tokens");
    if (!r.ok()) return r.status();
    n = *r;
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return n;
}

Result<std::vector<Event>> SqlStore::ListAllEvents(const std::string& after_id, int limit) {
  auto after = ParseEventId(after_id, "after_id");
  if (!after.ok()) return after.status();
  std::vector<Event> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare(std::string("SELECT ") + sql::kEventCols +
                          " FROM events WHERE id > ?1 ORDER BY id LIMIT ?2");
    if (!s.ok()) return s.status();
    s->Bind(1, *after).Bind(2, limit);
    for (;;) {
      auto row = s->Step();
      if (!row.ok()) return row.status();
      if (!*row) return Status::Ok();
      out.push_back(sql::ReadEvent(*s));
    }
  });
  if (!st.ok()) return st;
  return out;
}

Result<std::string> SqlStore::GetCursor(const std::string& name) {
  std::string value;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare("SELECT value FROM cursors WHERE name = ?1");
    if (!s.ok()) return s.status();
    s->Bind(1, name);
    auto row = s->Step();
    if (!row.ok()) return row.status();
    if (*row) value = s->Text(0);
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return value;
}

Status SqlStore::SetCursor(const std::string& name, const std::string& value) {
  return Write([&](Tx& tx) -> Status {
    auto s = tx.conn.Prepare(
        "INSERT INTO cursors(name, value) VALUES (?1, ?2) "
        "ON CONFLICT(name) DO UPDATE SET value = excluded.value");
    if (!s.ok()) return s.status();
    s->Bind(1, name).Bind(2, value);
    return s->Exec();
  });
}

Status SqlStore::RecordDelivery(const WebhookDelivery& d) {
  auto event_id = ParseEventId(d.event_id, "event_id");
  if (!event_id.ok()) return event_id.status();
  return Write([&](Tx& tx) -> Status {
    auto s = tx.conn.Prepare(
        "INSERT INTO webhook_deliveries(event_id, url, attempt, http_status, ok, error, "
        "created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    if (!s.ok()) return s.status();
    s->Bind(1, *event_id).Bind(2, d.url).Bind(3, d.attempt).Bind(4, d.http_status);
    s->Bind(5, d.ok ? 1 : 0).Bind(6, d.error).Bind(7, tx.now);
    return s->Exec();
  });
}

Result<std::vector<WebhookDelivery>> SqlStore::ListDeliveries(int limit) {
  std::vector<WebhookDelivery> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare(
        "SELECT event_id, url, attempt, http_status, ok, error, created_at "
        "FROM webhook_deliveries ORDER BY id DESC LIMIT ?1");
    if (!s.ok()) return s.status();
    s->Bind(1, limit);
    for (;;) {
      auto row = s->Step();
      if (!row.ok()) return row.status();
      if (!*row) return Status::Ok();
      WebhookDelivery d;
      d.event_id = std::to_string(s->Int(0));
      d.url = s->Text(1);
      d.attempt = static_cast<int>(s->Int(2));
      d.http_status = static_cast<int>(s->Int(3));
      d.ok = s->Int(4) != 0;
      d.error = s->Text(5);
      d.created_at = s->Int(6);
      out.push_back(std::move(d));
    }
  });
  if (!st.ok()) return st;
  return out;
}

Result<std::vector<Notification>> SqlStore::ListNotifications(const std::string& user,
                                                              bool unread_only, int limit) {
  std::vector<Notification> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    const sql::Dialect d = conn.dialect();
    const std::string to = sql::JsonField(d, "e.payload", "to");
    auto s = conn.Prepare("SELECT e.id, e.task_id, COALESCE(e.job_id, ''), " + to +
                          ", t.title, "
                          " CASE WHEN r.event_id IS NULL THEN 0 ELSE 1 END, e.created_at, "
                          " COALESCE(" +
                          sql::JsonField(d, "e.payload", "from") +
                          ", ''), "
                          " COALESCE(" +
                          sql::JsonField(d, "e.payload", "wait_reason") +
                          ", ''), "
                          // HandoffJobOutcome's result: "handoff NNNN.yaml; continued in job <id>".
                          " CASE WHEN j.result LIKE 'handoff %' AND " +
                          sql::Position(d, "j.result", "'; continued in job '") +
                          " > 0 THEN 1 ELSE 0 END, "
                          " substr(t.instruction, 1, 200) "
                          "FROM events e JOIN tasks t ON t.id = e.task_id "
                          "LEFT JOIN jobs j ON j.id = e.job_id "
                          "LEFT JOIN notification_reads r ON r.\"user\" = ?1 AND r.event_id = e.id "
                          "WHERE e.type = 'job.status' AND t.owner = ?1 "
                          " AND " +
                          to +
                          " IN ('waiting_human', 'succeeded', 'failed') "
                          " AND (?2 = 0 OR r.event_id IS NULL) "
                          "ORDER BY e.id DESC LIMIT ?3");
    if (!s.ok()) return s.status();
    s->Bind(1, user).Bind(2, unread_only ? 1 : 0).Bind(3, limit);
    for (;;) {
      auto row = s->Step();
      if (!row.ok()) return row.status();
      if (!*row) return Status::Ok();
      Notification n;
      n.id = std::to_string(s->Int(0));
      n.task_id = s->Text(1);
      n.job_id = s->Text(2);
      n.status = s->Text(3);
      n.task_title = s->Text(4);
      n.read = s->Int(5) != 0;
      n.created_at = s->Int(6);
      n.from_status = s->Text(7);
      n.wait_reason = s->Text(8);
      n.handed_off = n.status == "succeeded" && s->Int(9) != 0;
      n.task_instruction = s->Text(10);
      out.push_back(std::move(n));
    }
  });
  if (!st.ok()) return st;
  return out;
}

Status SqlStore::MarkNotificationsRead(const std::string& user,
                                       const std::vector<std::string>& ids) {
  std::vector<int64_t> parsed;
  for (const auto& id : ids) {
    auto v = ParseEventId(id, "ids");
    if (!v.ok()) return v.status();
    parsed.push_back(*v);
  }
  // Only the user's own notifications can be marked (the join checks owner).
  const std::string sql =
      "INSERT INTO notification_reads(\"user\", event_id) "
      "SELECT CAST(?1 AS TEXT), e.id FROM events e JOIN tasks t ON t.id = e.task_id "
      "WHERE e.type = 'job.status' AND t.owner = ?1 AND (?2 = 0 OR e.id = ?3) "
      "ON CONFLICT DO NOTHING";
  return Write([&](Tx& tx) -> Status {
    auto s = tx.conn.Prepare(sql);
    if (!s.ok()) return s.status();
    if (parsed.empty()) {
      s->Bind(1, user).Bind(2, 0).Bind(3, int64_t{0});
      return s->Exec();
    }
    for (int64_t id : parsed) {
      auto one = tx.conn.Prepare(sql);
      if (!one.ok()) return one.status();
      one->Bind(1, user).Bind(2, 1).Bind(3, id);
      MAESTRO_RETURN_IF_ERROR(one->Exec());
    }
    return Status::Ok();
  });
}

namespace {

// Aggregates the `tool.call` events (one per regular tool call that ran).
Status ReadToolDurations(sql::Conn& conn, ApiMetrics* m) {
  const sql::Dialect d = conn.dialect();
  auto q = conn.Prepare("SELECT " + sql::JsonField(d, "payload", "tool") + ", " +
                        sql::JsonInt(d, "payload", "duration_ms") + ", " +
                        sql::JsonBool(d, "payload", "is_error") +
                        " FROM events WHERE type = 'tool.call'");
  if (!q.ok()) return q.status();
  while (true) {
    auto row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
    ToolDurationStats& s = m->tool_durations[q->Text(0)];
    const int64_t ms = q->Int(1);
    ++s.count;
    s.sum_ms += ms;
    if (q->Int(2) != 0) ++s.errors;
    for (size_t i = 0; i < std::size(kToolDurationBuckets); ++i) {
      if (static_cast<double>(ms) <= kToolDurationBuckets[i] * 1000.0) ++s.buckets[i];
    }
  }
}

// The latency histograms of the `llm.call` events: whole calls (totalMs) and
// time to first token (ttftMs, when the call reported one: -1 = none).
Status ReadLlmDurations(sql::Conn& conn, ApiMetrics* m) {
  const sql::Dialect d = conn.dialect();
  auto q = conn.Prepare("SELECT COALESCE(" + sql::JsonInt(d, "payload", "totalMs") + ", 0), " +
                        "COALESCE(" + sql::JsonInt(d, "payload", "ttftMs") + ", -1)" +
                        " FROM events WHERE type = 'llm.call'");
  if (!q.ok()) return q.status();
  while (true) {
    auto row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
    m->llm_duration.Add(q->Int(0));
    if (q->Int(1) >= 0) m->llm_ttft.Add(q->Int(1));
  }
}

}  // namespace

Result<ApiMetrics> SqlStore::ComputeApiMetrics() {
  ApiMetrics m;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto q = conn.Prepare(
        "SELECT COUNT(*), COALESCE(SUM(started_at - created_at), 0) FROM jobs "
        "WHERE started_at IS NOT NULL");
    if (!q.ok()) return q.status();
    auto row = q->Step();
    if (!row.ok()) return row.status();
    m.queue_wait_count = q->Int(0);
    m.queue_wait_sum_ms = q->Int(1);
    const sql::Dialect d = conn.dialect();
    auto sum = [d](const char* camel, const char* snake) {
      return SumLlmField(d, "payload", camel, snake);
    };
    auto l = conn.Prepare("SELECT COUNT(*), " + sum("promptTokens", "prompt_tokens") + ", " +
                          sum("cachedPromptTokens", "cached_prompt_tokens") + ", " +
                          sum("completionTokens", "completion_tokens") +
                          " FROM events WHERE type = 'llm.call'");
    if (!l.ok()) return l.status();
    row = l->Step();
    if (!row.ok()) return row.status();
    m.llm_calls = l->Int(0);
    m.prompt_tokens = l->Int(1);
    m.cached_prompt_tokens = l->Int(2);
    m.completion_tokens = l->Int(3);
    auto failed = ScalarInt(conn, "SELECT COUNT(*) FROM webhook_deliveries WHERE ok = 0");
    if (!failed.ok()) return failed.status();
    m.webhook_deliveries_failed = *failed;
    auto ok = ScalarInt(conn, "SELECT COUNT(*) FROM webhook_deliveries WHERE ok = 1");
    if (!ok.ok()) return ok.status();
    m.webhook_deliveries_ok = *ok;
    auto exceeded = ScalarInt(conn, "SELECT COUNT(*) FROM events WHERE type = 'budget.exceeded'");
    if (!exceeded.ok()) return exceeded.status();
    m.budget_exceeded = *exceeded;
    auto refused = ScalarInt(conn, "SELECT COUNT(*) FROM events WHERE type = 'quota.refused'");
    if (!refused.ok()) return refused.status();
    m.quota_refusals = *refused;
    MAESTRO_RETURN_IF_ERROR(ReadLlmDurations(conn, &m));
    return ReadToolDurations(conn, &m);
  });
  if (!st.ok()) return st;
  return m;
}

namespace {

// The per-job usage of the `llm.call` events of the tasks `task_filter`
// selects (an SQL condition on e.task_id with its parameter ?1 bound to
// `param`), by task, then by the job's first call.
Status CollectJobUsage(sql::Conn& conn, const std::string& prefix, const std::string& task_filter,
                       const std::string& param, std::vector<JobUsage>* out) {
  const sql::Dialect d = conn.dialect();
  auto q = conn.Prepare(
      prefix + "SELECT e.task_id, e.job_id, COALESCE(MAX(j.profile), ''), COUNT(*), " +
      SumLlmField(d, "e.payload", "promptTokens", "prompt_tokens") + ", " +
      SumLlmField(d, "e.payload", "cachedPromptTokens", "cached_prompt_tokens") + ", " +
      SumLlmField(d, "e.payload", "completionTokens", "completion_tokens") + ", " +
      SumLlmField(d, "e.payload", "totalMs", "total_ms") + ", " +
      SumLlmField(d, "e.payload", "cacheWritePromptTokens", "cache_write_prompt_tokens") +
      " FROM events e LEFT JOIN jobs j ON j.id = e.job_id"
      " WHERE e.type = 'llm.call' AND e.job_id IS NOT NULL AND " +
      task_filter + " GROUP BY e.task_id, e.job_id ORDER BY e.task_id, MIN(e.id)");
  if (!q.ok()) return q.status();
  q->Bind(1, param);
  for (;;) {
    auto row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
    JobUsage u;
    u.task_id = q->Text(0);
    u.job_id = q->Text(1);
    u.profile = q->Text(2);
    u.llm_calls = q->Int(3);
    u.prompt_tokens = q->Int(4);
    u.cached_tokens = q->Int(5);
    u.completion_tokens = q->Int(6);
    u.model_ms = q->Int(7);
    u.cache_write_tokens = q->Int(8);
    out->push_back(std::move(u));
  }
}

}  // namespace

Result<std::vector<JobUsage>> SqlStore::ListJobUsage(const std::vector<std::string>& task_ids) {
  std::vector<JobUsage> out;
  if (task_ids.empty()) return out;
  const std::string ids = Json(task_ids).dump();
  Status st = Read([&](sql::Conn& conn) -> Status {
    return CollectJobUsage(
        conn, "", "e.task_id IN (" + sql::JsonTextArray(conn.dialect(), "?1") + ")", ids, &out);
  });
  if (!st.ok()) return st;
  return out;
}

Result<std::vector<JobUsage>> SqlStore::ListTaskTreeUsage(const std::string& task_id) {
  std::vector<JobUsage> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    // The task, then the tasks of the jobs whose parent is a job of a task
    // already in the tree (jobs_by_task, jobs_by_parent). UNION, not UNION
    // ALL: each task once, whatever the shape.
    return CollectJobUsage(conn,
                           "WITH RECURSIVE tree(task_id) AS ("
                           "  SELECT CAST(?1 AS TEXT)"
                           "  UNION SELECT c.task_id FROM tree t"
                           "  JOIN jobs p ON p.task_id = t.task_id"
                           "  JOIN jobs c ON c.parent_job_id = p.id) ",
                           "e.task_id IN (SELECT task_id FROM tree)", task_id, &out);
  });
  if (!st.ok()) return st;
  return out;
}

Result<Store::UserUsage> SqlStore::UserUsageSince(const std::string& owner, TimeMs since) {
  UserUsage out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto t = conn.Prepare("SELECT COUNT(*) FROM tasks WHERE owner = ?1 AND created_at >= ?2");
    if (!t.ok()) return t.status();
    t->Bind(1, owner).Bind(2, since);
    auto row = t->Step();
    if (!row.ok()) return row.status();
    out.tasks = *row ? t->Int(0) : 0;
    const sql::Dialect d = conn.dialect();
    auto e =
        conn.Prepare("SELECT " + SumLlmField(d, "e.payload", "promptTokens", "prompt_tokens") +
                     " + " + SumLlmField(d, "e.payload", "completionTokens", "completion_tokens") +
                     " FROM events e JOIN tasks t ON t.id = e.task_id"
                     " WHERE t.owner = ?1 AND e.type = 'llm.call' AND e.created_at >= ?2");
    if (!e.ok()) return e.status();
    e->Bind(1, owner).Bind(2, since);
    row = e->Step();
    if (!row.ok()) return row.status();
    out.tokens = *row ? e->Int(0) : 0;
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return out;
}

}  // namespace maestro
