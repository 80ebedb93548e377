#include "tools/git_repo.h"

#include <git2.h>

#include <filesystem>
#include <mutex>

#include "tools/git_owned.h"

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
  return (ec ? fs::path(path) : p).lexically_normal().string();
}

std::string WithoutSlash(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

}  // namespace

void GitRepo::RepoFree::operator()(git_repository* r) const { git_repository_free(r); }

GitRepo::GitRepo(GitRepo&&) noexcept = default;
GitRepo& GitRepo::operator=(GitRepo&&) noexcept = default;
GitRepo::~GitRepo() = default;

Result<GitRepo> GitRepo::Checked(git_repository* raw) {
  GitRepo repo(raw);
  if (git_repository_is_bare(raw)) return InvalidArgument("bare git repository", "workspace");
  // The git directory (and its common directory) must be the work tree's own
  // `.git`: core.worktree, a `gitdir:` file, a symlinked `.git` or a
  // commondir file would make a commit read or write another tree.
  const std::string work = WithoutSlash(Canonical(git_repository_workdir(raw)));
  const std::string want = work + "/.git";
  if (WithoutSlash(Canonical(git_repository_path(raw))) != want ||
      WithoutSlash(Canonical(git_repository_commondir(raw))) != want) {
    return InvalidArgument("git directory of " + work + " is not " + want, "workspace");
  }
  return repo;
}

Result<GitRepo> GitRepo::Init(const std::string& dir) {
  InitLibgit2();
  git_repository* raw = nullptr;
  git_repository_init_options opts = GIT_REPOSITORY_INIT_OPTIONS_INIT;
  // An empty template (git's own rule for ""): no description,
  // hooks/README.sample or info/exclude, files nothing here reads; three
  // file creations fewer per workspace.
  opts.flags = GIT_REPOSITORY_INIT_MKPATH | GIT_REPOSITORY_INIT_EXTERNAL_TEMPLATE;
  opts.template_path = "";
  if (int rc = git_repository_init_ext(&raw, dir.c_str(), &opts); rc < 0) {
    return GitError("git init " + dir, rc);
  }
  return Checked(raw);
}

Result<GitRepo> GitRepo::Open(const std::string& dir) {
  InitLibgit2();
  git_repository* raw = nullptr;
  int rc = git_repository_open_ext(&raw, dir.c_str(), 0, nullptr);
  if (rc == GIT_ENOTFOUND) return NotFound("not a git work tree: " + dir);
  if (rc < 0) return GitError("git open " + dir, rc);
  return Checked(raw);
}

std::string GitRepo::WorkTree() const { return WithoutSlash(git_repository_workdir(repo_.get())); }

Result<std::set<std::string>> GitRepo::ChangedFiles() const {
  git_status_options opts = GIT_STATUS_OPTIONS_INIT;
  opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
  opts.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
               GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
  StatusList list;
  if (int rc = git_status_list_new(&list.ptr, repo_.get(), &opts); rc < 0) {
    return GitError("git status", rc);
  }
  std::set<std::string> paths;
  const size_t n = git_status_list_entrycount(list.ptr);
  for (size_t i = 0; i < n; ++i) {
    const git_status_entry* e = git_status_byindex(list.ptr, i);
    if (e->status == GIT_STATUS_CURRENT || (e->status & GIT_STATUS_IGNORED)) continue;
    for (const git_diff_delta* d : {e->head_to_index, e->index_to_workdir}) {
      if (d == nullptr) continue;
      for (const char* p : {d->old_file.path, d->new_file.path}) {
        if (p != nullptr) paths.insert(fs::path(p).lexically_normal().string());
      }
    }
  }
  return paths;
}

Result<std::optional<std::string>> GitRepo::CommitAll(const std::string& message) {
  git_repository* repo = repo_.get();
  Index index;
  if (int rc = git_repository_index(&index.ptr, repo); rc < 0) return GitError("git index", rc);
  // add_all stages new and modified files (skipping ignored ones);
  // update_all drops the entries of deleted files: together `git add -A`.
  if (int rc = git_index_add_all(index.ptr, nullptr, GIT_INDEX_ADD_DEFAULT, nullptr, nullptr);
      rc < 0) {
    return GitError("git add", rc);
  }
  if (int rc = git_index_update_all(index.ptr, nullptr, nullptr, nullptr); rc < 0) {
    return GitError("git add (deletions)", rc);
  }
  if (int rc = git_index_write(index.ptr); rc < 0) return GitError("git index write", rc);
  git_oid tree_id;
  if (int rc = git_index_write_tree(&tree_id, index.ptr); rc < 0) {
    return GitError("git write-tree", rc);
  }

  Commit parent;
  int rc = git_revparse_single(reinterpret_cast<git_object**>(&parent.ptr), repo, "HEAD^{commit}");
  if (rc == 0) {
    if (git_oid_equal(&tree_id, git_commit_tree_id(parent.ptr))) {
      return std::optional<std::string>();  // nothing changed
    }
  } else if (rc == GIT_ENOTFOUND || rc == GIT_EUNBORNBRANCH) {
    if (git_index_entrycount(index.ptr) == 0) return std::optional<std::string>();
  } else {
    return GitError("git rev-parse HEAD", rc);
  }

  Tree tree;
  if (int trc = git_tree_lookup(&tree.ptr, repo, &tree_id); trc < 0) {
    return GitError("git tree lookup", trc);
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
