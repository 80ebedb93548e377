// The CLI's piece subcommands as library functions (`maestro piece lint FILE`,
// `maestro piece list`), so src/cli only parses arguments.
//
// Thread safety: pure functions writing to the given streams.
#pragma once

#include <ostream>
#include <string>

#include "engine/piece/piece_catalog.h"

namespace maestro::engine {

// Prints every problem as `file:line:col: message` to `err` (one per line) or
// "FILE: ok (piece NAME, N movements)" to `out`. Returns 0 when clean, 1 when
// there are problems (so scripts and CI can gate on it).
int RunPieceLint(const std::string& file, std::ostream& out, std::ostream& err);

// Prints one line per piece: name, origin (builtin | the file), movement
// walk, description; then the problems of files left out, to `err`. Returns 0,
// or 1 when some file was left out.
int RunPieceList(const PieceCatalogOptions& options, std::ostream& out, std::ostream& err);

}  // namespace maestro::engine
