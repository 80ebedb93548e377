// Skills: reusable know-how an agent loads when it needs it (issue 21).
//
// A skill is a folder holding a SKILL.md whose YAML front matter names it:
//
//   ---
//   name: release-notes
//   description: How this team writes release notes.
//   ---
//   (the body: steps, conventions, examples)
//
// Skills come from the global dir (`skills.dir`) and from the workspace's
// `.maestro/skills/`; a workspace skill replaces a global one of the same
// name. The system text lists only "name: description" lines, sorted by name
// (SkillsIndexText), so it stays the same for every task of a space and the
// prompt prefix stays cached; the body is read on demand by the ReadSkill
// tool (knowledge_tools.h). A folder without a valid SKILL.md is skipped with
// a warning naming the file — a workspace is untrusted.
//
// Thread safety: pure functions over the Env.
#pragma once

#include <string>
#include <vector>

#include "core/env.h"
#include "core/status.h"

namespace maestro::knowledge {

struct Skill {
  std::string name;
  std::string description;
  std::string file;  // the SKILL.md
};

// The workspace's own skills folder, `.maestro/skills`; "" when it is
// missing or reached through a symlink (which could point anywhere on the
// host).
std::string WorkspaceSkillsDir(Env& env, const std::string& workspace_root);

// A SKILL.md's text; a symlinked file is refused (kept out of the host).
Result<std::string> ReadSkillText(Env& env, const std::string& file);

// The skills in `dirs` (later dirs win by name; "" entries skipped), sorted
// by name.
std::vector<Skill> FindSkills(Env& env, const std::vector<std::string>& dirs);

// "- name: description" lines, in the order given; "" when there are none.
std::string SkillsIndexText(const std::vector<Skill>& skills);

// Parses a SKILL.md: the front matter's name and description, and the body.
struct SkillFile {
  std::string name;
  std::string description;
  std::string body;
};
Result<SkillFile> ParseSkillFile(const std::string& text, const std::string& source);

}  // namespace maestro::knowledge
