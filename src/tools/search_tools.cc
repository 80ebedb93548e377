// Glob and Grep: read-only searches over the workspace tree.
//
// Grep uses POSIX extended regular expressions (regcomp). Both walk the tree through the
// workspace's TreeRoot (core/tree_root.h) without following symlinks (a symlink could lead out of
// the workspace or into a cycle; one swapped in during the walk is refused by the kernel), skip
// `.git`, stop at a result cap and check the call's deadline and cancel token between files.
#include <fmt/format.h>
#include <regex.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include "core/tree_root.h"
#include "tools/workspace_tools.h"
#include "workspace/workspace_path.h"

namespace maestro::tools {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxGlobResults = 1000;
constexpr size_t kMaxGrepMatches = 500;
constexpr uintmax_t kMaxGrepFileBytes = 4 << 20;  // bigger files are skipped
constexpr size_t kMaxLineShown = 300;

// Collects the regular files under `dir` (relative to the root) into
// `files`, through the TreeRoot's listings: a symlink is never descended
// into nor reported, a directory swapped for one meanwhile is refused by the
// kernel. Returns false when the deadline cut the walk.
bool CollectFiles(const TreeRoot& root, const std::string& dir, const ToolContext& ctx,
                  std::vector<fs::path>* files) {
  auto entries = root.List(dir);
  if (!entries.ok()) return true;  // unreadable or gone: skipped
  for (const TreeEntry& e : *entries) {
    if (e.name == ".git") continue;
    const std::string rel = dir.empty() ? e.name : dir + "/" + e.name;
    if (e.info.type == DirEntry::Type::kFile) {
      files->push_back(rel);
      if (files->size() % 256 == 0 && ctx.Expired()) return false;
    } else if (e.info.type == DirEntry::Type::kDir) {
      if (!CollectFiles(root, rel, ctx, files)) return false;
    }
  }
  return true;
}

// Calls `fn(relative_to_root, relative_to_base)` for every regular file
// under `base` (resolved, relative to the root), sorted by path. Returns
// false when the deadline cut the walk.
template <typename Fn>
bool WalkFiles(const TreeRoot& root, const std::string& base, const ToolContext& ctx, Fn fn) {
  std::vector<fs::path> files;
  if (!CollectFiles(root, base, ctx, &files)) return false;
  std::sort(files.begin(), files.end());
  const fs::path base_path = base.empty() ? fs::path(".") : fs::path(base);
  for (const auto& f : files) {
    if (ctx.Expired()) return false;
    const std::string rel_to_base =
        base.empty() ? f.string() : f.lexically_relative(base_path).string();
    if (!fn(f.string(), rel_to_base)) break;
  }
  return true;
}

// The base directory of a search: the workspace's TreeRoot and the resolved
// args["path"] beneath it.
Result<std::pair<TreeRoot, std::string>> SearchBase(const Json& args, const ToolContext& ctx) {
  MAESTRO_ASSIGN_OR_RETURN(TreeRoot root, OpenWorkspaceTree(ctx.workspace_root));
  MAESTRO_ASSIGN_OR_RETURN(std::string base,
                           ResolveInTree(root, args.value("path", std::string("."))));
  return std::make_pair(std::move(root), std::move(base));
}

// The whole regular file `path` unless it is bigger than `max` bytes
// (kResourceExhausted then, without reading it).
Result<std::string> ReadSmallFile(const TreeRoot& root, const std::string& path, uint64_t max) {
  MAESTRO_ASSIGN_OR_RETURN(std::unique_ptr<ReadableFile> f, root.OpenRead(path));
  MAESTRO_ASSIGN_OR_RETURN(uint64_t size, f->Size());
  if (size > max) return Status(StatusCode::kResourceExhausted, path + " is too big");
  std::string out(static_cast<size_t>(size), '\0');
  size_t got = 0;
  while (got < out.size()) {
    MAESTRO_ASSIGN_OR_RETURN(size_t n, f->ReadAt(got, out.data() + got, out.size() - got));
    if (n == 0) break;
    got += n;
  }
  out.resize(got);
  return out;
}

// POSIX regex (glibc's matcher does not recurse per input character the way
// std::regex does, so a long line cannot overflow a worker thread's stack).
struct PosixRegex {
  regex_t re{};
  bool compiled = false;
  PosixRegex() = default;
  PosixRegex(const PosixRegex&) = delete;
  PosixRegex& operator=(const PosixRegex&) = delete;
  ~PosixRegex() {
    if (compiled) regfree(&re);
  }
};

bool LooksBinary(const std::string& head) { return head.find('\0') != std::string::npos; }

}  // namespace

GlobPattern::GlobPattern(const std::string& glob) {
  for (size_t i = 0; i < glob.size(); ++i) {
    const char c = glob[i];
    if (c == '*' && i + 1 < glob.size() && glob[i + 1] == '*') {
      const bool slash = i + 2 < glob.size() && glob[i + 2] == '/';
      tokens_.push_back({slash ? Kind::kDirs : Kind::kAny, 0});
      i += slash ? 2 : 1;
    } else if (c == '*') {
      tokens_.push_back({Kind::kStar, 0});
    } else if (c == '?') {
      tokens_.push_back({Kind::kOne, 0});
    } else {
      tokens_.push_back({Kind::kLiteral, c});
    }
  }
}

// An NFA simulation: the set of pattern positions reachable after each
// character, O(pattern x path) whatever the pattern — no backtracking, so
// `*a*a*a*a*b` on a long name costs the same as `*`. A `**/` position has
// two states: "may skip" (nothing consumed yet) and "inside" (must end with
// the '/' that completes it).
bool GlobPattern::Matches(std::string_view path) const {
  const size_t n = tokens_.size();
  std::vector<char> cur(2 * (n + 1), 0), next(2 * (n + 1), 0);
  auto closure = [&](std::vector<char>& s) {
    for (size_t i = 0; i < n; ++i) {
      if (!s[2 * i]) continue;
      Kind k = tokens_[i].kind;
      if (k == Kind::kStar || k == Kind::kAny || k == Kind::kDirs) s[2 * (i + 1)] = 1;
    }
  };
  cur[0] = 1;
  closure(cur);
  for (char c : path) {
    std::fill(next.begin(), next.end(), 0);
    bool any = false;
    for (size_t i = 0; i < n; ++i) {
      if (!cur[2 * i] && !cur[2 * i + 1]) continue;
      const Token& t = tokens_[i];
      switch (t.kind) {
        case Kind::kLiteral:
          if (cur[2 * i] && c == t.ch) next[2 * (i + 1)] = 1;
          break;
        case Kind::kOne:
          if (cur[2 * i] && c != '/') next[2 * (i + 1)] = 1;
          break;
        case Kind::kStar:
          if (c != '/') next[2 * i] = 1;
          break;
        case Kind::kAny:
          next[2 * i] = 1;
          break;
        case Kind::kDirs:
          next[2 * i + 1] = 1;
          if (c == '/') next[2 * (i + 1)] = 1;
          break;
      }
    }
    closure(next);
    for (char v : next) any = any || v;
    if (!any) return false;
    cur.swap(next);
  }
  return cur[2 * n] != 0;
}

ToolResult GlobTool(const Json& args, const ToolContext& ctx) {
  auto base = SearchBase(args, ctx);
  if (!base.ok()) return ToolResult::Error(base.status().message());
  const GlobPattern glob(args["pattern"].get<std::string>());
  std::vector<std::string> hits;
  size_t more = 0;
  bool done =
      WalkFiles(base->first, base->second, ctx, [&](const std::string&, const std::string& rel) {
        if (!glob.Matches(rel)) return true;
        if (hits.size() < kMaxGlobResults)
          hits.push_back(rel);
        else
          ++more;
        return true;
      });
  std::string out;
  for (const auto& h : hits) out += h + "\n";
  if (more) out += fmt::format("[... {} more files]\n", more);
  if (!done) out += "[search stopped: time limit]\n";
  if (hits.empty()) out += "no files match\n";
  return ToolResult::Ok(out);
}

ToolResult GrepTool(const Json& args, const ToolContext& ctx) {
  auto base = SearchBase(args, ctx);
  if (!base.ok()) return ToolResult::Error(base.status().message());
  const std::string pattern = args["pattern"].get<std::string>();
  // Back-references are the one part of glibc's ERE matcher that
  // backtracks (exponential on a crafted line); refuse them.
  for (size_t i = 0; i + 1 < pattern.size(); ++i) {
    if (pattern[i] == '\\' && pattern[i + 1] >= '1' && pattern[i + 1] <= '9') {
      return ToolResult::Error("back-references (\\1 ... \\9) are not supported in Grep patterns");
    }
    if (pattern[i] == '\\') ++i;  // an escaped backslash is not the start of one
  }
  int flags = REG_EXTENDED | REG_NOSUB;
  if (args.value("case_insensitive", false)) flags |= REG_ICASE;
  PosixRegex re;
  if (int rc = regcomp(&re.re, pattern.c_str(), flags); rc != 0) {
    char msg[256];
    regerror(rc, &re.re, msg, sizeof(msg));
    return ToolResult::Error(std::string("invalid regular expression: ") + msg);
  }
  re.compiled = true;
  std::optional<GlobPattern> only;
  if (args.contains("glob")) only.emplace(args["glob"].get<std::string>());
  const TreeRoot& root = base->first;
  const std::string show_base = base->second.empty() ? "." : base->second;
  std::string out;
  size_t matches = 0;
  bool capped = false;
  bool done =
      WalkFiles(root, base->second, ctx, [&](const std::string& path, const std::string& rel) {
        if (only && !only->Matches(rel)) return true;
        auto text = ReadSmallFile(root, path, kMaxGrepFileBytes);
        if (!text.ok()) return true;
        const std::string shown = show_base == "." ? rel : show_base + "/" + rel;
        std::string_view rest = *text;
        for (int n = 1; !rest.empty(); ++n) {  // the lines std::getline would give
          const size_t nl = rest.find('\n');
          std::string line(rest.substr(0, nl));
          rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
          if (n == 1 && LooksBinary(line.substr(0, 8192))) return true;
          // The deadline and cancel hold inside a file too, not only between files.
          if (n % 1024 == 0 && ctx.Expired()) return false;
          if (regexec(&re.re, line.c_str(), 0, nullptr, 0) != 0) continue;
          if (line.size() > kMaxLineShown) line = line.substr(0, kMaxLineShown) + "…";
          out += fmt::format("{}:{}: {}\n", shown, n, line);
          if (++matches >= kMaxGrepMatches) {
            capped = true;
            return false;
          }
        }
        return true;
      });
  if (capped)
    out += fmt::format("[stopped after {} matches; narrow the pattern or path]\n", kMaxGrepMatches);
  if (!done) out += "[search stopped: time limit]\n";
  if (matches == 0) out += "no matches\n";
  return ToolResult::Ok(out);
}

}  // namespace maestro::tools
