#include "engine/piece/piece_tools.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "knowledge/knowledge_tools.h"
#include "tools/tool_names.h"

namespace maestro::engine {

namespace {

// Static on purpose: a description naming the current movement's options
// would change the array at every transition. The options are in the
// movement guidance (appended to the conversation) and in the error result.
constexpr const char* kTransitionDescription =
    "Move this task to another movement of the piece. Use it when the current movement's "
    "guidance says its work is done and names the next movement. Only the targets listed for "
    "the current movement are accepted; any other choice returns an error listing the valid "
    "options.";

constexpr const char* kCompleteDescription =
    "Finish the task. status \"success\": the work is done and `result` is the final answer "
    "for the user. status \"needs_user_input\": you cannot continue without the user's "
    "decision; put the question in `question`. status \"error\": the task cannot be done; "
    "explain why in `result`.";

std::string ToolName(const Json& def) {
  if (!def.is_object()) return "";
  auto f = def.find("function");
  if (f == def.end() || !f->is_object()) return "";
  auto n = f->find("name");
  return n != f->end() && n->is_string() ? n->get<std::string>() : "";
}

}  // namespace

// The union of the movements' allowed_tools, or nullopt when some movement
// may use every tool the policy allows.
std::optional<std::set<std::string>> PieceToolUniverse(const Piece& piece) {
  std::set<std::string> names;
  for (const auto& m : piece.movements) {
    if (!m.allowed_tools) return std::nullopt;
    names.insert(m.allowed_tools->begin(), m.allowed_tools->end());
  }
  return names;
}

Json TransitionToolDef(const std::vector<std::string>& targets) {
  Json params = {
      {"type", "object"},
      {"properties",
       {{"next",
         {{"type", "string"}, {"enum", targets}, {"description", "The movement to move to."}}},
        {"reason", {{"type", "string"}, {"description", "Why the current movement is done."}}}}},
      {"required", {"next"}}};
  return {{"type", "function"},
          {"function",
           {{"name", tools::kTransition},
            {"description", kTransitionDescription},
            {"parameters", params}}}};
}

Json CompleteToolDef() {
  Json params = {
      {"type", "object"},
      {"properties",
       {{"status", {{"type", "string"}, {"enum", {"success", "needs_user_input", "error"}}}},
        {"result",
         {{"type", "string"},
          {"description", "The final answer, or why the task cannot be done."}}},
        {"question",
         {{"type", "string"},
          {"description", "With needs_user_input: the question for the user."}}}}},
      {"required", {"status", "result"}}};
  return {{"type", "function"},
          {"function",
           {{"name", tools::kComplete},
            {"description", kCompleteDescription},
            {"parameters", params}}}};
}

Result<PieceTools> BuildPieceTools(const Piece& piece, const std::vector<Json>& regular_tools) {
  auto universe = PieceToolUniverse(piece);
  std::map<std::string, Json> by_name;  // sorted: order independent of grant/policy order
  for (const auto& def : regular_tools) {
    std::string name = ToolName(def);
    if (name.empty()) {
      return InvalidArgument("tool definition without function.name: " + def.dump());
    }
    if (name == tools::kComplete || name == tools::kTransition) {
      return InvalidArgument(fmt::format("'{}' is a control tool and cannot be registered", name));
    }
    // WriteHandoff (seed 004) and the knowledge tools are the engine's,
    // offered whatever the movements list.
    if (universe && !universe->count(name) && name != tools::kWriteHandoff &&
        !knowledge::IsKnowledgeTool(name)) {
      continue;
    }
    auto [it, fresh] = by_name.emplace(name, def);
    if (!fresh && it->second != def) {
      return InvalidArgument(fmt::format("two different definitions of tool '{}'", name));
    }
  }
  PieceTools out;
  for (auto& [name, def] : by_name) {
    out.tools.push_back(def);
    out.names.push_back(name);
  }
  if (piece.HasTransitions()) {
    out.tools.push_back(TransitionToolDef(piece.TransitionTargets()));
    out.names.push_back(tools::kTransition);
  }
  out.tools.push_back(CompleteToolDef());
  out.names.push_back(tools::kComplete);
  out.bytes = out.tools.dump();
  return out;
}

std::string TransitionError(const Piece& piece, const std::string& current,
                            const std::string& next) {
  const Movement* m = piece.FindMovement(current);
  std::vector<std::string> valid;
  if (m) {
    for (const auto& r : m->rules) {
      if (std::find(valid.begin(), valid.end(), r.next) == valid.end()) valid.push_back(r.next);
    }
  }
  if (std::find(valid.begin(), valid.end(), next) != valid.end()) return "";
  if (valid.empty()) {
    return fmt::format(
        "Error: movement '{}' has no transitions. Call `complete` when the work "
        "is done.",
        current);
  }
  return fmt::format(
      "Error: '{}' is not a valid transition from movement '{}'. Valid options: "
      "{}.",
      next, current, fmt::join(valid, ", "));
}

bool ToolAllowedInMovement(const Movement& movement, const std::string& name) {
  if (name == tools::kComplete || name == tools::kTransition) return true;
  if (knowledge::IsKnowledgeTool(name)) return true;
  if (!movement.allowed_tools) return true;
  const auto& a = *movement.allowed_tools;
  return std::find(a.begin(), a.end(), name) != a.end();
}

}  // namespace maestro::engine
