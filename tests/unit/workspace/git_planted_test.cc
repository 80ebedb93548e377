// Host-side git against a hostile agent (issue 44, part 2), on real files
// and real libgit2 repositories: a `.git` the agent plants in an ephemeral
// workspace (symlinked index, refs, logs, objects; a gitdir file; another
// repository's objects and refs) is never opened and never committed; a
// persistent space whose metadata holds a symlink is refused with nothing
// written; a directory swapped for a symlink while DiffWorkdir, CommitAll and
// ChangedFiles run in a loop never puts an outside byte into a diff or a
// commit. "Nothing outside changed" is checked by recording every entry
// (type, bytes, link target) of the outside directories before and after.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <thread>

#include "core/tree_root.h"
#include "support/temp_dir.h"
#include "workspace/git_repo.h"
#include "workspace/git_snapshot.h"
#include "workspace/workspace.h"

namespace maestro::tools {
namespace {

namespace fs = std::filesystem;
using testing::ReadWholeFile;
using testing::WriteFile;
using Paths = std::set<std::string>;

// Every entry under `dir` (not following symlinks): its type and bytes or
// link target, and the directory's own mtime-independent shape.
std::map<std::string, std::string> Record(const std::string& dir) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path& p = it->path();
    const std::string rel = fs::relative(p, dir).string();
    if (it->is_symlink()) {
      out[rel] = "link:" + fs::read_symlink(p).string();
    } else if (it->is_directory()) {
      out[rel] = "dir";
    } else {
      out[rel] = "file:" + ReadWholeFile(p.string());
    }
  }
  return out;
}

const GitFileDiff* FileIn(const GitDiffResult& d, const std::string& path) {
  for (const auto& f : d.files) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

// Every path in every commit's diff of `repo`, and whether any patch holds
// `needle`.
bool AnyCommitHolds(GitRepo& repo, const std::string& needle, Paths* paths) {
  bool found = false;
  auto history = repo.History(1000);
  EXPECT_TRUE(history.ok()) << history.status().ToString();
  if (!history.ok()) return false;
  for (const auto& c : *history) {
    auto d = repo.DiffCommit(c.id);
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    if (!d.ok()) continue;
    for (const auto& f : d->files) {
      if (paths) paths->insert(f.path);
      if (f.patch.find(needle) != std::string::npos) found = true;
    }
  }
  return found;
}

// A repository elsewhere on the host (another project the server can read)
// with one commit of victim-only.txt.
std::string VictimRepo(const testing::TempDir& dir) {
  const std::string victim = dir.File("victim");
  fs::create_directories(victim);
  EXPECT_TRUE(GitRepo::Init(victim).ok());
  WriteFile(victim + "/victim-only.txt", "VICTIM-CONTENT\n");
  auto repo = GitRepo::Open(victim);
  EXPECT_TRUE(repo.ok() && repo->CommitAll("victim")->has_value());
  return victim;
}

class PlantedGitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    outside_ = dir_.File("outside");
    fs::create_directories(outside_);
    WriteFile(outside_ + "/secret.txt", "OUTSIDE-SECRET\n");
    victim_ = VictimRepo(dir_);
    data_ = dir_.File("data");
    auto ws = PrepareWorkspace({data_, {}}, spaces_, "task-1", "");
    ASSERT_TRUE(ws.ok()) << ws.status().ToString();
    ws_ = *ws;
    WriteFile(ws_.root + "/result.txt", "done\n");
  }

  // Commits, diffs and lists as the job end, the diff route and the
  // handoff do; every outside directory unchanged, no victim file shown.
  void RunHostGitAndCheckNothingOutside() {
    const auto outside_before = Record(outside_);
    const auto victim_before = Record(victim_);
    auto commit = CommitWorkspace(ws_, "task-1", "job-1", "planted");
    ASSERT_TRUE(commit.ok()) << commit.status().ToString();
    ASSERT_TRUE(commit->has_value());
    auto repo = OpenWorkspaceRepo(ws_);
    ASSERT_TRUE(repo.ok()) << repo.status().ToString();
    EXPECT_EQ(repo->GitDir(), fs::canonical(data_ + "/tasks/task-1/git").string());
    WriteFile(ws_.root + "/result.txt", "changed\n");
    auto diff = repo->DiffWorkdir();
    ASSERT_TRUE(diff.ok()) << diff.status().ToString();
    EXPECT_EQ(diff->files.size(), 1u);
    ASSERT_NE(FileIn(*diff, "result.txt"), nullptr);
    auto total = repo->DiffRange("");
    ASSERT_TRUE(total.ok()) << total.status().ToString();
    for (const auto& f : total->files) {
      EXPECT_NE(f.path.rfind(".git", 0), 0u) << f.path << ": a .git path in the diff";
      EXPECT_EQ(f.path.find("victim-only"), std::string::npos) << f.path;
      EXPECT_EQ(f.patch.find("VICTIM-CONTENT"), std::string::npos) << f.patch;
      EXPECT_EQ(f.patch.find("OUTSIDE-SECRET"), std::string::npos) << f.patch;
    }
    EXPECT_EQ(*repo->ChangedFiles(), (Paths{"result.txt"}));
    EXPECT_TRUE(GitChangedPathsViaHandoffShape(ws_.root).count("result.txt"));
    Paths committed;
    EXPECT_FALSE(AnyCommitHolds(*repo, "VICTIM-CONTENT", &committed));
    EXPECT_EQ(committed, (Paths{"result.txt"})) << "only the workspace's own file was committed";
    EXPECT_EQ(Record(outside_), outside_before) << "something was written outside";
    EXPECT_EQ(Record(victim_), victim_before) << "the victim repository changed";
    auto victim = GitRepo::Open(victim_);
    ASSERT_TRUE(victim.ok());
    EXPECT_EQ(victim->History(10)->size(), 1u) << "the victim's master did not move";
  }

  // What the handoff's files_changed check opens: the workspace by its root.
  static Paths GitChangedPathsViaHandoffShape(const std::string& root) {
    auto repo = OpenWorkspaceRepo(WorkspaceAt(root));
    EXPECT_TRUE(repo.ok()) << repo.status().ToString();
    return repo.ok() ? *repo->ChangedFiles() : Paths{};
  }

  testing::TempDir dir_;
  SpaceRegistry spaces_;
  std::string outside_, victim_, data_;
  Workspace ws_;
};

TEST_F(PlantedGitTest, TheRepositoryLivesOutsideTheWorkspace) {
  EXPECT_FALSE(fs::exists(ws_.root + "/.git")) << "nothing of git in the agent's view";
  EXPECT_EQ(ws_.git_dir, data_ + "/tasks/task-1/git");
  EXPECT_TRUE(fs::exists(ws_.git_dir + "/HEAD"));
  EXPECT_EQ(WorkspaceAt(ws_.root).git_dir, fs::canonical(data_).string() + "/tasks/task-1/git");
  EXPECT_TRUE(WorkspaceAt(ws_.root).ephemeral);
  EXPECT_FALSE(WorkspaceAt(dir_.File("some/space")).ephemeral);
  RunHostGitAndCheckNothingOutside();
}

TEST_F(PlantedGitTest, SymlinkedIndexRefsAndLogsWriteNothingOutside) {
  // The outsider's case: the job-end commit created new-index, new-ref,
  // new-log and new-branch-log in a host directory.
  const std::string g = ws_.root + "/.git";
  fs::create_directories(g + "/refs/heads");
  fs::create_directories(g + "/logs/refs/heads");
  WriteFile(g + "/HEAD", "ref: refs/heads/master\n");
  fs::create_symlink(outside_ + "/new-index", g + "/index");
  fs::create_symlink(outside_ + "/new-ref", g + "/refs/heads/master");
  fs::create_symlink(outside_ + "/new-log", g + "/logs/HEAD");
  fs::create_symlink(outside_ + "/new-branch-log", g + "/logs/refs/heads/master");
  RunHostGitAndCheckNothingOutside();
  for (const char* f : {"new-index", "new-ref", "new-log", "new-branch-log"}) {
    EXPECT_FALSE(fs::exists(outside_ + "/" + f)) << f;
  }
}

TEST_F(PlantedGitTest, ObjectsAndRefsOfAnotherRepositoryAreNeverRead) {
  // The outsider's case: GET /diff showed the other repository's files and
  // the commit moved its master.
  const std::string g = ws_.root + "/.git";
  fs::create_directories(g);
  WriteFile(g + "/HEAD", "ref: refs/heads/master\n");
  fs::create_directory_symlink(victim_ + "/.git/objects", g + "/objects");
  fs::create_directory_symlink(victim_ + "/.git/refs", g + "/refs");
  RunHostGitAndCheckNothingOutside();
}

TEST_F(PlantedGitTest, AGitdirFileAndANestedGitAreOrdinaryUncommittedContent) {
  WriteFile(ws_.root + "/.git", "gitdir: " + victim_ + "/.git\n");
  WriteFile(ws_.root + "/vendor/lib/.git/config", "[core]\n\tworktree = /\n");
  WriteFile(ws_.root + "/vendor/lib/.GIT/x", "y");
  WriteFile(ws_.root + "/vendor/lib/code.c", "int x;\n");
  const auto victim_before = Record(victim_);
  auto commit = CommitWorkspace(ws_, "task-1", "job-1", "gitdir");
  ASSERT_TRUE(commit.ok()) << commit.status().ToString();
  auto repo = OpenWorkspaceRepo(ws_);
  ASSERT_TRUE(repo.ok());
  Paths committed;
  AnyCommitHolds(*repo, "-", &committed);
  EXPECT_EQ(committed, (Paths{"result.txt", "vendor/lib/code.c"}))
      << "every .git component skipped, any letter case";
  EXPECT_EQ(Record(victim_), victim_before);
}

TEST_F(PlantedGitTest, AWorkspaceFromBeforeTheMoveStartsAFreshExternalRepository) {
  // An old workspace: its repository inside, with history of its own.
  testing::TempDir data;
  const std::string old = data.File("workspaces/tasks/old-task");
  fs::create_directories(old);
  WriteFile(old + "/kept.txt", "from before\n");
  {
    auto inner = GitRepo::Init(old);
    ASSERT_TRUE(inner.ok());
    ASSERT_TRUE(inner->CommitAll("old history")->has_value());
  }
  const auto inner_before = Record(old + "/.git");
  auto ws = PrepareWorkspace({data.path(), {}}, spaces_, "old-task", "");
  ASSERT_TRUE(ws.ok()) << ws.status().ToString();
  EXPECT_TRUE(fs::exists(data.File("tasks/old-task/git/HEAD")));
  auto commit = CommitWorkspace(*ws, "old-task", "j1", "after the move");
  ASSERT_TRUE(commit.ok()) << commit.status().ToString();
  ASSERT_TRUE(commit->has_value()) << "the first commit holds the whole tree";
  auto repo = OpenWorkspaceRepo(*ws);
  ASSERT_TRUE(repo.ok());
  EXPECT_EQ(repo->History(10)->size(), 1u) << "the old history is not carried over";
  Paths committed;
  AnyCommitHolds(*repo, "-", &committed);
  EXPECT_EQ(committed, (Paths{"kept.txt"}));
  EXPECT_EQ(Record(old + "/.git"), inner_before) << "the in-tree repository was never opened";
}

// A persistent space that is its own repository, with one commit.
std::string SpaceRepo(const testing::TempDir& dir) {
  const std::string space = dir.File("space");
  fs::create_directories(space);
  EXPECT_TRUE(GitRepo::Init(space).ok());
  WriteFile(space + "/readme.md", "hello\n");
  EXPECT_TRUE(GitRepo::Open(space)->CommitAll("init")->has_value());
  return space;
}

TEST(PlantedSpaceGitTest, SymlinkedMetadataInASpaceIsRefusedAndNothingIsWritten) {
  struct Plant {
    std::string what;  // the path under .git that becomes a symlink
    bool dir = false;  // a directory symlink (to the victim's own)
  };
  const std::vector<Plant> plants = {
      {"index", false},
      {"HEAD", false},
      {"config", false},
      {"packed-refs", false},
      {"refs/heads/master", false},
      {"logs/HEAD", false},
      {"objects", true},
      {"refs", true},
      {"logs", true},
      {"objects/pack", true},
      {"commondir", false},
      {"gitdir", false},
  };
  for (const Plant& p : plants) {
    SCOPED_TRACE(p.what);
    testing::TempDir dir;
    const std::string victim = VictimRepo(dir);
    const std::string outside = dir.File("outside");
    fs::create_directories(outside);
    WriteFile(outside + "/target", "OUTSIDE-SECRET\n");
    const std::string space = SpaceRepo(dir);
    WriteFile(space + "/new.txt", "agent work\n");
    const std::string at = space + "/.git/" + p.what;
    std::error_code ec;
    fs::remove_all(at, ec);
    fs::create_directories(fs::path(at).parent_path());
    if (p.dir) {
      fs::create_directory_symlink(victim + "/.git/" + p.what, at);
    } else {
      fs::create_symlink(outside + "/target", at);
    }
    const auto outside_before = Record(outside);
    const auto victim_before = Record(victim);
    SpaceRegistry spaces;
    ASSERT_TRUE(spaces.Register({"s", space, {}}).ok());
    auto ws = PrepareWorkspace({dir.File("data"), {}}, spaces, "t1", "s");
    ASSERT_TRUE(ws.ok());
    auto commit = CommitWorkspace(*ws, "t1", "j1", "planted");
    EXPECT_EQ(commit.status().code(), StatusCode::kInvalidArgument) << commit.status().ToString();
    EXPECT_NE(commit.status().message().find("refused"), std::string::npos);
    auto opened = OpenWorkspaceRepo(*ws);
    EXPECT_EQ(opened.status().code(), StatusCode::kInvalidArgument) << "the diff route's open";
    EXPECT_EQ(Record(outside), outside_before);
    EXPECT_EQ(Record(victim), victim_before);
  }
}

TEST(PlantedSpaceGitTest, ASpaceGitThatIsASymlinkAFileOrHasAlternatesIsRefused) {
  testing::TempDir dir;
  const std::string victim = VictimRepo(dir);
  const std::string linked = dir.File("linked");
  fs::create_directories(linked);
  fs::create_directory_symlink(victim + "/.git", linked + "/.git");
  EXPECT_EQ(GitRepo::Open(linked).status().code(), StatusCode::kInvalidArgument);
  const std::string file = dir.File("file");
  WriteFile(file + "/.git", "gitdir: " + victim + "/.git\n");
  EXPECT_EQ(GitRepo::Open(file).status().code(), StatusCode::kInvalidArgument);
  const std::string space = SpaceRepo(dir);
  WriteFile(space + "/.git/objects/info/alternates", victim + "/.git/objects\n");
  EXPECT_EQ(GitRepo::Open(space).status().code(), StatusCode::kInvalidArgument);
  fs::remove(space + "/.git/objects/info/alternates");
  // A symlinked hook is no refusal: nothing here reads hooks/.
  fs::create_symlink("/bin/true", space + "/.git/hooks/pre-commit");
  EXPECT_TRUE(GitRepo::Open(space).ok());
}

TEST(PlantedSpaceGitTest, ASpaceRepositoryCommitsAndKeepsItsIndexInStep) {
  testing::TempDir dir;
  const std::string space = SpaceRepo(dir);
  WriteFile(space + "/.gitignore", "*.log\n");
  WriteFile(space + "/run.log", "noise");
  WriteFile(space + "/src/a.cc", "int a;\n");
  fs::create_symlink("/etc/passwd", space + "/passwd-link");
  auto repo = GitRepo::Open(space);
  ASSERT_TRUE(repo.ok()) << repo.status().ToString();
  EXPECT_EQ(*repo->ChangedFiles(), (Paths{".gitignore", "passwd-link", "src/a.cc"}));
  auto c = repo->CommitAll("space work");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE(c->has_value());
  EXPECT_TRUE(repo->ChangedFiles()->empty());
  auto d = repo->DiffCommit(**c);
  ASSERT_TRUE(d.ok());
  const GitFileDiff* link = FileIn(*d, "passwd-link");
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(link->patch.find("root:"), std::string::npos) << "a link is its target text";
  EXPECT_TRUE(fs::exists(space + "/.git/index"));
  if (std::system("git --version >/dev/null 2>&1") == 0) {
    // A person's `git status` in the space is clean after the commit.
    const std::string out = dir.File("status.txt");
    ASSERT_EQ(
        std::system(("git -C '" + space + "' status --porcelain > '" + out + "' 2>&1").c_str()), 0);
    EXPECT_EQ(ReadWholeFile(out), "") << "the index follows the commit";
  }
}

TEST(GitIgnoreMatchTest, WildmatchFollowsGitsRules) {
  using git_internal::GitWildMatch;
  EXPECT_TRUE(GitWildMatch("*.log", "a.log"));
  EXPECT_FALSE(GitWildMatch("*.log", "dir/a.log")) << "* never crosses a slash";
  EXPECT_TRUE(GitWildMatch("**/a.log", "a.log"));
  EXPECT_TRUE(GitWildMatch("**/a.log", "x/y/a.log"));
  EXPECT_TRUE(GitWildMatch("build/**", "build/x/y"));
  EXPECT_TRUE(GitWildMatch("a/**/b", "a/b"));
  EXPECT_TRUE(GitWildMatch("a/**/b", "a/x/y/b"));
  EXPECT_FALSE(GitWildMatch("a/**/b", "a/x/c"));
  EXPECT_TRUE(GitWildMatch("f?o", "foo"));
  EXPECT_FALSE(GitWildMatch("f?o", "f/o"));
  EXPECT_TRUE(GitWildMatch("[a-c]x", "bx"));
  EXPECT_FALSE(GitWildMatch("[!a-c]x", "bx"));
  EXPECT_TRUE(GitWildMatch("\\*x", "*x"));
  EXPECT_FALSE(GitWildMatch("[abc", "a")) << "an unterminated class matches nothing";
}

TEST(GitIgnoreMatchTest, NestedIgnoreFilesNegationsAndTrackedFiles) {
  testing::TempDir dir;
  auto repo = GitRepo::OpenExternal(dir.File("git"), dir.File("ws"), /*create=*/true);
  ASSERT_TRUE(repo.ok()) << repo.status().ToString();
  const std::string ws = dir.File("ws");
  WriteFile(ws + "/tracked.tmp", "tracked before the rule\n");
  ASSERT_TRUE(repo->CommitAll("first")->has_value());
  WriteFile(ws + "/.gitignore", "*.tmp\n!keep.tmp\n/only-root.txt\nout/\n");
  WriteFile(ws + "/tracked.tmp", "still tracked\n");
  WriteFile(ws + "/new.tmp", "x");
  WriteFile(ws + "/keep.tmp", "x");
  WriteFile(ws + "/only-root.txt", "x");
  WriteFile(ws + "/sub/only-root.txt", "x");
  WriteFile(ws + "/out/a.o", "x");
  WriteFile(ws + "/sub/out/b.o", "x");
  WriteFile(ws + "/sub/.gitignore", "*.c\n!main.c\n");
  WriteFile(ws + "/sub/x.c", "x");
  WriteFile(ws + "/sub/main.c", "x");
  WriteFile(ws + "/x.c", "x");
  EXPECT_EQ(*repo->ChangedFiles(), (Paths{".gitignore", "keep.tmp", "sub/.gitignore", "sub/main.c",
                                          "sub/only-root.txt", "tracked.tmp", "x.c"}));
}

// The outsider's race: an agent's process swaps a workspace directory for a
// symlink to a host directory in a loop while the host diffs and commits.
void SwapLoopLeaksNothing(bool walk) {
  TreeRoot::ForceWalkForTesting(walk);
  testing::TempDir dir;
  const std::string outside = dir.File("outside");
  WriteFile(outside + "/f.txt", "OUTSIDE-SECRET\n");
  WriteFile(outside + "/outside-only.txt", "OUTSIDE-SECRET too\n");
  auto repo = GitRepo::OpenExternal(dir.File("git"), dir.File("ws"), /*create=*/true);
  ASSERT_TRUE(repo.ok()) << repo.status().ToString();
  const std::string ws = dir.File("ws");
  WriteFile(ws + "/d/f.txt", "inside\n");
  WriteFile(ws + "/top.txt", "top\n");
  const auto outside_before = Record(outside);

  std::atomic<bool> stop{false};
  std::atomic<int> swaps{0};
  std::thread agent([&] {
    while (!stop.load()) {
      std::error_code ec;
      fs::rename(ws + "/d", ws + "/d.real", ec);
      fs::create_directory_symlink(outside, ws + "/d", ec);
      fs::remove(ws + "/d", ec);
      fs::rename(ws + "/d.real", ws + "/d", ec);
      swaps.fetch_add(1);
    }
  });
  int diffs = 0, commits = 0, leaks = 0, link_seen = 0;
  Paths seen;
  for (int i = 0; i < 100; ++i) {
    WriteFile(ws + "/top.txt", "top " + std::to_string(i) + "\n");
    auto d = repo->DiffWorkdir();
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    ++diffs;
    for (const auto& f : d->files) {
      seen.insert(f.path);
      if (f.path == "d") ++link_seen;  // the swap caught: `d` a link blob
      if (f.patch.find("OUTSIDE-SECRET") != std::string::npos) ++leaks;
    }
    auto c = repo->CommitAll("round " + std::to_string(i));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    if (c->has_value()) ++commits;
    auto changed = repo->ChangedFiles();
    ASSERT_TRUE(changed.ok());
    seen.insert(changed->begin(), changed->end());
  }
  stop = true;
  agent.join();
  Paths committed;
  if (AnyCommitHolds(*repo, "OUTSIDE-SECRET", &committed)) ++leaks;
  seen.insert(committed.begin(), committed.end());
  EXPECT_EQ(leaks, 0) << "outside bytes in a diff or a commit";
  EXPECT_EQ(seen.count("d/outside-only.txt"), 0u) << "an outside entry was listed";
  EXPECT_GT(swaps.load(), 10) << "the race ran";
  EXPECT_EQ(Record(outside), outside_before);
  std::printf(
      "[swap loop, %s] %d diffs, %d commits, %d swaps, %d diffs saw d as a link, %d leaks\n",
      walk ? "walk" : "openat2", diffs, commits, swaps.load(), link_seen, leaks);
  TreeRoot::ForceWalkForTesting(false);
}

TEST(GitSwapRaceTest, ADirectorySwappedForASymlinkNeverLeaksIntoDiffsOrCommits) {
  SwapLoopLeaksNothing(/*walk=*/false);
}

TEST(GitSwapRaceTest, TheSameWithTheComponentWalk) { SwapLoopLeaksNothing(/*walk=*/true); }

}  // namespace
}  // namespace maestro::tools
