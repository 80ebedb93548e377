// Skills (SKILL.md folders) and a space's memory files (src/knowledge/):
// discovery, override by name, refusal of broken or symlinked files, the
// stable indexes, and the append-only log with its compacted view.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "knowledge/memory.h"
#include "knowledge/skills.h"
#include "support/temp_dir.h"

namespace maestro::knowledge {
namespace {

void Write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

std::string SkillMd(const std::string& name, const std::string& desc, const std::string& body) {
  return "---\nname: " + name + "\ndescription: " + desc + "\n---\n" + body;
}

TEST(Skills, FoundSortedLaterDirsWinBrokenOnesSkipped) {
  testing::TempDir dir;
  Env& env = *Env::Default();
  Write(dir.File("global/b/SKILL.md"), SkillMd("beta", "Global beta.", "B"));
  Write(dir.File("global/a/SKILL.md"), SkillMd("alpha", "\"Alpha\\nover lines.\"", "A"));
  Write(dir.File("ws/.maestro/skills/x/SKILL.md"), SkillMd("beta", "Workspace beta.", "B2"));
  Write(dir.File("ws/.maestro/skills/bad/SKILL.md"), "no front matter");
  Write(dir.File("ws/.maestro/skills/noname/SKILL.md"), "---\ndescription: d\n---\n");
  Write(dir.File("ws/.maestro/skills/empty/README"), "not a skill");
  const std::string ws = WorkspaceSkillsDir(env, dir.File("ws"));
  EXPECT_EQ(ws, dir.File("ws") + "/.maestro/skills");
  std::vector<Skill> s = FindSkills(env, {dir.File("global"), ws, ""});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].name, "alpha");
  EXPECT_EQ(s[0].description, "Alpha over lines.");
  EXPECT_EQ(s[1].description, "Workspace beta.");
  EXPECT_EQ(SkillsIndexText(s),
            "- alpha: Alpha over lines.\n- beta: Workspace beta.\n"
            "Read a skill's instructions with ReadSkill before you use it.");
  EXPECT_EQ(SkillsIndexText({}), "");
  auto body = ParseSkillFile(*ReadSkillText(env, s[1].file), "x");
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(body->body, "B2");
}

TEST(Skills, SymlinksOutOfTheWorkspaceAreRefused) {
  testing::TempDir dir;
  Env& env = *Env::Default();
  Write(dir.File("host/secret/SKILL.md"), SkillMd("secret", "Host file.", "TOKEN"));
  // A skills dir that is a symlink: not used.
  std::filesystem::create_directories(dir.File("ws1/.maestro"));
  ASSERT_EQ(symlink(dir.File("host").c_str(), dir.File("ws1/.maestro/skills").c_str()), 0);
  EXPECT_EQ(WorkspaceSkillsDir(env, dir.File("ws1")), "");
  // A SKILL.md that is a symlink: skipped.
  std::filesystem::create_directories(dir.File("ws2/.maestro/skills/s"));
  ASSERT_EQ(symlink(dir.File("host/secret/SKILL.md").c_str(),
                    dir.File("ws2/.maestro/skills/s/SKILL.md").c_str()),
            0);
  EXPECT_TRUE(FindSkills(env, {WorkspaceSkillsDir(env, dir.File("ws2"))}).empty());
  EXPECT_EQ(WorkspaceSkillsDir(env, dir.File("none")), "");
}

TEST(Memory, AppendsToTheLogAndKeepsTheViewAndIndexSorted) {
  testing::TempDir dir;
  Env& env = *Env::Default();
  const std::string m = MemoryDir(dir.path(), "");
  EXPECT_EQ(m, dir.path() + "/memory/default");
  EXPECT_TRUE(ReadMemory(env, m)->empty()) << "no log: no notes";
  ASSERT_TRUE(AppendMemory(env, m, {1, "testing", "make fixtures first", "t1"}).ok());
  ASSERT_TRUE(AppendMemory(env, m, {2, "build", "ninja", "t2"}).ok());
  ASSERT_TRUE(AppendMemory(env, m, {3, "testing", "fixtures in t/", "t2"}).ok());
  auto notes = ReadMemory(env, m);
  ASSERT_TRUE(notes.ok());
  ASSERT_EQ(notes->size(), 3u);
  EXPECT_EQ((*notes)[0].task_id, "t1");
  EXPECT_EQ(MemoryIndexText(*notes).rfind("- build\n- testing\n", 0), 0u);
  EXPECT_EQ(MemoryView(*notes, "testing"), "## testing\n- make fixtures first\n- fixtures in t/\n");
  std::ifstream view(m + "/MEMORY.md");
  std::string text((std::istreambuf_iterator<char>(view)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "## build\n- ninja\n\n## testing\n- make fixtures first\n- fixtures in t/\n");
  // A torn last line (a crash mid-append) and a foreign line are skipped.
  std::ofstream(m + "/log.jsonl", std::ios::app)
      << "garbage\n{\"topic\": 3}\n{\"topic\":\"x\",\"te";
  EXPECT_EQ(ReadMemory(env, m)->size(), 3u);
}

TEST(Memory, BadNotesAreRefusedNamingTheField) {
  testing::TempDir dir;
  Env& env = *Env::Default();
  const std::string m = MemoryDir(dir.path(), "proj");
  EXPECT_EQ(AppendMemory(env, m, {1, "", "x", ""}).field(), "topic");
  EXPECT_EQ(AppendMemory(env, m, {1, "two\nlines", "x", ""}).field(), "topic");
  EXPECT_EQ(AppendMemory(env, m, {1, std::string(65, 't'), "x", ""}).field(), "topic");
  EXPECT_EQ(AppendMemory(env, m, {1, "t", "", ""}).field(), "text");
  EXPECT_EQ(AppendMemory(env, m, {1, "t", std::string(4001, 'x'), ""}).field(), "text");
  EXPECT_TRUE(ReadMemory(env, m)->empty());
}

}  // namespace
}  // namespace maestro::knowledge
