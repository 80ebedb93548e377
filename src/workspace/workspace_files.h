// WorkspaceFiles: a task's workspace as the web UI's file pane reads it —
// the flat listing and one file's bytes — for GET /api/local/tasks/:id/files
// (src/api/routes_workspace.cc).
//
// Everything in a workspace was written by an agent, so it is untrusted and
// may change under us: both go through a core/tree_root.h TreeRoot. The
// listing reads each directory through its descriptor, never descends
// through a symlink (it lists the link itself) and leaves out every `.git`
// entry; a read resolves the path with ResolveInTree (no `..`, no absolute
// path, no symlink out of the workspace), refuses any path with a `.git`
// component before or after resolution, and opens the resolved path beneath
// the root with no symlink allowed anywhere in it (a directory swapped for a
// symlink in between is refused), regular files only, at most `max` bytes.
// Names are bytes (they may not be UTF-8; the JSON writer replaces what is
// not).
//
// Thread safety: pure functions over the filesystem.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/env.h"
#include "core/status.h"

namespace maestro::tools {

struct WorkspaceEntry {
  std::string path;  // relative to the root, '/'-separated
  std::string type;  // file | dir | symlink
  int64_t size = 0;  // bytes (a symlink: its target's length; a directory: 0)
  TimeMs modified_at = 0;
};

struct WorkspaceListing {
  std::vector<WorkspaceEntry> entries;
  bool truncated = false;  // more than `max_entries` entries exist
};

inline constexpr size_t kMaxListedEntries = 5000;

// Every entry under `root` (canonical), depth first with each directory's
// entries sorted by name, so a directory comes right before its contents
// and a truncated listing is a prefix of the whole. `.git` entries, and
// anything that is not a file, directory or symlink, are left out. A root
// that does not exist lists nothing.
WorkspaceListing ListWorkspace(const std::string& root, size_t max_entries = kMaxListedEntries);

// Checks a path a client named: non-empty, relative, no `..` and no `.git`
// component. kInvalidArgument naming "path".
Status CheckClientPath(const std::string& relative);

struct WorkspaceFile {
  std::string path;        // as asked (normalized)
  int64_t size = 0;        // the whole file's size
  std::string bytes;       // the first `max` bytes
  bool truncated = false;  // size > max
};

// The first `max` bytes of the regular file `relative` under `root`.
// kInvalidArgument naming "path" for a refused path (CheckClientPath, a
// symlink leaving the workspace or into `.git`, a directory or other
// non-file); kNotFound when it does not exist.
Result<WorkspaceFile> ReadWorkspaceFile(Env& env, const std::string& root,
                                        const std::string& relative, size_t max);

// Whether `bytes` is text for a client: valid UTF-8 without NUL. An
// incomplete sequence cut at the very end (`cut` = the read stopped early)
// does not make it binary.
bool LooksLikeText(const std::string& bytes, bool cut);

}  // namespace maestro::tools
