// GitSpares: ready repositories renamed into new ephemeral workspaces, refilled
// in the background, removed on exit, stale ones of dead processes swept.
#include "workspace/git_spares.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "support/temp_dir.h"
#include "workspace/git_repo.h"
#include "workspace/workspace.h"

namespace maestro::tools {
namespace {

namespace fs = std::filesystem;

size_t EntriesIn(const std::string& dir) {
  std::error_code ec;
  size_t n = 0;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); ++it) ++n;
  return n;
}

TEST(GitSparesTest, AWorkspaceGetsAReadyRepositoryAndTheSpareIsRefilled) {
  testing::TempDir data;
  const std::string spares = data.File("tasks/.git-spares");
  {
    GitSpares pool(Env::Default(), data.path(), 2);
    ASSERT_EQ(pool.WaitFilled(), 2u);
    EXPECT_EQ(EntriesIn(spares), 3u) << "two spares and the template they are copied from";

    WorkspaceOptions opts;
    opts.data_dir = data.path();
    opts.git_spares = &pool;
    SpaceRegistry spaces;
    auto ws = PrepareWorkspace(opts, spaces, "task-a", "");
    ASSERT_TRUE(ws.ok()) << ws.status().ToString();
    EXPECT_FALSE(fs::exists(ws->root + "/.git")) << "the repository lives outside the workspace";
    auto repo = OpenWorkspaceRepo(*ws);
    ASSERT_TRUE(repo.ok()) << repo.status().ToString();
    EXPECT_EQ(repo->GitDir(), fs::canonical(data.File("tasks/task-a/git")).string())
        << "the spare moved in as the task's repository";
    EXPECT_EQ(repo->WorkTree(), ws->root);
    EXPECT_FALSE(repo->Head().ok()) << "an empty repository: HEAD unborn";

    // The job-end commit works in the moved repository.
    std::ofstream(ws->root + "/result.txt") << "done\n";
    auto commit = CommitWorkspace(*ws, "task-a", "job-1", "Title");
    ASSERT_TRUE(commit.ok()) << commit.status().ToString();
    ASSERT_TRUE(commit->has_value());
    EXPECT_EQ(OpenWorkspaceRepo(*ws)->Head()->first, **commit);

    // Refilled behind the take: two ready again.
    EXPECT_EQ(pool.WaitFilled(), 2u);
    for (const char* id : {"task-b", "task-c", "task-d"}) {
      auto more = PrepareWorkspace(opts, spaces, id, "");
      ASSERT_TRUE(more.ok()) << more.status().ToString();
      EXPECT_TRUE(OpenWorkspaceRepo(*more).ok()) << id;
    }
  }
  EXPECT_EQ(EntriesIn(spares), 0u) << "a process removes its spares on exit";
}

TEST(GitSparesTest, TakeFailsCleanlyWhenNoneIsReadyOrTheSpareVanished) {
  testing::TempDir data;
  GitSpares none(Env::Default(), data.path(), 0);
  EXPECT_FALSE(none.TakeAs(data.File("ws")));

  GitSpares pool(Env::Default(), data.path(), 1);
  ASSERT_EQ(pool.WaitFilled(), 1u);
  // Another process's start removed it (or a person did): the take says no.
  for (const auto& e : fs::directory_iterator(data.File("tasks/.git-spares"))) {
    fs::remove_all(e.path());
  }
  EXPECT_FALSE(pool.TakeAs(data.File("ws")));
  EXPECT_FALSE(fs::exists(data.File("ws")));
  EXPECT_EQ(pool.WaitFilled(), 1u) << "the filler makes a new one";
  EXPECT_TRUE(pool.TakeAs(data.File("ws")));
  EXPECT_TRUE(GitRepo::OpenExternal(data.File("ws/git"), data.path(), /*create=*/false).ok());
  EXPECT_EQ(EntriesIn(data.File("ws")), 1u) << "a task directory holding only its bare git/";
}

TEST(GitSparesTest, StartRemovesSparesOlderThanADayAndKeepsYoungOnes) {
  testing::TempDir data;
  const std::string spares = data.File("tasks/.git-spares");
  fs::create_directories(spares + "/dead-process/git");
  fs::create_directories(spares + "/live-process/git");
  fs::last_write_time(spares + "/dead-process",
                      fs::file_time_type::clock::now() - std::chrono::hours(48));
  GitSpares pool(Env::Default(), data.path(), 1);
  ASSERT_EQ(pool.WaitFilled(), 1u);
  EXPECT_FALSE(fs::exists(spares + "/dead-process"));
  EXPECT_TRUE(fs::exists(spares + "/live-process/git")) << "may belong to a running process";
}

}  // namespace
}  // namespace maestro::tools
