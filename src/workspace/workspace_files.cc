#include "workspace/workspace_files.h"

#include <algorithm>
#include <filesystem>

#include "core/tree_root.h"
#include "core/utf8.h"
#include "workspace/workspace_path.h"

namespace maestro::tools {

namespace fs = std::filesystem;

namespace {

constexpr int kMaxDepth = 128;

// Depth first through the TreeRoot's listings: each directory is read through
// its own descriptor (never opendir on a path) and only a real directory is
// descended into; a directory swapped for a symlink meanwhile is refused by
// the kernel, so it lists nothing rather than the link's target.
void WalkListing(const TreeRoot& root, const std::string& rel, int depth, size_t max,
                 WorkspaceListing* out) {
  auto entries = root.List(rel);
  if (!entries.ok()) return;  // gone or swapped meanwhile
  std::sort(entries->begin(), entries->end(),
            [](const TreeEntry& a, const TreeEntry& b) { return a.name < b.name; });
  for (const TreeEntry& t : *entries) {
    if (t.name == ".git") continue;
    if (out->entries.size() >= max) {
      out->truncated = true;
      return;
    }
    const std::string path = rel.empty() ? t.name : rel + "/" + t.name;
    WorkspaceEntry e;
    e.path = path;
    e.modified_at = t.info.modified_ms;
    switch (t.info.type) {
      case DirEntry::Type::kDir:
        e.type = "dir";
        break;
      case DirEntry::Type::kSymlink:
        e.type = "symlink";
        e.size = static_cast<int64_t>(t.info.size);
        break;
      case DirEntry::Type::kFile:
        e.type = "file";
        e.size = static_cast<int64_t>(t.info.size);
        break;
      default:
        continue;  // fifo, socket, device: nothing a client could read
    }
    out->entries.push_back(std::move(e));
    if (t.info.type == DirEntry::Type::kDir && depth < kMaxDepth) {
      WalkListing(root, path, depth + 1, max, out);
      if (out->truncated) return;
    }
  }
}

bool HasGitComponent(const fs::path& p) {
  for (const auto& part : p) {
    if (part == ".git") return true;
  }
  return false;
}

}  // namespace

WorkspaceListing ListWorkspace(const std::string& root, size_t max_entries) {
  WorkspaceListing out;
  auto tree = TreeRoot::Open(root);
  if (tree.ok()) WalkListing(*tree, "", 0, max_entries, &out);
  return out;
}

Status CheckClientPath(const std::string& relative) {
  if (relative.empty()) return InvalidArgument("path is empty", "path");
  if (relative.find('\0') != std::string::npos) {
    return InvalidArgument("path contains a NUL byte", "path");
  }
  const fs::path p(relative);
  if (p.is_absolute()) return InvalidArgument("path must be relative to the workspace", "path");
  for (const auto& part : p) {
    if (part == "..") return InvalidArgument("path may not contain '..'", "path");
    if (part == ".git") return InvalidArgument("path may not name .git", "path");
  }
  return Status::Ok();
}

Result<WorkspaceFile> ReadWorkspaceFile(Env& /*env*/, const std::string& root,
                                        const std::string& relative, size_t max) {
  MAESTRO_RETURN_IF_ERROR(CheckClientPath(relative));
  auto tree = TreeRoot::Open(root);
  if (!tree.ok()) return NotFound("no file " + relative);
  // Symlinks inside the workspace are followed by reading them; the open
  // below is of the resolved, symlink-free path and refuses any symlink
  // that appeared since (RESOLVE_NO_SYMLINKS).
  MAESTRO_ASSIGN_OR_RETURN(std::string resolved, ResolveInTree(*tree, relative));
  // A symlink inside the workspace may still point into .git.
  if (resolved.empty() || HasGitComponent(resolved)) {
    return InvalidArgument("path '" + relative + "' does not name a readable file", "path");
  }
  // Only a regular file (a FIFO must not hang us).
  auto file = tree->OpenRead(resolved);
  if (!file.ok()) {
    if (file.status().code() == StatusCode::kNotFound) return NotFound("no file " + relative);
    if (file.status().field() == "type") {
      return InvalidArgument("path '" + relative + "' is not a regular file", "path");
    }
    return InvalidArgument("path '" + relative + "' cannot be read", "path");
  }
  auto size = (*file)->Size();
  if (!size.ok()) return InvalidArgument("path '" + relative + "' cannot be read", "path");
  WorkspaceFile f;
  f.path = fs::path(relative).lexically_normal().string();
  f.size = static_cast<int64_t>(*size);
  const size_t want = static_cast<size_t>(std::min<uint64_t>(max, *size));
  f.bytes.resize(want);
  size_t got = 0;
  while (got < want) {
    auto n = (*file)->ReadAt(got, f.bytes.data() + got, want - got);
    if (!n.ok() || *n == 0) break;  // an error or a file that shrank meanwhile
    got += *n;
  }
  f.bytes.resize(got);
  f.truncated = *size > got;
  return f;
}

bool LooksLikeText(const std::string& bytes, bool cut) {
  if (bytes.find('\0') != std::string::npos) return false;
  std::string_view text(bytes);
  if (cut) {
    // The read may have stopped inside a character: drop an incomplete
    // sequence at the very end (its lead byte and up to 2 continuations).
    size_t lead = text.size();
    for (size_t back = 0; back < 3 && lead > 0; ++back) {
      const unsigned char c = static_cast<unsigned char>(text[lead - 1]);
      if ((c & 0xC0) != 0x80) break;
      --lead;
    }
    if (lead > 0) {
      const unsigned char c = static_cast<unsigned char>(text[lead - 1]);
      const size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
      if (need > 1 && text.size() - (lead - 1) < need) text = text.substr(0, lead - 1);
    }
  }
  return IsValidUtf8(text);
}

}  // namespace maestro::tools
