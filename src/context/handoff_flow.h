// The handoff flow of seed 004, as library functions the agent loop calls.
//
//   before each LLM call:  HandoffMonitor::OnIteration(prompt estimate)
//     kRequestHandoff  -> append HandoffRequestMessage() as a user message
//                         (the engine decides, deterministically, at
//                         handoff_threshold — below compression_threshold)
//     kWriteFallback   -> the agent did not call WriteHandoff within
//                         handoff_max_wait_iterations: FallbackHandoff()
//   the agent calls WriteHandoff(args) -> ParseHandoff (strict schema);
//     a rejected document is returned to the agent as the tool's error
//   CompleteHandoff(): check files_changed against git status and/or the
//     tool ledger, save handoffs/NNNN.yaml (atomic), add it as a task comment
//     (kind "handoff"), record events, and queue the continuation job; the
//     engine then ends the session (HandoffJobOutcome) and EndSession()s the
//     context with the continuation's status (queued -> paused/).
//   the continuation job starts: StartContinuation() begins a fresh thread =
//     the static system message + ONE user message with the handoff facts and
//     the original instruction (the spec) — nothing of the old reasoning.
//
// Handoff files stay in handoffs/ after the task completes (archive).
//
// Thread safety: HandoffMonitor belongs to one job's loop; the functions
// write the task's files and must run on the job's thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "context/context_config.h"
#include "context/handoff_document.h"
#include "context/message_store.h"
#include "context/record_stores.h"
#include "store/types.h"

namespace maestro::context {

class TaskContext;

class HandoffMonitor {
 public:
  enum class Action { kNone, kRequestHandoff, kWriteFallback };
  explicit HandoffMonitor(const ContextConfig& config);

  int64_t ThresholdTokens() const { return threshold_; }
  // Called once per loop iteration, before the LLM call.
  Action OnIteration(int64_t prompt_estimate);
  bool requested() const { return requested_; }

 private:
  int64_t threshold_;
  int max_wait_;
  bool requested_ = false;
  bool fallback_due_ = false;
  int waited_ = 0;
};

// The instruction appended to the conversation when the threshold is crossed.
std::string HandoffRequestMessage();

// Minimal facts from the tool ledger when the agent wrote none: the files
// successfully written (files_changed), failed calls (blockers), the counts.
Result<HandoffDocument> FallbackHandoff(const std::string& spec_ref, const ToolStore& tools,
                                        const std::string& job_id);

// Saves `yaml` as the next handoffs/NNNN.yaml (0001, 0002, ...) atomically;
// returns its path.
Result<std::string> SaveHandoffFile(const std::string& handoffs_dir, const std::string& yaml);
// The newest saved handoff, or nullopt when there is none.
Result<std::optional<HandoffDocument>> LoadLatestHandoff(const std::string& handoffs_dir);

// The user message of a continuation: handoff facts, then the instruction.
std::string ContinuationUserMessage(const std::string& instruction, const HandoffDocument& doc);

// Seeds the continuation's conversation in `messages` (see the header
// comment): the system message, the facts + instruction, then `after` (e.g.
// the guidance of the movement it resumes in); the transcript is rewritten to
// it, so a later park or retry replays from the handoff. `movement`: the
// movement the thread starts in ("" = not tracked).
Status StartContinuation(MessageStore& messages, const std::string& job_id,
                         const Json& system_message, const std::string& instruction,
                         const HandoffDocument& doc, const std::vector<Json>& after = {},
                         const std::string& movement = {});

struct HandoffInputs {
  Job job;                // the running job (its piece/model carry over)
  std::string workspace;  // "" = check against the tool ledger only
  bool fallback = false;  // written by the engine, not the agent
  // The movement the session was in: the continuation starts there.
  std::string resume_movement;
};

struct HandoffResult {
  std::string path;  // handoffs/NNNN.yaml
  FilesCheck check;
  Comment comment;
  Job continuation;  // the queued continuation job
};

Result<HandoffResult> CompleteHandoff(TaskContext& ctx, const HandoffDocument& doc,
                                      const HandoffInputs& in);

// How the engine ends the job that handed off.
JobOutcome HandoffJobOutcome(const HandoffResult& r);

}  // namespace maestro::context
