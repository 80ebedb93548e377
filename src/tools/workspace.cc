#include "tools/workspace.h"

#include <algorithm>
#include <filesystem>

#include "tools/process_runner.h"

namespace maestro::tools {

namespace fs = std::filesystem;

namespace {

// git with a fixed identity: the commit must not depend on the host's
// global git configuration.
Result<ProcessResult> Git(const std::string& root, std::vector<std::string> args) {
  ProcessSpec spec;
  spec.argv = {"git",
               "-C",
               root,
               "-c",
               "user.name=maestro",
               "-c",
               "user.email=maestro@localhost",
               "-c",
               "commit.gpgsign=false"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.timeout = std::chrono::seconds(60);
  spec.output_cap = 16 * 1024;
  return RunProcess(spec);
}

Status GitOk(const std::string& root, std::vector<std::string> args) {
  const std::string what = "git " + args.front();
  MAESTRO_ASSIGN_OR_RETURN(ProcessResult r, Git(root, std::move(args)));
  if (r.exit_code != 0) return Internal(what + " failed: " + r.output);
  return Status::Ok();
}

}  // namespace

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
  static const std::vector<std::string> names = {
      "ReadFile",   "WriteFile", "EditFile", "ListDir",     "Glob",
      "Grep",       "RunCommand", "delegate", "SpinOffTask", "WaitSubTask"};
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
  const auto& known = SpacePolicyToolNames();
  for (const auto& t : config.tools) {
    if (std::find(known.begin(), known.end(), t) == known.end()) {
      std::string hint = NearestWord(t, known);
      return InvalidArgument(
          config.where + ": spaces." + config.name + ".tools: unknown tool '" + t + "'" +
              (hint.empty() ? "" : "; did you mean '" + hint + "'?"),
          "spaces." + config.name + ".tools");
    }
    s.policy.allowed_tools.insert(t);
  }
  if (config.tools.empty()) {
    s.policy.allowed_tools = {"ReadFile", "ListDir",     "Glob",       "Grep",
                              "delegate", "SpinOffTask", "WaitSubTask"};
    if (config.edit_allowed) s.policy.allowed_tools.insert({"WriteFile", "EditFile"});
    if (config.shell_allowed) s.policy.allowed_tools.insert("RunCommand");
  }
  return s;
}

Status RegisterConfiguredSpaces(const std::map<std::string, SpaceConfig>& spaces,
                                SpaceRegistry* registry, std::vector<std::string>* created) {
  for (const auto& [name, config] : spaces) {
    MAESTRO_ASSIGN_OR_RETURN(Space space, SpaceFromConfig(config));
    std::error_code ec;
    if (!fs::exists(config.path, ec)) {
      fs::create_directories(config.path, ec);
      if (ec) {
        return InvalidArgument(config.where + ": spaces." + name + ".path: cannot create " +
                                   config.path + ": " + ec.message(),
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
  fs::path dir = fs::path(options.data_dir) / "workspaces" / "tasks" / task_id;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Internal("cannot create " + dir.string() + ": " + ec.message());
  ws.root = fs::canonical(dir).string();
  ws.ephemeral = true;
  ws.policy = options.ephemeral_policy;
  if (!fs::exists(dir / ".git")) MAESTRO_RETURN_IF_ERROR(GitOk(ws.root, {"init", "-q"}));
  return ws;
}

Result<std::optional<std::string>> CommitWorkspace(const Workspace& ws, const std::string& task_id,
                                                   const std::string& title) {
  MAESTRO_ASSIGN_OR_RETURN(ProcessResult inside,
                           Git(ws.root, {"rev-parse", "--is-inside-work-tree"}));
  if (inside.exit_code != 0) return std::optional<std::string>();
  MAESTRO_RETURN_IF_ERROR(GitOk(ws.root, {"add", "-A"}));
  MAESTRO_ASSIGN_OR_RETURN(ProcessResult diff, Git(ws.root, {"diff", "--cached", "--quiet"}));
  if (diff.exit_code == 0) return std::optional<std::string>();  // nothing staged
  const std::string message = "maestro: " + (title.empty() ? std::string("task result") : title) +
                              " (task " + task_id + ")";
  MAESTRO_RETURN_IF_ERROR(GitOk(ws.root, {"commit", "-q", "-m", message}));
  MAESTRO_ASSIGN_OR_RETURN(ProcessResult head, Git(ws.root, {"rev-parse", "HEAD"}));
  if (head.exit_code != 0) return Internal("git rev-parse HEAD failed: " + head.output);
  std::string id = head.output;
  while (!id.empty() && (id.back() == '\n' || id.back() == '\r')) id.pop_back();
  return std::optional<std::string>(id);
}

}  // namespace maestro::tools
