#include "worker/worker_pool.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "core/crash_point.h"
#include "store/retry_policy.h"
#include "worker/executor.h"

namespace maestro {

using std::chrono::milliseconds;

Result<JobOutcome> EngineUnavailableExecutor::Execute(const Job& job, const Lease&, CancelToken&) {
  return JobOutcome::Failed(
      fmt::format("piece '{}' cannot run: no LLM server is configured (set MAESTRO_LLM_BASE_URL "
                  "or llm.base_url in maestro.yaml)",
                  job.piece));
}

WorkerPool::WorkerPool(Store& store, JobExecutor& executor, WorkerPoolOptions options)
    : store_(store), executor_(executor), options_(std::move(options)) {}

WorkerPool::~WorkerPool() { Shutdown(); }

void WorkerPool::Start() {
  if (started_) return;
  started_ = true;
  {
    MutexLock lock(&mu_);
    active_workers_ = options_.threads;
  }
  for (int i = 0; i < options_.threads; ++i) {
    threads_.emplace_back([this, i] { WorkerLoop(i); });
  }
  heartbeat_thread_ = std::thread([this] { HeartbeatLoop(); });
}

void WorkerPool::Notify() {
  {
    MutexLock lock(&mu_);
    ++generation_;
  }
  wake_cv_.Signal();
}

void WorkerPool::Shutdown() {
  if (!started_) return;
  stopping_ = true;
  wake_cv_.SignalAll();

  // Let running jobs finish within the grace period; past it, every job still
  // running — or claimed a moment ago and not yet started — is released.
  auto deadline = std::chrono::steady_clock::now() + milliseconds(options_.jobs.shutdown_grace_ms);
  {
    MutexLock lock(&mu_);
    exit_cv_.WaitUntil(&mu_, deadline, [&]() REQUIRES(mu_) { return active_workers_ == 0; });
    if (active_workers_ > 0) {
      spdlog::warn("worker: shutdown grace over; releasing {} running job(s)", running_.size());
      releasing_ = true;
      for (auto& [_, r] : running_) r.cancel->Cancel(CancelToken::Reason::kShutdown);
    }
  }
  for (auto& t : threads_) t.join();
  threads_.clear();
  {
    MutexLock lock(&mu_);
    heartbeat_stop_ = true;
  }
  heartbeat_cv_.SignalAll();
  if (heartbeat_thread_.joinable()) heartbeat_thread_.join();
  {
    MutexLock lock(&mu_);
    heartbeat_stop_ = false;
    releasing_ = false;
  }
  stopping_ = false;
  started_ = false;
}

WorkerPoolStats WorkerPool::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

bool WorkerPool::CancelRunning(const std::string& job_id) {
  MutexLock lock(&mu_);
  auto it = running_.find(job_id);
  if (it == running_.end()) return false;
  it->second.cancel->Cancel(CancelToken::Reason::kUserCancel);
  return true;
}

int WorkerPool::running_jobs() const {
  MutexLock lock(&mu_);
  return static_cast<int>(running_.size());
}

bool WorkerPool::Holds(const std::string& job_id) const {
  MutexLock lock(&mu_);
  return running_.count(job_id) > 0;
}

void WorkerPool::WaitForWork(uint64_t seen_generation) {
  int64_t wait_ms = options_.jobs.poll_interval_ms;
  auto due = store_.NextRetryDue();
  if (due.ok() && *due) {
    wait_ms = std::clamp<int64_t>(**due - options_.clock->NowMs(), 0, wait_ms);
  }
  MutexLock lock(&mu_);
  wake_cv_.WaitFor(&mu_, milliseconds(wait_ms), [&]() REQUIRES(mu_) {
    return stopping_.load() || generation_ != seen_generation;
  });
}

void WorkerPool::WorkerLoop(int index) {
  const std::string worker_id = fmt::format("{}:w{}", options_.worker_id_prefix, index);
  const ClaimFilter filter{worker_id, options_.models, options_.profiles, options_.hostname,
                           options_.process_id};
  std::optional<Job> next;  // claimed together with the previous job's finish
  while (!stopping_ || next) {
    if (!next) {
      uint64_t seen;
      {
        MutexLock lock(&mu_);
        seen = generation_;
      }
      auto claimed = store_.ClaimNextJob(filter, options_.jobs.lease_ms);
      if (!claimed.ok()) {
        spdlog::warn("worker {}: claim failed: {}", worker_id, claimed.status().ToString());
        WaitForWork(seen);
        continue;
      }
      if (!*claimed) {
        WaitForWork(seen);
        continue;
      }
      next = std::move(*claimed);
    }
    // Another job may be waiting too: pass the wake-up on so an idle peer
    // tries while this thread is busy.
    wake_cv_.Signal();
    Job job = std::move(*next);
    next.reset();
    next = RunJob(worker_id, filter, job);
  }
  MutexLock lock(&mu_);
  --active_workers_;
  exit_cv_.SignalAll();
}

std::optional<Job> WorkerPool::RunJob(const std::string& worker_id, const ClaimFilter& filter,
                                      const Job& job) {
  Lease lease{job.id, worker_id, job.fencing_token};
  auto cancel = std::make_shared<CancelToken>();
  {
    MutexLock lock(&mu_);
    running_[job.id] = Running{lease, cancel};
    ++stats_.claimed;
    // Claimed while shutdown was already releasing: hand it straight back.
    if (releasing_) cancel->Cancel(CancelToken::Reason::kShutdown);
  }
  spdlog::debug("worker {}: job={} task={} attempt={} status=running", worker_id, job.id,
                job.task_id, job.attempt);

  Result<JobOutcome> result = InvalidArgument("not run");
  try {
    result = executor_.Execute(job, lease, *cancel);
  } catch (const std::exception& e) {
    // An executor bug must not take the worker down; treat it as transient.
    result = Internal(std::string("executor threw: ") + e.what());
  }

  bool lease_lost = cancel->reason() == CancelToken::Reason::kLeaseLost;
  const JobOutcome outcome = Report(result, *cancel);
  std::optional<Job> next;
  Status st;
  // A busy store (another process held SQLite's write lock past the busy
  // timeout) is transient and the lease is still ours, renewed by the
  // heartbeat: recording the result again beats redoing the job after the
  // lease expires.
  constexpr int kFinishAttempts = 4;
  for (int attempt = 1;; ++attempt) {
    if (lease_lost) {
      st = LeaseLost("lease lost while running");
    } else if (stopping_) {
      st = store_.FinishJob(lease, outcome);
    } else {
      auto fused = store_.FinishAndClaimNext(lease, outcome, filter, options_.jobs.lease_ms);
      st = fused.status();
      if (fused.ok()) next = std::move(fused).value();
    }
    if (st.code() != StatusCode::kUnavailable || attempt == kFinishAttempts) break;
    spdlog::warn("worker {}: job={} result not recorded yet ({}), attempt {} of {}", worker_id,
                 job.id, st.message(), attempt, kFinishAttempts);
    std::this_thread::sleep_for(std::chrono::milliseconds(50 * attempt));
  }
  {
    MutexLock lock(&mu_);
    // This run's entry only: after the commit (or a lost lease) the job may
    // be claimed again by another thread of this pool.
    auto it = running_.find(job.id);
    const bool ours = it != running_.end() && it->second.cancel == cancel;
    if (st.ok()) {
      if (ours) it->second.finished = true;  // the heartbeat leaves it alone from here
    } else {
      if (ours) running_.erase(it);
      if (st.code() == StatusCode::kLeaseLost) ++stats_.lease_lost;
    }
  }
  if (st.code() == StatusCode::kLeaseLost) {
    spdlog::warn("worker {}: job={} result dropped: {}", worker_id, job.id, st.message());
  } else if (!st.ok()) {
    // The lease stays; if the store stays unreachable the sweeper retries it.
    spdlog::error("worker {}: job={} could not record result: {}", worker_id, job.id,
                  st.ToString());
  } else {
    // The job's end is committed, its context directory not moved on yet:
    // a crash here is put right by the start-up reconcile.
    CrashPoint("job.committed");
    AfterCommit(job, result, outcome);
    // Only this run's entry: the job may already run again on another
    // thread (requeued and claimed since the commit).
    MutexLock lock(&mu_);
    if (auto it = running_.find(job.id); it != running_.end() && it->second.cancel == cancel) {
      running_.erase(it);
    }
  }
  return next;
}

void WorkerPool::AfterCommit(const Job& job, const Result<JobOutcome>& result,
                             const JobOutcome& reported) {
  // The store decided the status in the finish; read what it committed (a
  // job resumed or claimed again since shows that, which is what the
  // executor's hook must act on).
  auto committed = store_.GetJob(job.id);
  {
    MutexLock lock(&mu_);
    Count(reported, committed.ok() ? *committed : Job{});
  }
  if (!committed.ok()) {
    spdlog::warn("worker: job={} finished; reading it back failed: {}", job.id,
                 committed.status().ToString());
    return;
  }
  spdlog::debug("worker: job={} finished kind={} committed={}", job.id,
                static_cast<int>(reported.kind), JobStatusName(committed->status));
  if (committed->status == JobStatus::kFailed && !result.ok()) {
    executor_.OnFailedByError(job, result.status());
  }
  executor_.OnCommitted(job, reported, *committed);
}

JobOutcome WorkerPool::Report(const Result<JobOutcome>& result, CancelToken& cancel) {
  auto reason = cancel.reason();
  bool cancelled_run = (result.ok() && result->kind == JobOutcome::Kind::kCancelled) ||
                       (!result.ok() && result.status().code() == StatusCode::kCancelled);
  if (cancelled_run || (!result.ok() && reason != CancelToken::Reason::kNone)) {
    if (reason == CancelToken::Reason::kShutdown) return JobOutcome::Released();
    return JobOutcome::Cancelled(std::string(CancelReasonName(reason)));
  }
  if (!result.ok()) return RetryPolicy::FailureOf(result.status());
  if (result->kind == JobOutcome::Kind::kRetry) {
    // Executors report failures, not retries: a bare retry request is a
    // transient failure, and the store decides whether it is retried.
    return RetryPolicy::FailureOf(Unavailable(result->error_message));
  }
  return *result;
}

void WorkerPool::Count(const JobOutcome& reported, const Job& committed) {
  // A retryable failure counts as what the store made of it.
  JobOutcome o = reported;
  if (o.kind == JobOutcome::Kind::kFailed && o.retryable &&
      committed.status != JobStatus::kFailed) {
    o.kind = JobOutcome::Kind::kRetry;
  }
  switch (o.kind) {
    case JobOutcome::Kind::kSucceeded:
      ++stats_.succeeded;
      break;
    case JobOutcome::Kind::kParked:
      ++stats_.parked;
      break;
    case JobOutcome::Kind::kRetry:
      ++stats_.retried;
      break;
    case JobOutcome::Kind::kFailed:
      ++stats_.failed;
      break;
    case JobOutcome::Kind::kCancelled:
      ++stats_.cancelled;
      break;
    case JobOutcome::Kind::kReleased:
      ++stats_.released;
      break;
  }
}

void WorkerPool::HeartbeatLoop() {
  MutexLock lock(&mu_);
  // Runs until Shutdown() has joined every worker thread: jobs may still be
  // finishing during the grace period and their leases must stay fresh.
  for (;;) {
    heartbeat_cv_.WaitFor(&mu_, milliseconds(options_.jobs.heartbeat_ms),
                          [&]() REQUIRES(mu_) { return heartbeat_stop_; });
    if (heartbeat_stop_) return;
    std::vector<Running> snapshot;
    for (auto& [_, r] : running_) {
      if (!r.finished) snapshot.push_back(r);
    }
    lock.Unlock();
    for (auto& r : snapshot) {
      auto reply = store_.Heartbeat(r.lease, options_.jobs.lease_ms);
      if (!reply.ok()) {
        if (reply.status().code() == StatusCode::kLeaseLost) {
          spdlog::warn("worker: job={} lost its lease; stopping it", r.lease.job_id);
          r.cancel->Cancel(CancelToken::Reason::kLeaseLost);
        } else {
          spdlog::warn("worker: heartbeat job={} failed: {}", r.lease.job_id,
                       reply.status().ToString());
        }
      } else if (reply->cancel_requested) {
        r.cancel->Cancel(CancelToken::Reason::kUserCancel);
      }
    }
    lock.Lock();
  }
}

}  // namespace maestro
