#include "workspace/git_snapshot.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "workspace/git_owned.h"
#include "workspace/git_repo.h"

namespace maestro::tools::git_internal {
namespace {

// A .gitignore larger than this is not read (its rules are left out).
constexpr size_t kMaxIgnoreFileBytes = 1024 * 1024;
// Directories deeper than this are left out of the snapshot.
constexpr int kMaxDepth = 256;

using Treebuilder = Owned<git_treebuilder, git_treebuilder_free>;

bool IsGitName(const std::string& name) {
  if (name.size() != 4) return false;
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower == ".git";
}

// `[...]` at p[*pi] (just past '[') against c; advances *pi past ']'.
// false with *pi = npos for an unterminated class (matches nothing).
bool MatchClass(std::string_view p, size_t* pi, char c) {
  size_t i = *pi;
  bool negate = false;
  if (i < p.size() && (p[i] == '!' || p[i] == '^')) {
    negate = true;
    ++i;
  }
  bool matched = false;
  bool first = true;
  while (i < p.size() && (p[i] != ']' || first)) {
    first = false;
    char lo = p[i];
    if (lo == '\\' && i + 1 < p.size()) lo = p[++i];
    char hi = lo;
    if (i + 2 < p.size() && p[i + 1] == '-' && p[i + 2] != ']') {
      hi = p[i + 2];
      if (hi == '\\' && i + 3 < p.size()) {
        hi = p[i + 3];
        ++i;
      }
      i += 2;
    }
    if (static_cast<unsigned char>(c) >= static_cast<unsigned char>(lo) &&
        static_cast<unsigned char>(c) <= static_cast<unsigned char>(hi)) {
      matched = true;
    }
    ++i;
  }
  if (i >= p.size()) {
    *pi = std::string_view::npos;
    return false;
  }
  *pi = i + 1;
  return matched != negate;
}

bool Wild(std::string_view p, std::string_view t) {
  size_t pi = 0, ti = 0;
  while (pi < p.size()) {
    const char c = p[pi];
    if (c == '*') {
      size_t end = pi;
      while (end < p.size() && p[end] == '*') ++end;
      if (end - pi >= 2 && (pi == 0 || p[pi - 1] == '/') && (end == p.size() || p[end] == '/')) {
        if (end == p.size()) return true;  // a trailing "**": everything below
        // "**/": zero or more whole directories.
        const std::string_view rest = p.substr(end + 1);
        for (size_t k = ti; k <= t.size(); ++k) {
          if ((k == ti || t[k - 1] == '/') && Wild(rest, t.substr(k))) return true;
        }
        return false;
      }
      const std::string_view rest = p.substr(end);
      for (size_t k = ti; k <= t.size(); ++k) {
        if (Wild(rest, t.substr(k))) return true;
        if (k < t.size() && t[k] == '/') break;
      }
      return false;
    }
    if (ti >= t.size()) return false;
    if (c == '?') {
      if (t[ti] == '/') return false;
    } else if (c == '[') {
      size_t next = pi + 1;
      if (t[ti] == '/' || !MatchClass(p, &next, t[ti])) return false;
      pi = next;
      ++ti;
      continue;
    } else {
      char want = c;
      if (c == '\\' && pi + 1 < p.size()) want = p[++pi];
      if (want != t[ti]) return false;
    }
    ++pi;
    ++ti;
  }
  return ti == t.size();
}

struct IgnoreRule {
  std::string base;  // the directory of its .gitignore ("" = the root)
  std::string pattern;
  bool negate = false;
  bool dir_only = false;
  bool basename = false;  // no '/' in the pattern: matches the name at any depth
};

// The rules of one ignore file's text, relative to `base`.
void ParseIgnore(const std::string& text, const std::string& base, std::vector<IgnoreRule>* out) {
  size_t at = 0;
  while (at <= text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(at, nl - at);
    at = nl + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    // Trailing spaces go unless escaped.
    while (!line.empty() && line.back() == ' ' &&
           (line.size() < 2 || line[line.size() - 2] != '\\')) {
      line.pop_back();
    }
    if (line.empty() || line[0] == '#') continue;
    IgnoreRule r;
    r.base = base;
    if (line[0] == '!') {
      r.negate = true;
      line.erase(0, 1);
    } else if (line[0] == '\\' && line.size() > 1 && (line[1] == '!' || line[1] == '#')) {
      line.erase(0, 1);
    }
    if (!line.empty() && line.back() == '/') {
      r.dir_only = true;
      while (!line.empty() && line.back() == '/') line.pop_back();
    }
    if (line.empty()) continue;
    r.basename = line.find('/') == std::string::npos;
    if (line[0] == '/') line.erase(0, 1);
    r.pattern = std::move(line);
    out->push_back(std::move(r));
  }
}

struct Walk {
  git_repository* repo;
  const TreeRoot* root;
  std::vector<IgnoreRule> rules;  // root first: the last match wins

  bool Ignored(const std::string& path, const std::string& name, bool is_dir) const {
    bool ignored = false;
    for (const IgnoreRule& r : rules) {
      if (r.dir_only && !is_dir) continue;
      bool hit;
      if (r.basename) {
        hit = Wild(r.pattern, name);
      } else {
        const std::string rel = r.base.empty() ? path : path.substr(r.base.size() + 1);
        hit = Wild(r.pattern, rel);
      }
      if (hit) ignored = !r.negate;
    }
    return ignored;
  }

  // The blob of the file or symlink `path`; false to leave it out (gone,
  // swapped for something else, over the size cap with no HEAD blob).
  Result<bool> Blob(const std::string& path, const FileInfo& info, const git_tree_entry* head,
                    git_oid* id, git_filemode_t* mode) {
    if (info.type == DirEntry::Type::kSymlink) {
      auto target = root->ReadLink(path);
      if (!target.ok()) return false;  // changed since the listing
      if (int rc = git_blob_create_from_buffer(id, repo, target->data(), target->size()); rc < 0) {
        return GitError("git hash-object " + path, rc);
      }
      *mode = GIT_FILEMODE_LINK;
      return true;
    }
    const bool tracked_blob = head != nullptr && git_tree_entry_type(head) == GIT_OBJECT_BLOB &&
                              git_tree_entry_filemode(head) != GIT_FILEMODE_LINK;
    *mode = tracked_blob ? git_tree_entry_filemode(head) : GIT_FILEMODE_BLOB;
    uint64_t size = info.size;
    Result<std::string> bytes = std::string();
    if (size <= kMaxSnapshotFileBytes) {
      bytes = ReadTreeFile(*root, path, kMaxSnapshotFileBytes, &size);
      if (!bytes.ok()) return false;  // gone, or no longer a regular file
    }
    if (size > kMaxSnapshotFileBytes) {
      if (!tracked_blob) return false;
      git_oid_cpy(id, git_tree_entry_id(head));  // not read: HEAD's version stays
      return true;
    }
    if (int rc = git_blob_create_from_buffer(id, repo, bytes->data(), bytes->size()); rc < 0) {
      return GitError("git hash-object " + path, rc);
    }
    return true;
  }

  // Writes the tree of directory `dir` ("" = the root) into *id; *empty
  // when nothing under it is kept.
  Status Dir(const std::string& dir, const git_tree* head, bool under_ignored, int depth,
             git_oid* id, bool* empty) {
    *empty = true;
    auto listed = root->List(dir);
    if (!listed.ok()) {
      // Gone or swapped for a symlink since its parent was listed: nothing
      // of it is kept (never read through the link).
      if (dir.empty()) return listed.status();
      return Status::Ok();
    }
    std::vector<TreeEntry> entries = std::move(listed).value();
    std::sort(entries.begin(), entries.end(),
              [](const TreeEntry& a, const TreeEntry& b) { return a.name < b.name; });
    const size_t rules_before = rules.size();
    for (const TreeEntry& e : entries) {
      if (e.name != ".gitignore" || e.info.type != DirEntry::Type::kFile) continue;
      auto text =
          ReadTreeFile(*root, dir.empty() ? e.name : dir + "/" + e.name, kMaxIgnoreFileBytes);
      if (text.ok()) ParseIgnore(*text, dir, &rules);
    }
    Treebuilder tb;
    if (int rc = git_treebuilder_new(&tb.ptr, repo, nullptr); rc < 0) {
      return GitError("git treebuilder", rc);
    }
    Status st = Status::Ok();
    for (const TreeEntry& e : entries) {
      if (IsGitName(e.name)) continue;
      const std::string path = dir.empty() ? e.name : dir + "/" + e.name;
      const git_tree_entry* h = head ? git_tree_entry_byname(head, e.name.c_str()) : nullptr;
      git_oid child{};
      git_filemode_t mode = GIT_FILEMODE_BLOB;
      if (e.info.type == DirEntry::Type::kDir) {
        if (h != nullptr && git_tree_entry_filemode(h) == GIT_FILEMODE_COMMIT) {
          git_oid_cpy(&child, git_tree_entry_id(h));  // a submodule: as HEAD has it
          mode = GIT_FILEMODE_COMMIT;
        } else {
          Tree sub;
          if (h != nullptr && git_tree_entry_type(h) == GIT_OBJECT_TREE) {
            if (int rc = git_tree_lookup(&sub.ptr, repo, git_tree_entry_id(h)); rc < 0) {
              st = GitError("git tree " + path, rc);
              break;
            }
          }
          const bool ignored = under_ignored || Ignored(path, e.name, true);
          if ((ignored && sub.ptr == nullptr) || depth >= kMaxDepth) continue;
          bool sub_empty = true;
          st = Dir(path, sub.ptr, ignored, depth + 1, &child, &sub_empty);
          if (!st.ok()) break;
          if (sub_empty) continue;
          mode = GIT_FILEMODE_TREE;
        }
      } else if (e.info.type == DirEntry::Type::kFile || e.info.type == DirEntry::Type::kSymlink) {
        const bool tracked = h != nullptr && git_tree_entry_type(h) == GIT_OBJECT_BLOB;
        if (!tracked && (under_ignored || Ignored(path, e.name, false))) continue;
        auto kept = Blob(path, e.info, h, &child, &mode);
        if (!kept.ok()) {
          st = kept.status();
          break;
        }
        if (!*kept) continue;
      } else {
        continue;  // a FIFO, socket or device: never opened, never committed
      }
      // An invalid name (".git" spelt for another filesystem, "..") is left
      // out rather than failing the whole snapshot.
      if (git_treebuilder_insert(nullptr, tb.ptr, e.name.c_str(), &child, mode) == 0) {
        *empty = false;
      }
    }
    rules.resize(rules_before);
    MAESTRO_RETURN_IF_ERROR(st);
    if (int rc = git_treebuilder_write(id, tb.ptr); rc < 0) return GitError("git write-tree", rc);
    return Status::Ok();
  }
};

}  // namespace

bool GitWildMatch(const std::string& pattern, const std::string& path) {
  return Wild(pattern, path);
}

Status SnapshotTree(git_repository* repo, const TreeRoot& root, const git_tree* head,
                    const SnapshotOptions& options, git_oid* out) {
  Walk walk{repo, &root, {}};
  if (options.info_exclude) {
    auto text = ReadTreeFile(root, ".git/info/exclude", kMaxIgnoreFileBytes);
    if (text.ok()) ParseIgnore(*text, "", &walk.rules);
  }
  bool empty = true;
  return walk.Dir("", head, /*under_ignored=*/false, 0, out, &empty);
}

}  // namespace maestro::tools::git_internal
