// Piece routing (seed 000's create path: "Piece selection / Grounded fixed /
// LLM Router"; issue 21). A task created with `pieces.router: llm` and no
// piece is stored on kRoutedPiece; its first job, before anything else,
// makes ONE cheap LLM call that classifies the instruction over the pieces'
// descriptions: a forced `choose_piece` tool call whose `piece` argument is
// an enum of the routable pieces' names, so the answer is constrained to
// them. An answer outside the enum, or a failed call, falls back to the
// default piece (recorded as such). The choice is stored with a task.routed
// event (Store::SetTaskPiece) before the job runs.
//
// (The other two ways — a space's own piece and a grounded space — are
// decided at create: api/task_validation.h ChoosePiece.)
//
// Thread safety: stateless; one call per job, on the job's thread.
#pragma once

#include <string>
#include <vector>

#include "core/env.h"
#include "engine/piece/piece_catalog.h"
#include "llm/llm_client.h"

namespace maestro::engine {

struct RouteChoice {
  std::string piece;
  bool fallback = false;  // the default, because the call or its answer failed
  std::string why;        // the failure when fallback
};

// The routable pieces: every piece of the catalog except kRoutedPiece and
// the reflection piece, in catalog (name) order.
std::vector<const Piece*> RoutablePieces(const PieceCatalog& catalog);

// The request files go to `dir` (created; the caller removes it).
RouteChoice RoutePiece(llm::LlmClient& llm, Env& env, const std::string& dir,
                       const std::vector<const Piece*>& pieces, const std::string& instruction,
                       const std::string& fallback);

}  // namespace maestro::engine
