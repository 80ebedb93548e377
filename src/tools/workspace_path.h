// Workspace path resolution: the one gate every file tool passes a path
// through.
//
// Where it sits: ReadFile, WriteFile, EditFile, ListDir, Glob and Grep call
// ResolveInWorkspace before touching the filesystem. The model may only name
// paths relative to the workspace (or under kWorkspaceMount); `..`
// components and other absolute paths are refused outright, and every
// existing component is checked for symlinks whose target leaves the
// workspace (a dangling symlink is refused too, since writing through it
// could create a file anywhere).
//
// Limits: the check and the later open are two steps; a concurrent process
// could swap a component for a symlink in between. Tools run sequentially
// with RunCommand (the only tool that can create symlinks), which keeps that
// window closed in practice.
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

namespace maestro::tools {

inline constexpr char kWorkspaceMount[] = "/workspace";

// The canonical absolute path of `relative` inside `workspace_root` (itself
// canonical). "" and "." name the root, and so does kWorkspaceMount: a path
// under it is taken relative to the root. kInvalidArgument (field "path") on
// an escape attempt or another absolute path; the path need not exist.
Result<std::string> ResolveInWorkspace(const std::string& workspace_root,
                                       const std::string& relative);

// `absolute` relative to `workspace_root` ("." for the root itself), for
// showing paths back to the model.
std::string RelativeToWorkspace(const std::string& workspace_root, const std::string& absolute);

// True when `path` equals `root` or lies under it (both canonical).
bool IsInside(const std::string& root, const std::string& path);

}  // namespace maestro::tools
