// SqlStore: the store-routed live view of BrowseWeb (shared schema change
// 13; the role: store/browser_call_records.h) — browser holders, calls
// addressed to a holder and its answers, and the pin of a resumed login.
#include <fmt/format.h>

#include "core/base64.h"
#include "core/ids.h"
#include "store/sql/rows.h"
#include "store/sql/sql_store.h"

namespace maestro {

namespace {

constexpr const char* kCallCols =
    "id, job_id, worker_id, kind, request, status, answer, error_code, error, error_field, "
    "created_at, answered_at";

// Rows older than these go with the next AddBrowserCall.
constexpr TimeMs kAnsweredKeepMs = 60'000;
constexpr TimeMs kPendingKeepMs = 30'000;
// A holder row not refreshed for this long is a process that died without
// dropping it (kill -9): it goes with the next heartbeat of any holder.
constexpr TimeMs kHolderKeepMs = 3600'000;

BrowserCall ReadCall(sql::Stmt& s) {
  BrowserCall c;
  c.id = s.Text(0);
  c.job_id = s.Text(1);
  c.worker_id = s.Text(2);
  c.kind = s.Text(3);
  c.request = s.Text(4);
  c.status = s.Text(5);
  // Stored as base64 TEXT: one column type on both backends.
  c.answer = Base64Decode(s.Text(6)).value_or("");
  c.error_code = static_cast<int>(s.Int(7));
  c.error = s.Text(8);
  c.error_field = s.Text(9);
  c.created_at = s.Int(10);
  c.answered_at = s.Int(11);
  return c;
}

Status ReadCalls(sql::Stmt& s, std::vector<BrowserCall>* out) {
  for (;;) {
    auto row = s.Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
    out->push_back(ReadCall(s));
  }
}

}  // namespace

Status SqlStore::PutBrowserHolders(const std::vector<BrowserHolder>& held) {
  if (held.empty()) return Status::Ok();
  for (const auto& h : held) {
    if (h.job_id.empty()) return InvalidArgument("job_id must not be empty", "job_id");
    if (h.worker_id.empty()) return InvalidArgument("worker_id must not be empty", "worker_id");
  }
  return Write([&](Tx& tx) -> Status {
    auto old = tx.conn.Prepare("DELETE FROM browser_holders WHERE seen_at < ?1");
    if (!old.ok()) return old.status();
    old->Bind(1, tx.now - kHolderKeepMs);
    MAESTRO_RETURN_IF_ERROR(old->Exec());
    auto s = tx.conn.Prepare(
        "INSERT INTO browser_holders(job_id, worker_id, seen_at) VALUES (?1, ?2, ?3) "
        "ON CONFLICT (job_id) DO UPDATE SET worker_id = excluded.worker_id, "
        "seen_at = excluded.seen_at");
    if (!s.ok()) return s.status();
    for (const auto& h : held) {
      s->Bind(1, h.job_id).Bind(2, h.worker_id).Bind(3, tx.now);
      MAESTRO_RETURN_IF_ERROR(s->Exec());
    }
    return Status::Ok();
  });
}

Status SqlStore::DropBrowserHolder(const std::string& job_id, const std::string& worker_id) {
  return Write([&](Tx& tx) -> Status {
    auto s = tx.conn.Prepare("DELETE FROM browser_holders WHERE job_id = ?1 AND worker_id = ?2");
    if (!s.ok()) return s.status();
    s->Bind(1, job_id).Bind(2, worker_id);
    return s->Exec();
  });
}

Result<BrowserHolder> SqlStore::GetBrowserHolder(const std::string& job_id) {
  std::optional<BrowserHolder> got;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s =
        conn.Prepare("SELECT job_id, worker_id, seen_at FROM browser_holders WHERE job_id = ?1");
    if (!s.ok()) return s.status();
    s->Bind(1, job_id);
    auto row = s->Step();
    if (!row.ok()) return row.status();
    if (*row) got = BrowserHolder{s->Text(0), s->Text(1), s->Int(2)};
    return Status::Ok();
  });
  if (!st.ok()) return st;
  if (!got) return NotFound("job " + job_id + " has no browser holder");
  return *got;
}

Result<BrowserCall> SqlStore::AddBrowserCall(const BrowserCall& c, int max_pending) {
  if (c.job_id.empty()) return InvalidArgument("job_id must not be empty", "job_id");
  if (c.worker_id.empty()) return InvalidArgument("worker_id must not be empty", "worker_id");
  if (c.kind.empty()) return InvalidArgument("kind must not be empty", "kind");
  BrowserCall out;
  Status st = Write([&](Tx& tx) -> Status {
    out = c;
    out.status = "pending";
    out.answer.clear();
    out.error_code = 0;
    out.error.clear();
    out.error_field.clear();
    out.answered_at = 0;
    out.created_at = tx.now;
    out.id = NewSortableId(tx.now);
    // Bounded: what an asker never came back for goes here.
    auto old = tx.conn.Prepare(
        "DELETE FROM browser_calls WHERE (status <> 'pending' AND answered_at < ?1) "
        "OR (status = 'pending' AND created_at < ?2)");
    if (!old.ok()) return old.status();
    old->Bind(1, tx.now - kAnsweredKeepMs).Bind(2, tx.now - kPendingKeepMs);
    MAESTRO_RETURN_IF_ERROR(old->Exec());
    auto count = tx.conn.Prepare(
        "SELECT COUNT(*) FROM browser_calls WHERE job_id = ?1 AND status = 'pending'");
    if (!count.ok()) return count.status();
    count->Bind(1, c.job_id);
    auto row = count->Step();
    if (!row.ok()) return row.status();
    if (*row && count->Int(0) >= max_pending) {
      return Status(StatusCode::kResourceExhausted,
                    fmt::format("job {} already has {} live-view calls waiting for its browser; "
                                "try again in a moment",
                                c.job_id, max_pending));
    }
    auto ins = tx.conn.Prepare(
        "INSERT INTO browser_calls(id, job_id, worker_id, kind, request, status, answer, "
        "error_code, error, error_field, created_at, answered_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, 'pending', '', 0, '', '', ?6, 0)");
    if (!ins.ok()) return ins.status();
    ins->Bind(1, out.id).Bind(2, c.job_id).Bind(3, c.worker_id).Bind(4, c.kind);
    ins->Bind(5, c.request).Bind(6, tx.now);
    return ins->Exec();
  });
  if (!st.ok()) return st;
  return out;
}

Result<BrowserCall> SqlStore::GetBrowserCall(const std::string& id) {
  std::vector<BrowserCall> got;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare(std::string("SELECT ") + kCallCols + " FROM browser_calls WHERE id = ?1");
    if (!s.ok()) return s.status();
    s->Bind(1, id);
    return ReadCalls(*s, &got);
  });
  if (!st.ok()) return st;
  if (got.empty()) return NotFound("browser call " + id + " not found");
  return got.front();
}

Result<std::vector<BrowserCall>> SqlStore::PendingBrowserCalls(const std::string& job_id,
                                                               const std::string& worker_id,
                                                               int limit) {
  std::vector<BrowserCall> out;
  Status st = Read([&](sql::Conn& conn) -> Status {
    auto s = conn.Prepare(std::string("SELECT ") + kCallCols +
                          " FROM browser_calls WHERE job_id = ?1 AND worker_id = ?2 "
                          "AND status = 'pending' ORDER BY created_at, id LIMIT ?3");
    if (!s.ok()) return s.status();
    s->Bind(1, job_id).Bind(2, worker_id).Bind(3, limit);
    return ReadCalls(*s, &out);
  });
  if (!st.ok()) return st;
  return out;
}

Result<bool> SqlStore::AnswerBrowserCall(const std::string& id, const std::string& worker_id,
                                         const Status& result, const std::string& answer) {
  bool changed = false;
  const std::string encoded = Base64Encode(answer);
  Status st = Write([&](Tx& tx) -> Status {
    changed = false;
    auto s = tx.conn.Prepare(
        "UPDATE browser_calls SET status = ?3, answer = ?4, error_code = ?5, error = ?6, "
        "error_field = ?7, answered_at = ?8 "
        "WHERE id = ?1 AND worker_id = ?2 AND status = 'pending'");
    if (!s.ok()) return s.status();
    s->Bind(1, id).Bind(2, worker_id).Bind(3, result.ok() ? "done" : "failed");
    s->Bind(4, result.ok() ? encoded : std::string());
    s->Bind(5, static_cast<int64_t>(result.code())).Bind(6, result.message());
    s->Bind(7, result.field()).Bind(8, tx.now);
    MAESTRO_RETURN_IF_ERROR(s->Exec());
    changed = tx.conn.Changes() == 1;
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return changed;
}

Status SqlStore::DeleteBrowserCall(const std::string& id) {
  return Write([&](Tx& tx) -> Status {
    auto s = tx.conn.Prepare("DELETE FROM browser_calls WHERE id = ?1");
    if (!s.ok()) return s.status();
    s->Bind(1, id);
    return s->Exec();
  });
}

Status SqlStore::ResumeBrowserLogin(const std::string& job_id, const std::string& worker_id) {
  return Write([&](Tx& tx) -> Status {
    auto job = sql::LoadJob(tx.conn, job_id);
    if (!job.ok()) return job.status();
    if (!IsParked(job->status)) {
      return Conflict(fmt::format("job {} is {}, not waiting", job_id, JobStatusName(job->status)));
    }
    auto s = tx.conn.Prepare(
        "UPDATE jobs SET status = 'queued', wait_reason = '', required_worker = ?3, "
        "updated_at = ?2 WHERE seq = ?1");
    if (!s.ok()) return s.status();
    s->Bind(1, job->seq).Bind(2, tx.now).BindNullable(3, worker_id);
    MAESTRO_RETURN_IF_ERROR(s->Exec());
    return AfterTransition(tx, job_id, job->status);
  });
}

Status SqlStore::ClearBrowserPin(const std::string& job_id, const std::string& worker_id) {
  return Write([&](Tx& tx) -> Status {
    auto s = tx.conn.Prepare(
        "UPDATE jobs SET required_worker = NULL WHERE id = ?1 AND required_worker = ?2");
    if (!s.ok()) return s.status();
    s->Bind(1, job_id).Bind(2, worker_id);
    return s->Exec();
  });
}

Result<int> SqlStore::UnpinOrphanedBrowserLogins(TimeMs gone_ms) {
  int unpinned = 0;
  sql::TxEffects effects;
  // READ COMMITTED (kRowLocked): the UPDATE re-checks each row it waited
  // for, so a job a worker claimed meanwhile (no longer queued) is left alone.
  Status st = Write(
      [&](Tx& tx) -> Status {
        auto s = tx.conn.Prepare(
            "UPDATE jobs SET required_worker = NULL, updated_at = ?1 WHERE status = 'queued' "
            "AND required_worker IS NOT NULL AND updated_at < ?2 AND NOT EXISTS (SELECT 1 FROM "
            "browser_holders h WHERE h.job_id = jobs.id AND h.worker_id = jobs.required_worker "
            "AND h.seen_at >= ?2)");
        if (!s.ok()) return s.status();
        s->Bind(1, tx.now).Bind(2, tx.now - gone_ms);
        MAESTRO_RETURN_IF_ERROR(s->Exec());
        unpinned = static_cast<int>(tx.conn.Changes());
        if (unpinned > 0) tx.effects.job_available = true;
        return Status::Ok();
      },
      &effects, sql::TxKind::kRowLocked);
  if (!st.ok()) return st;
  return unpinned;
}

}  // namespace maestro
