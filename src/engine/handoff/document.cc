#include "engine/handoff/document.h"

#include <fmt/format.h>

#include <filesystem>

#include "core/durable_file.h"
#include "core/utf8.h"
#include "workspace/git_repo.h"
#include "workspace/workspace.h"
#include "workspace/workspace_path.h"

namespace fs = std::filesystem;

namespace maestro::engine {
namespace {

const std::vector<std::string> kTopFields = {"spec_ref", "status", "decisions", "blockers",
                                             "files_changed"};
const std::vector<std::string> kStatusFields = {"completed", "in_progress", "pending"};
const std::vector<std::string> kDecisionFields = {"what", "why"};

Status UnknownField(const std::string& prefix, const std::string& key,
                    const std::vector<std::string>& allowed) {
  std::string field = prefix.empty() ? key : prefix + "." + key;
  if (key == "next_steps" || key == "next_step" || key == "plan" || key == "recommendations") {
    return InvalidArgument(
        fmt::format("'{}' is not allowed: a handoff records facts only (what was done, decided, "
                    "blocked); the next session plans its own steps from the spec",
                    field),
        field);
  }
  std::string near = NearestWord(key, allowed);
  return InvalidArgument(fmt::format("unknown field '{}'{}; allowed: {}", field,
                                     near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near),
                                     fmt::join(allowed, ", ")),
                         field);
}

Status CheckKeys(const Json& obj, const std::string& prefix,
                 const std::vector<std::string>& allowed) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end()) {
      return UnknownField(prefix, it.key(), allowed);
    }
  }
  for (const auto& k : allowed) {
    if (!obj.contains(k)) {
      std::string field = prefix.empty() ? k : prefix + "." + k;
      return InvalidArgument("missing field '" + field + "'", field);
    }
  }
  return Status::Ok();
}

Result<std::vector<std::string>> StringList(const Json& v, const std::string& field) {
  if (!v.is_array()) return InvalidArgument("'" + field + "' must be a list of strings", field);
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) {
      std::string f = fmt::format("{}[{}]", field, i);
      return InvalidArgument("'" + f + "' must be a string", f);
    }
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

void EmitList(YAML::Emitter& e, const char* key, const std::vector<std::string>& items) {
  e << YAML::Key << key << YAML::Value << YAML::BeginSeq;
  for (const auto& s : items) e << YAML::DoubleQuoted << s;
  e << YAML::EndSeq;
}

std::vector<std::string> YamlList(const YAML::Node& n) {
  std::vector<std::string> out;
  if (n && n.IsSequence()) {
    for (const auto& item : n) out.push_back(item.as<std::string>());
  }
  return out;
}

// "0007.yaml" -> 7; anything else -> 0.
int HandoffNumber(const std::string& name) {
  if (name.size() != 9 || name.substr(4) != ".yaml") return 0;
  int n = 0;
  for (int i = 0; i < 4; ++i) {
    if (name[static_cast<size_t>(i)] < '0' || name[static_cast<size_t>(i)] > '9') return 0;
    n = n * 10 + (name[static_cast<size_t>(i)] - '0');
  }
  return n;
}

int LatestNumber(const std::string& dir) {
  int best = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    best = std::max(best, HandoffNumber(e.path().filename().string()));
  }
  return best;
}

}  // namespace

Result<HandoffDocument> ParseHandoff(const Json& input) {
  Json args = input;
  if (input.is_string()) {
    args = Json::parse(input.get<std::string>(), nullptr, false);
    if (args.is_discarded()) return InvalidArgument("WriteHandoff arguments are not valid JSON");
  }
  if (!args.is_object()) return InvalidArgument("WriteHandoff arguments must be an object");
  MAESTRO_RETURN_IF_ERROR(CheckKeys(args, "", kTopFields));
  HandoffDocument d;
  if (!args["spec_ref"].is_string() || args["spec_ref"].get<std::string>().empty()) {
    return InvalidArgument("'spec_ref' must be a non-empty string", "spec_ref");
  }
  d.spec_ref = args["spec_ref"].get<std::string>();
  const Json& st = args["status"];
  if (!st.is_object()) return InvalidArgument("'status' must be an object", "status");
  MAESTRO_RETURN_IF_ERROR(CheckKeys(st, "status", kStatusFields));
  MAESTRO_ASSIGN_OR_RETURN(d.completed, StringList(st["completed"], "status.completed"));
  MAESTRO_ASSIGN_OR_RETURN(d.in_progress, StringList(st["in_progress"], "status.in_progress"));
  MAESTRO_ASSIGN_OR_RETURN(d.pending, StringList(st["pending"], "status.pending"));
  const Json& ds = args["decisions"];
  if (!ds.is_array()) return InvalidArgument("'decisions' must be a list", "decisions");
  for (size_t i = 0; i < ds.size(); ++i) {
    std::string f = fmt::format("decisions[{}]", i);
    if (!ds[i].is_object()) return InvalidArgument("'" + f + "' must be {what, why}", f);
    MAESTRO_RETURN_IF_ERROR(CheckKeys(ds[i], f, kDecisionFields));
    if (!ds[i]["what"].is_string() || !ds[i]["why"].is_string()) {
      return InvalidArgument("'" + f + "' what and why must be strings", f);
    }
    d.decisions.push_back({ds[i]["what"].get<std::string>(), ds[i]["why"].get<std::string>()});
  }
  MAESTRO_ASSIGN_OR_RETURN(d.blockers, StringList(args["blockers"], "blockers"));
  MAESTRO_ASSIGN_OR_RETURN(d.files_changed, StringList(args["files_changed"], "files_changed"));
  return d;
}

Json HandoffToJson(const HandoffDocument& d) {
  Json decisions = Json::array();
  for (const auto& x : d.decisions) decisions.push_back({{"what", x.what}, {"why", x.why}});
  return {{"spec_ref", d.spec_ref},
          {"status",
           {{"completed", d.completed}, {"in_progress", d.in_progress}, {"pending", d.pending}}},
          {"decisions", decisions},
          {"blockers", d.blockers},
          {"files_changed", d.files_changed}};
}

Json FilesCheck::ToJson() const {
  return {{"source", source},
          {"matches", matches()},
          {"claimed_not_changed", claimed_not_changed},
          {"changed_not_claimed", changed_not_claimed}};
}

std::string WorkspaceRelativePath(const std::string& path, const std::string& workspace) {
  fs::path p = fs::path(path).lexically_normal();
  if (p.is_absolute()) {
    for (const std::string& root : {std::string(tools::kWorkspaceMount), workspace}) {
      if (root.empty()) continue;
      fs::path rel = p.lexically_relative(fs::path(root).lexically_normal());
      if (!rel.empty() && *rel.begin() != "..") {
        p = rel;
        break;
      }
    }
  }
  std::string s = p.string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();  // "dir/" names "dir"
  return s == "." ? std::string() : s;
}

std::string PathOfEntry(const std::string& entry) {
  std::string s = entry;
  for (const char* sep : {" \xE2\x80\x94 ", " \xE2\x80\x93 ", " - ", " (", ": "}) {
    if (auto p = s.find(sep); p != std::string::npos) s = s.substr(0, p);
  }
  size_t a = s.find_first_not_of(" \t`\"'");
  size_t b = s.find_last_not_of(" \t`\"'");
  if (a == std::string::npos) return "";
  return WorkspaceRelativePath(s.substr(a, b - a + 1));
}

FilesCheck CheckFilesChanged(const HandoffDocument& doc, const std::set<std::string>& actual,
                             std::string source) {
  FilesCheck c;
  c.source = std::move(source);
  std::set<std::string> claimed;
  for (const auto& e : doc.files_changed) {
    std::string p = PathOfEntry(e);
    if (!p.empty()) claimed.insert(p);
  }
  for (const auto& p : claimed) {
    if (!actual.count(p)) c.claimed_not_changed.push_back(p);
  }
  for (const auto& p : actual) {
    if (!claimed.count(p)) c.changed_not_claimed.push_back(p);
  }
  return c;
}

Result<std::set<std::string>> GitChangedPaths(const std::string& workspace) {
  // An ephemeral workspace's repository is outside it (never a `.git` the
  // agent wrote); a space's own is checked first (workspace/git_repo.h).
  MAESTRO_ASSIGN_OR_RETURN(tools::GitRepo repo,
                           tools::OpenWorkspaceRepo(tools::WorkspaceAt(workspace)));
  return repo.ChangedFiles();
}

std::string HandoffToYaml(const HandoffDocument& d, const FilesCheck* check,
                          const std::string& source) {
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "spec_ref" << YAML::Value << YAML::DoubleQuoted << d.spec_ref;
  e << YAML::Key << "status" << YAML::Value << YAML::BeginMap;
  EmitList(e, "completed", d.completed);
  EmitList(e, "in_progress", d.in_progress);
  EmitList(e, "pending", d.pending);
  e << YAML::EndMap;
  e << YAML::Key << "decisions" << YAML::Value << YAML::BeginSeq;
  for (const auto& x : d.decisions) {
    e << YAML::BeginMap << YAML::Key << "what" << YAML::Value << YAML::DoubleQuoted << x.what
      << YAML::Key << "why" << YAML::Value << YAML::DoubleQuoted << x.why << YAML::EndMap;
  }
  e << YAML::EndSeq;
  EmitList(e, "blockers", d.blockers);
  EmitList(e, "files_changed", d.files_changed);
  if (check) {
    e << YAML::Key << "verification" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "source" << YAML::Value << check->source;
    e << YAML::Key << "written_by" << YAML::Value << source;
    e << YAML::Key << "files_match" << YAML::Value << check->matches();
    EmitList(e, "claimed_not_changed", check->claimed_not_changed);
    EmitList(e, "changed_not_claimed", check->changed_not_claimed);
    e << YAML::EndMap;
  }
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

Result<HandoffDocument> HandoffFromYaml(const std::string& text) {
  try {
    YAML::Node n = YAML::Load(text);
    HandoffDocument d;
    d.spec_ref = n["spec_ref"] ? n["spec_ref"].as<std::string>() : "";
    d.completed = YamlList(n["status"]["completed"]);
    d.in_progress = YamlList(n["status"]["in_progress"]);
    d.pending = YamlList(n["status"]["pending"]);
    if (n["decisions"] && n["decisions"].IsSequence()) {
      for (const auto& x : n["decisions"]) {
        d.decisions.push_back({x["what"].as<std::string>(""), x["why"].as<std::string>("")});
      }
    }
    d.blockers = YamlList(n["blockers"]);
    d.files_changed = YamlList(n["files_changed"]);
    return d;
  } catch (const YAML::Exception& e) {
    return InvalidArgument(std::string("bad handoff YAML: ") + e.what());
  }
}

Result<std::string> SaveHandoffFile(Env& env, const std::string& dir, const std::string& yaml) {
  // A context gets its handoffs/ with its first handoff; the new directory's
  // name is made durable with it (a handoff must survive power loss).
  if (!env.FileExists(dir)) {
    MAESTRO_RETURN_IF_ERROR(env.CreateDirs(dir));
    MAESTRO_RETURN_IF_ERROR(env.SyncDir(fs::path(dir).parent_path().string()));
  }
  std::string path = fmt::format("{}/{:04d}.yaml", dir, LatestNumber(dir) + 1);
  MAESTRO_RETURN_IF_ERROR(ReplaceFileContent(env, path, yaml));
  return path;
}

Result<std::optional<HandoffDocument>> LoadLatestHandoff(Env& env, const std::string& dir) {
  int n = LatestNumber(dir);
  if (n == 0) return std::optional<HandoffDocument>();
  MAESTRO_ASSIGN_OR_RETURN(std::string text,
                           ReadFileToString(env, fmt::format("{}/{:04d}.yaml", dir, n)));
  MAESTRO_ASSIGN_OR_RETURN(HandoffDocument d, HandoffFromYaml(text));
  return std::optional<HandoffDocument>(std::move(d));
}

int CountHandoffFiles(const std::string& dir) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (HandoffNumber(e.path().filename().string()) > 0) ++n;
  }
  return n;
}

}  // namespace maestro::engine
