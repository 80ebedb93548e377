#include "engine/prompt/workspace_context.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <set>

#include "core/tree_root.h"
#include "core/utf8.h"

namespace maestro::engine {
namespace {

// Version control and caches: nothing a task works on.
const std::set<std::string, std::less<>>& SkippedNames() {
  static const std::set<std::string, std::less<>> names = {
      ".git",        ".hg",           ".svn",   "__pycache__", ".mypy_cache",
      ".ruff_cache", ".pytest_cache", ".cache", ".npm",        ".DS_Store"};
  return names;
}

// Dependency trees: worth knowing they are there, too big to list.
const std::set<std::string, std::less<>>& NotEnteredNames() {
  static const std::set<std::string, std::less<>> names = {"node_modules", ".venv", "venv", ".tox"};
  return names;
}

bool IsSkippedEntry(std::string_view name) {
  // The file tools' own temporary files (a write in progress).
  constexpr std::string_view kTmp = ".maestro-tmp";
  if (name.size() > kTmp.size() && name.substr(name.size() - kTmp.size()) == kTmp) return true;
  return SkippedNames().count(name) > 0;
}

// One line of the listing; `key` is its path's components, `more` marks the
// "… N more" line of the directory `key`, which sorts after its entries.
struct ListingLine {
  std::vector<std::string> key;
  bool more = false;
  std::string text;
};

// Tree order: a directory, then its entries (recursively), then its "more" line.
bool ListedBefore(const ListingLine& a, const ListingLine& b) {
  const size_t n = std::min(a.key.size(), b.key.size());
  for (size_t i = 0; i < n; ++i) {
    if (a.key[i] != b.key[i]) return a.key[i] < b.key[i];
  }
  if (a.key.size() == b.key.size()) return !a.more && b.more;
  return a.key.size() < b.key.size() ? !a.more : b.more;
}

std::string ShownPath(const std::vector<std::string>& parts, size_t max_name) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "/") + SafeEntryName(p, max_name);
  return out;
}

struct PendingListDir {
  std::vector<std::string> parts;
  int depth = 1;    // the level of its entries
  size_t line = 0;  // its own line (unused for the root)
};

}  // namespace

std::string SafeEntryName(std::string_view name, size_t max_bytes) {
  std::string out;
  size_t i = 0;
  while (i < name.size()) {
    const auto lead = static_cast<unsigned char>(name[i]);
    std::string piece;
    size_t len = 1;
    if (lead == '\\') {
      piece = "\\\\";
    } else if (lead == '\n') {
      piece = "\\n";
    } else if (lead == '\r') {
      piece = "\\r";
    } else if (lead == '\t') {
      piece = "\\t";
    } else if (lead < 0x20 || lead == 0x7f) {
      piece = fmt::format("\\x{:02x}", lead);
    } else if (lead < 0x80) {
      piece.assign(1, static_cast<char>(lead));
    } else {
      len = (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xe ? 3 : (lead >> 3) == 0x1e ? 4 : 0;
      if (len == 0 || i + len > name.size() || !IsValidUtf8(name.substr(i, len))) {
        piece = fmt::format("\\x{:02x}", lead);
        len = 1;
      } else {
        uint32_t cp = len == 2 ? lead & 0x1f : len == 3 ? lead & 0x0f : lead & 0x07;
        for (size_t k = 1; k < len; ++k)
          cp = (cp << 6) | (static_cast<uint32_t>(name[i + k]) & 0x3f);
        // Line breaks and the bidirectional controls that reorder what a
        // reader sees (the "Trojan Source" trick).
        const bool unsafe = cp == 0x85 || (cp >= 0x80 && cp < 0xa0) || cp == 0x2028 ||
                            cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) ||
                            (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e || cp == 0x200f ||
                            cp == 0x061c;
        piece = unsafe ? fmt::format("\\u{{{:04x}}}", cp) : std::string(name.substr(i, len));
      }
    }
    if (out.size() + piece.size() > max_bytes) return out + "…";
    out += piece;
    i += len;
  }
  return out;
}

Result<std::vector<std::string>> WorkspaceFileLines(const std::string& workspace_root,
                                                    const WorkspaceListingLimits& limits) {
  MAESTRO_ASSIGN_OR_RETURN(TreeRoot root, TreeRoot::Open(workspace_root));
  std::vector<ListingLine> lines;
  std::deque<PendingListDir> queue;
  queue.push_back({{}, 1, 0});
  size_t shown = 0, scanned = 0;
  bool first = true;
  while (!queue.empty()) {
    PendingListDir dir = std::move(queue.front());
    queue.pop_front();
    const bool is_root = first;
    first = false;
    auto not_listed = [&] {
      if (!is_root) lines[dir.line].text += " (not listed)";
    };
    if (shown >= limits.max_entries || scanned >= limits.max_scanned) {
      not_listed();
      continue;
    }
    std::string rel;
    for (const auto& p : dir.parts) rel += (rel.empty() ? "" : "/") + p;
    auto listed = root.List(rel);
    if (!listed.ok()) {
      // The root must list; a subdirectory may have been removed or swapped
      // for a symlink since it was read (TreeRoot refuses to follow it).
      if (is_root) return listed.status();
      not_listed();
      continue;
    }
    std::vector<TreeEntry> entries;
    for (auto& e : *listed) {
      if (!IsSkippedEntry(e.name)) entries.push_back(std::move(e));
    }
    scanned += listed->size();
    std::sort(entries.begin(), entries.end(),
              [](const TreeEntry& a, const TreeEntry& b) { return a.name < b.name; });
    size_t i = 0;
    for (; i < entries.size(); ++i) {
      if (i >= limits.max_per_directory || shown >= limits.max_entries) break;
      const TreeEntry& e = entries[i];
      ListingLine line;
      line.key = dir.parts;
      line.key.push_back(e.name);
      line.text = ShownPath(line.key, limits.max_name_bytes);
      switch (e.info.type) {
        case DirEntry::Type::kDir:
          line.text += "/";
          if (NotEnteredNames().count(e.name) > 0 || dir.depth >= limits.max_depth) {
            line.text += " (not listed)";
          } else {
            queue.push_back({line.key, dir.depth + 1, lines.size()});
          }
          break;
        case DirEntry::Type::kFile:
          line.text += fmt::format(" ({} bytes)", e.info.size);
          break;
        case DirEntry::Type::kSymlink:
          line.text += " (symlink, not followed)";
          break;
        case DirEntry::Type::kOther:
          line.text += " (special file)";
          break;
      }
      lines.push_back(std::move(line));
      ++shown;
    }
    if (i < entries.size()) {
      ListingLine more;
      more.key = dir.parts;
      more.more = true;
      const std::string where = ShownPath(dir.parts, limits.max_name_bytes);
      more.text = fmt::format("{}… {} more", where.empty() ? "" : where + "/", entries.size() - i);
      lines.push_back(std::move(more));
    }
  }
  std::sort(lines.begin(), lines.end(), ListedBefore);
  std::vector<std::string> out;
  out.reserve(lines.size());
  for (auto& l : lines) out.push_back(std::move(l.text));
  return out;
}

}  // namespace maestro::engine
