// The tool-call step of the agent loop: one assistant message's calls become
// tool results (in call order) and, when a control or park call settles the
// movement, its MovementResult.
//
// Regular calls go to the Dispatcher as one batch (read-only ones run in
// parallel there). `transition` is validated against the current movement's
// rules (an invalid target is an `Error…` result and the loop goes on);
// `complete` becomes MovementResultFromComplete; park tools check re-entry
// (a decided request answers the call) or create the request and park. Only
// the first settling call of a message counts; later control calls are
// answered with an Error so every call still has its result.
//
// Thread safety: called from the job's thread (see movement_runner.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/loop/movement_runner.h"
#include "llm/llm_types.h"

namespace maestro::engine {

struct CallResults {
  std::vector<std::string> contents;  // one per call, in call order
  std::vector<bool> is_error;         // one per call
  // One per call: the task's tool_call_count already took this call (written
  // with its tool.call event), so recording the result does not add it again.
  std::vector<bool> counted;
  std::optional<MovementResult> settled;  // the movement ends after the results
  // Auto Prompter instructions (policy_step.h), appended after the results.
  std::vector<std::string> instructions;
};

CallResults HandleToolCalls(AgentLoopDeps& deps, const std::string& movement,
                            const std::vector<llm::ToolCall>& calls);

// A stable text for the loop guard: each call's name and canonical arguments.
std::string CallBatchSignature(const std::vector<llm::ToolCall>& calls);

}  // namespace maestro::engine
