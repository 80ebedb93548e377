// The `tools` array of a piece: built once per job, byte-identical for every
// request of that job (seed 000 §3.1, seed 001 KV law 4: any change to the
// tools array — one byte of one description — loses the server's whole
// prompt cache).
//
// Layout: [regular tools sorted by name..., transition (only when the piece
// has transitions; enum = union of every movement's targets; static
// description), complete]. Regular tools are the definitions the workspace
// Tool Policy (∪ the task's grants) resolved, narrowed to the union of the
// movements' `allowed_tools` when every movement lists them. Per-movement
// limits — which tools and which transition targets a movement may use — are
// enforced at run time (ToolAllowedInMovement, TransitionError), never by
// changing this array.
//
// Thread safety: pure functions over values.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/status.h"
#include "engine/piece/piece.h"

namespace maestro::engine {

struct PieceTools {
  Json tools = Json::array();      // OpenAI `tools` array
  std::string bytes;               // tools.dump(): the exact bytes sent (and hashed)
  std::vector<std::string> names;  // in array order
};

// `regular_tools`: OpenAI tool definitions ({"type":"function","function":
// {"name","description","parameters"}}) in any order. kInvalidArgument for a
// malformed definition, a reserved name (complete, transition) or two
// different definitions of one name.
Result<PieceTools> BuildPieceTools(const Piece& piece, const std::vector<Json>& regular_tools);

// The union of the movements' allowed_tools, or nullopt when some movement
// allows every tool.
std::optional<std::set<std::string>> PieceToolUniverse(const Piece& piece);

// The two control tools, exposed for tests and the agent loop's validation.
Json TransitionToolDef(const std::vector<std::string>& targets);
Json CompleteToolDef();

// "" when `next` is one of `current`'s rules[].next targets; otherwise the
// `Error…` tool result text listing the valid options (the loop continues).
std::string TransitionError(const Piece& piece, const std::string& current,
                            const std::string& next);

// Whether `movement` may call the regular tool `name` (control tools always).
bool ToolAllowedInMovement(const Movement& movement, const std::string& name);

}  // namespace maestro::engine
