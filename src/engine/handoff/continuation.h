// The handoff's continuation (seed 004): how the task goes on after a
// session handed off — the third part of the handoff (trigger.h: when;
// document.h: what).
//
//   CompleteHandoff()   files_changed checked against git status and/or the
//                       tool ledger, handoffs/NNNN.yaml saved (atomic), the
//                       document added as a task comment (kind "handoff"),
//                       events recorded, and the continuation job queued
//                       through Store::EnqueueJob (same piece, resume_movement
//                       = the movement the session was in; it adopts the
//                       handing-off job's children). The engine then ends the
//                       session: the job succeeds with HandoffJobOutcome and
//                       its context follows the continuation (queued ->
//                       paused/).
//   HandedOffTo()       the continuation's first run recognises that it
//                       continues a handoff from the previous job's result.
//   ContinuationUserMessage()
//                       what the continuation's fresh conversation says after
//                       the static system message: the facts, then the
//                       original instruction (the spec) — nothing of the old
//                       reasoning. The prompt path that seeds it is
//                       PromptPath::kHandoffContinuation (prompt/prompt_paths.h).
//
// Thread safety: CompleteHandoff writes the task's files and must run on the
// job's thread; the others are pure or only read the store.
#pragma once

#include <string>

#include "engine/handoff/document.h"
#include "store/store.h"

namespace maestro::context {
class TaskContext;
}

namespace maestro::engine {

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

Result<HandoffResult> CompleteHandoff(context::TaskContext& ctx, const HandoffDocument& doc,
                                      const HandoffInputs& in);

// How the engine ends the job that handed off: succeeded, with the result
// "handoff NNNN.yaml; continued in job <id>".
JobOutcome HandoffJobOutcome(const HandoffResult& r);

// Whether `job`'s previous job (continued_from_job_id) ended by handing off
// to it: its result is HandoffJobOutcome's.
bool HandedOffTo(Store& store, const Job& job);

// The user message of a continuation: handoff facts, then the instruction.
std::string ContinuationUserMessage(const std::string& instruction, const HandoffDocument& doc);

}  // namespace maestro::engine
