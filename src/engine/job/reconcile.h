// Ledger reconciliation at job start (issue 6 item 7; DESIGN.md §7 crash
// safety): what the executor does with tool calls a crash left open in the
// task's tools.jsonl before it lets the agent run again.
//
// Where it sits: PieceExecutor::Run opens the task's ToolLedger, then calls
// ReconcileAtJobStart before seeding the conversation.
//   - calls of THIS job (an earlier attempt: the worker died, the lease
//     expired, the job was retried) that started and never finished:
//       read-only   closed as `reconciled` without running them: a read is
//                   safe to repeat, and the replayed conversation drops the
//                   unanswered call, so the agent simply asks again;
//       side effect NOT repeated: the job parks (waiting_human, wait_reason
//                   `reconcile`) with ReconcileComment as a question comment
//                   naming each call, its arguments and start time.
//   - calls of the job this one continues (continued_from_job_id) still open
//     when a person's comment created this follow-up job: that comment is
//     the person's settlement; each call is closed as `reconciled` with a
//     note quoting it, and the follow-up's instruction carries the comment.
// The resume movement of the park is the movement of the crashed attempt's
// last LLM call (its `llm.call` event), else the job's resume_movement.
//
// Thread safety: runs on the job's thread; the ledger is thread-safe.
#pragma once

#include <optional>
#include <string>

#include "context/ledger.h"
#include "context/message_store.h"
#include "engine/loop/movement_result.h"
#include "store/store.h"

namespace maestro::engine {

struct ReconcileReport {
  int closed_read_only = 0;            // read-only calls of this job closed
  int settled = 0;                     // side-effecting calls of the continued job closed
  std::optional<PieceRunResult> park;  // set: the job must park for a person
};

Result<ReconcileReport> ReconcileAtJobStart(Store& store, tools::ToolLedger& ledger,
                                            const std::string& context_dir, const Job& job);

// A run of `job` before this one (its conversation is the newest thread of
// `messages`) may have stopped after a call took effect but before its result
// reached the conversation. Each call of the last assistant batch without a
// result is answered now, never run again: from the ledger when it shows the
// call `finished`/`error`, or, for a SpinOffTask without a space, with the
// child keyed by the call (created now if the crash came before its commit —
// the model asked for it once). Other unanswered calls stay as they are (the
// replay drops them and the agent asks again). Returns how many were answered.
Result<int> AnswerSettledCalls(Store& store, context::MessageStore& messages,
                               const std::string& context_dir, const Job& job,
                               const std::string& piece);

}  // namespace maestro::engine
