#include "store/retry_policy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace maestro {

int64_t RetryPolicy::BackoffMs(int attempt) const {
  int shift = std::clamp(attempt - 1, 0, 40);
  double base = static_cast<double>(config_.base_delay_ms) * std::ldexp(1.0, shift);
  double capped = std::min(base, static_cast<double>(config_.max_delay_ms));
  if (config_.jitter <= 0) return static_cast<int64_t>(capped);
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_real_distribution<double> dist(1.0 - config_.jitter, 1.0 + config_.jitter);
  return static_cast<int64_t>(capped * dist(rng));
}

bool RetryPolicy::IsRetryable(const Status& error) {
  switch (error.code()) {
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
    case StatusCode::kInternal:
    case StatusCode::kResourceExhausted:
      return true;
    default:
      return false;
  }
}

JobOutcome RetryPolicy::FailureOf(const Status& error) {
  if (!IsRetryable(error)) return JobOutcome::Failed(fmt::format("fatal: {}", error.ToString()));
  return JobOutcome::Failed(error.ToString(), /*retryable=*/true);
}

JobOutcome RetryPolicy::Decide(const Job& job, const JobOutcome& outcome, TimeMs now) const {
  if (outcome.kind != JobOutcome::Kind::kFailed || !outcome.retryable) return outcome;
  int max_attempts = job.max_attempts > 0 ? job.max_attempts : config_.max_attempts;
  if (job.attempt >= max_attempts) {
    return JobOutcome::Failed(
        fmt::format("gave up after {} attempts: {}", job.attempt, outcome.error_message));
  }
  return JobOutcome::Retry(outcome.error_message, now + BackoffMs(job.attempt));
}

}  // namespace maestro
