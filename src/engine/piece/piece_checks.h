// Whole-piece checks run after the YAML walk (internal to piece_loader.cc).
//
// They need every movement at once: duplicate names, targets of rules,
// default_next and loop monitors, the initial movement, sentinels in
// `rules[].next` and reachability from the initial movement. Also fills
// defaults (initial_movement = first movement). Problems are appended and
// the list is left sorted by position.
//
// Thread safety: pure function.
#pragma once

#include <vector>

#include "engine/piece/piece.h"
#include "engine/piece/piece_loader.h"

namespace maestro::engine {

void CheckPieceSemantics(Piece& piece, std::vector<PieceProblem>& problems);

}  // namespace maestro::engine
