// Tools shared by the engine's unit tests: a ReadFile stand-in with the real
// tool's name, schema and read-only flag, answering through a test handler.
#pragma once

#include <utility>

#include "tools/registry.h"

namespace maestro::engine::test {

inline Status RegisterTestReadFile(tools::ToolRegistry& registry, tools::ToolHandler handler) {
  tools::ToolSpec read;
  read.name = "ReadFile";
  read.description = "Read a file.";
  read.read_only = true;
  read.parameters = {
      {"type", "object"}, {"properties", {{"path", {{"type", "string"}}}}}, {"required", {"path"}}};
  return registry.Register(std::move(read), std::move(handler));
}

}  // namespace maestro::engine::test
