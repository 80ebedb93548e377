// Workspace path resolution: the one gate every file tool passes a path
// through.
//
// Where it sits: ReadFile, WriteFile, EditFile, ListDir, Glob and Grep (and
// the web UI's file route) call ResolveInTree before touching the
// filesystem. The model may only name
// paths relative to the workspace (or under kWorkspaceMount); `..`
// components and other absolute paths are refused outright, and every
// existing component is checked for symlinks whose target leaves the
// workspace (a dangling symlink is refused too, since writing through it
// could create a file anywhere).
//
// No race: the resolution only *reads* the tree (lstat and readlink through
// a core/tree_root.h TreeRoot) and yields a symlink-free relative path; the
// tool then acts on that path through the same TreeRoot, whose kernel
// resolution (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) refuses any
// symlink met. A component swapped for a symlink between the two steps
// (RunCommand of another task, a process the agent left running) makes the
// operation fail instead of leave the workspace.
//
// Every workspace is presented to the model at one fixed path,
// kWorkspaceMount: RunCommand's sandbox binds it there, the file tools accept
// it as the root, and the system text names it. The system text and tools
// are then byte-identical for every task of one piece and space, so a new
// task reuses the LLM server's cached prefix of the previous one (the real
// host path of a workspace is never shown to the model).
//
// Thread safety: pure functions over the filesystem.
#pragma once

#include <string>

#include "core/status.h"
#include "core/tree_root.h"

namespace maestro::tools {

inline constexpr char kWorkspaceMount[] = "/workspace";

// The workspace's TreeRoot for a tool call; the error names no host path
// (the model never sees one).
Result<TreeRoot> OpenWorkspaceTree(const std::string& workspace_root);

// `relative` resolved inside the workspace `root`: the path, relative to
// the root and free of symlinks ("" for the root itself), that every later
// use passes to `root` (OpenRead, OpenWrite, List, ...). "" and "." name the
// root, and so does kWorkspaceMount: a path under it is taken relative to
// the root. A symlink met on the way is followed when its target stays in
// the workspace (an absolute target under root.path() or kWorkspaceMount
// counts as inside); kInvalidArgument (field "path") on `..`, another
// absolute path, a symlink leading out or a dangling one. The path need not
// exist.
Result<std::string> ResolveInTree(const TreeRoot& root, const std::string& relative);

// The canonical absolute path of `relative` inside `workspace_root` (itself
// canonical): ResolveInTree joined to the root, for messages and callers
// that only show a path. Never open what it returns: use ResolveInTree and
// the TreeRoot.
Result<std::string> ResolveInWorkspace(const std::string& workspace_root,
                                       const std::string& relative);

// `absolute` relative to `workspace_root` ("." for the root itself), for
// showing paths back to the model.
std::string RelativeToWorkspace(const std::string& workspace_root, const std::string& absolute);

// True when `path` equals `root` or lies under it (both canonical).
bool IsInside(const std::string& root, const std::string& path);

}  // namespace maestro::tools
