// The piece runner (seed 000 §2 runPiece): walks a job's movements, one agent
// loop each, until mapMovementResult says the walk is done.
//
//   start = resume > override > piece.initial_movement   (SelectStartMovement)
//   loop:
//     LoopMonitorTracker::Enter(movement)   warn -> user message;
//                                           exceeded -> ABORT or on_exceed;
//                                           over max_movements -> ABORT
//     RunMovement(...)                      -> MovementResult
//     mapMovementResult(result, ctx)        done -> PieceRunResult
//                                           next -> transition guidance (or
//                                           the ASK deflection) appended
//
// The conversation was seeded by the caller (prompt/prompt_paths.h); the runner only
// appends. Thread safety: one runner per job, on the job's thread.
#pragma once

#include <functional>
#include <string>

#include "engine/loop/movement_result.h"
#include "engine/loop/movement_runner.h"
#include "engine/piece/piece.h"

namespace maestro::engine {

// resume (a parked job re-entering) > override > the piece's initial
// movement; a name that is not a movement of the piece is skipped.
std::string SelectStartMovement(const Piece& piece, const std::string& resume,
                                const std::string& override_movement);

struct PieceRunOptions {
  std::string start_movement;  // REQUIRES: a movement of the piece
  int ask_count = 0;           // the job's asks so far
  int max_asks = 3;
  // Whether the job has unfinished children (COMPLETE then waits for them).
  std::function<bool()> has_pending_children;
};

PieceRunResult RunPiece(AgentLoopDeps& deps, const PieceRunOptions& options);

}  // namespace maestro::engine
