// RetryPolicy: what happens to a job whose run failed.
//
// Transient failures (kUnavailable, kDeadlineExceeded, kInternal, a crashed
// worker) are retried with exponential backoff and jitter until the job's
// max_attempts claims are used; anything else (bad piece, invalid input,
// unimplemented) is fatal and fails the job at once. Used by the worker for
// executor errors and by the lease sweeper for jobs of crashed workers.
//
// Thread safety: const methods only; the jitter RNG is thread-local.
#pragma once

#include "core/config.h"
#include "core/status.h"
#include "store/types.h"

namespace maestro {

class RetryPolicy {
 public:
  explicit RetryPolicy(RetryConfig config) : config_(config) {}

  // Delay before the retry that follows failed attempt number `attempt`
  // (1-based): base * 2^(attempt-1), capped at max_delay, times a random
  // factor in [1 - jitter, 1 + jitter].
  int64_t BackoffMs(int attempt) const;

  static bool IsRetryable(const Status& error);

  // kRetry with next_retry_at = now + backoff, or kFailed when the error is
  // fatal or the job has used its attempts.
  JobOutcome OnFailure(const Job& job, const Status& error, TimeMs now) const;

  const RetryConfig& config() const { return config_; }

 private:
  RetryConfig config_;
};

}  // namespace maestro
