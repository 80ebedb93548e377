// The registry maestro runs with, in registration order: ReadFile,
// WriteFile, EditFile, ListDir, Glob, Grep, RunCommand, then the park and
// agent tools (RequestTool, RequestPackage, WaitSubTask, SpinOffTask,
// delegate, WriteHandoff). A job's `tools` array is built from it per piece
// by engine/piece/piece_tools.h BuildPieceTools (sorted by name, then transition
// and complete).
//
// Where it sits: built once at startup (after Sandbox::Probe, whose result
// the caller should log: an unavailable sandbox disables RunCommand) and
// shared, read-only, by every worker's Dispatcher and prompt builder.
//
// Thread safety: the returned registry is immutable; share it freely.
#pragma once

#include <memory>

#include "core/status.h"
#include "sandbox/sandbox.h"
#include "tools/registry.h"

namespace maestro::tools {

Result<std::unique_ptr<ToolRegistry>> NewBuiltinRegistry(std::shared_ptr<const Sandbox> sandbox);

}  // namespace maestro::tools
