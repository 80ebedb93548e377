// Store: the durable state of maestro — tasks, comments, jobs, approval
// requests, grants and events — and the job state machine over it.
//
// Where it sits: the API writes tasks/comments and enqueues jobs; workers
// claim jobs, heartbeat their lease, and finish them with a JobOutcome; the
// lease sweeper recovers jobs of crashed workers. Each job state change is one
// transaction that also records a `job.status` event and keeps the task's
// status in step, so the database never shows a half-applied transition.
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
#include "store/api_types.h"
#include "store/judgement_types.h"
#include "store/push_types.h"
#include "store/schedule_types.h"
#include "store/types.h"

namespace maestro {

class Store {
 public:
  virtual ~Store() = default;

  // ---- tasks and comments
  // Creates the task, its instruction comment and its first queued job. A
  // task without a title gets AutoTitle(instruction) (store/title.h).
  struct CreatedTask {
    Task task;
    Job job;
  };
  virtual Result<CreatedTask> CreateTask(const NewTask& task) = 0;
  virtual Result<Task> GetTask(const std::string& task_id) = 0;
  // Newest first; `status` filters when set.
  virtual Result<std::vector<Task>> ListTasks(std::optional<JobStatus> status, int limit) = 0;
  virtual Status AddTaskStats(const std::string& task_id, const TaskStatsDelta& delta) = 0;

  virtual Result<Comment> AddComment(const Comment& comment) = 0;
  virtual Result<std::vector<Comment>> ListComments(const std::string& task_id) = 0;

  // ---- task gates (seed 000 §1)
  // The comment write gate, decided on the task's newest job in one
  // transaction: running / waiting_subtasks → an interjection for that job;
  // waiting for a tool/package/spawn decision → kConflict ("decide the
  // request first"); queued / retry → stored for the pending job ("reused");
  // waiting on ASK, ended, or no job → a follow-up job inheriting
  // resume_movement and ask_count (an answered ASK job ends as succeeded).
  struct CommentResult {
    Comment comment;
    CommentOutcome outcome = CommentOutcome::kFollowUp;
    Job job;
  };
  // `attachments` (files already in the workspace) are recorded with the
  // comment in the same transaction; with some, `body` may be blank.
  virtual Result<CommentResult> PostComment(const std::string& task_id, const std::string& author,
                                            const std::string& body,
                                            const std::vector<Attachment>& attachments) = 0;
  // The user comments attached to a job (interjections, replies stored for a
  // queued/retry job, the answer or reply that created a follow-up) that have
  // not reached a prompt yet, oldest first. The engine writes them into the
  // conversation — the job's first prompt or its next iteration boundary —
  // tagged with their id, then acknowledges them (delivered_at); a crash in
  // between is settled at the next start by finding the tag in the transcript
  // (engine/comment_delivery.h), so each is delivered exactly once. A job that
  // ends with some still undelivered hands them on (FinishJob, below).
  virtual Result<std::vector<Comment>> ListUndeliveredComments(const std::string& job_id) = 0;
  virtual Status AckDeliveredComments(const std::vector<std::string>& comment_ids) = 0;
  // The continue gate: the newest job must be terminal (else kConflict); a
  // new job with continued_from_job_id and a handoff comment. `piece` ""
  // keeps the previous piece (the caller checks that a given piece exists).
  struct ContinueResult {
    Job job;
    Comment handoff;
  };
  virtual Result<ContinueResult> ContinueTask(const std::string& task_id, const std::string& piece,
                                              const std::string& author,
                                              const std::string& note) = 0;

  // ---- attachments (files sent with the instruction or a comment)
  // Every attachment of the task, oldest first.
  virtual Result<std::vector<Attachment>> ListAttachments(const std::string& task_id) = 0;
  // Those no prompt has listed yet, oldest first: the engine lists them in
  // the next prompt's dynamic context, then acknowledges them.
  virtual Result<std::vector<Attachment>> ListUndeliveredAttachments(
      const std::string& task_id) = 0;
  virtual Status AckDeliveredAttachments(const std::vector<std::string>& attachment_ids) = 0;

  // ---- jobs
  virtual Result<Job> EnqueueJob(const NewJob& job) = 0;
  // Batched enqueue: every job as EnqueueJob would make it, in ONE
  // transaction, in order — all of them or, when one fails (its task does
  // not exist, say), none. A producer with many jobs at hand pays one commit
  // (and on PostgreSQL three round trips). A handoff's adopt_children_of is
  // refused here (kInvalidArgument): it goes through EnqueueJob.
  virtual Result<std::vector<Job>> EnqueueJobs(const std::vector<NewJob>& jobs) = 0;
  virtual Result<Job> GetJob(const std::string& job_id) = 0;
  virtual Result<std::vector<Job>> ListJobs(const std::string& task_id) = 0;
  virtual Result<std::vector<Job>> ListChildJobs(const std::string& parent_job_id) = 0;

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

  // Recovers running jobs whose lease expired before `now`: `decide` maps
  // each (as the retry policy would a failure) to kRetry or kFailed; a job
  // with cancel requested becomes cancelled. Returns the recovered jobs.
  virtual Result<std::vector<Job>> RecoverExpiredLeases(
      const std::function<JobOutcome(const Job&)>& decide) = 0;

  // Cancels `job_id` and all its descendants: queued/retry/parked jobs at
  // once, running ones by setting cancel_requested (they stop cooperatively).
  virtual Result<CancelReport> RequestCancel(const std::string& job_id) = 0;
  virtual Result<bool> IsCancelRequested(const std::string& job_id) = 0;

  // waiting_human / waiting_subtasks -> queued (an answer or decision came).
  // kConflict when the job is not parked.
  virtual Status ResumeParkedJob(const std::string& job_id) = 0;

  // ---- the CAPTCHA pool (seed 001: WAITING_HUMAN_BROWSER, wait_reason
  // captcha). Jobs of one space that hit the same CAPTCHA screen wait on it
  // together; a person solves it once and every one of them resumes.
  // Records the (space, screen) the job is about to wait on: the engine
  // calls it while the job still runs, just before it parks with wait_reason
  // 'captcha'. ("", "") clears both. kNotFound for an unknown job.
  virtual Status SetCaptchaWait(const std::string& job_id, const std::string& space_id,
                                const std::string& screen) = 0;
  // In one transaction, requeues (as ResumeParkedJob: same events, same task
  // status mirror) every job waiting_human with wait_reason 'captcha' on
  // exactly (space_id, screen), clearing its captcha_space_id and keeping
  // its captcha_screen: the resumed job sees its screen solved by
  // captcha_space_id == "" && captcha_screen == screen. Returns how many were
  // requeued (0 is not an error). An empty argument is kInvalidArgument
  // naming it ("space_id" | "screen").
  // `resolved_by` (issue 44; nullopt: every job, for the engine and tools)
  // keeps a user to their own: a job of a task in a space only when its task
  // is visible to them (shared, unowned or theirs); a job of a task without
  // a space — the owner's personal pool, whatever captcha_space_id says —
  // only when the task is theirs (or unowned). Another user's private wait
  // is never requeued.
  virtual Result<int> ResumeCaptchaJobs(const std::string& space_id, const std::string& screen,
                                        const std::optional<std::string>& resolved_by) = 0;

  // Earliest next_retry_at among retry jobs, if any (lets idle workers sleep
  // exactly until a backoff ends).
  virtual Result<std::optional<TimeMs>> NextRetryDue() = 0;

  // ---- approval requests and grants
  virtual Result<Request> CreateRequest(const Request& request) = 0;
  virtual Result<Request> GetRequest(const std::string& request_id) = 0;
  // `kind` unset = all kinds. Oldest first.
  virtual Result<std::vector<Request>> ListRequests(const std::string& task_id,
                                                    std::optional<RequestKind> kind) = 0;
  // Compare-and-set pending -> approved|denied; a second decision gets
  // kConflict. Approving a tool request also creates its grant (scope once,
  // bound to the arguments, or task). The parked job (waiting_human) is
  // requeued in the same transaction whether approved or denied.
  virtual Result<Request> DecideRequest(const std::string& request_id, const std::string& decision,
                                        const std::string& scope,
                                        const std::string& decided_by) = 0;
  virtual Result<Grant> AddGrant(const Grant& grant) = 0;
  virtual Result<std::vector<Grant>> ListGrants(const std::string& task_id) = 0;
  // Atomically finds a live grant for (task, tool, args_hash) — a task-scope
  // grant or a once-grant bound to this hash — and spends one use. Returns
  // the grant used, or nullopt when nothing permits the call.
  virtual Result<std::optional<Grant>> ConsumeGrant(const std::string& task_id,
                                                    const std::string& tool_name,
                                                    const std::string& args_hash) = 0;

  // Jobs per status, for /metrics.
  virtual Result<std::map<std::string, int64_t>> CountJobsByStatus() = 0;

  // ---- events (audit log, SSE source)
  // `stats`, when not all zero, is added to the event's task in the same
  // transaction: the agent loop's llm.call and tool.call events carry the
  // counters they account for, one commit instead of two.
  virtual Result<Event> AppendEvent(const Event& event, const TaskStatsDelta& stats = {}) = 0;
  // Events of a task with id > after_id ("" = from the start), oldest first.
  // Event ids are decimal integers that only grow (the SSE Last-Event-ID).
  virtual Result<std::vector<Event>> ListEvents(const std::string& task_id,
                                                const std::string& after_id, int limit) = 0;

  // ---- API support (sqlite_api.cc): tokens, webhooks, notifications, metrics
  // Not pure, so other Store implementations (test fakes) need not provide
  // them; the defaults answer kUnimplemented.
  // Bearer tokens are stored as their SHA-256 hex only.
  virtual Status AddApiToken(const std::string& /*token_hash*/, const std::string& /*user*/) {
    return NoApiSupport();
  }
  // The user of a token hash, or nullopt.
  virtual Result<std::optional<std::string>> UserForToken(const std::string& /*token_hash*/) {
    return NoApiSupport();
  }
  virtual Result<int64_t> CountApiTokens() { return NoApiSupport(); }
  // Events of every task with id > after_id, oldest first (webhook dispatch).
  virtual Result<std::vector<Event>> ListAllEvents(const std::string& /*after_id*/, int /*limit*/) {
    return NoApiSupport();
  }
  // A named durable cursor ("" when never set), e.g. the webhook dispatcher's.
  virtual Result<std::string> GetCursor(const std::string& /*name*/) { return NoApiSupport(); }
  virtual Status SetCursor(const std::string& /*name*/, const std::string& /*value*/) {
    return NoApiSupport();
  }
  virtual Status RecordDelivery(const WebhookDelivery& /*delivery*/) { return NoApiSupport(); }
  // Newest first.
  virtual Result<std::vector<WebhookDelivery>> ListDeliveries(int /*limit*/) {
    return NoApiSupport();
  }
  // job.status events entering waiting_human / succeeded / failed of tasks
  // owned by `user`, newest first.
  virtual Result<std::vector<Notification>> ListNotifications(const std::string& /*user*/,
                                                              bool /*unread_only*/, int /*limit*/) {
    return NoApiSupport();
  }
  // Marks the given notification ids read ({} = all of the user's).
  virtual Status MarkNotificationsRead(const std::string& /*user*/,
                                       const std::vector<std::string>& /*ids*/) {
    return NoApiSupport();
  }
  // Web Push subscriptions (sql_push.cc). Add keeps one row per (owner,
  // endpoint): a browser subscribing again gets its keys replaced; a new
  // endpoint past `max_per_owner` is kResourceExhausted.
  virtual Result<PushSubscription> AddPushSubscription(const PushSubscription& /*sub*/,
                                                       int /*max_per_owner*/) {
    return NoApiSupport();
  }
  // The owner's subscriptions, oldest first.
  virtual Result<std::vector<PushSubscription>> ListPushSubscriptions(
      const std::string& /*owner*/) {
    return NoApiSupport();
  }
  // kNotFound unless `id` is one of `owner`'s subscriptions.
  virtual Status DeletePushSubscription(const std::string& /*owner*/, const std::string& /*id*/) {
    return NoApiSupport();
  }
  virtual Result<ApiMetrics> ComputeApiMetrics() { return NoApiSupport(); }
  // The usage of every job of the given tasks that made an LLM call, from
  // their `llm.call` events, in one grouped read: by task, then by the job's
  // first call. Jobs without a call are absent.
  virtual Result<std::vector<JobUsage>> ListJobUsage(const std::vector<std::string>& /*task_ids*/) {
    return NoApiSupport();
  }
  // The budget tree of a task (issue 44): the usage, as ListJobUsage, of
  // `task_id` and every task below it (subtasks: tasks whose jobs have a
  // parent_job_id of a job in the tree, at any depth), in one read. The
  // subtasks' spending counts toward every ancestor's budget.
  virtual Result<std::vector<JobUsage>> ListTaskTreeUsage(const std::string& /*task_id*/) {
    return NoApiSupport();
  }
  // Sets the task's title (store/title.h CheckTitle: trimmed, 1..200
  // characters, no control characters; else kInvalidArgument naming
  // "title") and appends a `task.updated` event {title} in the same
  // transaction. Returns the updated task; kNotFound when it does not exist.
  virtual Result<Task> SetTaskTitle(const std::string& /*task_id*/, const std::string& /*title*/) {
    return NoApiSupport();
  }
  // The budget gate (issue 18): when the task's newest job is parked
  // waiting_human with wait_reason budget_exceeded, sets the task's budget
  // limits to `budget` (store/budget.h LimitsJson), requeues that job to
  // resume its movement and appends a `budget.raised` event {budget, job_id}
  // — one transaction. kConflict (nothing changed) when no job is parked on
  // the budget; kNotFound when the task does not exist. Returns the job.
  virtual Result<Job> RaiseTaskBudget(const std::string& /*task_id*/, const Json& /*budget*/) {
    return NoApiSupport();
  }
  // What `owner` used since `since` (the daily quotas): tasks created, and
  // tokens (prompt + completion) of the `llm.call` events of their tasks.
  struct UserUsage {
    int64_t tasks = 0;
    int64_t tokens = 0;
  };
  virtual Result<UserUsage> UserUsageSince(const std::string& /*owner*/, TimeMs /*since*/) {
    return NoApiSupport();
  }

  // ---- schedules (issue 20; sql_schedules.cc, the loop: schedule/scheduler.h)
  // Creates `s`: id, anchor_at (= now) and the times are assigned, the fire
  // state (last_fire_at, last_task_id, held_fire_at) starts empty.
  virtual Result<Schedule> CreateSchedule(const Schedule& /*s*/) { return NoApiSupport(); }
  // kNotFound "schedule <id> not found" when absent.
  virtual Result<Schedule> GetSchedule(const std::string& /*id*/) { return NoApiSupport(); }
  // Oldest first. `visible_to` set: only what that user may see — shared,
  // unowned or its own, the rule tasks follow (api::Authenticator::Visible);
  // unset: every schedule (the scheduler).
  virtual Result<std::vector<Schedule>> ListSchedules(
      const std::optional<std::string>& /*visible_to*/) {
    return NoApiSupport();
  }
  // Replaces the editable fields (name … catch_up, budget) of schedule `s.id`; sets
  // anchor_at = now when it is re-enabled or its cron or timezone changes (the
  // time before never fires). kNotFound when absent.
  virtual Result<Schedule> UpdateSchedule(const Schedule& /*s*/) { return NoApiSupport(); }
  // Deletes the schedule and its fire rows; the tasks it created stay.
  virtual Status DeleteSchedule(const std::string& /*id*/) { return NoApiSupport(); }
  // Claims (schedule_id, fire_at) and acts on it in ONE transaction, so a
  // fire time makes at most one task across restarts and processes: a time
  // already claimed is kAlreadyFired and writes nothing. A cron fire
  // (`manual` false) applies the overlap rule against the previous task
  // (kCreated / kSkipped / kHeld) and moves last_fire_at; "run now"
  // (`manual`) always creates the task and leaves last_fire_at alone. The
  // task takes the schedule's instruction, piece, space, profile, owner,
  // visibility and budget, and its name as title. kNotFound when the schedule is gone.
  struct FireResult {
    ScheduleFire fire;
    std::optional<CreatedTask> created;  // when fire.outcome is kCreated
  };
  virtual Result<FireResult> FireSchedule(const std::string& /*schedule_id*/, TimeMs /*fire_at*/,
                                          bool /*manual*/) {
    return NoApiSupport();
  }
  // Overlap queue: when the schedule holds a fire (held_fire_at) and its
  // previous task has ended, creates the held fire's task — one transaction,
  // so once. nullopt when nothing was released.
  virtual Result<std::optional<CreatedTask>> ReleaseHeldFire(const std::string& /*schedule_id*/) {
    return NoApiSupport();
  }
  // A cron fire refused by the owner's daily quota (issue 44): claims
  // (schedule_id, fire_at) with outcome kQuota, creates no task and moves
  // last_fire_at on, so that time is not fired again — one transaction. The
  // fire's outcome is kAlreadyFired when the time was claimed before;
  // kNotFound when the schedule is gone. (The refusal's text is the
  // quota.refused event's, store/quota_gate.h.)
  virtual Result<ScheduleFire> SkipFireForQuota(const std::string& /*schedule_id*/,
                                                TimeMs /*fire_at*/) {
    return NoApiSupport();
  }
  // The schedule's fires, newest fire time first.
  virtual Result<std::vector<ScheduleFire>> ListScheduleFires(const std::string& /*schedule_id*/,
                                                              int /*limit*/) {
    return NoApiSupport();
  }

  // Piece routing (issue 21): the task created with kRoutedPiece, and its
  // jobs still on it, take `piece`, and a task.routed event records it.
  // kConflict when the task is no longer on kRoutedPiece (another worker
  // routed it first: use that piece).
  virtual Status SetTaskPiece(const std::string& /*task_id*/, const std::string& /*piece*/,
                              const Json& /*event*/) {
    return NoApiSupport();
  }

  // ---- lessons (issue 21; sql_judgement.cc)
  // Assigns id and times. kInvalidArgument naming the field for an empty
  // lesson or a piece-scoped one without a piece.
  virtual Result<Lesson> AddLesson(const Lesson& /*l*/) { return NoApiSupport(); }
  // kNotFound "lesson <id> not found".
  virtual Result<Lesson> GetLesson(const std::string& /*id*/) { return NoApiSupport(); }
  // The lessons of `space`, newest first: with `piece` set, the space-scoped
  // ones and those scoped to that piece (what a task of it is given);
  // unset, all of them.
  virtual Result<std::vector<Lesson>> ListLessons(const std::string& /*space*/,
                                                  const std::optional<std::string>& /*piece*/,
                                                  int /*limit*/) {
    return NoApiSupport();
  }
  // Every space's lessons, newest first (the Lessons page).
  virtual Result<std::vector<Lesson>> ListAllLessons(int /*limit*/) { return NoApiSupport(); }
  // Replaces lesson, scope, piece and evidence of `l.id`. kNotFound when absent.
  virtual Result<Lesson> UpdateLesson(const Lesson& /*l*/) { return NoApiSupport(); }
  virtual Status DeleteLesson(const std::string& /*id*/) { return NoApiSupport(); }

  // ---- missions (issue 21; sql_judgement.cc). Assigns id and times;
  // kInvalidArgument naming "title" when it is empty.
  virtual Result<Mission> CreateMission(const Mission& /*m*/) { return NoApiSupport(); }
  // kNotFound "mission <id> not found".
  virtual Result<Mission> GetMission(const std::string& /*id*/) { return NoApiSupport(); }
  // Oldest first; `visible_to` as ListSchedules.
  virtual Result<std::vector<Mission>> ListMissions(
      const std::optional<std::string>& /*visible_to*/) {
    return NoApiSupport();
  }
  // Replaces title and notes. kNotFound when absent.
  virtual Result<Mission> UpdateMission(const Mission& /*m*/) { return NoApiSupport(); }
  // The mission's tasks, newest first.
  virtual Result<std::vector<Task>> ListMissionTasks(const std::string& /*mission_id*/,
                                                     int /*limit*/) {
    return NoApiSupport();
  }

 private:
  static Status NoApiSupport() { return Unimplemented("not supported by this store"); }
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
};

}  // namespace maestro
