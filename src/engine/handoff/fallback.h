// The engine's own handoff document (seed 004): what the session did, when
// the agent ignored the handoff request (or there was no room left to ask).
// Part of the handoff's "what" (document.h holds the format).
//
// Where it sits: HandoffStep (trigger.h) reads the session's movement
// history from the conversation archive (ReadSessionMovements) and the
// workspace's git changes, then FallbackHandoff builds the document from
// them and the task's tool ledger (context::ToolStore). CompleteHandoff
// (continuation.h) checks and saves it like an agent's.
//
// Facts only, in the format's fields — nothing about what to do next:
//   completed     the movements the session left (plan -> implement), each
//                 command whose last run exited 0 (command, exit code, key
//                 lines of its output), the files it read
//   in_progress   the movement the session ended in, and the ledger's counts
//   decisions     each transition: what = "moved from X to Y", why = the
//                 reason the agent gave in its `transition` call
//   blockers      each command whose last run failed (exit code, key lines:
//                 the error, FAIL or assert lines of its output), failed tool
//                 calls
//   files_changed every file written by the task's successful file-tool
//                 calls and every file git sees changed, in the one
//                 workspace-relative form of WorkspaceRelativePath, once
//                 each — so the document passes its own files check.
// Bounded: at most kFallbackMaxCommands commands (the newest), kFallbackMaxBlockers
// blockers, kFallbackMaxReads read paths, kFallbackMaxFiles files; a command
// is cut at 120 bytes and its key lines at 3 lines of 160 bytes each.
//
// Thread safety: pure functions over the ledger and archive files; run on
// the job's thread.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "context/record_stores.h"
#include "core/env.h"
#include "core/status.h"
#include "engine/handoff/document.h"

namespace maestro::engine {

inline constexpr size_t kFallbackMaxCommands = 12;
inline constexpr size_t kFallbackMaxBlockers = 10;
inline constexpr size_t kFallbackMaxReads = 20;
inline constexpr size_t kFallbackMaxFiles = 200;

// The movements one session (job) went through, read from the archive.
struct SessionMovements {
  std::vector<std::string> visited;          // in order; repeats only when re-entered
  std::vector<HandoffDecision> transitions;  // "moved from X to Y" + the agent's reason
};

// Reads messages.jsonl (`messages_path`, the context's archive) for the
// records of `job_id`: the movement its thread started in and each
// movement it entered, and the `transition` calls that led there.
// `current` (the movement the session is in now) ends the list when the
// archive does not already end with it. A missing archive is no history.
Result<SessionMovements> ReadSessionMovements(Env& env, const std::string& messages_path,
                                              const std::string& job_id,
                                              const std::string& current);

struct FallbackFacts {
  std::string spec_ref;
  std::string job_id;     // the session: its commands, reads and failures
  std::string workspace;  // host path of the workspace ("" = none): ledger paths under it
  SessionMovements movements;
  std::set<std::string> git_changed;  // workspace-relative (GitChangedPaths), may be empty
};

Result<HandoffDocument> FallbackHandoff(const FallbackFacts& facts,
                                        const context::ToolStore& tools);

// The few lines of a tool's output worth carrying: the last lines naming an
// error, a failure, an assertion or a pass/fail count; else the last
// non-empty lines. At most `max_lines` lines of 160 bytes, joined by " | ".
std::string KeyLines(const std::string& output, size_t max_lines = 3);

}  // namespace maestro::engine
