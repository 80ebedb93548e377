// Sentinels: the engine-internal values a MovementResult's `next` may carry
// instead of a movement name (seed 001's sentinel catalog).
//
// Control and park tools (`complete`, RequestTool, WaitSubTask, ...) do not do
// work; they fold the movement with one of these, and mapMovementResult
// (movement_result.h) turns it into a PieceRunResult. Only WAIT_SUBTASKS may
// also be written in a piece's `rules[].next`; the others are never offered
// in the `transition` enum and lint rejects them there.
//
// Thread safety: constants and pure functions.
#pragma once

#include <optional>
#include <string_view>

namespace maestro::engine {

enum class Sentinel {
  kComplete,
  kAbort,
  kAsk,
  kWaitSubtasks,
  kWaitingHumanBrowser,
  kWaitingHumanToolRequest,
  kWaitingHumanPackageRequest,
  kWaitingHumanSpawnRequest,
  kWaitingHumanBudget,  // the budget check before an LLM call (engine/loop/budget_step.h)
};

// "COMPLETE", "ABORT", "ASK", "WAIT_SUBTASKS", "WAITING_HUMAN_BROWSER", ...
std::string_view SentinelName(Sentinel s);
// nullopt when `name` is not a sentinel (then it names a movement).
std::optional<Sentinel> ParseSentinel(std::string_view name);
inline bool IsSentinel(std::string_view name) { return ParseSentinel(name).has_value(); }

// The one sentinel a piece's `rules[].next` may name (seed 001).
inline constexpr std::string_view kWaitSubtasksName = "WAIT_SUBTASKS";

// ASK over the job's ask limit is sent back to the same movement this many
// times (asking the model to decide by itself) before the job aborts with
// `ask_limit_reached` (seed 001, #1299).
inline constexpr int MAX_ASK_LIMIT_DEFLECTIONS = 2;

}  // namespace maestro::engine
