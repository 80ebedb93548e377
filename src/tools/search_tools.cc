// Glob and Grep: read-only searches over the workspace tree.
//
// Grep uses POSIX extended regular expressions (regcomp). Both walk the tree without following
// symlinks (a symlink could lead out of the workspace or into a cycle), skip `.git`, stop at a
// result cap and check the call's deadline and cancel token between files.
#include <fmt/format.h>
#include <regex.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string_view>
#include <vector>

#include "tools/workspace_path.h"
#include "tools/workspace_tools.h"

namespace maestro::tools {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxGlobResults = 1000;
constexpr size_t kMaxGrepMatches = 500;
constexpr uintmax_t kMaxGrepFileBytes = 4 << 20;  // bigger files are skipped
constexpr size_t kMaxLineShown = 300;

// Calls `fn(absolute, relative_to_base)` for every regular file under
// `base`, sorted by path. Returns false when the deadline cut the walk.
template <typename Fn>
bool WalkFiles(const std::string& base, const ToolContext& ctx, Fn fn) {
  std::vector<fs::path> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(base, fs::directory_options::skip_permission_denied, ec), end;
  for (; it != end; it.increment(ec)) {
    if (ec) break;
    if (it->path().filename() == ".git") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && !it->is_symlink()) files.push_back(it->path());
    if (files.size() % 256 == 0 && ctx.Expired()) return false;
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    if (ctx.Expired()) return false;
    if (!fn(f.string(), f.lexically_relative(base).string())) break;
  }
  return true;
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
  auto base = ResolveInWorkspace(ctx.workspace_root, args.value("path", std::string(".")));
  if (!base.ok()) return ToolResult::Error(base.status().message());
  const GlobPattern glob(args["pattern"].get<std::string>());
  std::vector<std::string> hits;
  size_t more = 0;
  bool done = WalkFiles(*base, ctx, [&](const std::string&, const std::string& rel) {
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
  auto base = ResolveInWorkspace(ctx.workspace_root, args.value("path", std::string(".")));
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
  const std::string show_base = RelativeToWorkspace(ctx.workspace_root, *base);
  std::string out;
  size_t matches = 0;
  bool capped = false;
  bool done = WalkFiles(*base, ctx, [&](const std::string& abs, const std::string& rel) {
    if (only && !only->Matches(rel)) return true;
    std::error_code ec;
    if (fs::file_size(abs, ec) > kMaxGrepFileBytes || ec) return true;
    std::ifstream in(abs, std::ios::binary);
    std::string line;
    const std::string shown = show_base == "." ? rel : show_base + "/" + rel;
    for (int n = 1; std::getline(in, line); ++n) {
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
