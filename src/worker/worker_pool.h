// WorkerPool: N threads that claim jobs from the Store and run them through a
// JobExecutor (Worker.processNext / executeJob / handlePieceResult of seed 000).
//
// Flow of one job: claim (atomic, with lease + fencing token) → Execute on
// the claiming thread while the pool's heartbeat thread renews the lease and
// relays cancel requests → report the outcome (an error return as a
// failure, retryable or not; a cancel or a release from the cancel reason)
// → FinishJob with the lease, where the store's policy decides the committed
// status (retry or failed included: StoreOptions::retry) → read the job as
// committed → JobExecutor::OnCommitted. A parked job simply ends its Execute
// call: no thread waits for a person or for subtasks.
//
// Wake-up: Notify() (wired to StoreOptions::on_job_available) wakes one idle
// thread at once; idle threads also poll every poll_interval_ms, or sooner
// when a retry backoff ends, which covers jobs enqueued by other processes.
//
// Shutdown: stop claiming, let running jobs finish for `shutdown_grace_ms`,
// then cancel them with reason kShutdown and release their leases (back to
// queued without spending an attempt) so another worker takes them.
//
// Thread safety: Start/Shutdown from one controlling thread; Notify from any.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/cancel.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/mutex.h"
#include "store/job_executor.h"
#include "store/store.h"

namespace maestro {

struct WorkerPoolOptions {
  int threads = 2;
  std::string worker_id_prefix;  // "host:pid"; thread index is appended
  std::string hostname;
  int64_t process_id = 0;
  std::vector<std::string> models;    // claim filter (empty: any)
  std::vector<std::string> profiles;  // claim filter (empty: any)
  JobsConfig jobs;  // lease, heartbeat, poll, grace (jobs.retry is the store's: StoreOptions)
  Clock* clock = SystemClock::Default();
};

struct WorkerPoolStats {
  int64_t claimed = 0;
  int64_t succeeded = 0;
  int64_t parked = 0;
  int64_t retried = 0;
  int64_t failed = 0;
  int64_t cancelled = 0;
  int64_t released = 0;
  int64_t lease_lost = 0;
};

class WorkerPool {
 public:
  WorkerPool(Store& store, JobExecutor& executor, WorkerPoolOptions options);
  ~WorkerPool();  // calls Shutdown() if still running
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void Start();
  // Blocks until all worker threads have exited (see the header comment).
  void Shutdown();
  // A job became claimable.
  void Notify() EXCLUDES(mu_);
  // Fires the cancel token of `job_id` if it runs in this process (the
  // in-process fast path; other processes see the flag at their heartbeat).
  bool CancelRunning(const std::string& job_id);

  WorkerPoolStats stats() const;
  int running_jobs() const;
  // Whether this pool still has `job_id`: running it, or finishing it (the
  // executor's post-commit hook, which moves its context directory). Tests
  // wait on it before they look at what the job left on disk.
  bool Holds(const std::string& job_id) const;

 private:
  struct Running {
    Lease lease;
    std::shared_ptr<CancelToken> cancel;
    bool finished = false;  // its end is committed: no heartbeat, hooks running
  };

  void WorkerLoop(int index);
  // Runs one claimed job and records its outcome; returns the next job when
  // it was claimed in the same transaction as this one's finish.
  std::optional<Job> RunJob(const std::string& worker_id, const ClaimFilter& filter,
                            const Job& job);
  // What the worker finishes the job with: Execute's outcome, an error
  // return as RetryPolicy::FailureOf reports it, a cancel or a release.
  static JobOutcome Report(const Result<JobOutcome>& result, CancelToken& cancel);
  // After a recorded finish: the stats by the committed status, then the
  // executor's hooks.
  void AfterCommit(const Job& job, const Result<JobOutcome>& result, const JobOutcome& reported);
  void HeartbeatLoop();
  void WaitForWork(uint64_t seen_generation);
  void Count(const JobOutcome& reported, const Job& committed) REQUIRES(mu_);

  Store& store_;
  JobExecutor& executor_;
  const WorkerPoolOptions options_;

  std::atomic<bool> stopping_{false};
  bool started_ = false;
  std::vector<std::thread> threads_;
  std::thread heartbeat_thread_;

  mutable Mutex mu_;
  CondVar wake_cv_;                          // idle workers wait here
  CondVar heartbeat_cv_;                     // heartbeat thread sleeps here
  uint64_t generation_ GUARDED_BY(mu_) = 0;  // bumped by Notify
  bool heartbeat_stop_ GUARDED_BY(mu_) = false;
  CondVar exit_cv_;  // a worker thread left its loop
  int active_workers_ GUARDED_BY(mu_) = 0;
  bool releasing_ GUARDED_BY(mu_) = false;                  // grace over, cancel all
  std::map<std::string, Running> running_ GUARDED_BY(mu_);  // by job id
  WorkerPoolStats stats_ GUARDED_BY(mu_);
};

}  // namespace maestro
