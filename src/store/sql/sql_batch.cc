// Batched claim and finish of SqlStore (store.h: ClaimJobs, FinishJobs).
//
// A busy worker process that takes several jobs at a time pays one commit —
// and on PostgreSQL one round of BEGIN/COMMIT, one turn at the event-order
// lock and one NOTIFY — for the whole batch instead of one per job. The
// policy stays where it is: a batched claim is ClaimInTx run up to `max`
// times in one transaction, a batched finish is the FinishJob body per item.
#include <fmt/format.h>

#include "store/sql/rows.h"
#include "store/sql/sql_store.h"

namespace maestro {

Result<std::vector<Job>> SqlStore::ClaimJobs(const ClaimFilter& filter, int64_t lease_ms, int max) {
  std::vector<Job> claimed;
  if (max <= 0) return claimed;
  Status st = Write(
      [&](Tx& tx) -> Status {
        claimed.clear();  // a retried transaction starts again
        // Each pick sees this transaction's earlier claims (the statement
        // snapshot includes its own writes), so a task whose job was just taken
        // has a running job and is skipped: one job per task per batch.
        while (static_cast<int>(claimed.size()) < max) {
          auto c = ClaimInTx(tx, filter, lease_ms);
          if (!c.ok()) return c.status();
          if (!c->has_value()) break;
          claimed.push_back(std::move(**c));
        }
        return Status::Ok();
      },
      nullptr, sql::TxKind::kClaim);
  if (!st.ok()) return st;
  return claimed;
}

Result<std::vector<Status>> SqlStore::FinishJobs(
    const std::vector<std::pair<Lease, JobOutcome>>& items) {
  std::vector<Status> results;
  if (items.empty()) return results;
  Status st = Write([&](Tx& tx) -> Status {
    results.assign(items.size(), Status::Ok());
    for (size_t i = 0; i < items.size(); ++i) {
      // Named references, not a structured binding: clang 14 (the thread-safety
      // build) cannot capture a binding in the lambda below.
      const auto& lease = items[i].first;
      const auto& outcome = items[i].second;
      // A savepoint per item, so a fenced-off item is undone alone. What it
      // had announced (events, deferred event rows, the wake-up) goes with it.
      const size_t events_before = tx.effects.events.size();
      const size_t deferred_before = tx.effects.deferred.size();
      const bool available_before = tx.effects.job_available;
      MAESTRO_RETURN_IF_ERROR(tx.conn.ExecScript("SAVEPOINT batch_item"));
      Status item = [&]() -> Status {
        auto job = sql::LoadJob(tx.conn, lease.job_id);
        if (!job.ok()) return job.status();
        MAESTRO_RETURN_IF_ERROR(sql::CheckLease(*job, lease));  // the fence of FinishJob
        return ApplyOutcome(tx, *job, outcome);
      }();
      if (item.ok()) {
        MAESTRO_RETURN_IF_ERROR(tx.conn.ExecScript("RELEASE batch_item"));
        continue;
      }
      // Only an item's own failure stays the item's; anything else (a
      // serialization failure the engine retries, a broken connection)
      // aborts the whole transaction.
      if (item.code() != StatusCode::kLeaseLost && item.code() != StatusCode::kNotFound) {
        return item;
      }
      MAESTRO_RETURN_IF_ERROR(tx.conn.ExecScript("ROLLBACK TO batch_item; RELEASE batch_item"));
      tx.effects.events.resize(events_before);
      tx.effects.deferred.resize(deferred_before);
      tx.effects.job_available = available_before;
      results[i] = item;
    }
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return results;
}

}  // namespace maestro
