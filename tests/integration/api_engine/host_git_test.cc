// maestro serve runs no `git` process on the host: a fake `git` first on
// serve's PATH writes a marker and fails loudly, yet a task that writes a
// file completes and its job-end commit is in the task's repository (issue
// 13), which lives outside the workspace. An agent that plants a `.git` with
// symlinks to a host directory and to another repository's objects and refs
// changes nothing outside, and GET /diff shows only its own file (issue 44).
#include <sys/stat.h>

#include <fstream>
#include <map>

#include "serve_fixture.h"
#include "workspace/git_repo.h"

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

// Every entry under `dir` (symlinks not followed) with its bytes or target.
std::map<std::string, std::string> EntriesOf(const std::string& dir) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string rel = fs::relative(it->path(), dir).string();
    if (it->is_symlink()) {
      out[rel] = "link:" + fs::read_symlink(it->path()).string();
    } else if (it->is_directory()) {
      out[rel] = "dir";
    } else {
      out[rel] = "file:" + ReadWholeFile(it->path().string());
    }
  }
  return out;
}

TEST_F(HostGitTest, APlantedGitChangesNothingOutsideAndTheDiffShowsOnlyTheWorkspace) {
  const std::string host = dir_.File("host-dir");
  fs::create_directories(host);
  const std::string victim = dir_.File("victim");
  fs::create_directories(victim);
  ASSERT_TRUE(tools::GitRepo::Init(victim).ok());
  std::ofstream(victim + "/victim-only.txt") << "VICTIM-CONTENT\n";
  ASSERT_TRUE(tools::GitRepo::Open(victim)->CommitAll("victim")->has_value());
  const auto victim_before = EntriesOf(victim);

  // The outsider's probe: index, branch log and HEAD log symlinked to a host
  // directory; objects and refs symlinked to another repository.
  const std::string plant =
      "mkdir -p .git/logs/refs/heads && printf 'ref: refs/heads/master\\n' > .git/HEAD && "
      "ln -s " +
      host + "/new-index .git/index && ln -s " + host +
      "/new-log .git/logs/HEAD && "
      "ln -s " +
      host + "/new-branch-log .git/logs/refs/heads/master && ln -s " + victim +
      "/.git/objects .git/objects && ln -s " + victim + "/.git/refs .git/refs && echo planted";
  Json done = ToolCallReply("complete", {{"status", "success"}, {"result", "planted"}});
  Start(Json::array({ToolCallReply("RunCommand", {{"command", plant}}),
                     ToolCallReply("WriteFile", {{"path", "result.txt"}, {"content", "mine\n"}}),
                     done}));
  Json c = Create("plant a .git");
  ASSERT_EQ(WaitStatus(c, "succeeded", 60s)["status"], "succeeded") << LogTail();
  const std::string ws = DataDir() + "/workspaces/tasks/" + c["task"]["id"].get<std::string>();
  ASSERT_TRUE(fs::is_symlink(ws + "/.git/objects")) << "the probe ran";

  Json diff;
  for (int i = 0; i < 300; ++i) {
    diff = Get(TaskPath(c) + "/diff");
    if (diff.value("jobs", Json::array()).size() == 1) break;
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(diff["jobs"].size(), 1u) << diff.dump() << LogTail();
  for (const char* part : {"total", "uncommitted"}) {
    for (const auto& f : diff[part]["files"]) {
      EXPECT_FALSE(Contains(f["path"], ".git")) << f.dump();
      EXPECT_FALSE(Contains(f["path"], "victim-only")) << f.dump();
    }
  }
  ASSERT_EQ(diff["jobs"][0]["files"].size(), 1u) << diff.dump();
  EXPECT_EQ(diff["jobs"][0]["files"][0]["path"], "result.txt");
  EXPECT_FALSE(Contains(diff.dump(), "VICTIM-CONTENT"));
  EXPECT_TRUE(EntriesOf(host).empty())
      << "written outside: " << ::testing::PrintToString(EntriesOf(host));
  EXPECT_EQ(EntriesOf(victim), victim_before) << "the other repository changed";
}

}  // namespace
}  // namespace maestro::testing
