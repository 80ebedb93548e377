// ToolRegistry: every tool the model may see, with its JSON schema, flags
// and handler, in one fixed order.
//
// Where it sits: built once at startup (builtin workspace tools, then the
// control and park tools); the prompt builder asks it for the OpenAI `tools`
// array of a movement's allowed set and the Dispatcher looks handlers up by
// name. The `tools` array is part of the LLM prompt prefix: seed 001 measured
// that ONE changed byte in it loses the whole prompt cache. So each entry is
// serialized once, at registration, and the array is always emitted in
// registration order whatever order the allowed set comes in. Same registry
// + same allowed set = the same bytes, call after call.
//
// Thread safety: Register() only during setup; afterwards every const method
// may be called from any thread.
#pragma once

#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "tools/tool.h"

namespace maestro::tools {

class ToolRegistry {
 public:
  // kConflict when the name is taken; kInvalidArgument when the schema is
  // not an object schema.
  Status Register(ToolSpec spec, ToolHandler handler);

  // nullptr when unknown.
  const ToolSpec* Find(const std::string& name) const;
  const ToolHandler* Handler(const std::string& name) const;
  std::vector<std::string> Names() const;

  // OpenAI `tools` entries ({"type":"function","function":{name,
  // description, parameters}}) for the registered tools named in `allowed`,
  // in registration order. Unknown names in `allowed` are ignored.
  Json ToolsArray(const std::set<std::string>& allowed) const;
  // The same array serialized: byte-identical for an equal `allowed`.
  std::string ToolsArrayText(const std::set<std::string>& allowed) const;

 private:
  struct Entry {
    ToolSpec spec;
    ToolHandler handler;
    std::string serialized;  // the `tools` entry, dumped once
  };
  std::vector<Entry> entries_;
  std::unordered_map<std::string, size_t> index_;
};

// The OpenAI function-tool entry of `spec`.
Json ToolEntry(const ToolSpec& spec);

}  // namespace maestro::tools
