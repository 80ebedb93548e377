#include "store/types.h"

namespace maestro {

std::string_view JobStatusName(JobStatus s) {
  switch (s) {
    case JobStatus::kQueued:
      return "queued";
    case JobStatus::kRunning:
      return "running";
    case JobStatus::kWaitingHuman:
      return "waiting_human";
    case JobStatus::kWaitingSubtasks:
      return "waiting_subtasks";
    case JobStatus::kRetry:
      return "retry";
    case JobStatus::kSucceeded:
      return "succeeded";
    case JobStatus::kFailed:
      return "failed";
    case JobStatus::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

std::optional<JobStatus> ParseJobStatus(std::string_view s) {
  for (JobStatus st : {JobStatus::kQueued, JobStatus::kRunning, JobStatus::kWaitingHuman,
                       JobStatus::kWaitingSubtasks, JobStatus::kRetry, JobStatus::kSucceeded,
                       JobStatus::kFailed, JobStatus::kCancelled}) {
    if (JobStatusName(st) == s) return st;
  }
  return std::nullopt;
}

bool IsTerminal(JobStatus s) {
  return s == JobStatus::kSucceeded || s == JobStatus::kFailed || s == JobStatus::kCancelled;
}

bool IsParked(JobStatus s) {
  return s == JobStatus::kWaitingHuman || s == JobStatus::kWaitingSubtasks;
}

JobOutcome JobOutcome::Succeeded(std::string result) {
  JobOutcome o;
  o.kind = Kind::kSucceeded;
  o.result = std::move(result);
  return o;
}
JobOutcome JobOutcome::Retry(std::string error, TimeMs at) {
  JobOutcome o;
  o.kind = Kind::kRetry;
  o.error_message = std::move(error);
  o.next_retry_at = at;
  return o;
}
JobOutcome JobOutcome::Failed(std::string error) {
  JobOutcome o;
  o.kind = Kind::kFailed;
  o.error_message = std::move(error);
  return o;
}
JobOutcome JobOutcome::WaitingHuman(std::string reason, std::string resume_movement) {
  JobOutcome o;
  o.kind = Kind::kParked;
  o.park_status = JobStatus::kWaitingHuman;
  o.wait_reason = std::move(reason);
  o.resume_movement = std::move(resume_movement);
  return o;
}
JobOutcome JobOutcome::WaitingSubtasks(std::string resume_movement) {
  JobOutcome o;
  o.kind = Kind::kParked;
  o.park_status = JobStatus::kWaitingSubtasks;
  o.wait_reason = "subtasks";
  o.resume_movement = std::move(resume_movement);
  return o;
}
JobOutcome JobOutcome::Cancelled(std::string why) {
  JobOutcome o;
  o.kind = Kind::kCancelled;
  o.error_message = std::move(why);
  return o;
}
JobOutcome JobOutcome::Released() {
  JobOutcome o;
  o.kind = Kind::kReleased;
  return o;
}

}  // namespace maestro
