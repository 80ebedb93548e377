// Value types of the API-support part of the Store: bearer tokens, webhook
// deliveries, notifications and the aggregates /metrics reads. Plain data;
// no thread-safety concerns.
#pragma once

#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/json.h"

namespace maestro {

// One attempt to deliver one event to one webhook URL (the delivery log).
struct WebhookDelivery {
  std::string event_id;
  std::string url;
  int attempt = 0;
  int http_status = 0;  // 0: no HTTP answer (connection error)
  bool ok = false;
  std::string error;  // never the secret or the body
  TimeMs created_at = 0;
};

// A job status change the user should see (waiting_human, succeeded, failed).
// The store gives the raw facts; api/notification_view.h says what happened.
struct Notification {
  std::string id;  // the event id
  std::string task_id;
  std::string job_id;
  std::string status;       // the job's new status
  std::string from_status;  // the status it left (waiting_human → succeeded: an answered ASK)
  std::string wait_reason;  // waiting_human: ask, tool_request, ...
  bool handed_off = false;  // succeeded by handing off to a continuation job
  std::string task_title;
  std::string task_instruction;  // its first 200 bytes, for untitled tasks
  bool read = false;
  TimeMs created_at = 0;
};

// Aggregates for /metrics, computed in one read.
// Durations of one tool's calls (from `tool.call` events), as a Prometheus
// histogram: counts[i] = calls that took <= kToolDurationBuckets[i] seconds.
inline constexpr double kToolDurationBuckets[] = {0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120};
struct ToolDurationStats {
  int64_t count = 0;
  int64_t sum_ms = 0;
  int64_t errors = 0;
  std::vector<int64_t> buckets = std::vector<int64_t>(std::size(kToolDurationBuckets), 0);
};

// Durations of LLM calls (from `llm.call` events' totalMs / ttftMs) as a
// Prometheus histogram: buckets[i] = calls that took <= kLlmDurationBuckets[i]
// seconds.
inline constexpr double kLlmDurationBuckets[] = {0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
struct LlmDurationStats {
  int64_t count = 0;
  int64_t sum_ms = 0;
  std::vector<int64_t> buckets = std::vector<int64_t>(std::size(kLlmDurationBuckets), 0);
  void Add(int64_t ms) {
    ++count;
    sum_ms += ms;
    for (size_t i = 0; i < buckets.size(); ++i) {
      if (static_cast<double>(ms) <= kLlmDurationBuckets[i] * 1000.0) ++buckets[i];
    }
  }
};

struct ApiMetrics {
  int64_t queue_wait_count = 0;   // jobs that started
  int64_t queue_wait_sum_ms = 0;  // sum of started_at - created_at
  int64_t llm_calls = 0;
  int64_t prompt_tokens = 0;
  int64_t cached_prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t webhook_deliveries_failed = 0;
  int64_t webhook_deliveries_ok = 0;
  int64_t budget_exceeded = 0;  // budget.exceeded events (jobs parked on a budget)
  int64_t quota_refusals = 0;   // quota.refused events (tasks refused by a daily quota)
  std::map<std::string, ToolDurationStats> tool_durations;  // by tool name
  LlmDurationStats llm_duration;  // whole calls (totalMs, retries included)
  LlmDurationStats llm_ttft;      // time to first token (calls that reported one)
};

// The LLM usage of one job, summed over its `llm.call` events (one per LLM
// call the engine made). `profile` is the job's LLM profile ("" = default).
struct JobUsage {
  std::string task_id;
  std::string job_id;
  std::string profile;
  int64_t llm_calls = 0;
  int64_t prompt_tokens = 0;
  int64_t cached_tokens = 0;  // of prompt_tokens, served from the server's cache
  int64_t completion_tokens = 0;
  int64_t model_ms = 0;  // sum of the calls' totalMs
  // Of prompt_tokens, written to the cache (Anthropic's cache_creation_input_tokens).
  int64_t cache_write_tokens = 0;
};

}  // namespace maestro
