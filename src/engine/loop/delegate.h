// delegate: a tool call that runs a sub-agent (seed 000 §3 runDelegate /
// runDelegateSubAgent) and answers the call with the sub-agent's final answer.
//
// Where it sits: the agent loop's tool-call step (movement_calls.cc) hands a
// `delegate` call here instead of to the Dispatcher. RunDelegate opens an
// isolated child conversation — its own TaskContext files under
// `<task context>/delegates/<job>-<call>/`, never the parent's messages —
// seeds it with a short sub-agent system message and the delegated task,
// and runs one agent loop (RunMovement) of a one-movement piece whose tools
// are the parent's regular tools (no transition, no park tools: a sub-agent
// cannot park the job), then `complete`. `delegate` itself is offered only
// while the child's depth is below LoopLimits::max_delegate_depth. The
// child's `complete{success}` result is the tool result; anything else
// becomes an `Error…` result the parent can act on. The parent's
// conversation gains exactly one message: that tool result.
//
// Deps: the child shares its parent's LoopServices and the job's JobScope
// (ids, cancel token, ledger, policy, limits, budget) and gets its own
// LoopState (movement_runner.h).
//
// Streaming: the child's deltas go to the job's DeltaFn with a
// `delegate: {call_id, depth}` field from its LoopState (EmitDelta; the
// innermost sub-agent's tag wins), and the parent stream gets
// `{type: "delegate", phase: started|finished}`. Tool calls of a sub-agent
// share the job's ledger under the key prefix `delegate:<call id>/`, so
// crash recovery sees them too.
//
// Thread safety: runs on the job's thread, inside the parent's RunMovement.
#pragma once

#include <string>
#include <vector>

#include "core/json.h"
#include "engine/loop/movement_runner.h"
#include "engine/piece/piece.h"
#include "engine/piece/piece_tools.h"
#include "tools/tool.h"

namespace maestro::engine {

// The one movement of a sub-agent's piece (named after the tool, tools::kDelegate).
inline constexpr const char* kDelegateMovement = "delegate";

// Whether a loop at `depth` (0 = the job's own agent) may delegate.
bool DelegateOffered(int depth, int max_depth);

// The sub-agent's regular tool definitions, taken from its parent's tools
// array: without transition, complete and the park tools, and without
// delegate once `child_depth` reaches `max_depth`.
std::vector<Json> DelegateToolDefs(const PieceTools& parent_tools, int child_depth, int max_depth);

// The one-movement piece a sub-agent runs; it inherits the parent
// movement's allowed_tools, edit flag and iteration limit.
Piece DelegatePiece(const Piece& parent, const Movement* parent_movement);

// Runs the sub-agent for `call` (made in `movement` of the loop `parent`) and
// returns the tool result text: its answer, or `Error…`.
std::string RunDelegate(AgentLoopDeps& parent, const std::string& movement,
                        const tools::ToolCall& call);

}  // namespace maestro::engine
