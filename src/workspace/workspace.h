// Workspaces (seed 000 "Space"): the directory an agent works in, and its
// Tool Policy.
//
// Two kinds: a persistent space is a registered directory (usually a git
// repository a person owns, its `.git` inside) shared by the tasks that name
// it; an ephemeral workspace is created per task under
// <data>/workspaces/tasks/<task id> and its history is kept in a repository
// outside it, <data>/tasks/<task id>/git, which no sandbox binds: the agent
// neither sees nor can redirect it (workspace/git_repo.h).
//
// Where it sits: the worker prepares the workspace when it starts a job
// (PrepareWorkspace), the Dispatcher runs tools inside ws.root with
// ws.policy, and when the job succeeds CommitWorkspace records the changes
// in git with a message naming the task (seed 000 "workspace commit").
//
// Thread safety: SpaceRegistry is filled at startup and then read-only.
// CommitWorkspace uses libgit2 in-process (workspace/git_repo.h: no `git`
// process runs on the host); two commits to the same repository at once
// are serialized by its ref lock (the loser gets an error).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/env.h"
#include "core/status.h"
#include "tools/policy.h"
#include "workspace/git_repo.h"
#include "workspace/git_spares.h"

namespace maestro::tools {

struct Space {
  std::string name;
  std::string root;  // made canonical by Register
  ToolPolicy policy;
  // Shown by GET /api/spaces. Default-initialized so `Space{name, root,
  // policy}` stays valid without -Wmissing-field-initializers.
  std::string description = "";
};

class SpaceRegistry {
 public:
  // kInvalidArgument when the name is empty/taken or the directory missing.
  Status Register(Space space);
  const Space* Find(const std::string& name) const;
  // Every registered space, sorted by name.
  std::vector<const Space*> List() const;

 private:
  std::map<std::string, Space> spaces_;
};

// The tool names a space's `tools` may list (regular and agent tools; the
// control and park tools need no permission).
const std::vector<std::string>& SpacePolicyToolNames();

// The Space a `spaces:` entry describes: its policy from the flags and the
// tool list (the default set when empty, see SpaceConfig). Unknown tool
// names are kInvalidArgument naming `spaces.<name>.tools`.
Result<Space> SpaceFromConfig(const SpaceConfig& config);

// Registers every configured space, creating a missing directory first
// (mkdir -p; `created` lists those it made, for the caller to log).
Status RegisterConfiguredSpaces(Env& env, const std::map<std::string, SpaceConfig>& spaces,
                                SpaceRegistry* registry, std::vector<std::string>* created);

struct Workspace {
  std::string root;  // canonical absolute path
  bool ephemeral = false;
  std::string space;  // "" for an ephemeral workspace
  ToolPolicy policy;
  // An ephemeral workspace's repository (WorkspaceGitDir); "" for a space,
  // whose repository (if any) is its own `<root>/.git`.
  std::string git_dir = "";
};

struct WorkspaceOptions {
  std::string data_dir;         // ephemeral workspaces live in data_dir/workspaces/tasks/
  ToolPolicy ephemeral_policy;  // the policy of ephemeral workspaces
  Env* env = Env::Default();    // creates the workspace directories
  // Ready repositories for new ephemeral workspaces (git_spares.h); null:
  // each is initialized in place.
  GitSpares* git_spares = nullptr;
};

// Where the ephemeral workspace of `task_id` lives (whether or not it exists):
// <data_dir>/workspaces/tasks/<task id>.
std::string EphemeralWorkspaceDir(const std::string& data_dir, const std::string& task_id);
// Where its repository lives: <data_dir>/tasks/<task id>/git, beside the
// task's other host-only files (packages, browser profile), never bound
// into a sandbox.
std::string WorkspaceGitDir(const std::string& data_dir, const std::string& task_id);

// The workspace at `root` (canonical) as far as its path tells: an
// ephemeral one (<data>/workspaces/tasks/<id>) with its git_dir, else a
// space's directory. For callers that hold only the root (the handoff).
Workspace WorkspaceAt(const std::string& root);

// The workspace's repository: an ephemeral workspace's external one
// (created when missing if `create`, else kNotFound), never a `.git` inside
// it; a space's own `<root>/.git` after GitRepo::Open's checks (kNotFound
// when it has none, kInvalidArgument when refused).
Result<GitRepo> OpenWorkspaceRepo(const Workspace& ws, bool create = false);

// The task's workspace: its space when `space` is set (kNotFound if not
// registered), else its ephemeral workspace, created on first use with its
// repository (a spare git directory moved in, else GitRepo::OpenExternal).
// A workspace from before the repositories moved out, whose `.git` is
// inside, gets a new external repository: its first commit holds the
// whole tree, and the old `.git` stays ordinary (uncommitted) content.
Result<Workspace> PrepareWorkspace(const WorkspaceOptions& options, const SpaceRegistry& spaces,
                                   const std::string& task_id, const std::string& space);

// Commits every change in the workspace (GitRepo::CommitAll, like
// `git add -A`) with the message "maestro: <title> (task <id>, job <job id>)"
// (GET /api/local/tasks/:id/diff finds a job's commit by it). Returns the
// new commit id, or nullopt when nothing changed or a space is no git
// repository; an error when a space's repository is refused (symlinked
// metadata and the other rules of GitRepo::Open: nothing is written).
Result<std::optional<std::string>> CommitWorkspace(const Workspace& ws, const std::string& task_id,
                                                   const std::string& job_id,
                                                   const std::string& title);

// The commit message CommitWorkspace writes.
std::string WorkspaceCommitMessage(const std::string& task_id, const std::string& job_id,
                                   const std::string& title);
// Whether `message` is a commit CommitWorkspace wrote for `task_id`: it
// carries "(task <id>, job <job id>)" — or "(task <id>)", the format before
// commits named their job. Returns the job id ("" for the old format).
std::optional<std::string> TaskCommitJob(const std::string& message, const std::string& task_id);

}  // namespace maestro::tools
