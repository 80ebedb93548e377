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
#include <regex>

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

std::string GlobToRegex(const std::string& glob) {
  std::string re;
  for (size_t i = 0; i < glob.size(); ++i) {
    const char c = glob[i];
    if (c == '*' && i + 1 < glob.size() && glob[i + 1] == '*') {
      const bool slash = i + 2 < glob.size() && glob[i + 2] == '/';
      re += slash ? "(.*/)?" : ".*";
      i += slash ? 2 : 1;
    } else if (c == '*') {
      re += "[^/]*";
    } else if (c == '?') {
      re += "[^/]";
    } else if (std::string("\\^$.|+()[]{}").find(c) != std::string::npos) {
      re += '\\';
      re += c;
    } else {
      re += c;
    }
  }
  return re;
}

ToolResult GlobTool(const Json& args, const ToolContext& ctx) {
  auto base = ResolveInWorkspace(ctx.workspace_root, args.value("path", std::string(".")));
  if (!base.ok()) return ToolResult::Error(base.status().message());
  std::regex re(GlobToRegex(args["pattern"].get<std::string>()));
  std::vector<std::string> hits;
  size_t more = 0;
  bool done = WalkFiles(*base, ctx, [&](const std::string&, const std::string& rel) {
    if (!std::regex_match(rel, re)) return true;
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
  int flags = REG_EXTENDED | REG_NOSUB;
  if (args.value("case_insensitive", false)) flags |= REG_ICASE;
  PosixRegex re;
  if (int rc = regcomp(&re.re, args["pattern"].get<std::string>().c_str(), flags); rc != 0) {
    char msg[256];
    regerror(rc, &re.re, msg, sizeof(msg));
    return ToolResult::Error(std::string("invalid regular expression: ") + msg);
  }
  re.compiled = true;
  std::optional<std::regex> only;
  if (args.contains("glob")) only.emplace(GlobToRegex(args["glob"].get<std::string>()));
  const std::string show_base = RelativeToWorkspace(ctx.workspace_root, *base);
  std::string out;
  size_t matches = 0;
  bool capped = false;
  bool done = WalkFiles(*base, ctx, [&](const std::string& abs, const std::string& rel) {
    if (only && !std::regex_match(rel, *only)) return true;
    std::error_code ec;
    if (fs::file_size(abs, ec) > kMaxGrepFileBytes || ec) return true;
    std::ifstream in(abs, std::ios::binary);
    std::string line;
    const std::string shown = show_base == "." ? rel : show_base + "/" + rel;
    for (int n = 1; std::getline(in, line); ++n) {
      if (n == 1 && LooksBinary(line.substr(0, 8192))) return true;
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
