// JobRecords: the jobs role of the Store (store/store.h) beside the queue
// (store/job_queue.h) — reading jobs, and steering them from outside the
// worker: cancel a job tree, resume a parked job.
//
// Who uses it: the API shows, lists, cancels and resumes jobs (api/); the
// engine reads a job, its task's jobs and its children (engine/); `maestro
// run` follows and cancels (cli/run.cc).
//
// Thread safety: every method may be called from any thread concurrently.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "store/types.h"

namespace maestro {

class JobRecords {
 public:
  virtual ~JobRecords() = default;

  virtual Result<Job> GetJob(const std::string& job_id) = 0;
  virtual Result<std::vector<Job>> ListJobs(const std::string& task_id) = 0;
  virtual Result<std::vector<Job>> ListChildJobs(const std::string& parent_job_id) = 0;

  // Cancels `job_id` and all its descendants: queued/retry/parked jobs at
  // once, running ones by setting cancel_requested (they stop cooperatively).
  virtual Result<CancelReport> RequestCancel(const std::string& job_id) = 0;
  virtual Result<bool> IsCancelRequested(const std::string& job_id) = 0;

  // waiting_human / waiting_subtasks -> queued (an answer or decision came).
  // kConflict when the job is not parked.
  virtual Status ResumeParkedJob(const std::string& job_id) = 0;
};

}  // namespace maestro
