// SqliteStore: the embedded Store on one SQLite file in WAL mode.
//
// Connections come from a small pool, so readers run in parallel with the
// writer. Write transactions are BEGIN IMMEDIATE and, inside one process,
// are serialized by `write_mu_` before touching SQLite: waiting on a mutex
// wakes at once, whereas SQLite's busy handler sleeps. Across processes
// (`maestro worker` sharing the file) SQLite's own lock and busy_timeout
// serialize them.
//
// Thread safety: all methods are safe to call concurrently.
#pragma once

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

  Result<Job> EnqueueJob(const NewJob& job) override;
  Result<Job> GetJob(const std::string& job_id) override;
  Result<std::vector<Job>> ListJobs(const std::string& task_id) override;
  Result<std::vector<Job>> ListChildJobs(const std::string& parent_job_id) override;
  Result<std::optional<Job>> ClaimNextJob(const ClaimFilter& filter, int64_t lease_ms) override;
  Result<HeartbeatReply> Heartbeat(const Lease& lease, int64_t lease_ms) override;
  Status FinishJob(const Lease& lease, const JobOutcome& outcome) override;
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

  // Schema version after migrations (for tests and `maestro version`).
  Result<int> SchemaVersion();

  // State shared by the statements of one write transaction.
  struct Tx {
    sqlite::SqliteConn& conn;
    TimeMs now;
    bool job_available = false;  // fire on_job_available after commit
  };

 private:
  SqliteStore(std::string path, StoreOptions options);

  class PooledConn;
  Result<PooledConn> Acquire();
  void Release(std::unique_ptr<sqlite::SqliteConn> conn);

  // Runs `body` in one IMMEDIATE transaction; commits when it returns OK.
  Status Write(const std::function<Status(Tx&)>& body);
  // Runs `body` on a pooled connection outside any explicit transaction.
  Status Read(const std::function<Status(sqlite::SqliteConn&)>& body);

  // Job state machine pieces shared by several methods (sqlite_jobs.cc).
  Status ApplyOutcome(Tx& tx, const Job& job, const JobOutcome& outcome);
  Status AfterTransition(Tx& tx, const std::string& job_id, JobStatus from);
  Status CancelOne(Tx& tx, const Job& job, CancelReport& report);
  Result<Job> InsertJob(Tx& tx, const NewJob& job);

  const std::string path_;
  StoreOptions options_;
  std::mutex write_mu_;  // serializes write transactions within the process
  std::mutex pool_mu_;
  std::vector<std::unique_ptr<sqlite::SqliteConn>> pool_;  // GUARDED_BY(pool_mu_)
};

}  // namespace maestro
