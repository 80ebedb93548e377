#include "engine/prompt/prompt_paths.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>

#include "engine/handoff/continuation.h"
#include "engine/loop/comment_delivery.h"
#include "engine/loop/subtasks.h"
#include "engine/prompt/role_alternation.h"

namespace maestro::engine {
namespace {

// --- the planner -----------------------------------------------------------

bool HasTranscript(const std::string& path) {
  std::error_code ec;
  return std::filesystem::file_size(path, ec) > 0 && !ec;
}

bool Replays(PromptPath p) {
  return p == PromptPath::kSamePieceContinue || p == PromptPath::kCrossPieceContinue ||
         p == PromptPath::kFollowUp;
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

// The note a follow-up's instruction starts with; it quotes the question
// the previous job asked (an ASK), which the user's answer below replies to.
std::string FollowUpNote(const std::string& question) {
  if (question.empty()) {
    return "## Follow-up\nThe user answered after the previous job (answer any question you "
           "asked with this).";
  }
  std::string quoted;
  for (size_t from = 0; from <= question.size();) {
    size_t nl = question.find('\n', from);
    if (nl == std::string::npos) nl = question.size();
    quoted += "> " + question.substr(from, nl - from) + "\n";
    from = nl + 1;
  }
  return "## Follow-up\nYou asked the user:\n" + quoted +
         "The user answered below: go on with the task from there.";
}

// The newest handoff of the task, for the continuation `job` a handoff
// queued. A handoff that cannot be read leaves a new job's start (the task
// instruction alone), never a failed job.
std::optional<HandoffDocument> HandoffToContinue(Env& env, const Job& job,
                                                 const std::string& handoffs_dir) {
  if (handoffs_dir.empty()) return std::nullopt;
  auto doc = LoadLatestHandoff(env, handoffs_dir);
  if (doc.ok() && doc->has_value()) return std::move(doc).value();
  spdlog::warn("job {}: handoff continuation without its handoff in {}: {}", job.id, handoffs_dir,
               doc.ok() ? "none saved" : doc.status().ToString());
  return std::nullopt;
}

// The path of a job's first run, and its instruction before the comments.
// Sets `*handed_off` when the previous job handed off to this one.
Status PlanFirstRun(Store& store, const Task& task, const Job& job, const JobPromptFiles& files,
                    JobPromptPlan* plan, bool* handed_off) {
  if (job.continued_from_job_id.empty()) return Status::Ok();  // kNewJob
  MAESTRO_ASSIGN_OR_RETURN(std::vector<Comment> comments, store.ListComments(task.id));
  std::string handoff;
  for (const Comment& c : comments) {
    if (c.job_id == job.id && c.kind == CommentKind::kHandoff) handoff += c.body + "\n";
  }
  if (handoff.empty() && HandedOffTo(store, job)) {
    *handed_off = true;
    plan->handoff = HandoffToContinue(*files.env, job, files.handoffs_dir);
    if (plan->handoff) plan->path = PromptPath::kHandoffContinuation;
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
  const Comment* question = nullptr;  // the newest the previous job asked
  for (const Comment& c : comments) {
    if (c.job_id == job.continued_from_job_id && c.kind == CommentKind::kQuestion) question = &c;
  }
  if (question) {
    plan->instruction = FollowUpNote(question->body);
    plan->quoted.push_back(*question);
  } else {
    plan->instruction = FollowUpNote("");
  }
  return Status::Ok();
}

// Seed 000's subtask resume notice: the ended children's results — once: a
// later resume replays the run that carried it.
void AddSubtaskNotice(Store& store, const Job& job, const std::string& transcript, bool ran_before,
                      std::string* instruction) {
  auto kids = SummarizeSubtasks(store, job.id);
  if (!kids.ok() || kids->text.empty()) return;
  std::string notice = "## Subtasks\nThe subtasks of this job have ended:\n" + kids->text;
  if (!ran_before || !ConversationHolds(transcript, notice)) *instruction += "\n\n" + notice;
}

// --- the paths ---------------------------------------------------------------

// The one final user message of a start path; the movement's guidance only
// when the run starts elsewhere than the system message's movement.
Json FinalUserMessage(const PromptInputs& in, bool replayed) {
  const Piece& piece = *in.piece;
  std::string start = in.start_movement.empty() ? piece.initial_movement : in.start_movement;
  // The system message has the initial movement's guidance; the replayed
  // conversation may end in another movement's (a Continue after `review`).
  const bool elsewhere =
      start != piece.initial_movement ||
      (replayed && !in.conversation_movement.empty() && in.conversation_movement != start);
  std::string extra = elsewhere ? MovementGuidanceText(piece, start) : std::string();
  return BuildFinalUserMessage(in.dynamic, !replayed, extra, in.task_instruction);
}

Json SystemMessage(const PromptInputs& in) {
  return BuildSystemMessage(in.preamble, *in.tools, *in.piece, in.piece->initial_movement);
}

SeededConversation SeedNewJob(const PromptInputs& in) {
  SeededConversation out;
  out.messages = {SystemMessage(in), FinalUserMessage(in, false)};
  return out;
}

// The replaying paths: system, the transcript's turns, the final user message.
Result<SeededConversation> SeedWithReplay(const PromptInputs& in, const std::string& transcript,
                                          bool keep_transitions) {
  SeededConversation out;
  out.messages.push_back(SystemMessage(in));
  ReplayOptions ro;
  ro.keep_transitions_in_last_thread = keep_transitions;
  MAESTRO_ASSIGN_OR_RETURN(ReplayResult r, ReplayTranscriptFile(transcript, ro));
  out.replay = r.stats;
  out.replayed_turns = static_cast<int>(r.messages.size());
  for (auto& m : r.messages) out.messages.push_back(std::move(m));
  out.messages.push_back(FinalUserMessage(in, out.replayed_turns > 0));
  return out;
}

Result<SeededConversation> SeedSamePieceContinue(const PromptInputs& in, const std::string& t) {
  return SeedWithReplay(in, t, /*keep_transitions=*/true);
}

Result<SeededConversation> SeedCrossPieceContinue(const PromptInputs& in, const std::string& t) {
  return SeedWithReplay(in, t, /*keep_transitions=*/false);
}

Result<SeededConversation> SeedFollowUp(const PromptInputs& in, const std::string& t) {
  return SeedWithReplay(in, t, /*keep_transitions=*/true);
}

// The system message (byte-identical to the previous session's, so the
// server's cached prefix survives), the dynamic context (date, mission, the
// workspace's files and the console: the last commands the previous
// session ran, which it cannot replay) + the facts + the instruction, then
// the start movement's guidance when it is not the initial one (as a
// transition would append it).
SeededConversation SeedHandoffContinuation(const PromptInputs& in, const HandoffDocument& doc) {
  const Piece& piece = *in.piece;
  SeededConversation out;
  std::string text = DynamicContextText(in.dynamic, /*include_handoff=*/false);
  if (!text.empty()) text = "# Context\n" + text + "\n\n";
  out.messages = {SystemMessage(in),
                  UserMessage(text + ContinuationUserMessage(in.task_instruction, doc))};
  if (!in.start_movement.empty() && in.start_movement != piece.initial_movement) {
    out.messages.push_back(TransitionGuidanceMessage(piece, in.start_movement));
  }
  return out;
}

}  // namespace

std::string_view PromptPathName(PromptPath path) {
  switch (path) {
    case PromptPath::kNewJob:
      return "new_job";
    case PromptPath::kSamePieceContinue:
      return "same_piece_continue";
    case PromptPath::kCrossPieceContinue:
      return "cross_piece_continue";
    case PromptPath::kFollowUp:
      return "follow_up";
    case PromptPath::kHandoffContinuation:
      return "handoff_continuation";
  }
  return "?";
}

Result<JobPromptPlan> PlanJobPrompt(Store& store, const Task& task, const Job& job,
                                    const JobPromptFiles& files, bool ran_before,
                                    const std::string& movement) {
  JobPromptPlan plan;
  plan.instruction = task.instruction;
  bool replay = HasTranscript(files.transcript_path);
  bool handed_off = false;
  if (ran_before) {
    plan.path = PromptPath::kFollowUp;
    plan.instruction = ResumeNote(job, movement.empty() ? job.resume_movement : movement);
  } else {
    MAESTRO_RETURN_IF_ERROR(PlanFirstRun(store, task, job, files, &plan, &handed_off));
    // A job with no continued_from on a task that has a conversation (a job
    // enqueued beside the gates) still keeps the context; a continuation
    // whose handoff is missing starts fresh instead of replaying the session
    // that overflowed.
    if (plan.path == PromptPath::kNewJob && !handed_off && replay) {
      plan.path = PromptPath::kFollowUp;
    }
  }
  if (!replay && Replays(plan.path)) {  // nothing to replay (a fresh data dir): start with the task
    plan.instruction = task.instruction + "\n\n" + plan.instruction;
    plan.path = PromptPath::kNewJob;
  }
  MAESTRO_ASSIGN_OR_RETURN(plan.delivered, TakeUndelivered(store, job.id, files.transcript_path));
  if (!plan.delivered.empty()) {
    plan.instruction += "\n\n## Messages from the user\n";
    for (const Comment& c : plan.delivered) plan.instruction += DeliveredCommentText(c) + "\n";
  }
  AddSubtaskNotice(store, job, files.transcript_path, ran_before, &plan.instruction);
  return plan;
}

namespace {

Result<SeededConversation> SeedPath(const PromptInputs& in, const JobStart& start) {
  switch (start.path) {
    case PromptPath::kNewJob:
      return SeedNewJob(in);
    case PromptPath::kSamePieceContinue:
      return SeedSamePieceContinue(in, start.transcript_path);
    case PromptPath::kCrossPieceContinue:
      return SeedCrossPieceContinue(in, start.transcript_path);
    case PromptPath::kFollowUp:
      return SeedFollowUp(in, start.transcript_path);
    case PromptPath::kHandoffContinuation:
      return SeedHandoffContinuation(in, *start.handoff);
  }
  return Internal("unknown prompt path");
}

}  // namespace

Result<SeededConversation> SeedConversation(const PromptInputs& in, const JobStart& start) {
  MAESTRO_ASSIGN_OR_RETURN(SeededConversation out, SeedPath(in, start));
  // Roles alternate (role_alternation.h): a replay that ends with a user
  // turn, or the handoff facts before a movement's guidance, are one message.
  out.merged_user_messages = MergeAdjacentUserMessages(out.messages);
  return out;
}

}  // namespace maestro::engine
