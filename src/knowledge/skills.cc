#include "knowledge/skills.h"

#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>

#include "core/json.h"

namespace maestro::knowledge {

namespace {

constexpr size_t kMaxSkillFile = 256 * 1024;  // a SKILL.md bigger than this is refused
constexpr size_t kMaxDescription = 300;       // index lines stay short
constexpr size_t kMaxSkills = 200;            // per directory

bool ValidName(const std::string& n) {
  if (n.empty() || n.size() > 64) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  });
}

// One line: newlines become spaces (the index is one line per skill).
std::string OneLine(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  if (s.size() > kMaxDescription) s = s.substr(0, kMaxDescription) + "…";
  return s;
}

// The file's text, refusing a symlink in its last component: a workspace's
// SKILL.md must not pull in a host file.
Result<std::string> ReadNoFollow(Env& env, const std::string& path) {
  MAESTRO_ASSIGN_OR_RETURN(std::unique_ptr<ReadableFile> f,
                           env.NewReadableFile(path, /*follow_symlinks=*/false));
  std::string out;
  char buf[16 * 1024];
  for (;;) {
    MAESTRO_ASSIGN_OR_RETURN(size_t n, f->ReadAt(out.size(), buf, sizeof(buf)));
    if (n == 0 || out.size() > kMaxSkillFile) break;
    out.append(buf, n);
  }
  return out;
}

// `name` is a real directory inside `parent` (not a symlink to elsewhere).
bool IsRealDir(Env& env, const std::string& parent, const std::string& name) {
  auto entries = env.ListDir(parent);
  if (!entries.ok()) return false;
  for (const DirEntry& e : *entries) {
    if (e.name == name) return e.type == DirEntry::Type::kDir;
  }
  return false;
}

}  // namespace

Result<std::string> ReadSkillText(Env& env, const std::string& file) {
  return ReadNoFollow(env, file);
}

std::string WorkspaceSkillsDir(Env& env, const std::string& workspace_root) {
  if (!IsRealDir(env, workspace_root, ".maestro") ||
      !IsRealDir(env, workspace_root + "/.maestro", "skills")) {
    return "";
  }
  return workspace_root + "/.maestro/skills";
}

Result<SkillFile> ParseSkillFile(const std::string& text, const std::string& source) {
  if (text.rfind("---", 0) != 0) {
    return InvalidArgument(source + ":1:1: a SKILL.md starts with '---' front matter");
  }
  size_t first_nl = text.find('\n');
  size_t end = first_nl == std::string::npos ? std::string::npos : text.find("\n---", first_nl);
  if (end == std::string::npos)
    return InvalidArgument(source + ": front matter has no closing '---'");
  MAESTRO_ASSIGN_OR_RETURN(YAML::Node fm,
                           ParseYaml(text.substr(first_nl + 1, end - first_nl), source));
  SkillFile f;
  if (!fm.IsMap()) return InvalidArgument(source + ": front matter must be a mapping");
  if (fm["name"] && fm["name"].IsScalar()) f.name = fm["name"].Scalar();
  if (fm["description"] && fm["description"].IsScalar()) f.description = fm["description"].Scalar();
  if (!ValidName(f.name)) {
    return InvalidArgument(source + ": 'name' must be 1-64 letters, digits, '-', '_' or '.'");
  }
  if (f.description.empty()) return InvalidArgument(source + ": 'description' is missing");
  size_t body = text.find('\n', end + 1);
  f.body = body == std::string::npos ? "" : text.substr(body + 1);
  return f;
}

std::vector<Skill> FindSkills(Env& env, const std::vector<std::string>& dirs) {
  std::map<std::string, Skill> by_name;
  for (const std::string& dir : dirs) {
    if (dir.empty()) continue;
    auto entries = env.ListDir(dir);
    if (!entries.ok()) continue;  // no such folder: no skills from it
    std::sort(entries->begin(), entries->end(),
              [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
    size_t n = 0;
    for (const DirEntry& e : *entries) {
      if (e.type != DirEntry::Type::kDir || n >= kMaxSkills) continue;
      const std::string file = dir + "/" + e.name + "/SKILL.md";
      auto info = env.GetFileInfo(file);
      if (!info.ok() || info->type != DirEntry::Type::kFile) continue;
      if (info->size > kMaxSkillFile) {
        spdlog::warn("skill {} skipped: larger than {} bytes", file, kMaxSkillFile);
        continue;
      }
      auto text = ReadSkillText(env, file);
      if (!text.ok()) continue;
      auto parsed = ParseSkillFile(*text, file);
      if (!parsed.ok()) {
        spdlog::warn("skill skipped: {}", parsed.status().message());
        continue;
      }
      by_name[parsed->name] = Skill{parsed->name, OneLine(parsed->description), file};
      ++n;
    }
  }
  std::vector<Skill> out;
  for (auto& [name, s] : by_name) out.push_back(std::move(s));
  return out;
}

std::string SkillsIndexText(const std::vector<Skill>& skills) {
  std::string out;
  for (const Skill& s : skills) out += "- " + s.name + ": " + s.description + "\n";
  if (!out.empty()) out += "Read a skill's instructions with ReadSkill before you use it.";
  return out;
}

}  // namespace maestro::knowledge
