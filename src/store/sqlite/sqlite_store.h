// SqliteStore: the embedded Store on one SQLite file in WAL mode.
//
// One dedicated writer connection runs every write transaction (BEGIN
// IMMEDIATE), serialized inside the process: waiting on a mutex wakes at
// once, whereas SQLite's busy handler sleeps, and the writer's page cache
// stays warm because no other connection of ours writes. Concurrent writes
// are group-committed (see Write()): one transaction, one savepoint per
// caller, one commit for the batch. Reads
// use connections from a small pool and run in parallel with the writer
// (WAL). Across processes (`maestro worker` sharing the file) SQLite's own
// lock and busy_timeout serialize writers.
//
// Thread safety: all methods are safe to call concurrently.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "store/sqlite/db.h"
#include "store/store.h"

namespace maestro {

class SqliteStore final : public Store {
 public:
  // Opens or creates the database at `path` and applies migrations.
  static Result<std::unique_ptr<SqliteStore>> Open(const std::string& path, StoreOptions options);
  ~SqliteStore() override;

  Result<CreatedTask> CreateTask(const NewTask& task) override;
  Result<Task> GetTask(const std::string& task_id) override;
  Result<std::vector<Task>> ListTasks(const std::string& status, int limit) override;
  Status AddTaskStats(const std::string& task_id, const TaskStatsDelta& delta) override;
  Result<Comment> AddComment(const Comment& comment) override;
  Result<std::vector<Comment>> ListComments(const std::string& task_id) override;

  Result<CommentResult> PostComment(const std::string& task_id, const std::string& author,
                                    const std::string& body) override;
  Result<std::vector<Comment>> ListUndeliveredComments(const std::string& job_id) override;
  Status AckDeliveredComments(const std::vector<std::string>& comment_ids) override;
  Result<ContinueResult> ContinueTask(const std::string& task_id, const std::string& piece,
                                      const std::string& author, const std::string& note) override;
  Result<std::map<std::string, int64_t>> CountJobsByStatus() override;

  Result<Job> EnqueueJob(const NewJob& job) override;
  Result<Job> GetJob(const std::string& job_id) override;
  Result<std::vector<Job>> ListJobs(const std::string& task_id) override;
  Result<std::vector<Job>> ListChildJobs(const std::string& parent_job_id) override;
  Result<std::optional<Job>> ClaimNextJob(const ClaimFilter& filter, int64_t lease_ms) override;
  Result<HeartbeatReply> Heartbeat(const Lease& lease, int64_t lease_ms) override;
  Status FinishJob(const Lease& lease, const JobOutcome& outcome) override;
  Result<std::optional<Job>> FinishAndClaimNext(const Lease& lease, const JobOutcome& outcome,
                                                const ClaimFilter& filter,
                                                int64_t lease_ms) override;
  Result<std::vector<Job>> RecoverExpiredLeases(
      const std::function<JobOutcome(const Job&)>& decide) override;
  Result<CancelReport> RequestCancel(const std::string& job_id) override;
  Result<bool> IsCancelRequested(const std::string& job_id) override;
  Status ResumeParkedJob(const std::string& job_id) override;
  Result<std::optional<TimeMs>> NextRetryDue() override;

  Result<Request> CreateRequest(const Request& request) override;
  Result<Request> GetRequest(const std::string& request_id) override;
  Result<std::vector<Request>> ListRequests(const std::string& task_id,
                                            const std::string& kind) override;
  Result<Request> DecideRequest(const std::string& request_id, const std::string& decision,
                                const std::string& scope, const std::string& decided_by) override;
  Result<Grant> AddGrant(const Grant& grant) override;
  Result<std::vector<Grant>> ListGrants(const std::string& task_id) override;
  Result<std::optional<Grant>> ConsumeGrant(const std::string& task_id,
                                            const std::string& tool_name,
                                            const std::string& args_hash) override;

  Result<Event> AppendEvent(const Event& event) override;
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
  Result<ApiMetrics> ComputeApiMetrics() override;

  // Schema version after migrations (for tests and `maestro version`).
  Result<int> SchemaVersion();

  // State shared by the statements of one write transaction.
  struct Tx {
    sqlite::SqliteConn& conn;
    TimeMs now;
    bool job_available = false;          // fire on_job_available after commit
    std::vector<CommittedEvent> events;  // written by this body (on_commit)
  };

 private:
  SqliteStore(std::string path, StoreOptions options);

  class PooledConn;
  Result<PooledConn> Acquire();
  void Release(std::unique_ptr<sqlite::SqliteConn> conn);

  // Runs `body` atomically (all or nothing) and durably: it returns after
  // the commit that contains it. Concurrent calls may share one commit.
  Status Write(const std::function<Status(Tx&)>& body);
  struct PendingWrite {
    const std::function<Status(Tx&)>* body = nullptr;
    Status result;
    bool job_available = false;
    std::vector<CommittedEvent> events;
    bool done = false;  // GUARDED_BY(queue_mu_)
  };
  void RunBatch(const std::vector<PendingWrite*>& batch);
  // Runs `body` on a pooled connection outside any explicit transaction.
  Status Read(const std::function<Status(sqlite::SqliteConn&)>& body);

  // Job state machine pieces shared by several methods (sqlite_jobs.cc).
  Status ApplyOutcome(Tx& tx, const Job& job, const JobOutcome& outcome);
  Status AfterTransition(Tx& tx, const std::string& job_id, JobStatus from);
  Status CancelOne(Tx& tx, const Job& job, CancelReport& report);
  Result<Job> InsertJob(Tx& tx, const NewJob& job);
  Status ResumeIfWaitingHuman(Tx& tx, const std::string& job_id);
  // The comment gate at a job's end (sqlite_gates.cc): how many user
  // comments of `job_id` are undelivered, and handing them on to the job's
  // queued continuation or a new follow-up job.
  Result<int64_t> CountUndelivered(Tx& tx, const std::string& job_id);
  // The first job of the task created with `spawn_key`, if any.
  Result<std::optional<Job>> FindSpawned(Tx& tx, const std::string& spawn_key);
  Status HandOnUndelivered(Tx& tx, const Job& job);
  Status MoveUndelivered(Tx& tx, const Job& from, const std::string& to_job_id);
  Result<std::optional<Job>> ClaimInTx(Tx& tx, const ClaimFilter& filter, int64_t lease_ms);

  const std::string path_;
  StoreOptions options_;
  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::vector<PendingWrite*> queue_;            // GUARDED_BY(queue_mu_)
  bool leader_active_ = false;                  // GUARDED_BY(queue_mu_)
  std::mutex write_mu_;                         // held by the leader while it uses writer_
  std::unique_ptr<sqlite::SqliteConn> writer_;  // GUARDED_BY(write_mu_)
  std::mutex pool_mu_;
  std::vector<std::unique_ptr<sqlite::SqliteConn>> pool_;  // GUARDED_BY(pool_mu_)
};

}  // namespace maestro
