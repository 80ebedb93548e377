// SqlStore: the Store contract as row code shared by both backends.
//
// Every method is one transaction run by a SqlEngine (sql/engine.h): the
// SQLite engine group-commits the writes of one process on one writer
// connection; the PostgreSQL engine runs each on a pooled connection at the
// isolation its sql::TxKind names (SERIALIZABLE, or READ COMMITTED with row
// locks for claims, finishes and enqueues) and re-runs it on a
// serialization conflict, so a write body starts from its inputs on every
// attempt. The statements are written once
// in the SQL both accept (sql/conn.h); the policy they apply — which gate a
// comment takes, what an outcome does to a job — is pure code in
// store/policy.h. After a commit the local hooks (StoreOptions) fire; the
// PostgreSQL engine also tells other processes through NOTIFY.
//
// Thread safety: all methods are safe to call concurrently.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "store/sql/engine.h"
#include "store/store.h"

namespace maestro {

class SqlStore : public Store {
 public:
  SqlStore(std::unique_ptr<sql::SqlEngine> engine, StoreOptions options);
  ~SqlStore() override;

  Result<CreatedTask> CreateTask(const NewTask& task) override;
  Result<Task> GetTask(const std::string& task_id) override;
  Result<std::vector<Task>> ListTasks(std::optional<JobStatus> status, int limit) override;
  Status AddTaskStats(const std::string& task_id, const TaskStatsDelta& delta) override;
  Result<Comment> AddComment(const Comment& comment) override;
  Result<std::vector<Comment>> ListComments(const std::string& task_id) override;

  Result<CommentResult> PostComment(const std::string& task_id, const std::string& author,
                                    const std::string& body,
                                    const std::vector<Attachment>& attachments) override;
  Result<std::vector<Comment>> ListUndeliveredComments(const std::string& job_id) override;
  Status AckDeliveredComments(const std::vector<std::string>& comment_ids) override;
  Result<ContinueResult> ContinueTask(const std::string& task_id, const std::string& piece,
                                      const std::string& author, const std::string& note) override;
  Result<std::map<std::string, int64_t>> CountJobsByStatus() override;
  // Attachments (sql_attachments.cc).
  Result<std::vector<Attachment>> ListAttachments(const std::string& task_id) override;
  Result<std::vector<Attachment>> ListUndeliveredAttachments(const std::string& task_id) override;
  Status AckDeliveredAttachments(const std::vector<std::string>& attachment_ids) override;

  Result<Job> EnqueueJob(const NewJob& job) override;
  Result<std::vector<Job>> EnqueueJobs(const std::vector<NewJob>& jobs) override;
  Result<Job> GetJob(const std::string& job_id) override;
  Result<std::vector<Job>> ListJobs(const std::string& task_id) override;
  Result<std::vector<Job>> ListChildJobs(const std::string& parent_job_id) override;
  Result<std::optional<Job>> ClaimNextJob(const ClaimFilter& filter, int64_t lease_ms) override;
  Result<HeartbeatReply> Heartbeat(const Lease& lease, int64_t lease_ms) override;
  Status FinishJob(const Lease& lease, const JobOutcome& outcome) override;
  Result<std::optional<Job>> FinishAndClaimNext(const Lease& lease, const JobOutcome& outcome,
                                                const ClaimFilter& filter,
                                                int64_t lease_ms) override;
  // Batched claim and finish (sql_claim_finish.cc).
  Result<std::vector<Job>> ClaimJobs(const ClaimFilter& filter, int64_t lease_ms, int max) override;
  Result<std::vector<Status>> FinishJobs(
      const std::vector<std::pair<Lease, JobOutcome>>& items) override;
  Result<std::vector<Job>> RecoverExpiredLeases(
      const std::function<JobOutcome(const Job&)>& decide) override;
  Result<CancelReport> RequestCancel(const std::string& job_id) override;
  Result<bool> IsCancelRequested(const std::string& job_id) override;
  Status ResumeParkedJob(const std::string& job_id) override;
  Status SetCaptchaWait(const std::string& job_id, const std::string& space_id,
                        const std::string& screen) override;
  Result<int> ResumeCaptchaJobs(const std::string& space_id, const std::string& screen,
                                const std::optional<std::string>& resolved_by) override;
  Result<std::optional<TimeMs>> NextRetryDue() override;

  Result<Request> CreateRequest(const Request& request) override;
  Result<Request> GetRequest(const std::string& request_id) override;
  Result<std::vector<Request>> ListRequests(const std::string& task_id,
                                            std::optional<RequestKind> kind) override;
  Result<Request> DecideRequest(const std::string& request_id, const std::string& decision,
                                const std::string& scope, const std::string& decided_by) override;
  Result<Grant> AddGrant(const Grant& grant) override;
  Result<std::vector<Grant>> ListGrants(const std::string& task_id) override;
  Result<std::optional<Grant>> ConsumeGrant(const std::string& task_id,
                                            const std::string& tool_name,
                                            const std::string& args_hash) override;

  Result<Event> AppendEvent(const Event& event, const TaskStatsDelta& stats = {}) override;
  Result<std::vector<Event>> ListEvents(const std::string& task_id, const std::string& after_id,
                                        int limit) override;

  Status AddApiToken(const std::string& token_hash, const std::string& user) override;
  Result<std::optional<std::string>> UserForToken(const std::string& token_hash) override;
  Result<int64_t> CountApiTokens() override;
  Result<std::vector<Event>> ListAllEvents(const std::string& after_id, int limit) override;
  Result<std::string> GetCursor(const std::string& name) override;
  Status SetCursor(const std::string& name, const std::string& value) override;
  Status RecordDelivery(const WebhookDelivery& delivery) override;
  Result<std::vector<WebhookDelivery>> ListDeliveries(int limit) override;
  Result<std::vector<Notification>> ListNotifications(const std::string& user, bool unread_only,
                                                      int limit) override;
  Status MarkNotificationsRead(const std::string& user,
                               const std::vector<std::string>& ids) override;
  // Web Push subscriptions (sql_push.cc).
  Result<PushSubscription> AddPushSubscription(const PushSubscription& sub,
                                               int max_per_owner) override;
  Result<std::vector<PushSubscription>> ListPushSubscriptions(const std::string& owner) override;
  Status DeletePushSubscription(const std::string& owner, const std::string& id) override;
  // A2A push configs (sql_a2a_push.cc).
  Result<A2aPushConfigRecord> PutA2aPushConfig(const A2aPushConfigRecord& c,
                                               int max_per_task) override;
  Result<A2aPushConfigRecord> GetA2aPushConfig(const std::string& task_id, const std::string& owner,
                                               const std::string& id) override;
  Result<std::vector<A2aPushConfigRecord>> ListA2aPushConfigs(const std::string& task_id,
                                                              const std::string& owner) override;
  Status DeleteA2aPushConfig(const std::string& task_id, const std::string& owner,
                             const std::string& id) override;
  Result<std::vector<A2aPushConfigRecord>> ListOpenA2aPushConfigs(int limit) override;
  Result<bool> ClaimA2aPushDelivery(const std::string& task_id, const std::string& owner,
                                    const std::string& id, const std::string& expected,
                                    const std::string& key, bool terminal) override;
  // The store-routed BrowseWeb live view (sql_browser_calls.cc).
  Status PutBrowserHolders(const std::vector<BrowserHolder>& held) override;
  Status DropBrowserHolder(const std::string& job_id, const std::string& worker_id) override;
  Result<BrowserHolder> GetBrowserHolder(const std::string& job_id) override;
  Result<BrowserCall> AddBrowserCall(const BrowserCall& c, int max_pending) override;
  Result<BrowserCall> GetBrowserCall(const std::string& id) override;
  Result<std::vector<BrowserCall>> PendingBrowserCalls(const std::string& job_id,
                                                       const std::string& worker_id,
                                                       int limit) override;
  Result<bool> AnswerBrowserCall(const std::string& id, const std::string& worker_id,
                                 const Status& result, const std::string& answer) override;
  Status DeleteBrowserCall(const std::string& id) override;
  Status ResumeBrowserLogin(const std::string& job_id, const std::string& worker_id) override;
  Status ClearBrowserPin(const std::string& job_id, const std::string& worker_id) override;
  Result<int> UnpinOrphanedBrowserLogins(TimeMs gone_ms) override;
  // Scoped tokens, identities, sessions, sign-ins, the audit log
  // (sql_identity.cc).
  Status AddScopedToken(const std::string& token_hash, const ApiTokenRecord& rec) override;
  Result<std::optional<ApiTokenRecord>> TokenByHash(const std::string& token_hash) override;
  Result<std::vector<ApiTokenRecord>> ListTokens(const std::string& user) override;
  Result<bool> RevokeToken(const std::string& user, const std::string& id, TimeMs now) override;
  Result<bool> BindIdentity(const std::string& issuer, const std::string& subject,
                            const std::string& user, TimeMs now) override;
  Status SetUserGroups(const std::string& user, const std::vector<std::string>& groups,
                       TimeMs now) override;
  Result<std::vector<std::string>> UserGroups(const std::string& user) override;
  Status AddSession(const std::string& id_hash, const SessionRecord& rec) override;
  Result<std::optional<SessionRecord>> SessionByHash(const std::string& id_hash,
                                                     TimeMs now) override;
  Status DeleteSession(const std::string& id_hash) override;
  Status AddPendingLogin(const std::string& state_hash, const PendingLogin& login, TimeMs now,
                         TimeMs max_age) override;
  Result<std::optional<PendingLogin>> TakePendingLogin(const std::string& state_hash, TimeMs now,
                                                       TimeMs max_age) override;
  Result<int64_t> AppendAudit(const AuditEntry& e) override;
  Result<std::vector<AuditEntry>> ListAudit(const AuditFilter& f) override;
  Result<ApiMetrics> ComputeApiMetrics() override;
  Result<std::vector<JobUsage>> ListJobUsage(const std::vector<std::string>& task_ids) override;
  Result<std::vector<JobUsage>> ListTaskTreeUsage(const std::string& task_id) override;
  Result<Task> SetTaskTitle(const std::string& task_id, const std::string& title) override;
  Result<Job> RaiseTaskBudget(const std::string& task_id, const Json& budget) override;
  Result<UserUsage> UserUsageSince(const std::string& owner, TimeMs since) override;
  // Schedules (sql_schedules.cc).
  Status SetTaskPiece(const std::string& task_id, const std::string& piece,
                      const Json& event) override;
  Result<Mission> CreateMission(const Mission& m) override;
  Result<Mission> GetMission(const std::string& id) override;
  Result<std::vector<Mission>> ListMissions(const std::optional<std::string>& visible_to) override;
  Result<Mission> UpdateMission(const Mission& m) override;
  Result<std::vector<Task>> ListMissionTasks(const std::string& mission_id, int limit) override;
  Result<Lesson> AddLesson(const Lesson& l) override;
  Result<Lesson> GetLesson(const std::string& id) override;
  Result<std::vector<Lesson>> ListLessons(const std::string& space,
                                          const std::optional<std::string>& piece,
                                          int limit) override;
  Result<std::vector<Lesson>> ListAllLessons(int limit) override;
  Result<Lesson> UpdateLesson(const Lesson& l) override;
  Status DeleteLesson(const std::string& id) override;
  Result<Schedule> CreateSchedule(const Schedule& s) override;
  Result<Schedule> GetSchedule(const std::string& id) override;
  Result<std::vector<Schedule>> ListSchedules(
      const std::optional<std::string>& visible_to) override;
  Result<Schedule> UpdateSchedule(const Schedule& s) override;
  Status DeleteSchedule(const std::string& id) override;
  Result<FireResult> FireSchedule(const std::string& schedule_id, TimeMs fire_at,
                                  bool manual) override;
  Result<std::optional<CreatedTask>> ReleaseHeldFire(const std::string& schedule_id) override;
  Result<ScheduleFire> SkipFireForQuota(const std::string& schedule_id, TimeMs fire_at) override;
  Result<std::vector<ScheduleFire>> ListScheduleFires(const std::string& schedule_id,
                                                      int limit) override;

  // Schema version after migrations (for tests and `maestro version`).
  Result<int> SchemaVersion();

  // State shared by the statements of one write transaction.
  struct Tx {
    sql::Conn& conn;
    TimeMs now;
    sql::TxEffects& effects;  // job_available, events: announced after commit
  };

 protected:
  sql::SqlEngine& engine() { return *engine_; }

 private:
  // Runs `body` atomically and durably (possibly more than once, see
  // above), then fires the hooks for what the committed attempt did.
  Status Write(const std::function<Status(Tx&)>& body, sql::TxEffects* committed_out = nullptr,
               sql::TxKind kind = sql::TxKind::kWrite);
  Status Read(const std::function<Status(sql::Conn&)>& body);
  sql::Dialect dialect() const { return dialect_; }

  // Job state machine pieces shared by several methods (sql_jobs.cc).
  // A job's row after a transition, and the status it left.
  struct Moved {
    Job job;
    JobStatus from;
  };
  // What follows jobs' transitions: the task mirror, the job.status
  // events, fan-in. AfterTransition loads the job first.
  Status AfterTransitions(Tx& tx, const std::vector<Moved>& moved);
  Status AfterTransition(Tx& tx, const std::string& job_id, JobStatus from);
  Status CancelOne(Tx& tx, const Job& job, CancelReport& report);
  Result<Job> InsertJob(Tx& tx, const NewJob& job);
  // EnqueueJobs' rows, in batch order, by ONE statement (no AfterTransitions).
  Result<std::vector<Job>> InsertJobRows(Tx& tx, const std::vector<NewJob>& jobs);
  // Records `attachments` of `comment_id` (ids and created_at assigned).
  Status InsertAttachments(Tx& tx, const std::string& task_id, const std::string& comment_id,
                           const std::vector<Attachment>& attachments);
  // CreateTask's rows inside the caller's transaction (also a schedule's
  // fire): the task `task_id`, its instruction comment, events and first
  // job; *job is that job (or the spawned one a known spawn_key names,
  // whose task id then goes to *task_id).
  Status InsertTask(Tx& tx, NewTask in, std::string* task_id, Job* job);
  Status ResumeIfWaitingHuman(Tx& tx, const std::string& job_id);
  // The comment gate at a job's end (sql_gates.cc): how many user
  // comments of `job_id` are undelivered, and handing them on to the job's
  // queued continuation or a new follow-up job.
  Result<int64_t> CountUndelivered(Tx& tx, const std::string& job_id);
  // The first job of the task created with `spawn_key`, if any.
  Result<std::optional<Job>> FindSpawned(Tx& tx, const std::string& spawn_key);
  Status HandOnUndelivered(Tx& tx, const Job& job);
  Status MoveUndelivered(Tx& tx, const Job& from, const std::string& to_job_id);
  // Claim and finish, batched (sql_claim_finish.cc): up to `max` jobs claimed,
  // and the outcomes of `items` applied, with a fixed number of statements
  // however many jobs. FinishInTx's per-item statuses are kLeaseLost or
  // kNotFound for an item that was not applied; any other error fails the
  // whole call.
  Result<std::vector<Job>> ClaimInTx(Tx& tx, const ClaimFilter& filter, int64_t lease_ms, int max);
  Result<std::vector<Status>> FinishInTx(Tx& tx,
                                         const std::vector<std::pair<Lease, JobOutcome>>& items);

  std::unique_ptr<sql::SqlEngine> engine_;
  const sql::Dialect dialect_;
  StoreOptions options_;
};

}  // namespace maestro
