// GitRepo: the only place maestro touches git, through libgit2 in-process.
//
// Where it sits: PrepareWorkspace gives an ephemeral workspace its own
// repository, CommitWorkspace records a successful job with CommitAll, the
// diff routes read History and the diffs, and the handoff's files_changed
// check (engine/handoff/document) lists ChangedFiles.
//
// Two kinds of repository, one rule: nothing the agent writes decides where
// host-side git reads or writes.
//   - An ephemeral workspace's repository (OpenExternal) is a bare git
//     directory under the data dir, <data>/tasks/<task>/git, which no sandbox
//     binds; the workspace is only the tree its snapshots read. A `.git` the
//     agent makes in the workspace is ordinary content: never opened, never
//     committed.
//   - A persistent space that is its own repository (Open, Init) keeps
//     `<space>/.git`; it is opened only after a check through TreeRoot that
//     `.git` is a real directory with no symlink anywhere in it (hooks/
//     aside, which nothing here reads), no `commondir` and no
//     `objects/info/alternates`, and no core.worktree; CommitAll checks again
//     right before it writes. It is opened as a bare repository, so libgit2
//     has no work tree to walk.
// libgit2 never reads the work tree by path: ChangedFiles, CommitAll,
// DiffWorkdir and DiffRange compare HEAD (or a commit) with a tree built
// from the work tree through core/tree_root.h (git_snapshot.h), so a
// directory swapped for a symlink mid-walk reads nothing outside it. The
// diffs build that tree in memory (a mempack object database); only
// CommitAll writes objects to disk.
//
// maestro never spawns the `git` binary on the host (a space's config could
// name core.fsmonitor, filter drivers or hooks to run as the server's user);
// libgit2 runs no hooks, no fsmonitor and no external filter drivers, and
// the global, XDG and system config files are not read (the identity is
// fixed).
//
// Thread safety: libgit2 is initialized once (thread-safe, on first use).
// A GitRepo is owned by one thread; two commits to one repository at once
// are serialized by its ref lock file (the loser gets an error).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"

struct git_repository;
struct git_oid;

namespace maestro::tools {

// One file of a diff (GitRepo::DiffCommit / DiffWorkdir / DiffRange).
struct GitFileDiff {
  std::string path;      // the new path (the old one for a deletion)
  std::string old_path;  // set for a rename only
  std::string status;    // added | modified | deleted | renamed
  bool binary = false;
  int64_t additions = 0;
  int64_t deletions = 0;
  std::string patch;  // unified diff text of this file, at most kMaxPatchBytes
  bool patch_truncated = false;
};

struct GitDiffResult {
  std::vector<GitFileDiff> files;  // path order, at most kMaxDiffFiles
  bool truncated = false;          // more files differed than were listed
};

struct GitCommitInfo {
  std::string id;      // 40 hex digits
  std::string parent;  // first parent's id; "" for a root commit
  std::string message;
};

inline constexpr size_t kMaxPatchBytes = 256 * 1024;
inline constexpr size_t kMaxDiffFiles = 2000;
// A file larger than this is diffed as binary (never loaded for a patch).
inline constexpr int64_t kMaxDiffBlobBytes = 4 * 1024 * 1024;
// A work-tree file larger than this is never read into a snapshot: HEAD's
// version stays when HEAD tracks it, a new one is left out (git_snapshot.h).
inline constexpr uint64_t kMaxSnapshotFileBytes = 256ull * 1024 * 1024;

class GitRepo {
 public:
  // An ephemeral workspace's repository: the bare git directory `git_dir`
  // (host-only) with `work_tree` as the tree its snapshots read. Missing:
  // created when `create` (mkdir -p; empty template), else kNotFound.
  static Result<GitRepo> OpenExternal(const std::string& git_dir, const std::string& work_tree,
                                      bool create);
  // Creates a repository in `dir`'s own `.git` (`dir` must exist) and opens
  // it as Open does: a persistent space's kind (and the tests').
  static Result<GitRepo> Init(const std::string& dir);
  // The repository `<dir>/.git` of a persistent space (no search of parent
  // directories). kNotFound when `dir` has no `.git`; kInvalidArgument
  // (field "workspace") when it is refused: `.git` is a file or a symlink,
  // or its metadata holds a symlink, a commondir, alternates or a
  // core.worktree (the rules above).
  static Result<GitRepo> Open(const std::string& dir);

  GitRepo(GitRepo&&) noexcept;
  GitRepo& operator=(GitRepo&&) noexcept;
  ~GitRepo();

  // The work tree, absolute, without a trailing slash.
  std::string WorkTree() const { return work_tree_; }
  // The git directory, absolute, without a trailing slash.
  std::string GitDir() const { return git_dir_; }

  // Paths (relative to the work tree) that differ from HEAD: new, modified,
  // deleted, renamed and untracked files, ignored ones (.gitignore) left out.
  Result<std::set<std::string>> ChangedFiles() const;

  // Commits the work tree's snapshot (like `git add -A`, respecting
  // .gitignore) on HEAD as "maestro <maestro@localhost>". Returns the new
  // commit id (40 hex digits), or nullopt when the tree equals HEAD's. A
  // space's index is reset to the new tree, so its owner's `git status`
  // stays clean; an ephemeral repository has no index.
  Result<std::optional<std::string>> CommitAll(const std::string& message);

  // HEAD's commit id and message subject; kNotFound while HEAD is unborn.
  // For tests and tools that read the result of CommitAll.
  Result<std::pair<std::string, std::string>> Head() const;

  // Diffs (git_diff.cc). No external diff driver or textconv runs (libgit2
  // has none); renames are detected; a blob over kMaxDiffBlobBytes counts
  // as binary. Read-only: nothing is written to the repository.
  //
  // HEAD's history, newest first (time order), at most `max` commits; empty
  // while HEAD is unborn.
  Result<std::vector<GitCommitInfo>> History(size_t max) const;
  // `commit` (40 hex digits) against its first parent (the empty tree for a
  // root commit). kNotFound for an unknown commit.
  Result<GitDiffResult> DiffCommit(const std::string& commit) const;
  // The working tree (untracked files included, ignored ones not) against
  // HEAD (the empty tree while HEAD is unborn): what CommitAll would commit.
  Result<GitDiffResult> DiffWorkdir() const;
  // The working tree against `from` (a commit id; "" = the empty tree).
  Result<GitDiffResult> DiffRange(const std::string& from) const;

 private:
  struct RepoFree {
    void operator()(git_repository* r) const;
  };
  using RepoPtr = std::unique_ptr<git_repository, RepoFree>;
  GitRepo(git_repository* repo, std::string git_dir, std::string work_tree, bool in_tree)
      : repo_(repo),
        git_dir_(std::move(git_dir)),
        work_tree_(std::move(work_tree)),
        in_tree_(in_tree) {}
  // A second handle on the repository whose new objects stay in memory
  // (for the diffs' snapshots).
  Result<RepoPtr> Scratch() const;
  // Writes the work tree's snapshot into `repo` (git_snapshot.h) against
  // HEAD's tree; *id = the tree's id.
  Status Snapshot(git_repository* repo, git_oid* id) const;
  // The working tree against the tree of `from` ("" = empty tree; "HEAD"
  // allowed, unborn = empty).
  Result<GitDiffResult> DiffToWorkdir(const std::string& from) const;

  RepoPtr repo_;
  std::string git_dir_;
  std::string work_tree_;
  bool in_tree_ = false;  // a space's own `<work tree>/.git`
};

}  // namespace maestro::tools
