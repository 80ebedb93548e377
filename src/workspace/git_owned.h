// Internal to maestro_git (git_repo.cc, git_diff.cc, git_snapshot.cc): RAII owners for the
// libgit2 objects a function holds, and the Status for a failed call. Not a
// public header: only the files that include <git2.h> themselves use it.
#pragma once

#include <git2.h>

#include <string>

#include "core/status.h"

namespace maestro::tools::git_internal {

template <typename T, void (*Free)(T*)>
struct Owned {
  T* ptr = nullptr;
  Owned() = default;
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() {
    if (ptr) Free(ptr);
  }
};
using Index = Owned<git_index, git_index_free>;
using Tree = Owned<git_tree, git_tree_free>;
using Commit = Owned<git_commit, git_commit_free>;
using Signature = Owned<git_signature, git_signature_free>;
using StatusList = Owned<git_status_list, git_status_list_free>;
using Diff = Owned<git_diff, git_diff_free>;
using Patch = Owned<git_patch, git_patch_free>;
using Revwalk = Owned<git_revwalk, git_revwalk_free>;
using Config = Owned<git_config, git_config_free>;

// A Status naming what failed and libgit2's last error message.
inline Status GitError(const std::string& what, int code) {
  const git_error* e = git_error_last();
  std::string msg = what + " failed (" + std::to_string(code) + ")";
  if (e && e->message) msg += ": " + std::string(e->message);
  return Internal(msg);
}

}  // namespace maestro::tools::git_internal
