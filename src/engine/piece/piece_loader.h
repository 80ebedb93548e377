// Piece loader and linter: YAML text -> Piece, with every problem listed.
//
// One walk does both jobs. `maestro piece lint FILE` prints every
// PieceProblem as `file:line:col: message`; the piece catalog refuses a
// piece that has any problem (a job never starts on a piece that lint would
// reject). Checks:
// YAML syntax, unknown keys (with the nearest valid key), wrong types, missing
// required fields, duplicate movement names, rule/default_next/loop-monitor
// targets that name no movement, engine sentinels in `rules[].next` (only
// movements and WAIT_SUBTASKS are allowed, seed 001), unknown tool names,
// unreadable text files, and movements unreachable from the initial one.
//
// Thread safety: pure functions; they only read files.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "engine/piece/piece.h"

namespace maestro::engine {

struct PieceProblem {
  std::string file;
  int line = 0;  // 1-based; 0 when the problem has no position (unreadable file)
  int column = 0;
  std::string message;
  // "file:line:col: message" (or "file: message" without a position).
  std::string ToString() const;
};

struct PieceLintOptions {
  // Tool names `allowed_tools` may list; a name outside it is a problem with
  // the nearest known name. Empty = accept any name.
  std::vector<std::string> known_tools = DefaultToolNames();

  // The tool names of DESIGN.md §6 (regular, park and control tools).
  static std::vector<std::string> DefaultToolNames();
};

struct PieceParse {
  Piece piece;                         // best effort when problems is non-empty
  std::vector<PieceProblem> problems;  // in file order
  bool ok() const { return problems.empty(); }
};

// `source_name` prefixes every problem; `{file: ...}` references resolve
// against `base_dir` ("" = the current directory).
PieceParse ParsePieceText(const std::string& text, const std::string& source_name,
                          const std::string& base_dir, const PieceLintOptions& options = {});
PieceParse ParsePieceFile(const std::string& path, const PieceLintOptions& options = {});

// The Piece, or kInvalidArgument whose message lists every problem, one per line.
Result<Piece> LoadPieceText(const std::string& text, const std::string& source_name,
                            const PieceLintOptions& options = {});

}  // namespace maestro::engine
