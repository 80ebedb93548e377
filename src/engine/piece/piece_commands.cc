#include "engine/piece/piece_commands.h"

#include <fmt/format.h>

namespace maestro::engine {

int RunPieceLint(const std::string& file, std::ostream& out, std::ostream& err) {
  PieceParse p = ParsePieceFile(file);
  for (const auto& pr : p.problems) err << pr.ToString() << "\n";
  if (!p.ok()) return 1;
  out << fmt::format("{}: ok (piece {}, {} movement{})\n", file, p.piece.name,
                     p.piece.movements.size(), p.piece.movements.size() == 1 ? "" : "s");
  return 0;
}

int RunPieceList(const PieceCatalogOptions& options, std::ostream& out, std::ostream& err) {
  PieceCatalog cat = PieceCatalog::Load(options);
  for (const auto& e : cat.entries()) {
    std::string walk;
    for (const auto& m : e.piece.movements) walk += (walk.empty() ? "" : ",") + m.name;
    out << fmt::format("{:<12} {:<8} [{}] {}\n", e.piece.name, e.builtin ? "builtin" : "user", walk,
                       e.piece.description);
  }
  for (const auto& pr : cat.problems()) err << pr.ToString() << "\n";
  return cat.problems().empty() ? 0 : 1;
}

}  // namespace maestro::engine
