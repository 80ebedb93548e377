// maestro serve runs no `git` process on the host: a fake `git` first on
// serve's PATH writes a marker and fails loudly, yet a task that writes a
// file completes and its job-end commit is in the workspace (issue 13).
#include <sys/stat.h>

#include <fstream>

#include "serve_fixture.h"
#include "tools/git_repo.h"

namespace maestro::testing {
namespace {

namespace fs = std::filesystem;

class HostGitTest : public ServeEngineTest {};

TEST_F(HostGitTest, ATaskCommitsItsWorkspaceWithoutEverRunningTheGitBinary) {
  const std::string bin = dir_.File("fakebin");
  const std::string marker = dir_.File("GIT-RAN");
  fs::create_directories(bin);
  std::ofstream(bin + "/git") << "#!/bin/sh\necho \"$@\" >> " << marker
                              << "\necho 'fake git: must not run' >&2\nexit 1\n";
  ASSERT_EQ(::chmod((bin + "/git").c_str(), 0755), 0);
  const char* path = std::getenv("PATH");
  serve_env_["PATH"] = bin + ":" + (path ? path : "/usr/bin:/bin");

  Json done = ToolCallReply("complete", {{"status", "success"}, {"result", "written"}});
  Start(Json::array(
      {ToolCallReply("WriteFile", {{"path", "out/result.txt"}, {"content", "RESULT-13"}}), done}));
  Json c = Create("write the result");
  Json job = WaitStatus(c, "succeeded");
  ASSERT_EQ(job["status"], "succeeded") << LogTail();

  const std::string id = c["task"]["id"].get<std::string>();
  const std::string ws = DataDir() + "/workspaces/tasks/" + id;
  // The repository lives outside the workspace (no sandbox binds it).
  const std::string git_dir = DataDir() + "/tasks/" + id + "/git";
  EXPECT_TRUE(fs::exists(ws + "/out/result.txt"));
  EXPECT_FALSE(fs::exists(ws + "/.git"));
  // The job-end commit lands after the job's status; wait for it briefly.
  Result<std::pair<std::string, std::string>> head = NotFound("not yet");
  for (int i = 0; i < 200; ++i) {
    auto repo = tools::GitRepo::OpenExternal(git_dir, ws, /*create=*/false);
    ASSERT_TRUE(repo.ok()) << repo.status().ToString();
    head = repo->Head();
    if (head.ok() && repo->ChangedFiles()->empty()) break;
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_TRUE(head.ok()) << head.status().ToString() << "\n" << LogTail();
  EXPECT_TRUE(Contains(head->second, "(task " + c["task"]["id"].get<std::string>() + ", job " +
                                         c["job"]["id"].get<std::string>() + ")"))
      << head->second;
  EXPECT_TRUE(tools::GitRepo::OpenExternal(git_dir, ws, false)->ChangedFiles()->empty())
      << "out/result.txt committed";
  EXPECT_FALSE(fs::exists(marker)) << "serve ran git: " << std::ifstream(marker).rdbuf();
}

}  // namespace
}  // namespace maestro::testing
