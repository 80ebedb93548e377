#include "engine/job_prompt.h"

#include <fmt/format.h>

#include <filesystem>

#include "engine/comment_delivery.h"

namespace maestro::engine {
namespace {

bool HasTranscript(const std::string& path) {
  std::error_code ec;
  return std::filesystem::file_size(path, ec) > 0 && !ec;
}

// Whether the previous job ended by handing off to `job` (seed 004): its
// result is HandoffJobOutcome's "handoff NNNN.yaml; continued in job <id>".
bool HandedOffTo(Store& store, const Job& job) {
  auto prev = store.GetJob(job.continued_from_job_id);
  return prev.ok() && prev->status == JobStatus::kSucceeded &&
         prev->result.rfind("handoff ", 0) == 0 &&
         prev->result.find("continued in job " + job.id) != std::string::npos;
}

// The replaying paths of the same task (a resume, a follow-up, Continue) do not
// repeat the task instruction: the replayed turns already hold it once, and
// a repeat per job would grow every later request by a copy.
std::string ResumeNote(const Job& job, const std::string& movement) {
  if (!movement.empty()) {
    return fmt::format(
        "(The job resumes in movement '{}'. If you asked for a decision, repeat the same call to "
        "get its outcome.)",
        movement);
  }
  return fmt::format("(The job resumes{}: continue where the conversation above stopped.)",
                     job.wait_reason.empty() ? "" : " after " + job.wait_reason);
}

// The path of a job's first run, and its instruction before the comments.
Status PlanFirstRun(Store& store, const Task& task, const Job& job, JobPromptPlan* plan) {
  if (job.continued_from_job_id.empty()) return Status::Ok();  // kNewJob
  MAESTRO_ASSIGN_OR_RETURN(std::vector<Comment> comments, store.ListComments(task.id));
  std::string handoff;
  for (const Comment& c : comments) {
    if (c.job_id == job.id && c.kind == CommentKind::kHandoff) handoff += c.body + "\n";
  }
  if (handoff.empty() && HandedOffTo(store, job)) {
    plan->handoff_continuation = true;  // kNewJob's system message, then the facts
    return Status::Ok();
  }
  if (!handoff.empty()) {
    auto prev = store.GetJob(job.continued_from_job_id);
    bool same = prev.ok() && prev->piece == job.piece;
    plan->path = same ? PromptPath::kSamePieceContinue : PromptPath::kCrossPieceContinue;
    plan->instruction = "## Continue\n" + handoff;
    return Status::Ok();
  }
  plan->path = PromptPath::kFollowUp;
  plan->instruction =
      "## Follow-up\nThe user answered after the previous job (answer any question you asked with "
      "this).";
  return Status::Ok();
}

}  // namespace

Result<JobPromptPlan> PlanJobPrompt(Store& store, const Task& task, const Job& job,
                                    const std::string& transcript_path, bool ran_before,
                                    const std::string& movement) {
  JobPromptPlan plan;
  plan.instruction = task.instruction;
  bool replay = HasTranscript(transcript_path);
  if (ran_before) {
    plan.path = PromptPath::kFollowUp;
    plan.instruction = ResumeNote(job, movement.empty() ? job.resume_movement : movement);
  } else {
    MAESTRO_RETURN_IF_ERROR(PlanFirstRun(store, task, job, &plan));
    // A job with no continued_from on a task that has a conversation (a job
    // enqueued beside the gates) still keeps the context.
    if (plan.path == PromptPath::kNewJob && !plan.handoff_continuation && replay) {
      plan.path = PromptPath::kFollowUp;
    }
  }
  if (!replay) {  // nothing to replay (a fresh data dir): a valid start, with the task
    if (plan.path != PromptPath::kNewJob && !plan.handoff_continuation) {
      plan.instruction = task.instruction + "\n\n" + plan.instruction;
    }
    plan.path = PromptPath::kNewJob;
  }
  MAESTRO_ASSIGN_OR_RETURN(plan.delivered, TakeUndelivered(store, job.id, transcript_path));
  if (!plan.delivered.empty()) {
    plan.instruction += "\n\n## Messages from the user\n";
    for (const Comment& c : plan.delivered) plan.instruction += DeliveredCommentText(c) + "\n";
  }
  return plan;
}

}  // namespace maestro::engine
