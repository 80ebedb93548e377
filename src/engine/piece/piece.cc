#include "engine/piece/piece.h"

#include <algorithm>

namespace maestro::engine {

const Movement* Piece::FindMovement(std::string_view name) const {
  for (const auto& m : movements) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

std::vector<std::string> Piece::TransitionTargets() const {
  std::vector<std::string> out;
  for (const auto& m : movements) {
    for (const auto& r : m.rules) {
      if (r.next.empty()) continue;
      if (std::find(out.begin(), out.end(), r.next) == out.end()) out.push_back(r.next);
    }
  }
  return out;
}

}  // namespace maestro::engine
