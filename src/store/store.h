// Store: the durable state of maestro — tasks, comments, jobs, approval
// requests, grants and events — and the job state machine over it.
//
// Where it sits: the API writes tasks/comments and enqueues jobs; workers
// claim jobs, heartbeat their lease, and finish them with a JobOutcome; the
// lease sweeper recovers jobs of crashed workers. Each job state change is one
// transaction that also records a `job.status` event and keeps the task's
// status in step, so the database never shows a half-applied transition.
//
// Store is the union of role interfaces, one small header each, so that a
// consumer can take only the role it uses (and a test fake implement only
// that role):
//   TaskRecords (task_records.h): tasks, comments, the comment and
//     continue gates, a task's title and piece;
//   AttachmentRecords (attachment_records.h): files sent with a task;
//   JobQueue (job_queue.h): enqueue, fenced claim/heartbeat/finish, leases;
//   JobRecords (job_records.h): read jobs, cancel, resume a parked job;
//   CaptchaPool (captcha_pool.h): jobs waiting on one CAPTCHA screen;
//   RequestRecords (request_records.h): approval requests and grants;
//   EventRecords (event_records.h): a task's audit events (SSE source);
//   StoreMetrics (store_metrics.h): what /metrics reads;
//   ApiTokens (api_tokens.h): bearer tokens;
//   NotificationRecords (notification_records.h): the event feed and its
//     cursors, webhook deliveries, notifications, Web Push subscriptions;
//   UsageRecords (usage_records.h): usage of jobs, task trees and users,
//     the budget gate;
//   ScheduleRecords (schedule_records.h): schedules, exactly-once fires;
//   LessonRecords (lesson_records.h), MissionRecords (mission_records.h);
//   A2aPushRecords (a2a_push_records.h): A2A push configs, delivery claims;
//   BrowserCallRecords (browser_call_records.h): the live view's calls to
//     the worker process that holds a job's browser;
//   IdentityRecords (identity_records.h): scoped tokens, OIDC identities
//     and groups, browser sessions, pending sign-ins, the audit log.
// Who uses which is in docs/ARCHITECTURE.md (§4, "Store roles").
//
// Fencing: ClaimNextJob hands out a Lease whose fencing_token increases on
// every claim. FinishJob/Heartbeat succeed only while the job is still running
// under that token; otherwise they return kLeaseLost and change nothing.
//
// Thread safety: every method may be called from any thread concurrently.
// Both implementations share one row code (SqlStore, store/sql/): SqliteStore
// is the embedded default, PgStore the shared store for many processes; the
// conformance suite (tests/unit/store/) proves this contract on both.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/status.h"
#include "store/a2a_push_records.h"
#include "store/api_tokens.h"
#include "store/api_types.h"
#include "store/attachment_records.h"
#include "store/browser_call_records.h"
#include "store/captcha_pool.h"
#include "store/event_records.h"
#include "store/identity_records.h"
#include "store/job_queue.h"
#include "store/job_records.h"
#include "store/judgement_types.h"
#include "store/lesson_records.h"
#include "store/mission_records.h"
#include "store/notification_records.h"
#include "store/push_types.h"
#include "store/request_records.h"
#include "store/schedule_records.h"
#include "store/schedule_types.h"
#include "store/store_metrics.h"
#include "store/task_records.h"
#include "store/types.h"
#include "store/usage_records.h"

namespace maestro {

// Every role in one object: what SqlStore implements and what code that
// needs several roles (the API server, the engine's setup) holds. Each
// method is declared in exactly one role, so a call through Store is never
// ambiguous, and a Store& converts to any role's reference.
class Store : public TaskRecords,
              public AttachmentRecords,
              public JobQueue,
              public JobRecords,
              public CaptchaPool,
              public RequestRecords,
              public EventRecords,
              public StoreMetrics,
              public ApiTokens,
              public NotificationRecords,
              public UsageRecords,
              public ScheduleRecords,
              public LessonRecords,
              public MissionRecords,
              public A2aPushRecords,
              public BrowserCallRecords,
              public IdentityRecords {
 public:
  ~Store() override = default;
};

// An event row as far as a live stream needs it to decide whether to look.
struct CommittedEvent {
  std::string task_id;
  std::string job_id;  // "" for task-level events
  std::string type;    // "job.status", "task.created", ...
};

struct StoreOptions {
  Clock* clock = SystemClock::Default();
  int default_max_attempts = 5;
  // How a retryable failure is decided at the finish (store/retry_policy.h:
  // backoff, and max_attempts for a job row without its own).
  RetryConfig retry;
  // SQLite: how long a write waits for another process's write lock (serve
  // and `maestro worker` sharing the file) before it fails kUnavailable.
  int lock_wait_ms = 10'000;
  // Called after a commit that made a job claimable (enqueue, resume,
  // parent wake-up, release). The worker pool uses it to wake an idle worker.
  std::function<void()> on_job_available;
  // Called after every successful write commit with the events it wrote
  // (possibly none). The API's live streams use it to wake exactly the
  // streams of those tasks and jobs instead of polling.
  std::function<void(const std::vector<CommittedEvent>& events)> on_commit;
  // PostgreSQL: each payload other processes relayed on `maestro_deltas`
  // (their running jobs' live deltas, notify/delta_relay.h). Unset: that
  // channel is not listened to (a process that serves no streams).
  std::function<void(const std::string& payload)> on_deltas;
};

}  // namespace maestro
