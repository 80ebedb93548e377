// JobQueue: the queue role of the Store (store/store.h) — jobs enter it
// (EnqueueJob), workers take them under a fenced lease (claim, heartbeat,
// finish) and the lease sweeper recovers those of crashed workers.
//
// Who uses it: the engine's handoffs enqueue (engine/handoff/); the worker
// pool (worker/worker_pool.h) claims, heartbeats and finishes; the lease
// sweeper (worker/lease_sweeper.h) recovers expired leases. Each job state
// change is one transaction that also records a `job.status` event and
// keeps the task's status in step, so the database never shows a
// half-applied transition.
//
// Fencing: ClaimNextJob hands out a Lease whose fencing_token increases on
// every claim. FinishJob/Heartbeat succeed only while the job is still running
// under that token; otherwise they return kLeaseLost and change nothing.
//
// Thread safety: every method may be called from any thread concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "store/types.h"

namespace maestro {

class JobQueue {
 public:
  virtual ~JobQueue() = default;

  // ---- jobs
  virtual Result<Job> EnqueueJob(const NewJob& job) = 0;
  // Batched enqueue: every job as EnqueueJob would make it, in ONE
  // transaction, in order — all of them or, when one fails (its task does
  // not exist, say), none. A producer with many jobs at hand pays one commit
  // (and on PostgreSQL three round trips). A handoff's adopt_children_of is
  // refused here (kInvalidArgument): it goes through EnqueueJob.
  virtual Result<std::vector<Job>> EnqueueJobs(const std::vector<NewJob>& jobs) = 0;

  // Claims the next runnable job for `filter`: retry jobs whose next_retry_at
  // has come first, then queued jobs oldest first; never a job whose task
  // already has a running job. On success sets status=running, worker_id, a
  // lease of `lease_ms` and a new fencing token. Returns nullopt when idle.
  virtual Result<std::optional<Job>> ClaimNextJob(const ClaimFilter& filter, int64_t lease_ms) = 0;

  // Extends the lease to now + lease_ms. kLeaseLost when the job is no longer
  // running under `lease`. The reply carries the cancel flag.
  virtual Result<HeartbeatReply> Heartbeat(const Lease& lease, int64_t lease_ms) = 0;

  // Applies how the running job ended. Comments still undelivered when the
  // job ends are never dropped: a succeeded job (or an ASK park) hands them
  // to its queued continuation if it has one, else to a new follow-up job
  // (an ASK job then ends answered, as PostComment does); a job parked for a
  // decision or subtasks keeps them for its resumed run; a failed or
  // cancelled one keeps them until the next follow-up or Continue, which
  // takes them.
  // When a child reaches a terminal state
  // and it was the last open child of a parent in waiting_subtasks, the parent
  // is requeued in the same transaction (exactly once). A parent that parks
  // in waiting_subtasks with no open child is queued at once.
  virtual Status FinishJob(const Lease& lease, const JobOutcome& outcome) = 0;

  // FinishJob and then ClaimNextJob for the same worker in ONE transaction:
  // a busy worker moves to its next job with one commit instead of two. If
  // the finish fails (kLeaseLost) nothing is claimed. An error always means
  // the result was not recorded (the worker tries again on kUnavailable).
  virtual Result<std::optional<Job>> FinishAndClaimNext(const Lease& lease,
                                                        const JobOutcome& outcome,
                                                        const ClaimFilter& filter,
                                                        int64_t lease_ms) = 0;

  // Batched claim: up to `max` jobs for `filter` in ONE transaction, each
  // picked and claimed exactly as ClaimNextJob would (same order, same
  // per-task rule — never two jobs of one task in a batch —, same task
  // mirror and job.status event), in claim order. Fewer (or none) when the
  // queue runs dry. A busy worker pays one commit for many claims.
  virtual Result<std::vector<Job>> ClaimJobs(const ClaimFilter& filter, int64_t lease_ms, int max) {
    std::vector<Job> out;
    while (static_cast<int>(out.size()) < max) {
      auto c = ClaimNextJob(filter, lease_ms);
      if (!c.ok()) return c.status();
      if (!c->has_value()) break;
      out.push_back(std::move(**c));
    }
    return out;
  }

  // Batched finish: applies each (lease, outcome) as FinishJob would, in
  // ONE transaction. Each item is fenced on its own: a lost lease (or a
  // missing job) fails only that item, whose Status says why, and changes
  // nothing of it; the others still commit. The outer Result fails only
  // when the transaction itself does (then nothing was applied).
  virtual Result<std::vector<Status>> FinishJobs(
      const std::vector<std::pair<Lease, JobOutcome>>& items) {
    std::vector<Status> out;
    out.reserve(items.size());
    for (const auto& [lease, outcome] : items) out.push_back(FinishJob(lease, outcome));
    return out;
  }

  // Recovers running jobs whose lease expired before `now`: `decide` reports
  // each (the lease sweeper: a retryable failure), and the store's policy
  // decides it as every finish (retry or failed by the attempts left); a job
  // with cancel requested becomes cancelled. Returns the recovered jobs.
  virtual Result<std::vector<Job>> RecoverExpiredLeases(
      const std::function<JobOutcome(const Job&)>& decide) = 0;

  // Earliest next_retry_at among retry jobs, if any (lets idle workers sleep
  // exactly until a backoff ends).
  virtual Result<std::optional<TimeMs>> NextRetryDue() = 0;
};

}  // namespace maestro
