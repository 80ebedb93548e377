// Skills (SKILL.md folders) and the memory files (src/knowledge/):
// discovery, override by name, refusal of broken or symlinked files, the
// stable indexes, the append-only log with its compacted view, and whose
// memory a task reaches (issue 44: a space-less task its owner's only).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "knowledge/knowledge_tools.h"
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
  const std::string m = MemoryDir(dir.path(), "", "alice");
  EXPECT_EQ(m, dir.path() + "/memory/~users/alice");
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
  const std::string m = MemoryDir(dir.path(), "proj", "alice");
  EXPECT_EQ(m, dir.path() + "/memory/proj");
  EXPECT_EQ(AppendMemory(env, m, {1, "", "x", ""}).field(), "topic");
  EXPECT_EQ(AppendMemory(env, m, {1, "two\nlines", "x", ""}).field(), "topic");
  EXPECT_EQ(AppendMemory(env, m, {1, std::string(65, 't'), "x", ""}).field(), "topic");
  EXPECT_EQ(AppendMemory(env, m, {1, "t", "", ""}).field(), "text");
  EXPECT_EQ(AppendMemory(env, m, {1, "t", std::string(4001, 'x'), ""}).field(), "text");
  EXPECT_TRUE(ReadMemory(env, m)->empty());
}

// One task's Memory tool, as the engine registers it (piece_executor.cc
// AddKnowledgeTools): over MemoryDir of the task's space and owner.
class MemoryTool {
 public:
  MemoryTool(const std::string& data_dir, const std::string& space, const std::string& owner,
             std::string task_id)
      : task_id_(std::move(task_id)) {
    EXPECT_TRUE(
        RegisterMemory(registry_, MemoryDir(data_dir, space, owner), Env::Default(), &clock_).ok());
  }
  tools::ToolResult Call(const Json& args) {
    tools::ToolContext ctx;
    ctx.key.task_id = task_id_;
    return (*registry_.Handler(kMemory))(args, ctx);
  }
  tools::ToolResult Read(const std::string& topic = "") {
    return Call({{"action", "read"}, {"topic", topic}});
  }
  tools::ToolResult Append(const std::string& topic, const std::string& text) {
    return Call({{"action", "append"}, {"topic", topic}, {"text", text}});
  }

 private:
  FakeClock clock_{1'000};
  tools::ToolRegistry registry_;
  std::string task_id_;
};

TEST(MemoryOwnership, ATaskWithoutASpaceReachesOnlyItsOwnersNotes) {
  testing::TempDir dir;
  MemoryTool alice1(dir.path(), "", "alice", "t-alice-1");
  ASSERT_FALSE(alice1.Append("secrets", "the staging password is hunter2").is_error);

  // Bob's private task (no space) cannot read alice's note, by topic or whole.
  MemoryTool bob(dir.path(), "", "bob", "t-bob");
  EXPECT_EQ(bob.Read().content, "The memory is empty.");
  EXPECT_EQ(bob.Read("secrets").content, "No notes under 'secrets'.");
  // Nor overwrite or add to it: his append lands in his own memory.
  ASSERT_FALSE(bob.Append("secrets", "the staging password is bob").is_error);
  EXPECT_EQ(bob.Read("secrets").content, "## secrets\n- the staging password is bob\n");

  // Alice's second task sees her own note, and only hers.
  MemoryTool alice2(dir.path(), "", "alice", "t-alice-2");
  EXPECT_EQ(alice2.Read().content, "## secrets\n- the staging password is hunter2\n");
  auto notes = ReadMemory(*Env::Default(), OwnerMemoryDir(dir.path(), "alice"));
  ASSERT_TRUE(notes.ok());
  ASSERT_EQ(notes->size(), 1u);
  EXPECT_EQ((*notes)[0].task_id, "t-alice-1");

  // The old shared folder is read by no one: a note planted there reaches
  // neither user.
  ASSERT_TRUE(
      AppendMemory(*Env::Default(), dir.path() + "/memory/default", {1, "old", "legacy", ""}).ok());
  EXPECT_EQ(MemoryTool(dir.path(), "", "carol", "t-carol").Read().content, "The memory is empty.");
  EXPECT_EQ(alice2.Read("old").content, "No notes under 'old'.");

  // A space's memory is the space's, shared by its tasks whoever owns them,
  // and apart from both users' own.
  MemoryTool alice_proj(dir.path(), "proj", "alice", "t-alice-proj");
  MemoryTool bob_proj(dir.path(), "proj", "bob", "t-bob-proj");
  ASSERT_FALSE(alice_proj.Append("build", "make fixtures first").is_error);
  EXPECT_EQ(bob_proj.Read().content, "## build\n- make fixtures first\n");
  EXPECT_EQ(bob.Read("build").content, "No notes under 'build'.");
}

TEST(MemoryOwnership, HostileOwnerNamesStayOneComponentAndNeverMeet) {
  testing::TempDir dir;
  const std::vector<std::string> owners = {"alice",
                                           "Alice",
                                           "..",
                                           ".",
                                           "../alice",
                                           "alice/../../etc",
                                           "a/b",
                                           "a%2Fb",
                                           "~none",
                                           "",
                                           std::string("nul\0x", 6),
                                           "al ice",
                                           "alice\n",
                                           "émile",
                                           std::string(200, 'x'),
                                           std::string(201, 'x'),
                                           std::string(100, '/')};
  std::set<std::string> seen;
  for (const std::string& o : owners) {
    const std::string c = OwnerPathComponent(o);
    EXPECT_FALSE(c.empty()) << o;
    EXPECT_EQ(c.find('/'), std::string::npos) << o;
    EXPECT_EQ(c.find('\0'), std::string::npos) << o;
    EXPECT_NE(c, ".");
    EXPECT_NE(c, "..");
    EXPECT_LE(c.size(), 128u) << o;
    EXPECT_TRUE(seen.insert(c).second) << "two owners share " << c;
    EXPECT_EQ(OwnerMemoryDir(dir.path(), o), dir.path() + "/memory/~users/" + c);
    // A note of each lands in its own folder under ~users, nowhere else.
    ASSERT_TRUE(
        AppendMemory(*Env::Default(), OwnerMemoryDir(dir.path(), o), {1, "t", "x", ""}).ok())
        << o;
  }
  size_t folders = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path() + "/memory/~users")) {
    EXPECT_TRUE(e.is_directory()) << e.path();
    ++folders;
  }
  EXPECT_EQ(folders, owners.size());
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()),
                          std::filesystem::directory_iterator()),
            1)
      << "only memory/ in the data dir";
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path() + "/memory"),
                          std::filesystem::directory_iterator()),
            1)
      << "only ~users/ under memory/";
  EXPECT_EQ(OwnerPathComponent(""), "~none");
  EXPECT_EQ(OwnerPathComponent("a.b"), "a%2Eb");
  // A dot-only or empty space has no folder (and no memory).
  EXPECT_EQ(SpaceMemoryDir(dir.path(), ".."), "");
  EXPECT_EQ(SpaceMemoryDir(dir.path(), ""), "");
  EXPECT_EQ(ReadMemory(*Env::Default(), "").status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(AppendMemory(*Env::Default(), "", {1, "t", "x", ""}).ok());
}

}  // namespace
}  // namespace maestro::knowledge
