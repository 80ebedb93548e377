// HandoffStep: the seed 004 handoff inside the agent loop — when a session's
// context runs out, its facts go into a handoff document and the task goes on
// in a fresh session (a continuation job) that starts from that document.
//
// Where it sits: one per job, owned by the PieceExecutor, borrowed through
// AgentLoopDeps::handoff; the prompt guard (prompt_guard.h) calls it before
// every LLM call and on overflow, the tool-call step calls it for WriteHandoff.
//
//   BeforeCall(estimate)   context::HandoffMonitor — deterministic, not the
//                          model's judgement (seed 004):
//     over handoff_threshold   -> append HandoffRequestMessage() (a user
//                                 message; the head is never rewritten)
//     no WriteHandoff within handoff_max_wait_iterations
//                              -> the engine writes the fallback document
//                                 from the tool ledger and the session ends
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
// Ending the session = context::CompleteHandoff (files_changed checked against
// the ledger and git, handoffs/NNNN.yaml, a `handoff` comment, the
// continuation job queued with resume_movement = this movement) and a
// MovementResult COMPLETE with handed_off = true: the job succeeds with a
// result naming the continuation, which PlanJobPrompt sends down the
// handoff-continuation path (system message + ONE user message: the facts
// and the original instruction; nothing of this session's reasoning).
// Impossible (kResourceExhausted / a write error): the task already handed
// off `max_handoffs` times, or the document and the instruction alone would
// not fit a fresh session — the session stops asking for one, and the prompt
// guard compresses instead (and aborts with context_overflow only when even
// that does not make the prompt fit).
//
// Thread safety: one job's thread.
#pragma once

#include <optional>
#include <string>

#include "context/context_config.h"
#include "context/handoff_document.h"
#include "context/handoff_flow.h"
#include "core/json.h"
#include "core/status.h"
#include "engine/movement_result.h"
#include "engine/piece.h"
#include "store/types.h"

namespace maestro::context {
class TaskContext;
}

namespace maestro::engine {

struct AgentLoopDeps;

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
                                 const context::HandoffDocument& doc, bool fallback);
  Status CheckPossible(AgentLoopDeps& deps, const context::HandoffDocument& doc) const;
  Result<MovementResult> Fallback(AgentLoopDeps& deps, const std::string& movement);

  HandoffStepOptions opt_;
  context::HandoffMonitor monitor_;
  bool done_ = false;
  bool impossible_ = false;  // CheckPossible said no: this session cannot hand off
};

// The first messages of a handoff continuation (JobPromptPlan::
// handoff_continuation): context::StartContinuation — `system_message` (the
// piece's static system message, byte-identical to the previous session's,
// so the server's cached prefix survives) + ONE user message with the
// newest handoff's facts and `instruction` — then, when the job starts in a
// movement other than the piece's initial one, that movement's guidance as
// a user message (as a transition would append it). kNotFound when the task
// has no saved handoff (the caller seeds a normal conversation instead).
Status SeedHandoffContinuation(context::TaskContext& ctx, const std::string& job_id,
                               const Json& system_message, const std::string& instruction,
                               const Piece& piece, const std::string& start_movement);

}  // namespace maestro::engine
