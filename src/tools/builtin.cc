#include "tools/builtin.h"

#include "tools/park_tools.h"
#include "tools/workspace_tools.h"

namespace maestro::tools {

Result<std::unique_ptr<ToolRegistry>> NewBuiltinRegistry(std::shared_ptr<const Sandbox> sandbox) {
  auto registry = std::make_unique<ToolRegistry>();
  MAESTRO_RETURN_IF_ERROR(RegisterFileTools(*registry));
  MAESTRO_RETURN_IF_ERROR(RegisterRunCommand(*registry, std::move(sandbox)));
  MAESTRO_RETURN_IF_ERROR(RegisterParkTools(*registry));
  return registry;
}

}  // namespace maestro::tools
