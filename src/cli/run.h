// `maestro run`: one task in-process with one worker, its live text on stdout,
// followed to its real end — through handoff continuations, follow-ups and
// subtask waits — not just to the end of its first job.
//
// Exit codes (docs/engine.md): 0 the task's final job succeeded; 4 the task
// waits for a person (the question or the pending request is printed);
// 1 it failed or was cancelled; 2 bad input (config, arguments).
//
// Thread safety: main thread only.
#pragma once

#include <string>
#include <vector>

#include "store/types.h"

namespace maestro::cli {

inline constexpr int kRunExitWaitingHuman = 4;

// The task has nothing more to do by itself: no job is queued, running,
// retrying or waiting for its subtasks. `jobs` oldest first.
bool TaskSettled(const std::vector<Job>& jobs);

int RunInForeground(const std::string& config_path, const std::string& piece,
                    const std::string& instruction);

}  // namespace maestro::cli
