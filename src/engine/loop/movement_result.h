// MovementResult -> PieceRunResult -> JobOutcome: how a movement's end
// becomes the job's state (seed 001 sentinel catalog, seed 000 §2).
//
// Flow: the agent loop ends a movement with a MovementResult whose `next` is
// a movement name (a validated `transition`) or a Sentinel (control and park
// tools, guards, cancel). The piece runner calls mapMovementResult: either the
// walk goes on to another movement, or it is done with a PieceRunResult. The
// executor reports it to the worker as a JobOutcome with ToJobOutcome — what
// happened, never the job's status: the store's policy decides that at the
// finish (policy::MapOutcome). Catalog rows (docs/engine.md has the full table):
//
//   next                         -> status            resume      wait_reason
//   COMPLETE                     -> completed         -           -
//   COMPLETE + pending children  -> waiting_subtasks  current     -
//   ABORT (cancelled)            -> cancelled         -           -
//   ABORT                        -> aborted           -           -
//   ASK (under the ask limit)    -> waiting_human     current     ask
//   ASK (over it)                -> same movement again with a deflection
//                                   notice, MAX_ASK_LIMIT_DEFLECTIONS times,
//                                   then aborted (ask_limit_reached)
//   WAIT_SUBTASKS                -> waiting_subtasks  explicit > default_next > current
//   WAITING_HUMAN_BROWSER        -> waiting_human     current     browser_login | captcha
//   WAITING_HUMAN_TOOL_REQUEST   -> waiting_human     current     tool_request
//   WAITING_HUMAN_PACKAGE_REQUEST-> waiting_human     current     package_request
//   WAITING_HUMAN_SPAWN_REQUEST  -> waiting_human     current     spawn_request
//   WAITING_HUMAN_BUDGET         -> waiting_human     current     budget_exceeded
//   a movement of the piece      -> next movement
//   unset / unknown movement     -> error
//
// Thread safety: pure functions over values.
#pragma once

#include <optional>
#include <string>

#include "core/clock.h"
#include "core/json.h"
#include "engine/piece/piece.h"
#include "engine/piece/sentinel.h"
#include "store/types.h"

namespace maestro::engine {

// Well-known abort reasons (MovementResult::abort_reason).
inline constexpr const char* kAbortAskLimitReached = "ask_limit_reached";
inline constexpr const char* kAbortTextOnlyLimit = "text_only_limit";
inline constexpr const char* kAbortMaxIterations = "max_iterations";
inline constexpr const char* kAbortMaxMovements = "max_movements";
inline constexpr const char* kAbortToolLoop = "tool_loop";
inline constexpr const char* kAbortLoopMonitor = "loop_monitor";
inline constexpr const char* kAbortContextOverflow = "context_overflow";
inline constexpr const char* kAbortAgentError = "agent_error";  // complete{status:error}
inline constexpr const char* kAbortLlmError = "llm_error";      // terminal LLM failure
inline constexpr const char* kAbortWatchdog = "watchdog";       // no progress after a warning

// How one movement ended, as the agent loop reports it.
struct MovementResult {
  std::string movement;             // the movement that ended
  std::optional<std::string> next;  // a movement name or a SentinelName; nullopt = unsettled
  std::string result;               // COMPLETE: the final answer; ABORT: details
  std::string question;             // ASK: what to ask the user
  std::string wait_reason;          // WAITING_HUMAN_*: overrides the sentinel's default reason
  std::string resume_movement;      // explicit resume point (WaitSubTask tool); "" = per catalog
  std::string abort_reason;         // ABORT: one of kAbort*
  std::string feedback;             // transition: its `reason` (the next movement's instruction
                                    // restates it, seed 000 §2 "Movement feedback")
  bool cancelled = false;           // ABORT came from the cancel path
  // COMPLETE: the session handed off (seed 004); `result` names the handoff
  // file and the continuation job, which carries the task on.
  bool handed_off = false;
};

// An ABORT of `movement` with `reason` (one of kAbort*) and its details:
// what the agent loop, the budget step and the prompt guard end a movement
// with when it cannot go on.
MovementResult AbortedMovement(const std::string& movement, const char* reason,
                               std::string details);

// The `complete` tool's arguments as a MovementResult: success -> COMPLETE,
// needs_user_input -> ASK (question, else result, is the question), error ->
// ABORT (agent_error). kInvalidArgument (text for the `Error…` tool result)
// when the arguments do not match the schema.
Result<MovementResult> MovementResultFromComplete(const std::string& movement, const Json& args);

enum class PieceRunStatus {
  kCompleted,
  kAborted,
  kCancelled,
  kWaitingHuman,
  kWaitingSubtasks,
  kError
};
std::string_view PieceRunStatusName(PieceRunStatus s);

// How the whole movement walk of one job ended.
struct PieceRunResult {
  PieceRunStatus status = PieceRunStatus::kError;
  std::string last_movement;
  std::string result;           // kCompleted
  std::string question;         // kWaitingHuman with wait_reason "ask"
  std::string wait_reason;      // kWaitingHuman
  std::string resume_movement;  // kWaitingHuman, kWaitingSubtasks
  std::string reason;           // kAborted/kCancelled/kError: why (an abort reason or message)
  int ask_count = -1;           // the job's new ask count; -1 = unchanged
  // kAborted/kError: whether another attempt could succeed (an LLM outage
  // could; a guard that tripped on the model's behaviour would trip again).
  bool retryable = false;
  bool handed_off = false;  // kCompleted by a handoff: the continuation job goes on
};

// What the runner knows besides the result.
struct MovementMapContext {
  const Piece* piece = nullptr;       // REQUIRES: non-null
  int ask_count = 0;                  // the job's asks so far (follow-up jobs inherit it)
  int max_asks = 3;                   // ASKs that park; 0 = every ASK is over the limit
  int ask_deflections = 0;            // over-limit ASKs already sent back in this run
  bool has_pending_children = false;  // the job has unfinished child jobs
};

// The runner's next step. kNextMovement with next_movement == the current
// movement and a deflection_message is an ASK sent back: append only that
// message (the movement's guidance is already in the conversation) and run
// the movement's loop again.
struct MovementMapping {
  enum class Kind { kNextMovement, kDone };
  Kind kind = Kind::kDone;
  std::string next_movement;       // kNextMovement
  std::string deflection_message;  // non-empty: append as a user message (ASK deflected)
  int ask_deflections = 0;         // the counter to carry into the next mapping
  PieceRunResult done;             // kDone
};

// The runner's branch on a finished movement (seed 001's catalog, above).
MovementMapping mapMovementResult(const MovementResult& result, const MovementMapContext& ctx);

// What the run reports: completed -> Succeeded, cancelled -> Cancelled,
// waiting_* -> Parked with resume/reason/ask_count, aborted/error -> Failed,
// retryable when another attempt could succeed (the store's retry policy
// then decides retry or failed by the attempts left).
JobOutcome ToJobOutcome(const PieceRunResult& r);

}  // namespace maestro::engine
