#include "engine/job/piece_router.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/utf8.h"
#include "engine/job/reflection.h"

namespace maestro::engine {

std::vector<const Piece*> RoutablePieces(const PieceCatalog& catalog) {
  std::vector<const Piece*> out;
  for (const auto& e : catalog.entries()) {
    if (e.piece.name == kRoutedPiece || e.piece.name == kReflectionPiece) continue;
    out.push_back(&e.piece);
  }
  return out;
}

RouteChoice RoutePiece(llm::LlmClient& llm, Env& env, const std::string& dir,
                       const std::vector<const Piece*>& pieces, const std::string& instruction,
                       const std::string& fallback) {
  auto fall = [&](std::string why) { return RouteChoice{fallback, true, std::move(why)}; };
  if (pieces.empty()) return fall("no routable pieces");
  Json names = Json::array();
  std::string list;
  for (const Piece* p : pieces) {
    names.push_back(p->name);
    list += fmt::format("- {}: {}\n", p->name, p->description);
  }
  Json system = {{"role", "system"},
                 {"content",
                  "You route a task to the workflow (piece) that fits it best. "
                  "Pieces:\n" +
                      list + "Call choose_piece with the name of exactly one of them."}};
  Json user = {{"role", "user"}, {"content", std::string(Utf8Prefix(instruction, 4000))}};
  Json tool = {{"type", "function"},
               {"function",
                {{"name", "choose_piece"},
                 {"description", "Choose the piece that runs the task."},
                 {"parameters",
                  {{"type", "object"},
                   {"properties", {{"piece", {{"type", "string"}, {"enum", names}}}}},
                   {"required", {"piece"}},
                   {"additionalProperties", false}}}}}};
  if (Status s = env.CreateDirs(dir); !s.ok()) return fall(s.ToString());
  llm::ChatRequest req;
  req.messages_path = dir + "/route_messages.jsonl";
  req.tools_path = dir + "/route_tools.json";
  req.params = {{"tool_choice", {{"type", "function"}, {"function", {{"name", "choose_piece"}}}}},
                {"max_tokens", 64}};
  req.stream = false;
  if (Status s = WriteStringToFile(env, req.messages_path,
                                   DumpJson(system) + "\n" + DumpJson(user) + "\n");
      !s.ok()) {
    return fall(s.ToString());
  }
  if (Status s = WriteStringToFile(env, req.tools_path, DumpJson(Json::array({tool}))); !s.ok()) {
    return fall(s.ToString());
  }
  llm::LlmCallResult r = llm.Chat(req, nullptr, nullptr);
  if (!r.ok()) return fall("router call failed: " + r.status.ToString());
  for (const llm::ToolCall& c : r.response.tool_calls) {
    if (c.name != "choose_piece") continue;
    Json args = Json::parse(c.arguments, nullptr, false);
    const std::string piece = args.is_object() ? args.value("piece", "") : "";
    for (const Piece* p : pieces) {
      if (p->name == piece) return RouteChoice{piece, false, ""};
    }
    return fall("the router chose '" + std::string(Utf8Prefix(piece, 80)) + "', not a piece");
  }
  return fall("the router made no choose_piece call");
}

}  // namespace maestro::engine
