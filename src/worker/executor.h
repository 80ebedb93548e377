// The worker's stand-in executor. (The JobExecutor interface itself lives in
// store/job_executor.h, where both the worker and the engine see it.)
#pragma once

#include "store/job_executor.h"

namespace maestro {

// Used by `maestro serve`/`worker` when no LLM base URL is configured: it
// fails each job with a message saying how to configure one instead of
// pretending to run it. (The piece engine is engine::PieceExecutor.)
class EngineUnavailableExecutor final : public JobExecutor {
 public:
  Result<JobOutcome> Execute(const Job& job, const Lease& lease, CancelToken& cancel) override;
};

}  // namespace maestro
