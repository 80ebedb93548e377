// JobExecutor: what a worker does with a claimed job — the seam between the
// worker (src/worker, which claims, heartbeats and finishes) and the piece
// engine (src/engine, engine::PieceExecutor implements it). It lives in the
// store's module, below both, so neither includes the other.
//
// A job's end, in three steps with one decider:
//   1. Execute reports what happened (a JobOutcome: succeeded, failed —
//      retryable or not —, parked, cancelled); it never writes the job's
//      status and never predicts it.
//   2. The worker finishes the job with its lease; the store's policy
//      (policy::MapOutcome, store/policy.h) decides the committed status in
//      the finish transaction: retry or failed by the attempts left, a
//      subtask park with no open child requeued, an answered ASK succeeded.
//   3. After the commit the worker reads the job as committed and calls
//      OnCommitted (and OnFailedByError for an error return that ended
//      failed): what follows from the committed status happens there.
//
// Thread safety: every method is called concurrently from several worker
// threads, for different jobs.
#pragma once

#include "core/cancel.h"
#include "core/status.h"
#include "store/types.h"

namespace maestro {

class JobExecutor {
 public:
  virtual ~JobExecutor() = default;

  // Runs `job` until it ends or parks, and returns how it ended: Succeeded,
  // Parked, Failed (retryable or fatal) or Cancelled. A non-OK Status is a
  // failure too (RetryPolicy::FailureOf reports it: kUnavailable etc.
  // retryable, others fatal). Must return promptly once `cancel` fires; the
  // worker then reports, from the cancel reason, a cancel or a release.
  virtual Result<JobOutcome> Execute(const Job& job, const Lease& lease, CancelToken& cancel) = 0;

  // Called once after the worker recorded the job's end: `reported` is what
  // the worker finished it with, `committed` the job's row as the store
  // left it (its status is the store's decision; a job resumed or claimed
  // again since shows that). Not called when the result was not recorded
  // (a lost lease, an unreachable store). Best effort; the default does
  // nothing (PieceExecutor moves the task's context directory to where the
  // committed status puts it).
  virtual void OnCommitted(const Job& /*job*/, const JobOutcome& /*reported*/,
                           const Job& /*committed*/) {}

  // Called once after the worker recorded Failed for an `error` that
  // Execute returned (a fatal error, or the retries were spent): the job's
  // end, which the executor did not see as one. Best effort; the default
  // does nothing (PieceExecutor starts the Reflection task, as for a run
  // that ended failed).
  virtual void OnFailedByError(const Job& /*job*/, const Status& /*error*/) {}
};

}  // namespace maestro
