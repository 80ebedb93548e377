#include "store/policy.h"

#include <fmt/format.h>

#include <algorithm>

#include "store/retry_policy.h"

namespace maestro::policy {

bool WaitsForDecision(const Job& j) {
  return j.status == JobStatus::kWaitingHuman &&
         (j.wait_reason == "tool_request" || j.wait_reason == "package_request" ||
          j.wait_reason == "spawn_request" || j.wait_reason == "budget_exceeded");
}

CommentGate DecideCommentGate(const std::optional<Job>& newest) {
  if (!newest) return CommentGate::kFollowUp;
  const Job& j = *newest;
  if (WaitsForDecision(j)) return CommentGate::kDecideFirst;
  switch (j.status) {
    case JobStatus::kRunning:
    case JobStatus::kWaitingSubtasks:
      return CommentGate::kInterjection;
    case JobStatus::kQueued:
    case JobStatus::kRetry:
      return CommentGate::kReused;
    case JobStatus::kWaitingHuman:
      return CommentGate::kAnswer;
    default:
      return CommentGate::kFollowUp;
  }
}

CommentKind KindFor(CommentGate gate) {
  switch (gate) {
    case CommentGate::kInterjection:
      return CommentKind::kInterjection;
    case CommentGate::kAnswer:
      return CommentKind::kAnswer;
    default:
      return CommentKind::kReply;
  }
}

CommentOutcome GateOutcome(CommentGate gate) {
  switch (gate) {
    case CommentGate::kInterjection:
      return CommentOutcome::kInterjection;
    case CommentGate::kReused:
      return CommentOutcome::kReused;
    default:
      return CommentOutcome::kFollowUp;
  }
}

NewJob FollowUpOf(const Job& job) {
  NewJob next;
  next.task_id = job.task_id;
  next.piece = job.piece;
  next.model = job.model;
  next.profile = job.profile;
  next.continued_from_job_id = job.id;
  next.resume_movement = job.resume_movement;
  next.ask_count = job.ask_count;
  next.priority = job.priority;
  return next;
}

Status CheckContinue(const std::string& task_id, const std::optional<Job>& newest) {
  if (!newest) return Conflict("task " + task_id + " has no job to continue");
  if (!IsTerminal(newest->status)) {
    return Conflict(fmt::format("job {} is {}; only a finished task can be continued", newest->id,
                                JobStatusName(newest->status)));
  }
  return Status::Ok();
}

NewJob ContinuationOf(const Job& prev, const std::string& piece) {
  NewJob next;
  next.task_id = prev.task_id;
  next.piece = piece.empty() ? prev.piece : piece;
  next.model = prev.model;
  next.profile = prev.profile;
  next.continued_from_job_id = prev.id;
  next.priority = prev.priority;
  return next;
}

bool NeedsUndelivered(const JobOutcome& o) {
  return o.kind == JobOutcome::Kind::kParked && o.park_status == JobStatus::kWaitingHuman &&
         o.wait_reason == "ask";
}

bool NeedsOpenChildren(const JobOutcome& o) {
  return o.kind == JobOutcome::Kind::kParked && o.park_status == JobStatus::kWaitingSubtasks;
}

Result<Transition> MapOutcome(const Job& job, const JobOutcome& reported, const OutcomeFacts& facts,
                              TimeMs now, const RetryConfig& retry) {
  using Kind = JobOutcome::Kind;
  // A retryable failure: retry or failed, by the attempts the row shows.
  const JobOutcome o = RetryPolicy(retry).Decide(job, reported, now);
  Transition t;
  t.result = job.result;
  t.error_message = job.error_message;
  t.resume_movement = job.resume_movement;
  t.ask_count = job.ask_count;
  t.attempt = job.attempt;
  switch (o.kind) {
    case Kind::kSucceeded:
      t.to = JobStatus::kSucceeded;
      t.result = o.result;
      t.error_message.clear();
      t.finished_at = now;
      break;
    case Kind::kRetry:
      t.to = JobStatus::kRetry;
      t.error_message = o.error_message;
      t.next_retry_at = o.next_retry_at;
      break;
    case Kind::kFailed:
      t.to = JobStatus::kFailed;
      t.error_message = o.error_message;
      t.finished_at = now;
      break;
    case Kind::kCancelled:
      t.to = JobStatus::kCancelled;
      t.error_message = o.error_message.empty() ? "cancelled" : o.error_message;
      t.finished_at = now;
      break;
    case Kind::kReleased:
      t.to = JobStatus::kQueued;
      t.attempt = std::max(0, t.attempt - 1);  // not the job's fault
      break;
    case Kind::kParked:
      if (!IsParked(o.park_status)) return InvalidArgument("park status must be waiting_*");
      t.to = o.park_status;
      t.wait_reason = o.wait_reason;
      t.resume_movement = o.resume_movement;
      if (o.ask_count >= 0) t.ask_count = o.ask_count;
      if (NeedsUndelivered(o) && facts.undelivered_comments > 0) {
        // A comment came while the agent was asking: it answers the ASK.
        t.to = JobStatus::kSucceeded;
        t.wait_reason.clear();
        t.result = kAnsweredResult;
        t.finished_at = now;
      }
      if (NeedsOpenChildren(o) && facts.open_children == 0) {
        // All children already ended: nothing to wait for, resume at once.
        t.to = JobStatus::kQueued;
        t.wait_reason.clear();
      }
      break;
  }
  t.hands_on_comments = t.to == JobStatus::kSucceeded;
  return t;
}

bool ParentWakes(const Job& parent, int64_t open_children) {
  return parent.status == JobStatus::kWaitingSubtasks && open_children == 0;
}

}  // namespace maestro::policy
