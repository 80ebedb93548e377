// Shared fixtures of the engine unit tests.
#pragma once

#include <string>
#include <vector>

#include "core/json.h"
#include "engine/piece/piece_catalog.h"

namespace maestro::engine::test {

// An OpenAI function tool definition.
inline Json ToolDef(const std::string& name, const std::string& description) {
  return {{"type", "function"},
          {"function",
           {{"name", name},
            {"description", description},
            {"parameters", {{"type", "object"}, {"properties", Json::object()}}}}}};
}

// The entries of a JSON array of tool definitions.
inline std::vector<Json> Defs(const Json& array) {
  return std::vector<Json>(array.begin(), array.end());
}

// The regular tools of DESIGN.md §6, deliberately not in name order.
inline std::vector<Json> PolicyTools() {
  return {ToolDef("WriteFile", "Write a file. Creates parent directories."),
          ToolDef("ReadFile", "Read a file. Returns numbered lines."),
          ToolDef("RunCommand", "Run a shell command in the sandbox."),
          ToolDef("Grep", "Search file contents."),
          ToolDef("EditFile", "Replace text in a file."),
          ToolDef("ListDir", "List a directory."),
          ToolDef("Glob", "Find files by pattern.")};
}

inline Piece Builtin(const std::string& name) {
  static const PieceCatalog cat = PieceCatalog::Load({});
  return *cat.Find(name);
}

}  // namespace maestro::engine::test
