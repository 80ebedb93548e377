// ReadFile, WriteFile, EditFile, ListDir and their registration.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "core/tree_root.h"
#include "tools/schema.h"
#include "tools/tool_names.h"
#include "tools/workspace_tools.h"
#include "workspace/workspace_path.h"

namespace maestro::tools {

namespace {

constexpr size_t kMaxReadBytes = 1 << 20;  // ReadFile stops collecting here
constexpr size_t kMaxListEntries = 1000;
constexpr uintmax_t kMaxEditBytes = 16 << 20;  // EditFile holds the file in memory

// A path a tool acts on: the workspace's TreeRoot and the resolved,
// symlink-free path beneath it (workspace/workspace_path.h). Every access goes
// through `root`, so a symlink swapped in after the resolution is refused.
struct ToolPath {
  TreeRoot root;
  std::string rel;  // "" for the root
};

// Resolves args["path"] or returns the tool's error result.
Result<ToolPath> PathArg(const Json& args, const ToolContext& ctx, const char* def = nullptr) {
  std::string rel = args.contains("path") ? args["path"].get<std::string>() : (def ? def : "");
  MAESTRO_ASSIGN_OR_RETURN(TreeRoot root, OpenWorkspaceTree(ctx.workspace_root));
  MAESTRO_ASSIGN_OR_RETURN(std::string resolved, ResolveInTree(root, rel));
  return ToolPath{std::move(root), std::move(resolved)};
}

std::string ParentDirOf(const std::string& rel) {
  const size_t slash = rel.rfind('/');
  return slash == std::string::npos ? "" : rel.substr(0, slash);
}

// Crash-safe rewrite beneath the root: a temp file beside the target
// (created with O_NOFOLLOW, never through a symlink an agent planted),
// fsync, renameat over the target, fsync of the directory. The temp file
// goes when a step fails, so a full disk leaves the old file and no debris.
Status WriteAtomically(const ToolPath& p, const std::string& content) {
  const std::string dir = ParentDirOf(p.rel);
  if (Status st = p.root.MakeDirs(dir); !st.ok()) {
    return Internal("cannot create the parent directory: " + st.message());
  }
  const std::string tmp = p.rel + ".maestro-tmp";  // unlikely to be a file of the workspace
  Status st = [&]() -> Status {
    MAESTRO_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> f, p.root.OpenWrite(tmp));
    MAESTRO_RETURN_IF_ERROR(f->Append(content));
    MAESTRO_RETURN_IF_ERROR(f->Sync());
    MAESTRO_RETURN_IF_ERROR(f->Close());
    MAESTRO_RETURN_IF_ERROR(p.root.Rename(tmp, p.rel));
    return p.root.SyncDir(dir);
  }();
  if (!st.ok()) {
    p.root.Remove(tmp).IgnoreError();
    return Internal("write failed: " + st.message());
  }
  return Status::Ok();
}

ToolResult Err(const Status& st) { return ToolResult::Error(st.message()); }

size_t CountOccurrences(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = hay.find(needle); pos != std::string::npos;
       pos = hay.find(needle, pos + needle.size())) {
    ++n;
  }
  return n;
}

}  // namespace

namespace {

// Lines [start, end] of `in`, reading in blocks so that neither a huge file
// nor one enormous line is ever held whole: collection stops at
// kMaxReadBytes. *lines counts the lines seen.
Result<std::string> ReadLineRange(ReadableFile& in, int64_t start, int64_t end, int64_t* lines,
                                  bool* truncated) {
  std::string out;
  int64_t n = 1;     // the line the next byte belongs to
  bool any = false;  // line n has bytes
  char buf[65536];
  uint64_t offset = 0;
  while (n <= end) {
    MAESTRO_ASSIGN_OR_RETURN(const size_t got, in.ReadAt(offset, buf, sizeof(buf)));
    if (got == 0) break;
    offset += got;
    // Line by line (memchr), each line's bytes appended in one go.
    for (size_t i = 0; i < got && n <= end;) {
      const auto* nl = static_cast<const char*>(std::memchr(buf + i, '\n', got - i));
      const size_t stop = nl ? static_cast<size_t>(nl - buf) + 1 : got;
      if (n >= start) {
        if (out.size() + (stop - i) > kMaxReadBytes) {  // a byte past the limit is in range
          out.append(buf + i, kMaxReadBytes - out.size());
          *truncated = true;
          *lines = n;
          return out;
        }
        out.append(buf + i, stop - i);
      }
      any = nl == nullptr;
      if (nl) ++n;
      i = stop;
    }
  }
  *lines = any ? n : n - 1;
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out;
}

// Why `p` is not a regular file to read: missing, a directory, another kind.
Status NotRegular(const ToolPath& p, const std::string& rel) {
  auto info = p.root.Stat(p.rel);
  if (!info.ok()) return NotFound("file '" + rel + "' not found");
  if (info->type == DirEntry::Type::kDir) {
    return InvalidArgument("'" + rel + "' is a directory; use ListDir");
  }
  return InvalidArgument("'" + rel + "' is not a regular file");
}

// Only regular files: a FIFO or device would block or never end.
Result<ToolPath> RegularFile(const Json& args, const ToolContext& ctx) {
  MAESTRO_ASSIGN_OR_RETURN(ToolPath p, PathArg(args, ctx));
  auto info = p.root.Stat(p.rel);
  if (!info.ok() || info->type != DirEntry::Type::kFile) {
    return NotRegular(p, args["path"].get<std::string>());
  }
  return p;
}

}  // namespace

// Opens with the file-type check done on the open descriptor (no stat before
// the open, and a FIFO cannot block the open); a refusal is explained by
// RegularFile, the same words as EditFile.
ToolResult ReadFileTool(const Json& args, const ToolContext& ctx) {
  auto path = PathArg(args, ctx);
  if (!path.ok()) return Err(path.status());
  const std::string rel = args["path"].get<std::string>();
  auto in = path->root.OpenRead(path->rel);
  if (!in.ok()) {  // NotRegular says why: missing, a directory, not a regular file
    if (in.status().code() == StatusCode::kNotFound || in.status().field() == "type") {
      return Err(NotRegular(*path, rel));
    }
    return ToolResult::Error("cannot open '" + rel + "'");
  }
  const int64_t start = args.value("start_line", 1);
  const int64_t end = args.value("end_line", INT64_MAX);
  if (end < start) return ToolResult::Error("end_line must be >= start_line");
  int64_t lines = 0;
  bool truncated = false;
  auto read = ReadLineRange(**in, start, end, &lines, &truncated);
  if (!read.ok()) return ToolResult::Error("cannot read '" + rel + "': " + read.status().message());
  std::string out = std::move(read).value();
  if (start > 1 && lines < start) {
    return ToolResult::Error(
        fmt::format("start_line {} is past the end of the file ({} lines)", start, lines));
  }
  if (truncated) {
    out += fmt::format("[... stopped after {} bytes, in line {}; read further with start_line]\n",
                       kMaxReadBytes, lines);
  }
  return ToolResult::Ok(out);
}

ToolResult WriteFileTool(const Json& args, const ToolContext& ctx) {
  auto path = PathArg(args, ctx);
  if (!path.ok()) return Err(path.status());
  if (auto info = path->root.Stat(path->rel); info.ok() && info->type == DirEntry::Type::kDir)
    return ToolResult::Error("'" + args["path"].get<std::string>() + "' is a directory");
  const std::string content = args["content"].get<std::string>();
  Status st = WriteAtomically(*path, content);
  if (!st.ok()) return Err(st);
  return ToolResult::Ok(
      fmt::format("wrote {} bytes to {}", content.size(), path->rel.empty() ? "." : path->rel));
}

ToolResult EditFileTool(const Json& args, const ToolContext& ctx) {
  auto path = RegularFile(args, ctx);
  if (!path.ok()) return Err(path.status());
  const std::string rel = args["path"].get<std::string>();
  if (auto info = path->root.Stat(path->rel); info.ok() && info->size > kMaxEditBytes) {
    return ToolResult::Error(rel + " is too large to edit in place; use RunCommand tools");
  }
  auto text = ReadTreeFile(path->root, path->rel, kMaxEditBytes);
  if (!text.ok()) return ToolResult::Error("cannot read '" + rel + "'");
  const std::string old_s = args["old_string"].get<std::string>();
  const std::string new_s = args["new_string"].get<std::string>();
  if (old_s.empty()) return ToolResult::Error("old_string must not be empty");
  const size_t count = CountOccurrences(*text, old_s);
  if (count == 0)
    return ToolResult::Error("old_string not found in " + rel +
                             "; read the file and copy the exact text");
  if (count > 1) {
    return ToolResult::Error(fmt::format(
        "old_string occurs {} times in {}; include more surrounding text so it is unique", count,
        rel));
  }
  std::string out = *text;
  out.replace(out.find(old_s), old_s.size(), new_s);
  Status st = WriteAtomically(*path, out);
  if (!st.ok()) return Err(st);
  return ToolResult::Ok("edited " + rel);
}

ToolResult ListDirTool(const Json& args, const ToolContext& ctx) {
  auto path = PathArg(args, ctx, ".");
  if (!path.ok()) return Err(path.status());
  auto entries = path->root.List(path->rel);
  if (!entries.ok())
    return ToolResult::Error("'" + args.value("path", std::string(".")) + "' is not a directory");
  std::vector<std::string> names;
  for (TreeEntry& e : *entries) {
    if (e.info.type == DirEntry::Type::kDir) e.name += "/";
    names.push_back(std::move(e.name));
  }
  std::sort(names.begin(), names.end());
  std::string out;
  for (size_t i = 0; i < names.size() && i < kMaxListEntries; ++i) out += names[i] + "\n";
  if (names.size() > kMaxListEntries)
    out += fmt::format("[... {} more entries]\n", names.size() - kMaxListEntries);
  if (names.empty()) out = "(empty directory)\n";
  return ToolResult::Ok(out);
}

namespace {

const Json kPath = {{"type", "string"}, {"description", "path relative to the workspace root"}};

}  // namespace

Status RegisterFileTools(ToolRegistry& r) {
  const Json line = {{"type", "integer"}, {"minimum", 1}};
  MAESTRO_RETURN_IF_ERROR(r.Register(
      {kReadFile,
       "Read a text file of the workspace, optionally only lines start_line..end_line "
       "(1-based, inclusive).",
       ObjectSchema({{"path", kPath}, {"start_line", line}, {"end_line", line}}, {"path"}), true,
       ToolClass::kRead, std::chrono::seconds(30), 64 * 1024},
      ReadFileTool));
  MAESTRO_RETURN_IF_ERROR(r.Register(
      {kWriteFile,
       "Create or overwrite a file of the workspace with content (parent directories are created).",
       ObjectSchema({{"path", kPath}, {"content", {{"type", "string"}}}}, {"path", "content"}),
       false, ToolClass::kEdit, std::chrono::seconds(30), 4 * 1024},
      WriteFileTool));
  MAESTRO_RETURN_IF_ERROR(
      r.Register({kEditFile,
                  "Replace the exact text old_string with new_string in a "
                  "file; old_string must occur exactly once.",
                  ObjectSchema({{"path", kPath},
                                {"old_string", {{"type", "string"}, {"minLength", 1}}},
                                {"new_string", {{"type", "string"}}}},
                               {"path", "old_string", "new_string"}),
                  false, ToolClass::kEdit, std::chrono::seconds(30), 4 * 1024},
                 EditFileTool));
  MAESTRO_RETURN_IF_ERROR(
      r.Register({kListDir, "List a directory of the workspace (directories end with /).",
                  ObjectSchema({{"path", kPath}}, {}), true, ToolClass::kRead,
                  std::chrono::seconds(30), 32 * 1024},
                 ListDirTool));
  MAESTRO_RETURN_IF_ERROR(r.Register(
      {kGlob,
       "Find workspace files whose relative path matches a glob (* and ? within a directory, ** "
       "across directories).",
       ObjectSchema({{"pattern", {{"type", "string"}, {"minLength", 1}}}, {"path", kPath}},
                    {"pattern"}),
       true, ToolClass::kRead, std::chrono::seconds(30), 32 * 1024},
      GlobTool));
  return r.Register(
      {kGrep,
       "Search workspace files for a POSIX extended regular expression; prints path:line: text.",
       ObjectSchema(
           {{"pattern", {{"type", "string"}, {"minLength", 1}}},
            {"path", kPath},
            {"glob",
             {{"type", "string"}, {"description", "only files whose path matches this glob"}}},
            {"case_insensitive", {{"type", "boolean"}}}},
           {"pattern"}),
       true, ToolClass::kRead, std::chrono::seconds(60), 32 * 1024},
      GrepTool);
}

}  // namespace maestro::tools
