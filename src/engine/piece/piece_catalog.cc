#include "engine/piece/piece_catalog.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace maestro::engine {

std::vector<std::string> DefaultUserPieceDirs(const std::string& data_dir) {
  return {(std::filesystem::path(data_dir) / "pieces").string()};
}

void PieceCatalog::Add(Piece piece, bool builtin, std::vector<std::string>& seen_in_dir) {
  if (std::find(seen_in_dir.begin(), seen_in_dir.end(), piece.name) != seen_in_dir.end()) {
    problems_.push_back({piece.source, 0, 0,
                         fmt::format("piece '{}' is defined twice in this directory; "
                                     "this file is ignored",
                                     piece.name)});
    return;
  }
  seen_in_dir.push_back(piece.name);
  for (auto& e : entries_) {
    if (e.piece.name == piece.name) {
      e.overrides = e.piece.source;
      e.piece = std::move(piece);
      e.builtin = builtin;
      return;
    }
  }
  entries_.push_back({std::move(piece), builtin, ""});
}

PieceCatalog PieceCatalog::Load(const PieceCatalogOptions& options) {
  PieceCatalog cat;
  if (options.include_builtin) {
    std::vector<std::string> seen;
    for (const auto& f : BuiltinPieceFiles()) {
      PieceParse p =
          ParsePieceText(f.text, std::string("builtin:") + f.file_name, "", options.lint);
      if (!p.ok()) {
        cat.problems_.insert(cat.problems_.end(), p.problems.begin(), p.problems.end());
        continue;
      }
      cat.Add(std::move(p.piece), true, seen);
    }
  }
  for (const auto& dir : options.user_dirs) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) continue;
    std::vector<std::string> files;
    for (const auto& de : std::filesystem::directory_iterator(dir, ec)) {
      auto ext = de.path().extension().string();
      if (de.is_regular_file() && (ext == ".yaml" || ext == ".yml")) {
        files.push_back(de.path().string());
      }
    }
    std::sort(files.begin(), files.end());  // directory order is not stable
    std::vector<std::string> seen;
    for (const auto& f : files) {
      PieceParse p = ParsePieceFile(f, options.lint);
      if (!p.ok()) {
        cat.problems_.insert(cat.problems_.end(), p.problems.begin(), p.problems.end());
        continue;
      }
      cat.Add(std::move(p.piece), false, seen);
    }
  }
  std::sort(cat.entries_.begin(), cat.entries_.end(),
            [](const auto& a, const auto& b) { return a.piece.name < b.piece.name; });
  return cat;
}

const Piece* PieceCatalog::Find(const std::string& name) const {
  for (const auto& e : entries_) {
    if (e.piece.name == name) return &e.piece;
  }
  return nullptr;
}

Result<Piece> PieceCatalog::Get(const std::string& name) const {
  if (const Piece* p = Find(name)) return *p;
  std::string known;
  for (const auto& e : entries_) known += (known.empty() ? "" : ", ") + e.piece.name;
  return NotFound(fmt::format("no piece named '{}' (known: {})", name, known));
}

Json PieceCatalogJson(const PieceCatalog& catalog) {
  Json pieces = Json::array();
  for (const auto& e : catalog.entries()) {
    Json movements = Json::array();
    for (const auto& m : e.piece.movements) {
      Json next = Json::array();
      for (const auto& r : m.rules) next.push_back(r.next);
      movements.push_back(
          {{"name", m.name}, {"description", m.description}, {"edit", m.edit}, {"next", next}});
    }
    pieces.push_back({{"name", e.piece.name},
                      {"description", e.piece.description},
                      {"builtin", e.builtin},
                      {"source", e.piece.source},
                      {"initial_movement", e.piece.initial_movement},
                      {"max_movements", e.piece.max_movements},
                      {"movements", movements}});
  }
  Json problems = Json::array();
  for (const auto& p : catalog.problems()) problems.push_back(p.ToString());
  return {{"pieces", pieces}, {"problems", problems}};
}

}  // namespace maestro::engine
