#include "workspace/workspace_path.h"

#include <filesystem>
#include <string_view>
#include <vector>

namespace maestro::tools {

namespace fs = std::filesystem;

namespace {

// Symlinks followed in one resolution, as the kernel's MAXSYMLINKS.
constexpr int kMaxLinks = 40;

std::vector<std::string> SplitModelPath(std::string_view p) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    if (end == std::string_view::npos) end = p.size();
    std::string_view part = p.substr(start, end - start);
    if (!part.empty() && part != ".") out.emplace_back(part);
    start = end + 1;
  }
  return out;
}

std::string JoinParts(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) {
    if (!out.empty()) out += '/';
    out += p;
  }
  return out;
}

// `path` without `prefix` when it names the prefix or lies under it.
bool StripPrefix(std::string_view* path, std::string_view prefix) {
  if (path->substr(0, prefix.size()) != prefix) return false;
  if (path->size() != prefix.size() && (*path)[prefix.size()] != '/') return false;
  path->remove_prefix(prefix.size());
  return true;
}

// A chase() over the tree: components are appended to `resolved` one at a
// time; an existing symlink is replaced by its target's resolution, which
// must exist and stay beneath the root. Only lstat and readlink through the
// TreeRoot: nothing is opened for use here.
class Resolver {
 public:
  Resolver(const TreeRoot& root, const std::string& asked) : root_(root), asked_(asked) {}

  // `from_link`: the parts are a symlink's target (named `link`), where `..`
  // climbs (within the root); in a path the model wrote `..` is refused.
  Status Walk(std::vector<std::string>* resolved, const std::vector<std::string>& parts,
              const std::string& link, bool* missing) {
    for (const std::string& comp : parts) {
      if (comp == "..") {
        if (link.empty()) return Refused("'..' may not leave the workspace");
        if (resolved->empty()) return Outside(link);
        resolved->pop_back();
        continue;
      }
      resolved->push_back(comp);
      if (*missing) continue;  // below a missing component the rest is lexical
      auto info = root_.Stat(JoinParts(*resolved));
      if (!info.ok()) {  // missing, or a file used as a directory
        *missing = true;
        continue;
      }
      if (info->type != DirEntry::Type::kSymlink) continue;
      const std::string at = JoinParts(*resolved);
      resolved->pop_back();
      auto target = root_.ReadLink(at);
      if (!target.ok() || ++links_ > kMaxLinks) return Dangling(at);
      std::string_view t = *target;
      std::vector<std::string> sub = *resolved;  // a relative target starts here
      if (!t.empty() && t.front() == '/') {
        if (!StripPrefix(&t, root_.path()) && !StripPrefix(&t, kWorkspaceMount)) {
          return Outside(at);
        }
        sub.clear();
      }
      bool sub_missing = false;
      MAESTRO_RETURN_IF_ERROR(Walk(&sub, SplitModelPath(t), at, &sub_missing));
      if (sub_missing) return Dangling(at);
      *resolved = std::move(sub);
    }
    return Status::Ok();
  }

 private:
  Status Refused(const std::string& why) const {
    return InvalidArgument("path '" + asked_ + "' refused: " + why, "path");
  }
  Status Outside(const std::string& link) const {
    return Refused("symlink '" + link + "' points outside the workspace");
  }
  Status Dangling(const std::string& link) const {
    return Refused("dangling symlink '" + link + "'");
  }

  const TreeRoot& root_;
  const std::string& asked_;
  int links_ = 0;
};

}  // namespace

bool IsInside(const std::string& root, const std::string& path) {
  if (path == root) return true;
  if (root == "/") return true;
  return path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
         path[root.size()] == '/';
}

Result<TreeRoot> OpenWorkspaceTree(const std::string& workspace_root) {
  auto root = TreeRoot::Open(workspace_root);
  if (!root.ok()) {
    return Status(root.status().code(), std::string("the workspace (") + kWorkspaceMount +
                                            ") is not available: it does not exist as a directory");
  }
  return root;
}

Result<std::string> ResolveInTree(const TreeRoot& root, const std::string& relative) {
  std::string_view name = relative;
  if (StripPrefix(&name, kWorkspaceMount)) {
    while (!name.empty() && name.front() == '/') name.remove_prefix(1);
  }
  if (!name.empty() && name.front() == '/') {
    return InvalidArgument("absolute path '" + relative +
                               "' refused: use a path relative to the workspace (" +
                               kWorkspaceMount + ")",
                           "path");
  }
  if (name.find('\0') != std::string_view::npos) {
    return InvalidArgument("path '" + relative + "' refused: it contains a NUL byte", "path");
  }
  std::vector<std::string> resolved;
  bool missing = false;
  Resolver resolver(root, relative);
  MAESTRO_RETURN_IF_ERROR(resolver.Walk(&resolved, SplitModelPath(name), "", &missing));
  return JoinParts(resolved);
}

Result<std::string> ResolveInWorkspace(const std::string& workspace_root,
                                       const std::string& relative) {
  MAESTRO_ASSIGN_OR_RETURN(TreeRoot root, TreeRoot::Open(workspace_root));
  MAESTRO_ASSIGN_OR_RETURN(std::string rel, ResolveInTree(root, relative));
  return rel.empty() ? workspace_root : workspace_root + "/" + rel;
}

std::string RelativeToWorkspace(const std::string& workspace_root, const std::string& absolute) {
  if (absolute == workspace_root) return ".";
  std::string rel = fs::path(absolute).lexically_relative(workspace_root).string();
  return rel.empty() ? absolute : rel;
}

}  // namespace maestro::tools
