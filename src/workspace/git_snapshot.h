// Internal to maestro_git (git_repo.cc, git_diff.cc): the work tree written
// into a repository's object database as a tree, read only through
// core/tree_root.h, so libgit2 never opens a work-tree path itself.
//
// Why: a workspace is written by the agent while the host reads it. libgit2's
// own work-tree walk (status, add_all, diff to workdir) opens paths by name
// and follows a directory the agent swaps for a symlink between its stat and
// its open, so a commit or a diff could read any host file the server can.
// Here every listing and read is resolved beneath the work tree's descriptor
// (TreeRoot): a symlink is stored as a link blob of its target text (as git
// stores it), never followed; an entry that turns into a symlink or vanishes
// mid-walk is left out of the snapshot; FIFOs, sockets and devices are never
// opened.
//
// What the snapshot holds (what `git add -A` would stage):
//   - every regular file and symlink, except below a `.git` component (any
//     depth, any letter case: an agent's `.git` is ordinary content that is
//     never committed, and never opened as a repository);
//   - untracked entries that .gitignore rules exclude are left out (a file
//     HEAD tracks stays whatever the rules say, as in git). The rules come
//     from every `.gitignore` on the way down (read through TreeRoot) and,
//     for a space's own repository, `.git/info/exclude`; the matcher is
//     git's wildmatch (`*`, `?`, `[...]`, `**`), `!` negations, `/` anchors
//     and directory-only patterns; a directory an ignore rule excludes is
//     not entered (unless HEAD tracks something in it);
//   - a file's mode is HEAD's (100644 or 100755) when HEAD tracks it, else
//     100644 (TreeRoot reports no permission bits: an executable bit the
//     agent sets on a new file is not recorded);
//   - a gitlink (submodule) HEAD records is kept as HEAD has it while its
//     directory exists;
//   - a file over kMaxSnapshotFileBytes is not read: HEAD's blob stays when
//     HEAD tracks the path, a new one is left out.
//
// Thread safety: as the git_repository passed in (one thread at a time).
#pragma once

#include <git2.h>

#include <string>

#include "core/status.h"
#include "core/tree_root.h"

namespace maestro::tools::git_internal {

struct SnapshotOptions {
  // Also apply `.git/info/exclude` of the work tree (a space's own
  // repository keeps it there).
  bool info_exclude = false;
};

// Writes the tree of `root` (the rules above) into `repo`'s object
// database; *out = the root tree's id (the empty tree's when nothing is
// kept). `head` (may be null: unborn) decides what is tracked.
Status SnapshotTree(git_repository* repo, const TreeRoot& root, const git_tree* head,
                    const SnapshotOptions& options, git_oid* out);

// git's wildmatch with WM_PATHNAME: `*` and `?` never match '/', `**`
// between slashes (or at either end) matches any number of directories.
// Exposed for tests.
bool GitWildMatch(const std::string& pattern, const std::string& path);

}  // namespace maestro::tools::git_internal
