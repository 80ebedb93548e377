#include "workspace/git_spares.h"

#include "core/ids.h"
#include "workspace/git_repo.h"

namespace maestro::tools {
namespace {

// Copies the directory tree `from` (directories and regular files only: a
// repository libgit2 has just initialized) to `to`.
Status CopyTree(Env& env, const std::string& from, const std::string& to) {
  MAESTRO_RETURN_IF_ERROR(env.CreateDirs(to));
  MAESTRO_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, env.ListDir(from));
  for (const DirEntry& e : entries) {
    const std::string src = from + "/" + e.name, dst = to + "/" + e.name;
    if (e.type == DirEntry::Type::kDir) {
      MAESTRO_RETURN_IF_ERROR(CopyTree(env, src, dst));
    } else if (e.type == DirEntry::Type::kFile) {
      MAESTRO_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(env, src));
      MAESTRO_RETURN_IF_ERROR(WriteStringToFile(env, dst, bytes));
    } else {
      return Internal("unexpected entry in the template repository: " + src);
    }
  }
  return Status::Ok();
}

}  // namespace

GitSpares::GitSpares(Env* env, const std::string& data_dir, size_t keep)
    : env_(env), root_(data_dir + "/tasks/.git-spares") {
  spares_ = std::make_unique<SpareDirs>(env, root_, keep, "git",
                                        [this](const std::string& dir) { return Make(dir); });
}

GitSpares::~GitSpares() {
  spares_.reset();  // joins the filler: the template is no longer read
  if (!template_.empty()) (void)env_->RemoveAll(template_);
}

Status GitSpares::CopyTemplate(const std::string& dir) {
  if (template_.empty()) {
    const std::string made = root_ + "/template-" + NewUuid();
    Status st = GitRepo::OpenExternal(made, made, /*create=*/true).status();
    if (!st.ok()) {
      (void)env_->RemoveAll(made);
      return st;
    }
    template_ = made;
  }
  return CopyTree(*env_, template_, dir + "/git");
}

Status GitSpares::Make(const std::string& dir) {
  if (CopyTemplate(dir).ok()) return Status::Ok();
  // The template may be gone (another process's start sweeps entries older
  // than a day, a person may clear the directory): once more with a new one.
  (void)env_->RemoveAll(template_);
  template_.clear();
  (void)env_->RemoveAll(dir);
  return CopyTemplate(dir);
}

}  // namespace maestro::tools
