// Piece and Movement: the workflow a job runs (seed 000 §2, seed 001).
//
// A piece is a YAML file (schema in docs/pieces.md) naming movements; each
// movement is one LLM agent loop with its guidance, tools and `rules` that
// say which movement may come next. The worker loads the task's piece through
// the PieceCatalog, the piece runner walks its movements, and the prompt
// builder turns a movement into guidance text and the piece into one stable
// `tools` array. Loading and linting are the same walk (piece_loader.h):
// every problem is reported with `file:line:col`, and a piece with problems
// never loads.
//
// Thread safety: plain immutable-after-load values; share freely as const.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace maestro::engine {

// 1-based position of a YAML node, for lint messages and errors found later.
struct SourcePos {
  int line = 0;
  int column = 0;
};

// `{condition, next}`: when `condition` holds, the model may `transition` to
// `next` — a movement name or WAIT_SUBTASKS (seed 001: never COMPLETE/ABORT/ASK).
struct PieceRule {
  std::string condition;
  std::string next;
  SourcePos pos;
};

// Text given inline or read from a file next to the piece (`{file: x.md}`).
struct PieceText {
  std::string text;  // resolved content ("" when absent)
  std::string file;  // the referenced file as written, "" for inline text
};

struct Movement {
  std::string name;
  std::string description;
  std::string guidance;  // what to do in this movement (YAML `guidance` or `instruction`)
  PieceText persona;
  PieceText policy;
  PieceText knowledge;
  // Tools this movement may call; nullopt = every tool the workspace policy
  // allows. Enforced at dispatch time, not in the `tools` array (which must
  // stay byte-identical across movements, seed 001 KV law 4).
  std::optional<std::vector<std::string>> allowed_tools;
  bool edit = false;  // may modify files in the workspace
  std::vector<PieceRule> rules;
  // Where WAIT_SUBTASKS (rules version) resumes; "" = this movement.
  std::string default_next;
  int max_iterations = 0;  // agent-loop iterations; 0 = the engine default
  SourcePos pos;
};

// A cycle of movements (e.g. [review, fix]) completed `threshold` times gets a
// warning appended to the conversation; completing it once more ends the
// movement walk with `on_exceed`: ABORT (job aborted, reason loop_monitor) or a
// movement name to jump to.
struct LoopMonitor {
  std::vector<std::string> cycle;
  int threshold = 3;
  std::string warning;  // "" = a default warning text
  std::string on_exceed = "ABORT";
  SourcePos pos;
};

struct Piece {
  std::string name;
  std::string description;
  std::string initial_movement;  // defaults to the first movement
  SourcePos initial_movement_pos;
  int max_movements = 30;  // movement entries per job before abort
  std::vector<Movement> movements;
  std::vector<LoopMonitor> loop_monitors;
  // `checklist:` what a finished task of this piece must have done; given
  // in every job's instruction (engine/job/reflection.h InstructionAdditions).
  std::vector<std::string> checklist;
  std::string source;  // the file it was loaded from ("builtin:chat.yaml", a path)

  // nullptr when there is no such movement.
  const Movement* FindMovement(std::string_view name) const;

  // Union of every movement's `rules[].next`, in first-appearance order
  // (movements in file order, rules in order). This is the `transition` enum:
  // one per piece, never per movement (seed 001 KV section).
  std::vector<std::string> TransitionTargets() const;
  bool HasTransitions() const { return !TransitionTargets().empty(); }
};

// The movement-name limit and sentinel spellings used by lint and runtime.
inline constexpr int kMaxMovementsLimit = 1000;

}  // namespace maestro::engine
