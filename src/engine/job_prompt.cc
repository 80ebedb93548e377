#include "engine/job_prompt.h"

#include <filesystem>

#include <fmt/format.h>

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

}  // namespace

Result<JobPromptPlan> PlanJobPrompt(Store& store, const Task& task, const Job& job,
                                    const std::string& transcript_path) {
  JobPromptPlan plan;
  plan.instruction = task.instruction;
  bool replay = HasTranscript(transcript_path);
  if (job.continued_from_job_id.empty()) {
    if (!replay) return plan;  // kNewJob
    plan.path = PromptPath::kFollowUp;
    plan.instruction = fmt::format(
        "{}\n\n(The job resumes{}: continue where the conversation above stopped.)",
        task.instruction, job.wait_reason.empty() ? "" : " after " + job.wait_reason);
    if (!job.resume_movement.empty()) {
      plan.instruction = fmt::format(
          "{}\n\n(The job resumes in movement '{}'. If you asked for a decision, repeat the same "
          "call to get its outcome.)",
          task.instruction, job.resume_movement);
    }
    return plan;
  }
  MAESTRO_ASSIGN_OR_RETURN(std::vector<Comment> comments, store.ListComments(task.id));
  std::string handoff, replies;
  for (const Comment& c : comments) {
    if (c.job_id != job.id) continue;
    if (c.kind == "handoff") handoff += c.body + "\n";
    if (c.kind == "reply" || c.kind == "answer" || c.kind == "interjection") {
      replies += fmt::format("{}: {}\n", c.author, c.body);
    }
  }
  if (handoff.empty() && job.attempt <= 1 && HandedOffTo(store, job)) {
    plan.handoff_continuation = true;  // kNewJob's system message, then the facts
    return plan;
  }
  if (!handoff.empty()) {
    auto prev = store.GetJob(job.continued_from_job_id);
    bool same = prev.ok() && prev->piece == job.piece;
    plan.path = same ? PromptPath::kSamePieceContinue : PromptPath::kCrossPieceContinue;
    plan.instruction = fmt::format("{}\n\n## Continue\n{}", task.instruction, handoff);
  } else {
    plan.path = PromptPath::kFollowUp;
    plan.instruction = fmt::format(
        "{}\n\n## Follow-up\nThe user answered after the previous job (answer any question you "
        "asked with this):\n{}",
        task.instruction, replies.empty() ? "(no text)\n" : replies);
  }
  if (!replay && plan.path != PromptPath::kNewJob) {
    // No transcript to replay (a fresh data dir): still a valid start.
    plan.path = PromptPath::kNewJob;
  }
  return plan;
}

}  // namespace maestro::engine
