// Control and park tools: the tools that do not do work but end or fold the
// movement (seed 001). Here live their DEFINITIONS — names, JSON schemas,
// static descriptions — and the control-flow table the engine uses to map a
// call to its sentinel (recipe steps 1, 2 and 5); the parking itself
// (finishMovement → mapMovementResult → worker resume) is the engine's.
//
// Where it sits: RegisterParkTools() adds RequestTool, RequestPackage,
// WaitSubTask, SpinOffTask, delegate and WriteHandoff to the registry after
// the workspace tools; `transition` and `complete` are built per piece and
// always placed last by engine/piece/piece_tools.h BuildPieceTools: [regular...,
// transition?, complete] (DESIGN.md §5). transition is ONE tool per piece whose enum is
// the union of every movement's targets with a static description: a per
// movement tool would change the `tools` bytes on each transition and lose
// the whole prompt cache (seed 001's measured law 4).
//
// Thread safety: pure functions and constant tables.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "tools/registry.h"

namespace maestro::tools {

// How the engine treats a control tool's call.
struct ControlToolInfo {
  std::string_view name;
  // MovementResult.next the call produces ("" = no sentinel: the tool
  // returns a result and the movement goes on).
  std::string_view sentinel;
  std::string_view park_status;  // waiting_human | waiting_subtasks | "" (not a park)
  std::string_view wait_reason;  // jobs.wait_reason, "" when none
  bool resumes_current_movement = false;
  bool creates_request = false;  // re-entrant through FindDecidedRequest
};

// nullptr for regular tools. `complete` maps to COMPLETE (status success),
// ASK (needs_user_input) or ABORT (error); the table lists the ASK park.
const ControlToolInfo* FindControlTool(std::string_view name);
const std::vector<ControlToolInfo>& ControlTools();

// Registers the park and agent tools (no handlers: the engine handles them).
Status RegisterParkTools(ToolRegistry& registry);

// The WriteHandoff tool (seed 004), its one definition: the registry lists
// it and the engine offers it; engine/handoff/document.h's ParseHandoff
// checks the same fields (additionalProperties: false at every level, so
// strict servers enforce the same schema).
ToolSpec WriteHandoffToolSpec();

// RequestCaptchaHelp (seed 001: WAITING_HUMAN_BROWSER, wait reason
// captcha): registered per job next to BrowseWeb (src/browser), handled by
// the engine like the other park tools.
ToolSpec RequestCaptchaHelpToolSpec();

}  // namespace maestro::tools
