// JobExecutor: what a worker does with a claimed job.
//
// The piece engine implements it (Worker.executeJob → runPiece in seed 000).
// The worker owns the lease: it heartbeats, maps the returned outcome or error
// onto the job through the retry policy, and writes it with the fencing
// token. An executor never writes the job's status itself.
#pragma once

#include "core/cancel.h"
#include "core/status.h"
#include "store/types.h"

namespace maestro {

class JobExecutor {
 public:
  virtual ~JobExecutor() = default;

  // Runs `job` until it ends or parks, and returns how it ended: Succeeded,
  // Parked, Failed (fatal) or Cancelled. A non-OK Status is a failure the
  // retry policy classifies (kUnavailable etc. retry; others are fatal).
  // Must return promptly once `cancel` fires; the worker then decides from
  // the cancel reason whether the job is cancelled or released.
  //
  // Thread safety: called concurrently from several worker threads.
  virtual Result<JobOutcome> Execute(const Job& job, const Lease& lease, CancelToken& cancel) = 0;

  // Called once after the worker recorded Failed for an `error` that
  // Execute returned (a fatal error, or the retries were spent): the job's
  // end, which the executor did not see as one. Best effort; the default
  // does nothing (PieceExecutor starts the Reflection task, as for a run
  // that ended failed).
  //
  // Thread safety: called concurrently from several worker threads.
  virtual void OnFailedByError(const Job& /*job*/, const Status& /*error*/) {}
};

// Used by `maestro serve`/`worker` when no LLM base URL is configured: it
// fails each job with a message saying how to configure one instead of
// pretending to run it. (The piece engine is engine::PieceExecutor.)
class EngineUnavailableExecutor final : public JobExecutor {
 public:
  Result<JobOutcome> Execute(const Job& job, const Lease& lease, CancelToken& cancel) override;
};

}  // namespace maestro
