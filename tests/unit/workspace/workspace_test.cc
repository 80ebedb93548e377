// Workspaces: ephemeral per-task directories under the data dir, registered
// persistent spaces, and the git commit naming the task.
#include "workspace/workspace.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/temp_dir.h"
#include "workspace/git_repo.h"

namespace maestro::tools {
namespace {

namespace fs = std::filesystem;

TEST(WorkspaceTest, EphemeralWorkspaceIsCreatedUnderTheDataDirAndCommitted) {
  testing::TempDir data;
  WorkspaceOptions opts;
  opts.data_dir = data.path();
  opts.ephemeral_policy.allowed_tools = {"ReadFile"};
  SpaceRegistry spaces;
  auto ws = PrepareWorkspace(opts, spaces, "3f2b8c1e-task", "");
  ASSERT_TRUE(ws.ok()) << ws.status().ToString();
  EXPECT_TRUE(ws->ephemeral);
  EXPECT_EQ(ws->root, fs::canonical(data.File("workspaces/tasks/3f2b8c1e-task")).string());
  EXPECT_FALSE(fs::exists(ws->root + "/.git")) << "the repository lives outside the workspace";
  EXPECT_EQ(ws->git_dir, data.File("tasks/3f2b8c1e-task/git"));
  EXPECT_TRUE(fs::exists(ws->git_dir + "/HEAD"));
  EXPECT_EQ(ws->policy.allowed_tools.count("ReadFile"), 1u);

  // Nothing changed yet: no commit.
  auto none = CommitWorkspace(*ws, "3f2b8c1e-task", "01JOB", "Fix the parser");
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_FALSE(none->has_value());

  std::ofstream(ws->root + "/result.txt") << "done\n";
  auto commit = CommitWorkspace(*ws, "3f2b8c1e-task", "01JOB", "Fix the parser");
  ASSERT_TRUE(commit.ok()) << commit.status().ToString();
  ASSERT_TRUE(commit->has_value());
  EXPECT_EQ((*commit)->size(), 40u);
  auto repo = OpenWorkspaceRepo(*ws);
  ASSERT_TRUE(repo.ok()) << repo.status().ToString();
  EXPECT_EQ(repo->Head()->first, **commit);
  EXPECT_EQ(repo->Head()->second, "maestro: Fix the parser (task 3f2b8c1e-task, job 01JOB)");
  EXPECT_TRUE(repo->ChangedFiles()->empty()) << "result.txt is in the commit";

  // Preparing again reuses the same directory.
  auto again = PrepareWorkspace(opts, spaces, "3f2b8c1e-task", "");
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(fs::exists(again->root + "/result.txt"));
  EXPECT_FALSE(PrepareWorkspace(opts, spaces, "../evil", "").ok());
}

TEST(WorkspaceTest, TheJobEndCommitRunsNoHookFsmonitorOrFilterTheAgentWrote) {
  testing::TempDir data;
  SpaceRegistry spaces;
  auto ws = PrepareWorkspace({data.path(), {}}, spaces, "t-hostile", "");
  ASSERT_TRUE(ws.ok()) << ws.status().ToString();
  const std::string marker = data.File("MARKER");
  const std::string script = data.File("evil.sh");
  std::ofstream(script) << "#!/bin/sh\necho ran >> " << marker << "\ncat\n";
  fs::permissions(script, fs::perms::owner_all);
  // The agent makes a `.git` of its own: ordinary content, never opened.
  fs::create_directories(ws->root + "/.git");
  std::ofstream(ws->root + "/.git/HEAD") << "ref: refs/heads/master\n";
  std::ofstream(ws->root + "/.git/config", std::ios::app)
      << "[core]\n\tfsmonitor = " << script << "\n[filter \"x\"]\n\tclean = " << script << "\n";
  for (const char* hook : {"pre-commit", "post-commit"}) {
    std::string path = ws->root + "/.git/hooks/" + hook;
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << "#!/bin/sh\necho " << hook << " >> " << marker << "\n";
    fs::permissions(path, fs::perms::owner_all);
  }
  std::ofstream(ws->root + "/.gitattributes") << "* filter=x\n";
  std::ofstream(ws->root + "/result.txt") << "done\n";
  auto commit = CommitWorkspace(*ws, "t-hostile", "j1", "hostile");
  ASSERT_TRUE(commit.ok()) << commit.status().ToString();
  EXPECT_TRUE(commit->has_value());
  EXPECT_TRUE(OpenWorkspaceRepo(*ws)->ChangedFiles()->empty());
  EXPECT_FALSE(fs::exists(marker)) << std::ifstream(marker).rdbuf();
}

TEST(WorkspaceTest, ARepositoryInitCutShortIsMadeAnewByTheCommit) {
  testing::TempDir data;
  SpaceRegistry spaces;
  // A crash left the task's git directory empty (no HEAD, no objects).
  fs::create_directories(data.File("tasks/t-crash/git"));
  auto ws = PrepareWorkspace({data.path(), {}}, spaces, "t-crash", "");
  ASSERT_TRUE(ws.ok()) << ws.status().ToString();
  EXPECT_EQ(OpenWorkspaceRepo(*ws).status().code(), StatusCode::kNotFound);
  std::ofstream(ws->root + "/result.txt") << "done\n";
  auto commit = CommitWorkspace(*ws, "t-crash", "j1", "after a crash");
  ASSERT_TRUE(commit.ok()) << commit.status().ToString();
  EXPECT_TRUE(commit->has_value());
  EXPECT_TRUE(OpenWorkspaceRepo(*ws)->ChangedFiles()->empty());
}

TEST(WorkspaceTest, PersistentSpacesAreRegisteredDirectories) {
  testing::TempDir dir;
  fs::create_directories(dir.File("repo"));
  SpaceRegistry spaces;
  Space s;
  s.name = "website";
  s.root = dir.File("repo");
  s.policy.edit_allowed = true;
  ASSERT_TRUE(spaces.Register(s).ok());
  EXPECT_FALSE(spaces.Register(s).ok());
  Space missing;  // (aggregate-initialized, g++ -O1 warned maybe-uninitialized in a copy)
  missing.name = "ghost";
  missing.root = dir.File("nope");
  EXPECT_EQ(spaces.Register(missing).field(), "root");

  auto ws = PrepareWorkspace({dir.path(), {}}, spaces, "t1", "website");
  ASSERT_TRUE(ws.ok());
  EXPECT_FALSE(ws->ephemeral);
  EXPECT_TRUE(ws->policy.edit_allowed);
  EXPECT_EQ(ws->root, fs::canonical(dir.File("repo")).string());
  EXPECT_EQ(PrepareWorkspace({dir.path(), {}}, spaces, "t1", "other").status().code(),
            StatusCode::kNotFound);
  // Not a git repository: nothing to commit into, and no error.
  std::ofstream(ws->root + "/a.txt") << "x";
  auto c = CommitWorkspace(*ws, "t1", "j1", "x");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->has_value());
}

TEST(WorkspaceTest, ConfiguredSpacesGetTheirPolicyAndAMissingDirectoryIsCreated) {
  testing::TempDir dir;
  SpaceConfig docs;
  docs.name = "docs";
  docs.path = dir.File("spaces/docs");  // does not exist yet
  docs.description = "team docs";
  docs.edit_allowed = true;
  SpaceConfig tools_listed;
  tools_listed.name = "ro";
  tools_listed.path = dir.path();
  tools_listed.tools = {"ReadFile", "Grep"};
  SpaceRegistry spaces;
  std::vector<std::string> created;
  ASSERT_TRUE(RegisterConfiguredSpaces(*Env::Default(), {{"docs", docs}, {"ro", tools_listed}},
                                       &spaces, &created)
                  .ok());
  EXPECT_EQ(created, std::vector<std::string>{dir.File("spaces/docs")});
  EXPECT_TRUE(fs::is_directory(dir.File("spaces/docs")));
  const Space* d = spaces.Find("docs");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->description, "team docs");
  // The default set: read tools and the agent tools, plus edits when allowed.
  EXPECT_EQ(d->policy.allowed_tools.count("WriteFile"), 1u);
  EXPECT_EQ(d->policy.allowed_tools.count("RunCommand"), 0u);
  EXPECT_EQ(spaces.Find("ro")->policy.allowed_tools, (std::set<std::string>{"Grep", "ReadFile"}));
  ASSERT_EQ(spaces.List().size(), 2u);
  EXPECT_EQ(spaces.List()[0]->name, "docs");

  SpaceConfig typo = tools_listed;
  typo.name = "bad";
  typo.tools = {"ReadFle"};
  Status st = RegisterConfiguredSpaces(*Env::Default(), {{"bad", typo}}, &spaces, nullptr);
  EXPECT_EQ(st.field(), "spaces.bad.tools");
  EXPECT_NE(st.message().find("did you mean 'ReadFile'"), std::string::npos) << st.message();
}

TEST(WorkspaceTest, ACommitMessageNamesItsTaskAndJob) {
  const std::string task = "3f2b8c1e-0000-4000-8000-000000000001";
  const std::string msg = WorkspaceCommitMessage(task, "01JOBA", "Fix (task x) parser");
  EXPECT_EQ(msg, "maestro: Fix (task x) parser (task " + task + ", job 01JOBA)");
  EXPECT_EQ(TaskCommitJob(msg, task), "01JOBA");
  // The format before commits named their job still belongs to the task.
  EXPECT_EQ(TaskCommitJob("maestro: old (task " + task + ")", task), "");
  EXPECT_EQ(TaskCommitJob(msg, "3f2b8c1e-0000-4000-8000-000000000002"), std::nullopt);
  EXPECT_EQ(TaskCommitJob("(task " + task + "0, job j)", task), std::nullopt) << "another id";
  EXPECT_EQ(TaskCommitJob("a person's commit", task), std::nullopt);
  EXPECT_EQ(TaskCommitJob(msg, ""), std::nullopt);
}

}  // namespace
}  // namespace maestro::tools
