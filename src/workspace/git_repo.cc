#include "workspace/git_repo.h"

#include <git2.h>
#include <git2/sys/mempack.h>

#include <filesystem>
#include <mutex>

#include "core/tree_root.h"
#include "workspace/git_owned.h"
#include "workspace/git_snapshot.h"

namespace maestro::tools {

namespace fs = std::filesystem;
using namespace git_internal;

namespace {

// git_libgit2_init once per process, and no config file outside the
// repository: the commit must not depend on the host's git configuration.
// Owner validation (safe.directory) guards against running commands a
// foreign repository's config names; libgit2 runs none, and a persistent
// space is usually owned by a person rather than the server's user.
void InitLibgit2() {
  static std::once_flag once;
  std::call_once(once, [] {
    git_libgit2_init();
    for (int level : {GIT_CONFIG_LEVEL_SYSTEM, GIT_CONFIG_LEVEL_XDG, GIT_CONFIG_LEVEL_GLOBAL,
                      GIT_CONFIG_LEVEL_PROGRAMDATA}) {
      git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, level, "");
    }
    git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
  });
}

std::string Canonical(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(path, ec);
  std::string s = (ec ? fs::path(path) : p).lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

// What a space's own `.git` must not hold: a commondir (the objects and
// refs of another directory) or alternates (another repository's objects).
constexpr const char* kRefusedGitFiles[] = {"commondir", "objects/info/alternates"};

Status Refused(const std::string& dir, const std::string& why) {
  return InvalidArgument("the repository of " + dir + " is refused: " + why, "workspace");
}

// No symlink anywhere under `.git/<rel>` (hooks/ aside: nothing reads it),
// through TreeRoot: a planted link would make libgit2 read or write
// another directory.
Status NoSymlinkBelow(const TreeRoot& root, const std::string& rel, int depth) {
  auto entries = root.List(rel);
  if (!entries.ok()) {
    return Refused(root.path(), rel + " cannot be listed: " + entries.status().message());
  }
  for (const TreeEntry& e : *entries) {
    const std::string path = rel + "/" + e.name;
    if (e.info.type == DirEntry::Type::kSymlink)
      return Refused(root.path(), path + " is a symlink");
    if (e.info.type == DirEntry::Type::kDir && path != ".git/hooks") {
      if (depth > 64) return Refused(root.path(), path + " is nested too deep");
      MAESTRO_RETURN_IF_ERROR(NoSymlinkBelow(root, path, depth + 1));
    }
  }
  return Status::Ok();
}

// The checks of a space's own repository (git_repo.h). kNotFound when the
// work tree has no `.git`.
Status CheckInTreeGit(const std::string& work_tree) {
  MAESTRO_ASSIGN_OR_RETURN(TreeRoot root, TreeRoot::Open(work_tree));
  auto git = root.Stat(".git");
  if (git.status().code() == StatusCode::kNotFound)
    return NotFound("not a git work tree: " + work_tree);
  if (!git.ok()) return Refused(work_tree, ".git: " + git.status().message());
  if (git->type != DirEntry::Type::kDir) {
    return Refused(work_tree, ".git is not a directory (a symlink or a gitdir file)");
  }
  for (const char* name : kRefusedGitFiles) {
    auto st = root.Stat(std::string(".git/") + name);
    if (st.status().code() != StatusCode::kNotFound) {
      return Refused(work_tree, std::string(".git/") + name + " exists");
    }
  }
  return NoSymlinkBelow(root, ".git", 0);
}

// Opens `git_dir` as a bare repository: libgit2 gets no work tree.
Result<git_repository*> OpenBare(const std::string& git_dir) {
  git_repository* raw = nullptr;
  if (int rc = git_repository_open_bare(&raw, git_dir.c_str()); rc < 0) {
    if (rc == GIT_ENOTFOUND) return NotFound("no git repository at " + git_dir);
    return GitError("git open " + git_dir, rc);
  }
  return raw;
}

}  // namespace

void GitRepo::RepoFree::operator()(git_repository* r) const { git_repository_free(r); }

GitRepo::GitRepo(GitRepo&&) noexcept = default;
GitRepo& GitRepo::operator=(GitRepo&&) noexcept = default;
GitRepo::~GitRepo() = default;

Result<GitRepo> GitRepo::OpenExternal(const std::string& git_dir, const std::string& work_tree,
                                      bool create) {
  InitLibgit2();
  std::error_code ec;
  git_repository* raw = nullptr;
  if (fs::exists(git_dir, ec)) {
    auto opened = OpenBare(git_dir);
    // Not a repository (an init cut short by a crash): made anew below
    // when `create`.
    if (opened.ok()) raw = *opened;
    if (!opened.ok() && (!create || opened.status().code() != StatusCode::kNotFound)) {
      return opened.status();
    }
  } else if (!create) {
    return NotFound("no git repository at " + git_dir);
  }
  if (raw == nullptr) {
    git_repository_init_options opts = GIT_REPOSITORY_INIT_OPTIONS_INIT;
    // Bare (no work tree for libgit2 to walk) with an empty template (git's
    // own rule for ""): no description, hooks/README.sample or info/exclude.
    opts.flags = GIT_REPOSITORY_INIT_MKPATH | GIT_REPOSITORY_INIT_BARE |
                 GIT_REPOSITORY_INIT_EXTERNAL_TEMPLATE;
    opts.template_path = "";
    if (int rc = git_repository_init_ext(&raw, git_dir.c_str(), &opts); rc < 0) {
      return GitError("git init " + git_dir, rc);
    }
  }
  return GitRepo(raw, Canonical(git_dir), Canonical(work_tree), /*in_tree=*/false);
}

Result<GitRepo> GitRepo::Init(const std::string& dir) {
  InitLibgit2();
  git_repository* raw = nullptr;
  git_repository_init_options opts = GIT_REPOSITORY_INIT_OPTIONS_INIT;
  opts.flags = GIT_REPOSITORY_INIT_MKPATH | GIT_REPOSITORY_INIT_EXTERNAL_TEMPLATE;
  opts.template_path = "";
  if (int rc = git_repository_init_ext(&raw, dir.c_str(), &opts); rc < 0) {
    return GitError("git init " + dir, rc);
  }
  git_repository_free(raw);
  return Open(dir);
}

Result<GitRepo> GitRepo::Open(const std::string& dir) {
  InitLibgit2();
  const std::string work_tree = Canonical(dir);
  MAESTRO_RETURN_IF_ERROR(CheckInTreeGit(work_tree));
  const std::string git_dir = work_tree + "/.git";
  MAESTRO_ASSIGN_OR_RETURN(git_repository * raw, OpenBare(git_dir));
  GitRepo repo(raw, git_dir, work_tree, /*in_tree=*/true);
  // core.worktree would point a `git` run by a person elsewhere; refused
  // as before (libgit2 here ignores it: the repository is opened bare).
  Config config;
  if (git_repository_config_snapshot(&config.ptr, raw) == 0) {
    git_buf value = GIT_BUF_INIT;
    const bool set = git_config_get_string_buf(&value, config.ptr, "core.worktree") == 0;
    git_buf_dispose(&value);
    if (set) return Refused(work_tree, "core.worktree is set");
  }
  return repo;
}

Result<GitRepo::RepoPtr> GitRepo::Scratch() const {
  MAESTRO_ASSIGN_OR_RETURN(git_repository * raw, OpenBare(git_dir_));
  RepoPtr repo(raw);
  git_odb* odb = nullptr;
  if (int rc = git_repository_odb(&odb, raw); rc < 0) return GitError("git odb", rc);
  git_odb_backend* mempack = nullptr;
  int rc = git_mempack_new(&mempack);
  // Highest priority: every write lands in memory; reads still find the
  // repository's own objects.
  if (rc == 0) rc = git_odb_add_backend(odb, mempack, 999);
  git_odb_free(odb);
  if (rc < 0) return GitError("git mempack", rc);
  return repo;
}

Status GitRepo::Snapshot(git_repository* repo, git_oid* id) const {
  MAESTRO_ASSIGN_OR_RETURN(TreeRoot root, TreeRoot::Open(work_tree_));
  Tree head;
  Commit commit;
  int rc = git_revparse_single(reinterpret_cast<git_object**>(&commit.ptr), repo, "HEAD^{commit}");
  if (rc == 0) {
    if (int trc = git_commit_tree(&head.ptr, commit.ptr); trc < 0) {
      return GitError("git tree of HEAD", trc);
    }
  } else if (rc != GIT_ENOTFOUND && rc != GIT_EUNBORNBRANCH) {
    return GitError("git rev-parse HEAD", rc);
  }
  SnapshotOptions options;
  options.info_exclude = in_tree_;
  return SnapshotTree(repo, root, head.ptr, options, id);
}

Result<std::set<std::string>> GitRepo::ChangedFiles() const {
  MAESTRO_ASSIGN_OR_RETURN(RepoPtr scratch, Scratch());
  git_oid snapshot_id;
  MAESTRO_RETURN_IF_ERROR(Snapshot(scratch.get(), &snapshot_id));
  Tree head, snapshot;
  Commit commit;
  if (git_revparse_single(reinterpret_cast<git_object**>(&commit.ptr), scratch.get(),
                          "HEAD^{commit}") == 0) {
    if (int rc = git_commit_tree(&head.ptr, commit.ptr); rc < 0) return GitError("git tree", rc);
  }
  if (int rc = git_tree_lookup(&snapshot.ptr, scratch.get(), &snapshot_id); rc < 0) {
    return GitError("git tree lookup", rc);
  }
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
  opts.flags = GIT_DIFF_IGNORE_SUBMODULES;
  Diff diff;
  if (int rc = git_diff_tree_to_tree(&diff.ptr, scratch.get(), head.ptr, snapshot.ptr, &opts);
      rc < 0) {
    return GitError("git status", rc);
  }
  std::set<std::string> paths;
  const size_t n = git_diff_num_deltas(diff.ptr);
  for (size_t i = 0; i < n; ++i) {
    const git_diff_delta* d = git_diff_get_delta(diff.ptr, i);
    for (const char* p : {d->old_file.path, d->new_file.path}) {
      if (p != nullptr) paths.insert(fs::path(p).lexically_normal().string());
    }
  }
  return paths;
}

Result<std::optional<std::string>> GitRepo::CommitAll(const std::string& message) {
  git_repository* repo = repo_.get();
  // A space's metadata again, right before anything is written.
  if (in_tree_) MAESTRO_RETURN_IF_ERROR(CheckInTreeGit(work_tree_));
  git_oid tree_id;
  MAESTRO_RETURN_IF_ERROR(Snapshot(repo, &tree_id));

  Commit parent;
  int rc = git_revparse_single(reinterpret_cast<git_object**>(&parent.ptr), repo, "HEAD^{commit}");
  Tree tree;
  if (int trc = git_tree_lookup(&tree.ptr, repo, &tree_id); trc < 0) {
    return GitError("git tree lookup", trc);
  }
  if (rc == 0) {
    if (git_oid_equal(&tree_id, git_commit_tree_id(parent.ptr))) {
      return std::optional<std::string>();  // nothing changed
    }
  } else if (rc == GIT_ENOTFOUND || rc == GIT_EUNBORNBRANCH) {
    if (git_tree_entrycount(tree.ptr) == 0) return std::optional<std::string>();
  } else {
    return GitError("git rev-parse HEAD", rc);
  }

  Signature sig;
  if (int src = git_signature_now(&sig.ptr, "maestro", "maestro@localhost"); src < 0) {
    return GitError("git signature", src);
  }
  const git_commit* parents[] = {parent.ptr};
  git_oid commit_id;
  if (int crc = git_commit_create(&commit_id, repo, "HEAD", sig.ptr, sig.ptr, nullptr,
                                  message.c_str(), tree.ptr, parent.ptr ? 1 : 0, parents);
      crc < 0) {
    return GitError("git commit", crc);
  }
  if (in_tree_) {
    // The space's index follows the commit, so its owner's `git status`
    // shows no staged reversal of what was just committed.
    Index index;
    int irc = git_repository_index(&index.ptr, repo);
    if (irc == 0) irc = git_index_read_tree(index.ptr, tree.ptr);
    if (irc == 0) irc = git_index_write(index.ptr);
    if (irc < 0) return GitError("git index update", irc);
  }
  char hex[GIT_OID_HEXSZ + 1];
  git_oid_tostr(hex, sizeof(hex), &commit_id);
  return std::optional<std::string>(std::string(hex));
}

Result<std::pair<std::string, std::string>> GitRepo::Head() const {
  Commit head;
  int rc =
      git_revparse_single(reinterpret_cast<git_object**>(&head.ptr), repo_.get(), "HEAD^{commit}");
  if (rc == GIT_ENOTFOUND || rc == GIT_EUNBORNBRANCH) return NotFound("HEAD is unborn");
  if (rc < 0) return GitError("git rev-parse HEAD", rc);
  char hex[GIT_OID_HEXSZ + 1];
  git_oid_tostr(hex, sizeof(hex), git_commit_id(head.ptr));
  const char* summary = git_commit_summary(head.ptr);
  return std::make_pair(std::string(hex), std::string(summary ? summary : ""));
}

}  // namespace maestro::tools
