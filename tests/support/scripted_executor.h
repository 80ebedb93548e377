// ScriptedExecutor: a JobExecutor for tests and benchmarks that runs no LLM.
// Each job's behaviour is picked by its piece name:
//   "ok"          succeed at once            "fail-transient"  kUnavailable
//   "fail-fatal"  kInvalidArgument            "park-human"      waiting_human (ask)
//   "park-subtasks" waiting_subtasks          "block"  wait until cancelled
//   "flaky:N"     kUnavailable for the first N attempts, then succeed
//   "hold"        wait until Release(), then succeed
//   "park-subtasks-once" waiting_subtasks on the first attempt (it has no
//                 child: the store requeues it), then succeed
// It records the order in which jobs were executed, the jobs the worker
// reported as failed by an error return (OnFailedByError), and each job's
// committed status as the worker handed it to OnCommitted.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "worker/executor.h"

namespace maestro::testing {

class ScriptedExecutor : public JobExecutor {
 public:
  Result<JobOutcome> Execute(const Job& job, const Lease&, CancelToken& cancel) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      executed_.push_back(job.id);
    }
    ++calls_;
    const std::string& p = job.piece;
    if (p == "ok" || p.empty()) return JobOutcome::Succeeded("done " + job.id);
    if (p == "fail-transient") return Unavailable("scripted transient failure");
    if (p == "fail-fatal") return InvalidArgument("scripted fatal failure");
    if (p == "park-human") return JobOutcome::WaitingHuman("ask", "review");
    if (p == "park-subtasks") return JobOutcome::WaitingSubtasks("implement");
    if (p == "park-subtasks-once") {
      if (job.attempt == 1) return JobOutcome::WaitingSubtasks("implement");
      return JobOutcome::Succeeded("resumed");
    }
    if (p == "block") {
      ++blocked_;
      while (!cancel.WaitFor(std::chrono::milliseconds(50))) {
      }
      --blocked_;
      return Status(StatusCode::kCancelled, "stopped");
    }
    if (p == "hold") {
      std::unique_lock<std::mutex> lock(mu_);
      ++holding_;
      released_cv_.wait(lock, [&] { return released_; });
      --holding_;
      return JobOutcome::Succeeded("held " + job.id);
    }
    if (p.rfind("flaky:", 0) == 0) {
      int n = std::stoi(p.substr(6));
      if (job.attempt <= n) return Unavailable("flaky attempt " + std::to_string(job.attempt));
      return JobOutcome::Succeeded("recovered");
    }
    return InvalidArgument("unknown scripted piece " + p);
  }

  void OnFailedByError(const Job& job, const Status& error) override {
    std::lock_guard<std::mutex> lock(mu_);
    failed_by_error_.push_back(job.id + ": " + error.message());
  }

  void OnCommitted(const Job& job, const JobOutcome&, const Job& committed) override {
    std::lock_guard<std::mutex> lock(mu_);
    committed_.push_back(job.id + ": " + std::string(JobStatusName(committed.status)));
  }

  // "<job id>: <committed status>", in the order the worker reported them.
  std::vector<std::string> committed() {
    std::lock_guard<std::mutex> lock(mu_);
    return committed_;
  }

  std::vector<std::string> failed_by_error() {
    std::lock_guard<std::mutex> lock(mu_);
    return failed_by_error_;
  }

  std::vector<std::string> executed() {
    std::lock_guard<std::mutex> lock(mu_);
    return executed_;
  }
  // Lets every "hold" job (running or to come) succeed.
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    released_cv_.notify_all();
  }
  int holding() {
    std::lock_guard<std::mutex> lock(mu_);
    return holding_;
  }
  int calls() const { return calls_; }
  int blocked() const { return blocked_; }

 private:
  std::mutex mu_;
  std::vector<std::string> executed_;
  std::vector<std::string> committed_;
  std::vector<std::string> failed_by_error_;
  std::condition_variable released_cv_;
  bool released_ = false;
  int holding_ = 0;
  std::atomic<int> calls_{0};
  std::atomic<int> blocked_{0};
};

}  // namespace maestro::testing
