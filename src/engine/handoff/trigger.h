// The handoff's trigger (seed 004): when a session's context runs out, its
// facts go into a handoff document (document.h) and the task goes on in a
// fresh session, a continuation job that starts from that document
// (continuation.h). src/engine/handoff/ holds the three parts together.
//
// HandoffMonitor decides, deterministically, when to ask (handoff_threshold,
// below compression_threshold) and when to stop waiting
// (handoff_max_wait_iterations); HandoffStep is its place in the agent loop.
//
// Where HandoffStep sits: one per job, owned by the PieceExecutor, borrowed through
// the job's own LoopState::handoff (a delegate's sub-agent has none); the
// prompt guard (prompt_guard.h) calls it before every LLM call and on
// overflow, the tool-call step calls it for WriteHandoff.
//
//   BeforeCall(estimate)   HandoffMonitor — deterministic, not the
//                          model's judgement (seed 004):
//     over handoff_threshold   -> append HandoffRequestMessage() (a user
//                                 message; the head is never rewritten)
//     no WriteHandoff within handoff_max_wait_iterations
//                              -> the engine writes the fallback document
//                                 from the tool ledger, the movement
//                                 history and git (fallback.h) and the
//                                 session ends
//   OnWriteHandoff(args)   only after the request (an unsolicited call gets
//                          an Error: the model is not the trigger);
//                          ParseHandoff rejects next_steps and any other
//                          field (the error goes back to the agent);
//                          accepted -> the session ends
//   OnOverflow(why)        the prompt does not fit (after dedup/compression)
//                          or the server said so: the engine writes the
//                          fallback document at once — there is no room left
//                          to ask the agent
//
// Ending the session = CompleteHandoff (files_changed checked against
// the ledger and git, handoffs/NNNN.yaml, a `handoff` comment, the
// continuation job queued with resume_movement = this movement) and a
// MovementResult COMPLETE with handed_off = true: the job succeeds with a
// result naming the continuation, which PlanJobPrompt sends down
// PromptPath::kHandoffContinuation (system message + ONE user message: the
// dynamic context — files, console —, the facts and the original instruction;
// nothing of this session's reasoning).
// Impossible (kResourceExhausted / a write error): the task already handed
// off `max_handoffs` times, or the document, the instruction and the dynamic
// context would not fit a fresh session — the session stops asking for one, and the prompt
// guard compresses instead (and aborts with context_overflow only when even
// that does not make the prompt fit).
//
// Thread safety: one job's thread.
#pragma once

#include <optional>
#include <string>

#include "context/context_config.h"
#include "core/json.h"
#include "core/status.h"
#include "engine/handoff/continuation.h"
#include "engine/handoff/document.h"
#include "engine/handoff/fallback.h"
#include "engine/loop/movement_result.h"
#include "store/types.h"

namespace maestro::engine {

struct AgentLoopDeps;

class HandoffMonitor {
 public:
  enum class Action { kNone, kRequestHandoff, kWriteFallback };
  explicit HandoffMonitor(const context::ContextConfig& config);

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

struct HandoffStepOptions {
  context::ContextConfig config;  // thresholds; context_length of the job's model
  Job job;                        // the running job (piece/model/profile/parent carry over)
  std::string workspace;          // files_changed is checked here ("" = ledger only)
  std::string spec_ref;           // spec_ref of an engine-written document
  std::string instruction;        // the task instruction (the continuation's spec)
  int max_handoffs = 8;           // per task: more means the work does not converge
};

class HandoffStep {
 public:
  explicit HandoffStep(HandoffStepOptions options);

  // Before each LLM call. A value: the session ended here (fallback written).
  std::optional<MovementResult> BeforeCall(AgentLoopDeps& deps, const std::string& movement,
                                           int64_t prompt_estimate);
  // The agent has been asked for a handoff and has not written one yet —
  // while true, compression is held back (seed 004). A handoff found
  // impossible (see below) is no longer pending: compression takes over.
  bool requested() const { return monitor_.requested() && !done_ && !impossible_; }
  bool impossible() const { return impossible_; }

  // The WriteHandoff tool. Returns the tool result; sets `settled` when the
  // handoff was written (the movement, and the session, end).
  std::string OnWriteHandoff(AgentLoopDeps& deps, const std::string& movement, const Json& args,
                             std::optional<MovementResult>& settled);

  // The context is exhausted: write the fallback document now.
  Result<MovementResult> OnOverflow(AgentLoopDeps& deps, const std::string& movement,
                                    const std::string& why);

 private:
  Result<MovementResult> HandOff(AgentLoopDeps& deps, const std::string& movement,
                                 const HandoffDocument& doc, bool fallback);
  Status CheckPossible(AgentLoopDeps& deps, const HandoffDocument& doc) const;
  Result<MovementResult> Fallback(AgentLoopDeps& deps, const std::string& movement);

  HandoffStepOptions opt_;
  HandoffMonitor monitor_;
  bool done_ = false;
  bool impossible_ = false;  // CheckPossible said no: this session cannot hand off
};

}  // namespace maestro::engine
