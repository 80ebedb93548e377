#include "workspace/workspace.h"

#include <algorithm>
#include <filesystem>

#include "tools/tool_names.h"

namespace maestro::tools {

namespace fs = std::filesystem;

Status SpaceRegistry::Register(Space space) {
  if (space.name.empty()) return InvalidArgument("space name must not be empty", "name");
  if (spaces_.count(space.name)) return InvalidArgument("space " + space.name + " exists", "name");
  std::error_code ec;
  fs::path root = fs::canonical(space.root, ec);
  if (ec || !fs::is_directory(root)) {
    return InvalidArgument("space " + space.name + ": directory " + space.root + " not found",
                           "root");
  }
  space.root = root.string();
  spaces_[space.name] = std::move(space);
  return Status::Ok();
}

const Space* SpaceRegistry::Find(const std::string& name) const {
  auto it = spaces_.find(name);
  return it == spaces_.end() ? nullptr : &it->second;
}

std::vector<const Space*> SpaceRegistry::List() const {
  std::vector<const Space*> out;
  for (const auto& [_, s] : spaces_) out.push_back(&s);
  return out;
}

const std::vector<std::string>& SpacePolicyToolNames() {
  static const std::vector<std::string> names = {kReadFile,    kWriteFile,   kEditFile,   kListDir,
                                                 kGlob,        kGrep,        kRunCommand, kDelegate,
                                                 kSpinOffTask, kWaitSubTask, kRunRemote};
  return names;
}

Result<Space> SpaceFromConfig(const SpaceConfig& config) {
  Space s;
  s.name = config.name;
  s.root = config.path;
  s.description = config.description;
  s.policy.edit_allowed = config.edit_allowed;
  s.policy.shell_allowed = config.shell_allowed;
  s.policy.network_allowed = config.network_allowed;
  s.policy.ssh_hosts = config.ssh;
  const auto& known = SpacePolicyToolNames();
  for (const auto& t : config.tools) {
    if (std::find(known.begin(), known.end(), t) == known.end()) {
      std::string hint = NearestWord(t, known);
      return InvalidArgument(config.where + ": spaces." + config.name + ".tools: unknown tool '" +
                                 t + "'" + (hint.empty() ? "" : "; did you mean '" + hint + "'?"),
                             "spaces." + config.name + ".tools");
    }
    s.policy.allowed_tools.insert(t);
  }
  if (config.tools.empty()) {
    s.policy.allowed_tools = {kReadFile, kListDir,     kGlob,       kGrep,
                              kDelegate, kSpinOffTask, kWaitSubTask};
    if (config.edit_allowed) s.policy.allowed_tools.insert({kWriteFile, kEditFile});
    if (config.shell_allowed) s.policy.allowed_tools.insert(kRunCommand);
    if (!config.ssh.empty()) s.policy.allowed_tools.insert(kRunRemote);
  }
  if (s.policy.allowed_tools.count(kRunRemote) && config.ssh.empty()) {
    return InvalidArgument(config.where + ": spaces." + config.name +
                               ".tools: RunRemote needs the hosts it may reach ('ssh:')",
                           "spaces." + config.name + ".tools");
  }
  return s;
}

Status RegisterConfiguredSpaces(Env& env, const std::map<std::string, SpaceConfig>& spaces,
                                SpaceRegistry* registry, std::vector<std::string>* created) {
  for (const auto& [name, config] : spaces) {
    MAESTRO_ASSIGN_OR_RETURN(Space space, SpaceFromConfig(config));
    std::error_code ec;
    if (!fs::exists(config.path, ec)) {
      if (Status made = env.CreateDirs(config.path); !made.ok()) {
        return InvalidArgument(config.where + ": spaces." + name + ".path: cannot create " +
                                   config.path + ": " + made.message(),
                               "spaces." + name + ".path");
      }
      if (created) created->push_back(config.path);
    }
    Status st = registry->Register(std::move(space));
    if (!st.ok()) {
      return InvalidArgument(config.where + ": spaces." + name + ".path: " + st.message(),
                             "spaces." + name + ".path");
    }
  }
  return Status::Ok();
}

std::string EphemeralWorkspaceDir(const std::string& data_dir, const std::string& task_id) {
  return (fs::path(data_dir) / "workspaces" / "tasks" / task_id).string();
}

std::string WorkspaceGitDir(const std::string& data_dir, const std::string& task_id) {
  return (fs::path(data_dir) / "tasks" / task_id / "git").string();
}

Workspace WorkspaceAt(const std::string& root) {
  Workspace ws;
  ws.root = root;
  const fs::path p = fs::path(root).lexically_normal();
  const fs::path tasks = p.parent_path();
  if (p.has_filename() && tasks.filename() == "tasks" &&
      tasks.parent_path().filename() == "workspaces") {
    ws.ephemeral = true;
    ws.git_dir = WorkspaceGitDir(tasks.parent_path().parent_path().string(), p.filename());
  }
  return ws;
}

Result<GitRepo> OpenWorkspaceRepo(const Workspace& ws, bool create) {
  if (ws.ephemeral) {
    if (ws.git_dir.empty()) return NotFound("the workspace has no repository");
    return GitRepo::OpenExternal(ws.git_dir, ws.root, create);
  }
  return GitRepo::Open(ws.root);
}

Result<Workspace> PrepareWorkspace(const WorkspaceOptions& options, const SpaceRegistry& spaces,
                                   const std::string& task_id, const std::string& space) {
  Workspace ws;
  if (!space.empty()) {
    const Space* s = spaces.Find(space);
    if (s == nullptr) return NotFound("space " + space + " is not registered");
    ws.root = s->root;
    ws.space = s->name;
    ws.policy = s->policy;
    return ws;
  }
  if (task_id.empty() || task_id.find('/') != std::string::npos ||
      task_id.find("..") != std::string::npos) {
    return InvalidArgument("bad task id for a workspace", "task_id");
  }
  const std::string dir = EphemeralWorkspaceDir(options.data_dir, task_id);
  if (Status made = options.env->CreateDirs(dir); !made.ok()) {
    return Internal("cannot create " + dir + ": " + made.message());
  }
  ws.root = fs::canonical(dir).string();
  ws.ephemeral = true;
  ws.policy = options.ephemeral_policy;
  ws.git_dir = WorkspaceGitDir(options.data_dir, task_id);
  // A new repository comes with a ready spare task directory renamed into
  // place (no mkdir, no init on this path); a resumed task's exists already.
  if (!options.env->FileExists(ws.git_dir)) {
    const std::string task_dir = fs::path(ws.git_dir).parent_path().string();
    bool taken = false;
    if (options.git_spares != nullptr && !options.env->FileExists(task_dir)) {
      const std::string parent = fs::path(task_dir).parent_path().string();
      if (Status made = options.env->CreateDirs(parent); !made.ok()) {
        return Internal("cannot create " + parent + ": " + made.message());
      }
      taken = options.git_spares->TakeAs(task_dir);
    }
    if (!taken) MAESTRO_RETURN_IF_ERROR(OpenWorkspaceRepo(ws, /*create=*/true).status());
  }
  return ws;
}

std::string WorkspaceCommitMessage(const std::string& task_id, const std::string& job_id,
                                   const std::string& title) {
  return "maestro: " + (title.empty() ? std::string("task result") : title) + " (task " + task_id +
         ", job " + job_id + ")";
}

std::optional<std::string> TaskCommitJob(const std::string& message, const std::string& task_id) {
  if (task_id.empty()) return std::nullopt;
  const std::string marker = "(task " + task_id;
  // The last marker: a title may itself mention "(task ...".
  for (size_t at = message.rfind(marker); at != std::string::npos;
       at = at == 0 ? std::string::npos : message.rfind(marker, at - 1)) {
    const size_t after = at + marker.size();
    if (message.compare(after, 1, ")") == 0) return std::string();
    if (message.compare(after, 6, ", job ") != 0) continue;
    const size_t close = message.find(')', after + 6);
    if (close == std::string::npos) continue;
    return message.substr(after + 6, close - after - 6);
  }
  return std::nullopt;
}

Result<std::optional<std::string>> CommitWorkspace(const Workspace& ws, const std::string& task_id,
                                                   const std::string& job_id,
                                                   const std::string& title) {
  auto repo = OpenWorkspaceRepo(ws, /*create=*/ws.ephemeral);
  if (repo.status().code() == StatusCode::kNotFound) return std::optional<std::string>();
  if (!repo.ok()) return repo.status();
  return repo->CommitAll(WorkspaceCommitMessage(task_id, job_id, title));
}

}  // namespace maestro::tools
