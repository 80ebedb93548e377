// Processes: one child process run to completion with a deadline, a cancel
// token and bounded output — RunCommand (inside bubblewrap), the package
// installer and MCP stdio servers' helpers start theirs through
// Env::RunProcess (core/env.h); RunPosixProcess is PosixEnv's implementation.
//
// The child is started with posix_spawn in its OWN process group, so a
// timeout or a cancel kills the whole group (SIGKILL to -pgid): a shell's
// background children die with it instead of outliving the job. stdout and
// stderr are merged into one pipe and collected through a HeadTailBuffer, so
// a process printing gigabytes costs `output_cap` bytes of memory. When the
// child exits, what it left running in its group is killed too: a tool call
// must not leave processes behind (and a background process holding the
// output pipe must not hold the call open until its deadline).
//
// Thread safety: RunPosixProcess may be called concurrently; each call owns its
// child and reaps it before returning (no zombie, no orphan group).
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/cancel.h"
#include "core/status.h"

namespace maestro {

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH
  std::string cwd;                // "" = inherit
  // The complete environment of the child; nullopt inherits the parent's.
  std::optional<std::map<std::string, std::string>> env;
  std::chrono::milliseconds timeout{60'000};
  size_t output_cap = 64 * 1024;
  CancelToken* cancel = nullptr;  // may be null
};

struct ProcessResult {
  int exit_code = -1;  // 128 + signal when killed by a signal
  bool timed_out = false;
  bool cancelled = false;
  std::string output;       // merged stdout+stderr, capped with the cut marked
  size_t output_bytes = 0;  // total bytes the child wrote
  int64_t duration_ms = 0;
};

// kInternal when the process cannot be started (no such program, no pipe).
// A timeout or cancel is a ProcessResult with the flag set, not an error.
Result<ProcessResult> RunPosixProcess(const ProcessSpec& spec);

// A long-lived child the caller talks to over pipes (an MCP stdio server, the
// demo LLM): started and left running; the caller owns the pid (kill, waitpid).
struct ChildSpec {
  std::vector<std::string> argv;                          // argv[0] is looked up in PATH
  std::string cwd;                                        // "" = inherit
  std::optional<std::map<std::string, std::string>> env;  // nullopt inherits
  // Descriptors dup2'ed onto the child's 0/1/2; -1 leaves the parent's.
  int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1;
  // More descriptors for the child, {parent fd, child fd} (Chromium's
  // --remote-debugging-pipe reads fd 3 and writes fd 4). The parent fds must
  // not be any of the child fds (dup them above 9 first).
  std::vector<std::pair<int, int>> extra_fds;
  // Its own process group (pgid = pid), so one kill(-pid) stops its tree.
  bool new_process_group = true;
  // SIGTERM to the child when the thread that started it exits
  // (PR_SET_PDEATHSIG): a helper that must not outlive the server.
  bool die_with_parent = false;
};

// Starts the child with an empty signal mask and SIGPIPE/SIGTERM/SIGINT/
// SIGHUP at their defaults. kUnavailable when it cannot be started (no such
// program): the exec error is reported here, not as an exit code.
Result<int> SpawnPosixChild(const ChildSpec& spec);

}  // namespace maestro
