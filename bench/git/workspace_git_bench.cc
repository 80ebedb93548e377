// Per-task git cost of an ephemeral workspace: init on the first job, then
// the job-end commit of one written file. Baseline (same run): the `git`
// process sequence maestro ran before issue 13 (init, rev-parse, add -A,
// diff --cached, commit, rev-parse HEAD); now: PrepareWorkspace +
// CommitWorkspace through libgit2 in-process.
//
//   ./build/release/bench/git/workspace_git_bench [--tasks N]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/process.h"
#include "workspace/workspace.h"

namespace fs = std::filesystem;
using namespace maestro;

namespace {

bool Git(const std::string& root, std::vector<std::string> args) {
  ProcessSpec spec;
  spec.argv = {"git",
               "-C",
               root,
               "-c",
               "user.name=maestro",
               "-c",
               "user.email=maestro@localhost",
               "-c",
               "commit.gpgsign=false"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.timeout = std::chrono::seconds(60);
  auto r = RunPosixProcess(spec);
  return r.ok() && r->exit_code == 0;
}

// The pre-issue-13 sequence: init on first use, then the job-end commit.
bool ProcessTask(const std::string& root, const std::string& id) {
  fs::create_directories(root);
  if (!Git(root, {"init", "-q"})) return false;
  std::ofstream(root + "/result.txt") << "done " << id << "\n";
  Git(root, {"rev-parse", "--is-inside-work-tree"});
  Git(root, {"add", "-A"});
  Git(root, {"diff", "--cached", "--quiet"});  // exit 1: something staged
  if (!Git(root, {"commit", "-q", "-m", "maestro: bench (task " + id + ")"})) return false;
  return Git(root, {"rev-parse", "HEAD"});
}

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The two halves are timed apart: PrepareWorkspace lies on the path from
// create to the first LLM request, CommitWorkspace after the job's end.
std::vector<double> g_prepare_ms, g_commit_ms;

bool LibgitTask(const std::string& data, const std::string& id) {
  tools::WorkspaceOptions opts;
  opts.data_dir = data;
  tools::SpaceRegistry spaces;
  auto t0 = std::chrono::steady_clock::now();
  auto ws = tools::PrepareWorkspace(opts, spaces, id, "");
  if (!ws.ok()) return false;
  g_prepare_ms.push_back(MsSince(t0));
  std::ofstream(ws->root + "/result.txt") << "done " << id << "\n";
  t0 = std::chrono::steady_clock::now();
  auto c = tools::CommitWorkspace(*ws, id, "bench-job", "bench");
  g_commit_ms.push_back(MsSince(t0));
  return c.ok() && c->has_value();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

template <typename F>
std::vector<double> TimeEach(int n, F f) {
  std::vector<double> ms;
  for (int i = 0; i < n; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    if (!f(i)) {
      std::fprintf(stderr, "task %d failed\n", i);
      std::exit(1);
    }
    ms.push_back(MsSince(t0));
  }
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  int tasks = 100;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--tasks") == 0) tasks = std::atoi(argv[i + 1]);
  }
  fs::path dir = fs::temp_directory_path() / ("maestro_git_bench_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto old_ms = TimeEach(tasks, [&](int i) {
    return ProcessTask((dir / "old" / std::to_string(i)).string(), "t" + std::to_string(i));
  });
  auto new_ms = TimeEach(
      tasks, [&](int i) { return LibgitTask((dir / "new").string(), "t" + std::to_string(i)); });
  fs::remove_all(dir);
  std::printf("tasks=%d git-processes p50=%.2fms libgit2 p50=%.2fms speedup=%.1fx\n", tasks,
              Median(old_ms), Median(new_ms), Median(old_ms) / std::max(Median(new_ms), 1e-6));
  std::printf("libgit2 PrepareWorkspace p50=%.2fms CommitWorkspace p50=%.2fms\n",
              Median(g_prepare_ms), Median(g_commit_ms));
  return 0;
}
