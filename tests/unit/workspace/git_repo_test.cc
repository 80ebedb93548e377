// GitRepo: init, the changed-file list (new/modified/deleted/untracked,
// .gitignore), commits with the fixed identity, the refusal of a git
// directory outside the work tree, and an agent-written `.git/` whose
// fsmonitor, hooks and filter driver never run.
#include "workspace/git_repo.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "support/temp_dir.h"

namespace maestro::tools {
namespace {

namespace fs = std::filesystem;
using Paths = std::set<std::string>;

using testing::WriteFile;

TEST(GitRepoTest, InitThenCommitAllRecordsEveryChangeAndLeavesAStatusThatIsClean) {
  testing::TempDir dir;
  auto repo = GitRepo::Init(dir.path());
  ASSERT_TRUE(repo.ok()) << repo.status().ToString();
  EXPECT_TRUE(fs::is_directory(dir.File(".git")));
  EXPECT_EQ(repo->WorkTree(), fs::canonical(dir.path()).string());
  EXPECT_EQ(repo->Head().status().code(), StatusCode::kNotFound) << "unborn HEAD";
  auto empty = repo->CommitAll("nothing");
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_FALSE(empty->has_value()) << "an empty tree on an unborn HEAD is no commit";

  WriteFile(dir.File("keep.txt"), "v1\n");
  WriteFile(dir.File("gone.txt"), "bye\n");
  WriteFile(dir.File(".gitignore"), "build/\n*.log\n");
  WriteFile(dir.File("build/out.o"), "obj");
  WriteFile(dir.File("debug.log"), "noise");
  auto first = repo->ChangedFiles();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(*first, (Paths{".gitignore", "gone.txt", "keep.txt"})) << "ignored files left out";

  auto c1 = repo->CommitAll("first");
  ASSERT_TRUE(c1.ok()) << c1.status().ToString();
  ASSERT_TRUE(c1->has_value());
  EXPECT_EQ((*c1)->size(), 40u);
  auto head = repo->Head();
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->first, **c1);
  EXPECT_EQ(head->second, "first");
  EXPECT_TRUE(repo->ChangedFiles()->empty()) << "clean after the commit";
  auto again = repo->CommitAll("again");
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->has_value()) << "no change, no commit";

  WriteFile(dir.File("keep.txt"), "v2\n");             // modified
  fs::remove(dir.File("gone.txt"));                    // deleted
  WriteFile(dir.File("src/deep/new.cc"), "int x;\n");  // untracked in a new directory
  WriteFile(dir.File("build/more.o"), "obj");          // still ignored
  auto second = repo->ChangedFiles();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, (Paths{"gone.txt", "keep.txt", "src/deep/new.cc"}));

  auto c2 = repo->CommitAll("second\n\nbody");
  ASSERT_TRUE(c2.ok()) << c2.status().ToString();
  ASSERT_TRUE(c2->has_value());
  EXPECT_NE(**c2, **c1);
  EXPECT_EQ(repo->Head()->second, "second");
  EXPECT_TRUE(repo->ChangedFiles()->empty()) << "the deletion was committed too";

  // A second handle (another job) sees the same history; a subdirectory is
  // no repository of its own (no search of parent directories).
  EXPECT_EQ(GitRepo::Open(dir.File("src/deep")).status().code(), StatusCode::kNotFound);
  auto reopened = GitRepo::Open(dir.path());
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  EXPECT_EQ(reopened->Head()->first, **c2);
}

TEST(GitRepoTest, OpenRefusesAGitDirectoryOutsideTheWorkTree) {
  testing::TempDir dir;
  EXPECT_EQ(GitRepo::Open(dir.path()).status().code(), StatusCode::kNotFound);

  // core.worktree pointing at another directory (e.g. the host's /root).
  fs::create_directories(dir.File("ws"));
  fs::create_directories(dir.File("elsewhere"));
  ASSERT_TRUE(GitRepo::Init(dir.File("ws")).ok());
  std::ofstream(dir.File("ws/.git/config"), std::ios::app)
      << "[core]\n\tworktree = " << dir.File("elsewhere") << "\n";
  auto redirected = GitRepo::Open(dir.File("ws"));
  EXPECT_EQ(redirected.status().code(), StatusCode::kInvalidArgument)
      << redirected.status().ToString();

  // A `.git` file naming another repository's git directory.
  ASSERT_TRUE(GitRepo::Init(dir.File("victim")).ok());
  fs::create_directories(dir.File("ws2"));
  WriteFile(dir.File("ws2/.git"), "gitdir: " + dir.File("victim/.git") + "\n");
  EXPECT_EQ(GitRepo::Open(dir.File("ws2")).status().code(), StatusCode::kInvalidArgument);

  // A symlinked `.git`.
  fs::create_directories(dir.File("ws3"));
  fs::create_directory_symlink(dir.File("victim/.git"), dir.File("ws3/.git"));
  EXPECT_EQ(GitRepo::Open(dir.File("ws3")).status().code(), StatusCode::kInvalidArgument);
  WriteFile(dir.File("victim/a.txt"), "x");
  EXPECT_FALSE(GitRepo::Open(dir.File("victim"))->Head().ok()) << "victim never committed into";
}

// An executable script that appends `tag` to dir/MARKER when anything runs
// it, then `tail` (e.g. `cat` to pass a filter's content through).
std::string MarkerScript(const testing::TempDir& dir, const std::string& name,
                         const std::string& tag, const std::string& tail = "") {
  std::string path = dir.File(name);
  WriteFile(path, "#!/bin/sh\necho " + tag + " >> " + dir.File("MARKER") + "\n" + tail + "\n");
  ::chmod(path.c_str(), 0755);
  return path;
}

// A workspace whose `.git/config` names an fsmonitor and a filter driver and
// whose hooks all write the marker: what an agent can write from inside.
std::string HostileWorkspace(const testing::TempDir& dir) {
  const std::string ws = dir.File("ws");
  fs::create_directories(ws);
  EXPECT_TRUE(GitRepo::Init(ws).ok());
  const std::string fsmonitor = MarkerScript(dir, "fsmonitor.sh", "fsmonitor");
  const std::string filter = MarkerScript(dir, "filter.sh", "filter", "cat");
  std::ofstream(ws + "/.git/config", std::ios::app)
      << "[core]\n\tfsmonitor = " << fsmonitor << "\n"
      << "[filter \"x\"]\n\tclean = " << filter << "\n\tsmudge = " << filter
      << "\n\trequired = true\n";
  for (const char* hook : {"pre-commit", "post-commit", "commit-msg", "prepare-commit-msg",
                           "reference-transaction", "post-index-change"}) {
    const std::string path = ws + "/.git/hooks/" + hook;
    WriteFile(path, "#!/bin/sh\necho " + std::string(hook) + " >> " + dir.File("MARKER") + "\n");
    ::chmod(path.c_str(), 0755);
  }
  WriteFile(ws + "/.gitattributes", "* filter=x\n");
  WriteFile(ws + "/result.txt", "done\n");
  return ws;
}

TEST(GitRepoTest, AnAgentWrittenGitDirectoryRunsNothingOnCommitOrStatus) {
  testing::TempDir dir;
  const std::string ws = HostileWorkspace(dir);
  ASSERT_FALSE(fs::exists(dir.File("MARKER")));

  auto repo = GitRepo::Open(ws);
  ASSERT_TRUE(repo.ok()) << repo.status().ToString();
  auto changed = repo->ChangedFiles();
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_EQ(*changed, (Paths{".gitattributes", "result.txt"}));
  auto commit = repo->CommitAll("job end");
  ASSERT_TRUE(commit.ok()) << commit.status().ToString();
  EXPECT_TRUE(commit->has_value());
  WriteFile(ws + "/result.txt", "changed\n");
  EXPECT_EQ(*repo->ChangedFiles(), (Paths{"result.txt"}));
  EXPECT_TRUE(repo->CommitAll("second")->has_value());
  EXPECT_TRUE(repo->ChangedFiles()->empty());
  EXPECT_FALSE(fs::exists(dir.File("MARKER")))
      << "something ran: " << std::ifstream(dir.File("MARKER")).rdbuf();
}

TEST(GitRepoTest, TheRealGitBinaryWouldRunTheTrap) {
  // Proves the hostile workspace above is a real trap, so the absent marker
  // there means something: git's own status runs the fsmonitor script.
  if (std::system("git --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "no git binary";
  testing::TempDir dir;
  const std::string ws = HostileWorkspace(dir);
  ASSERT_EQ(std::system(("git -C '" + ws + "' status >/dev/null 2>&1").c_str()), 0);
  EXPECT_TRUE(fs::exists(dir.File("MARKER")));
}

}  // namespace
}  // namespace maestro::tools
