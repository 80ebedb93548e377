#include "tools/workspace_path.h"

#include <filesystem>
#include <string_view>

namespace maestro::tools {

namespace fs = std::filesystem;

bool IsInside(const std::string& root, const std::string& path) {
  if (path == root) return true;
  if (root == "/") return true;
  return path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
         path[root.size()] == '/';
}

Result<std::string> ResolveInWorkspace(const std::string& workspace_root,
                                       const std::string& relative) {
  std::string_view mount = kWorkspaceMount;
  std::string_view name = relative;
  if (name.substr(0, mount.size()) == mount &&
      (name.size() == mount.size() || name[mount.size()] == '/')) {
    name.remove_prefix(mount.size());
    while (!name.empty() && name.front() == '/') name.remove_prefix(1);
  }
  const fs::path rel(name);
  if (rel.is_absolute()) {
    return InvalidArgument("absolute path '" + relative +
                               "' refused: use a path relative to the workspace (" +
                               kWorkspaceMount + ")",
                           "path");
  }
  fs::path cur(workspace_root);
  bool exists = true;  // whether `cur` exists (after that, components are lexical)
  for (const auto& part : rel) {
    const std::string comp = part.string();
    if (comp.empty() || comp == ".") continue;
    if (comp == "..") {
      return InvalidArgument("path '" + relative + "' refused: '..' may not leave the workspace",
                             "path");
    }
    fs::path next = cur / comp;
    std::error_code ec;
    // One lstat per component: for anything but a symlink it says whether
    // the component exists as well.
    const fs::file_status st = exists ? fs::symlink_status(next, ec) : fs::file_status{};
    if (exists && fs::is_symlink(st)) {
      fs::path target = fs::canonical(next, ec);
      if (ec) {
        return InvalidArgument("path '" + relative + "' refused: dangling symlink '" +
                                   RelativeToWorkspace(workspace_root, next.string()) + "'",
                               "path");
      }
      if (!IsInside(workspace_root, target.string())) {
        return InvalidArgument("path '" + relative + "' refused: symlink '" +
                                   RelativeToWorkspace(workspace_root, next.string()) +
                                   "' points outside the workspace",
                               "path");
      }
      cur = target;
      continue;
    }
    exists = exists && fs::exists(st);
    cur = next;
  }
  return cur.lexically_normal().string();
}

std::string RelativeToWorkspace(const std::string& workspace_root, const std::string& absolute) {
  if (absolute == workspace_root) return ".";
  std::string rel = fs::path(absolute).lexically_relative(workspace_root).string();
  return rel.empty() ? absolute : rel;
}

}  // namespace maestro::tools
