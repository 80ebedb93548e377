// GitRepo: the only place maestro touches git, through libgit2 in-process.
//
// Where it sits: PrepareWorkspace initializes an ephemeral workspace with
// GitRepo::Init, CommitWorkspace records a successful job with CommitAll,
// and the handoff's files_changed check (engine/handoff/document) lists
// ChangedFiles. A workspace and its `.git/` are written by the agent, so they
// are untrusted: maestro never spawns the `git` binary on the host (its
// config could name core.fsmonitor, filter drivers or hooks to run as the
// server's user). libgit2 runs no hooks, no fsmonitor and no external filter
// drivers; the global, XDG and system config files are not read (the
// identity is fixed), and a repository whose git directory is not
// `<work tree>/.git` (core.worktree, a gitdir file, a symlinked `.git`, a
// commondir) is refused, so a commit never reads or writes outside the
// workspace it was asked for.
//
// Thread safety: libgit2 is initialized once (thread-safe, on first use).
// A GitRepo is owned by one thread; two GitRepo objects on the same
// directory are serialized by the index lock file (the loser gets an error).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"

struct git_repository;

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

class GitRepo {
 public:
  // Creates a repository in `dir` (which must exist) and opens it.
  static Result<GitRepo> Init(const std::string& dir);
  // Opens the repository whose work tree holds `dir` (searching parent
  // directories like `git -C dir` does). kNotFound when there is none;
  // kInvalidArgument when it is bare or its git directory lies elsewhere.
  static Result<GitRepo> Open(const std::string& dir);

  GitRepo(GitRepo&&) noexcept;
  GitRepo& operator=(GitRepo&&) noexcept;
  ~GitRepo();

  // The work tree, absolute, without a trailing slash.
  std::string WorkTree() const;

  // Paths (relative to the work tree) that differ from HEAD: new, modified,
  // deleted, renamed and untracked files, ignored ones (.gitignore) left out.
  Result<std::set<std::string>> ChangedFiles() const;

  // Stages every change (like `git add -A`, respecting .gitignore) and
  // commits it on HEAD as "maestro <maestro@localhost>". Returns the new
  // commit id (40 hex digits), or nullopt when the tree equals HEAD's.
  Result<std::optional<std::string>> CommitAll(const std::string& message);

  // HEAD's commit id and message subject; kNotFound while HEAD is unborn.
  // For tests and tools that read the result of CommitAll.
  Result<std::pair<std::string, std::string>> Head() const;

  // Diffs (git_diff.cc). No external diff driver or textconv runs (libgit2
  // has none); renames are detected; a blob over kMaxDiffBlobBytes counts
  // as binary. Read-only: the index is read, never written.
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
  explicit GitRepo(git_repository* repo) : repo_(repo) {}
  static Result<GitRepo> Checked(git_repository* repo);
  // The working tree against the tree of `from` ("" = empty tree; "HEAD"
  // allowed, unborn = empty).
  Result<GitDiffResult> DiffToWorkdir(const std::string& from) const;

  std::unique_ptr<git_repository, RepoFree> repo_;
};

}  // namespace maestro::tools
