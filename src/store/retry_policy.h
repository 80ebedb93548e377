// RetryPolicy: what becomes of a job whose run failed — the retry half of
// the store's one decision of a job's end (policy::MapOutcome calls it in
// the finish transaction, on the attempts the row shows there).
//
// Transient failures (kUnavailable, kDeadlineExceeded, kInternal,
// kResourceExhausted, a crashed worker) are retried with exponential backoff
// and jitter until the job's max_attempts claims are used; anything else
// (bad piece, invalid input, unimplemented) is fatal and fails the job at
// once. The worker and the lease sweeper only report a failure
// (FailureOf: JobOutcome::Failed, retryable or not); the store decides.
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

  // How an error return is reported: JobOutcome::Failed with the error's
  // text, retryable when IsRetryable, else marked "fatal: ".
  static JobOutcome FailureOf(const Status& error);

  // The decision on a kFailed outcome: a fatal one stays failed; a
  // retryable one becomes kRetry with next_retry_at = now + backoff, or
  // kFailed ("gave up after N attempts: …") when the job has used its
  // attempts. Other kinds are returned as they are.
  JobOutcome Decide(const Job& job, const JobOutcome& outcome, TimeMs now) const;

  // Decide(job, FailureOf(error), now).
  JobOutcome OnFailure(const Job& job, const Status& error, TimeMs now) const {
    return Decide(job, FailureOf(error), now);
  }

  const RetryConfig& config() const { return config_; }

 private:
  RetryConfig config_;
};

}  // namespace maestro
