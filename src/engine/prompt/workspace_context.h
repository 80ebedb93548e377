// The workspace in the prompt (seed 000 §3 DYNAMIC "files"): a bounded
// listing of what the workspace holds, so a job does not spend its first
// turns on ListDir and Glob.
//
// Where it sits: PieceExecutor::SeedPrompt fills DynamicContext::files with
// WorkspaceFileLines at every job start; BuildFinalUserMessage renders it as
// `## Files` in the one final user message — never in the system message,
// whose bytes stay the same for every job of a piece (the prompt cache).
//
// What is listed: breadth first, so the root's entries come before any
// subdirectory's; each directory's entries sorted by name (bytes); shown in
// tree order as workspace-relative paths. A directory ends in "/", a file
// carries its size, a symlink or a special file (FIFO, socket, device) says
// so. Bounds: `max_depth` levels, `max_entries` lines, `max_per_directory`
// entries of one directory (then "dir/… N more"), and no directory is opened
// once `max_scanned` entries were read; a directory whose entries are not
// listed (depth, bounds, a dependency tree) says "(not listed)". Version
// control and cache directories (.git, __pycache__, ...) are left out; a
// dependency tree (node_modules, .venv, ...) is shown but not entered.
//
// Safety: the workspace is the agent's. Everything is read beneath a
// TreeRoot (core/tree_root.h): entries are lstat'ed through the directory's
// descriptor, a symlink is never followed (one planted at a name, or a
// directory swapped for one between two reads, is reported or skipped,
// never listed through), nothing is opened but directories (a FIFO never
// blocks). Names are untrusted text: SafeEntryName escapes what could break
// the line or the JSON (control bytes, invalid UTF-8, line separators,
// bidirectional overrides) and cuts long names.
//
// Thread safety: pure functions over the file system; any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace maestro::engine {

struct WorkspaceListingLimits {
  int max_depth = 3;              // levels listed: 1 = the root's entries only
  size_t max_entries = 150;       // entry lines in all ("… more" lines not counted)
  size_t max_per_directory = 50;  // entries shown of one directory
  size_t max_scanned = 20'000;    // entries read before no further directory is opened
  size_t max_name_bytes = 120;    // of one escaped name, before "…"
};

// The lines of the listing of `workspace_root` (host path), without the
// "- " the prompt puts before each; empty for an empty workspace. An error
// only when the root itself cannot be opened.
Result<std::vector<std::string>> WorkspaceFileLines(const std::string& workspace_root,
                                                    const WorkspaceListingLimits& limits = {});

// `name` as one line of printable UTF-8: a backslash is doubled, \n \r \t
// are written so, other control bytes and bytes of invalid UTF-8 as \xNN,
// U+0085, U+2028/U+2029 and the bidirectional controls as \u{XXXX}; cut to
// at most `max_bytes` (whole characters) with "…".
std::string SafeEntryName(std::string_view name, size_t max_bytes);

}  // namespace maestro::engine
