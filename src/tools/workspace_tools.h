// The builtin workspace tools: ReadFile, WriteFile, EditFile, ListDir, Glob,
// Grep and RunCommand — the regular tools of seed 000 §3's dispatch.
//
// Where it sits: registered into the ToolRegistry at startup, before the
// control and park tools (registration order is the order in the `tools`
// array). Every handler resolves paths through ResolveInTree, touches the
// workspace only beneath its TreeRoot (workspace/workspace_path.h) and reads
// ctx.workspace_root, so the same registry serves every workspace.
//
// Thread safety: the read-only handlers (ReadFile, ListDir, Glob, Grep) may
// run concurrently; the others are run one at a time by the Dispatcher.
#pragma once

#include <memory>

#include "core/status.h"
#include "sandbox/sandbox.h"
#include "tools/registry.h"

namespace maestro::tools {

// Registers the six file tools.
Status RegisterFileTools(ToolRegistry& registry);

// Registers RunCommand confined by `sandbox` (shared: it lives as long as
// the registry's handlers).
Status RegisterRunCommand(ToolRegistry& registry, std::shared_ptr<const Sandbox> sandbox);

// Each tool's handler, exposed for direct unit tests.
ToolResult ReadFileTool(const Json& args, const ToolContext& ctx);
ToolResult WriteFileTool(const Json& args, const ToolContext& ctx);
ToolResult EditFileTool(const Json& args, const ToolContext& ctx);
ToolResult ListDirTool(const Json& args, const ToolContext& ctx);
ToolResult GlobTool(const Json& args, const ToolContext& ctx);
ToolResult GrepTool(const Json& args, const ToolContext& ctx);

// A glob over workspace-relative paths: `*` and `?` stay within one path
// component, `**/` is zero or more directories, `**` elsewhere crosses
// components ("src/**/*.cc" matches "src/a.cc" and "src/x/y/a.cc").
// Matching never backtracks: O(pattern length x path length).
class GlobPattern {
 public:
  explicit GlobPattern(const std::string& glob);
  bool Matches(std::string_view path) const;

 private:
  enum class Kind { kLiteral, kOne, kStar, kAny, kDirs };
  struct Token {
    Kind kind;
    char ch;
  };
  std::vector<Token> tokens_;
};

}  // namespace maestro::tools
