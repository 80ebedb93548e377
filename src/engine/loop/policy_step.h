// The Auto Prompter's step in the agent loop (auto_prompter.h): each regular
// tool call of an assistant message is checked against the job's policy
// snapshot before the Dispatcher sees it.
//
//   deny          the call is answered with PolicyDenialText; it never runs
//   approve_once  a once-grant bound to these arguments' hash is added, then
//                 the call goes to the Dispatcher (whose authorizer spends it)
//   instruct      the call runs; the instruction is appended as a user
//                 message after the batch's tool results
//
// Each firing is a `policy.fired` event (PolicyEventPayload: no raw
// arguments) and a `policy` delta on the job's live stream, both best
// effort. With no policy (JobScope::auto_prompter null) none of this runs.
//
// Thread safety: the job's thread (movement_runner.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/loop/movement_runner.h"
#include "tools/tool.h"

namespace maestro::engine {

struct PolicyVerdict {
  std::optional<std::string> denial;  // set: the call's result; do not dispatch
  std::string instruction;            // "" = none
};

PolicyVerdict ApplyAutoPrompter(AgentLoopDeps& d, const std::string& movement,
                                const tools::ToolCall& call);

}  // namespace maestro::engine
