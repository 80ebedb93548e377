// GitRepo's read-only diff and history methods (declared in git_repo.h).
// The same safety rules as git_repo.cc: the repository was opened through
// GitRepo::OpenExternal/Open (a space's odd git directory is refused there),
// no host git config is read, and libgit2 runs no external diff driver,
// textconv or filter command. The working tree is never read by libgit2:
// it is the tree of a snapshot built through TreeRoot (git_snapshot.h,
// symlinks as their target text, never followed) in an in-memory object
// database, diffed tree to tree.
#include <git2.h>

#include <algorithm>

#include "workspace/git_owned.h"
#include "workspace/git_repo.h"

namespace maestro::tools {

using namespace git_internal;

namespace {

std::string OidHex(const git_oid* id) {
  char hex[GIT_OID_HEXSZ + 1];
  git_oid_tostr(hex, sizeof(hex), id);
  return hex;
}

void FillOptions(git_diff_options* opts) {
  opts->flags = GIT_DIFF_IGNORE_SUBMODULES;
  opts->max_size = kMaxDiffBlobBytes;
}

const char* StatusName(git_delta_t status) {
  switch (status) {
    case GIT_DELTA_ADDED:
    case GIT_DELTA_UNTRACKED:
    case GIT_DELTA_COPIED:
      return "added";
    case GIT_DELTA_DELETED:
      return "deleted";
    case GIT_DELTA_RENAMED:
      return "renamed";
    default:
      return "modified";
  }
}

// `text` cut to at most `max` bytes at a line end where there is one.
bool CutPatch(std::string* text, size_t max) {
  if (text->size() <= max) return false;
  size_t cut = text->rfind('\n', max - 1);
  text->resize(cut == std::string::npos ? max : cut + 1);
  return true;
}

// Renames found, then one GitFileDiff per changed delta, path order.
Result<GitDiffResult> Collect(git_diff* diff) {
  git_diff_find_options find = GIT_DIFF_FIND_OPTIONS_INIT;
  find.flags = GIT_DIFF_FIND_RENAMES | GIT_DIFF_FIND_FOR_UNTRACKED;
  if (int rc = git_diff_find_similar(diff, &find); rc < 0) return GitError("git diff -M", rc);
  GitDiffResult out;
  const size_t n = git_diff_num_deltas(diff);
  for (size_t i = 0; i < n; ++i) {
    const git_diff_delta* d = git_diff_get_delta(diff, i);
    if (d->status == GIT_DELTA_UNMODIFIED || d->status == GIT_DELTA_IGNORED) continue;
    if (out.files.size() >= kMaxDiffFiles) {
      out.truncated = true;
      break;
    }
    GitFileDiff f;
    f.status = StatusName(d->status);
    const char* path = d->status == GIT_DELTA_DELETED ? d->old_file.path : d->new_file.path;
    f.path = path ? path : "";
    if (d->status == GIT_DELTA_RENAMED && d->old_file.path) f.old_path = d->old_file.path;
    Patch patch;
    if (int rc = git_patch_from_diff(&patch.ptr, diff, i); rc < 0) {
      return GitError("git diff patch", rc);
    }
    // The delta's binary flag is settled once its content was looked at.
    const git_diff_delta* seen = patch.ptr ? git_patch_get_delta(patch.ptr) : d;
    f.binary = (seen->flags & GIT_DIFF_FLAG_BINARY) != 0;
    if (patch.ptr) {
      size_t adds = 0, dels = 0;
      if (int rc = git_patch_line_stats(nullptr, &adds, &dels, patch.ptr); rc < 0) {
        return GitError("git diff stats", rc);
      }
      f.additions = static_cast<int64_t>(adds);
      f.deletions = static_cast<int64_t>(dels);
      git_buf buf = GIT_BUF_INIT;
      int rc = git_patch_to_buf(&buf, patch.ptr);
      if (rc == 0 && buf.ptr) f.patch.assign(buf.ptr, buf.size);
      git_buf_dispose(&buf);
      if (rc < 0) return GitError("git diff text", rc);
      f.patch_truncated = CutPatch(&f.patch, kMaxPatchBytes);
    }
    out.files.push_back(std::move(f));
  }
  std::sort(out.files.begin(), out.files.end(),
            [](const GitFileDiff& a, const GitFileDiff& b) { return a.path < b.path; });
  return out;
}

// The tree of commit `rev` into *tree; "" leaves it null (the empty tree).
Status LookupTree(git_repository* repo, const std::string& rev, Tree* tree) {
  if (rev.empty()) return Status::Ok();
  Commit commit;
  int rc = git_revparse_single(reinterpret_cast<git_object**>(&commit.ptr), repo,
                               (rev + "^{commit}").c_str());
  if (rc == GIT_ENOTFOUND || rc == GIT_EUNBORNBRANCH || rc == GIT_EINVALIDSPEC ||
      rc == GIT_EAMBIGUOUS) {
    return NotFound("no commit " + rev);
  }
  if (rc < 0) return GitError("git rev-parse " + rev, rc);
  if (int trc = git_commit_tree(&tree->ptr, commit.ptr); trc < 0) {
    return GitError("git tree of " + rev, trc);
  }
  return Status::Ok();
}

bool IsHex40(const std::string& s) {
  return s.size() == GIT_OID_HEXSZ &&
         std::all_of(s.begin(), s.end(), [](char c) { return isxdigit((unsigned char)c) != 0; });
}

}  // namespace

Result<std::vector<GitCommitInfo>> GitRepo::History(size_t max) const {
  std::vector<GitCommitInfo> out;
  if (git_repository_head_unborn(repo_.get()) == 1) return out;
  Revwalk walk;
  if (int rc = git_revwalk_new(&walk.ptr, repo_.get()); rc < 0) return GitError("git log", rc);
  git_revwalk_sorting(walk.ptr, GIT_SORT_TIME);
  int rc = git_revwalk_push_head(walk.ptr);
  if (rc < 0) return GitError("git log HEAD", rc);
  git_oid id;
  while (out.size() < max && (rc = git_revwalk_next(&id, walk.ptr)) == 0) {
    Commit c;
    if (int lrc = git_commit_lookup(&c.ptr, repo_.get(), &id); lrc < 0) {
      return GitError("git commit lookup", lrc);
    }
    GitCommitInfo info;
    info.id = OidHex(&id);
    if (git_commit_parentcount(c.ptr) > 0) info.parent = OidHex(git_commit_parent_id(c.ptr, 0));
    const char* msg = git_commit_message(c.ptr);
    info.message = msg ? msg : "";
    out.push_back(std::move(info));
  }
  if (rc < 0 && rc != GIT_ITEROVER) return GitError("git log walk", rc);
  return out;
}

Result<GitDiffResult> GitRepo::DiffCommit(const std::string& commit) const {
  if (!IsHex40(commit)) return NotFound("no commit " + commit);
  Commit c;
  git_oid id;
  if (git_oid_fromstr(&id, commit.c_str()) < 0 || git_commit_lookup(&c.ptr, repo_.get(), &id) < 0) {
    return NotFound("no commit " + commit);
  }
  Tree tree, parent_tree;
  if (int rc = git_commit_tree(&tree.ptr, c.ptr); rc < 0) return GitError("git tree", rc);
  if (git_commit_parentcount(c.ptr) > 0) {
    Commit parent;
    if (int rc = git_commit_parent(&parent.ptr, c.ptr, 0); rc < 0) {
      return GitError("git parent", rc);
    }
    if (int rc = git_commit_tree(&parent_tree.ptr, parent.ptr); rc < 0) {
      return GitError("git parent tree", rc);
    }
  }
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
  FillOptions(&opts);
  Diff diff;
  if (int rc = git_diff_tree_to_tree(&diff.ptr, repo_.get(), parent_tree.ptr, tree.ptr, &opts);
      rc < 0) {
    return GitError("git diff " + commit, rc);
  }
  return Collect(diff.ptr);
}

Result<GitDiffResult> GitRepo::DiffToWorkdir(const std::string& from) const {
  // The snapshot's objects stay in the scratch handle's memory.
  MAESTRO_ASSIGN_OR_RETURN(RepoPtr scratch, Scratch());
  Tree tree;
  if (from == "HEAD") {
    Status st = LookupTree(scratch.get(), "HEAD", &tree);
    if (!st.ok() && st.code() != StatusCode::kNotFound) return st;  // unborn: empty tree
  } else {
    if (!from.empty() && !IsHex40(from)) return NotFound("no commit " + from);
    MAESTRO_RETURN_IF_ERROR(LookupTree(scratch.get(), from, &tree));
  }
  git_oid snapshot_id;
  MAESTRO_RETURN_IF_ERROR(Snapshot(scratch.get(), &snapshot_id));
  Tree snapshot;
  if (int rc = git_tree_lookup(&snapshot.ptr, scratch.get(), &snapshot_id); rc < 0) {
    return GitError("git tree lookup", rc);
  }
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
  FillOptions(&opts);
  Diff diff;
  if (int rc = git_diff_tree_to_tree(&diff.ptr, scratch.get(), tree.ptr, snapshot.ptr, &opts);
      rc < 0) {
    return GitError("git diff (working tree)", rc);
  }
  return Collect(diff.ptr);
}

Result<GitDiffResult> GitRepo::DiffWorkdir() const { return DiffToWorkdir("HEAD"); }

Result<GitDiffResult> GitRepo::DiffRange(const std::string& from) const {
  return DiffToWorkdir(from);
}

}  // namespace maestro::tools
