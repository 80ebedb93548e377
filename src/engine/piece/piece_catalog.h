// PieceCatalog: the pieces a server can run, by name.
//
// Builtin pieces (pieces/*.yaml, embedded in the binary at build time so the
// catalog works from any directory) load first; each user piece directory
// then adds pieces or overrides a builtin of the same name. The worker
// resolves a job's piece here, `GET /api/pieces` and `maestro piece list`
// list it. A file that fails lint is left out and its problems kept, so one
// broken user piece never hides the others.
//
// Thread safety: immutable after Load; share as const across threads.
#pragma once

#include <string>
#include <vector>

#include "core/json.h"
#include "core/status.h"
#include "engine/piece/piece.h"
#include "engine/piece/piece_loader.h"

namespace maestro::engine {

// One builtin piece file as embedded at build time.
struct BuiltinPieceFile {
  const char* file_name;  // "coding.yaml"
  const char* text;
};
const std::vector<BuiltinPieceFile>& BuiltinPieceFiles();

struct PieceCatalogOptions {
  bool include_builtin = true;
  std::vector<std::string> user_dirs;  // *.yaml / *.yml in each; missing dirs are skipped
  PieceLintOptions lint;
};

// The conventional user piece directory under a data dir: {data_dir}/pieces.
std::vector<std::string> DefaultUserPieceDirs(const std::string& data_dir);

struct PieceCatalogEntry {
  Piece piece;
  bool builtin = false;
  std::string overrides;  // the source it replaced, "" if none
};

class PieceCatalog {
 public:
  static PieceCatalog Load(const PieceCatalogOptions& options);

  // Sorted by name.
  const std::vector<PieceCatalogEntry>& entries() const { return entries_; }
  // Problems of files that were left out (and duplicate names in one dir).
  const std::vector<PieceProblem>& problems() const { return problems_; }

  // nullptr when no piece has this name.
  const Piece* Find(const std::string& name) const;
  // The piece or kNotFound naming the known pieces.
  Result<Piece> Get(const std::string& name) const;

 private:
  void Add(Piece piece, bool builtin, std::vector<std::string>& seen_in_dir);

  std::vector<PieceCatalogEntry> entries_;
  std::vector<PieceProblem> problems_;
};

// The body of `GET /api/pieces`: {"pieces": [{name, description, builtin,
// source, initial_movement, max_movements, movements: [{name, description,
// edit, next: [...]}]}], "problems": ["file:line:col: message", ...]}.
Json PieceCatalogJson(const PieceCatalog& catalog);

}  // namespace maestro::engine
