// GitRepo's history and diffs (git_diff.cc) on real libgit2 repositories:
// added / modified / deleted / renamed / binary files per commit, the
// working tree with untracked files and .gitignore, ranges, a symlink that
// points outside the work tree (shown as its target text, never followed),
// a file name that is not UTF-8, and the per-file patch cap.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "support/temp_dir.h"
#include "workspace/git_repo.h"

namespace maestro::tools {
namespace {

namespace fs = std::filesystem;

using testing::WriteFile;

const GitFileDiff* Find(const GitDiffResult& d, const std::string& path) {
  for (const auto& f : d.files) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

std::string Commit(GitRepo& repo, const std::string& msg) {
  auto c = repo.CommitAll(msg);
  EXPECT_TRUE(c.ok() && c->has_value()) << (c.ok() ? "no change" : c.status().ToString());
  return c.ok() && c->has_value() ? **c : "";
}

TEST(GitDiffTest, EachCommitAgainstItsParentAndTheHistoryNewestFirst) {
  testing::TempDir dir;
  auto repo = GitRepo::Init(dir.path());
  ASSERT_TRUE(repo.ok()) << repo.status().ToString();
  EXPECT_TRUE(repo->History(10)->empty()) << "unborn HEAD";
  WriteFile(dir.File("keep.txt"), "one\ntwo\nthree\n");
  WriteFile(dir.File("gone.txt"), "bye\n");
  std::string moved_text;
  for (int i = 0; i < 40; ++i) moved_text += "line " + std::to_string(i) + " of the moved file\n";
  WriteFile(dir.File("old/name.txt"), moved_text);
  const std::string first = Commit(*repo, "first");

  auto root = repo->DiffCommit(first);
  ASSERT_TRUE(root.ok()) << root.status().ToString();
  ASSERT_EQ(root->files.size(), 3u);
  EXPECT_EQ(root->files[0].path, "gone.txt") << "path order";
  for (const auto& f : root->files) EXPECT_EQ(f.status, "added") << f.path;
  EXPECT_EQ(Find(*root, "keep.txt")->additions, 3);

  WriteFile(dir.File("keep.txt"), "one\nTWO\nthree\nfour\n");
  fs::remove(dir.File("gone.txt"));
  fs::create_directories(dir.File("new"));
  fs::rename(dir.File("old/name.txt"), dir.File("new/name.txt"));
  WriteFile(dir.File("blob.bin"), std::string("\x00\x01\x02 binary\x00", 10));
  const std::string second = Commit(*repo, "second");

  auto d = repo->DiffCommit(second);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_FALSE(d->truncated);
  const GitFileDiff* keep = Find(*d, "keep.txt");
  ASSERT_NE(keep, nullptr);
  EXPECT_EQ(keep->status, "modified");
  EXPECT_EQ(keep->additions, 2);
  EXPECT_EQ(keep->deletions, 1);
  EXPECT_NE(keep->patch.find("-two\n+TWO\n"), std::string::npos) << keep->patch;
  EXPECT_NE(keep->patch.find("+++ b/keep.txt"), std::string::npos) << keep->patch;
  EXPECT_FALSE(keep->binary);
  ASSERT_NE(Find(*d, "gone.txt"), nullptr);
  EXPECT_EQ(Find(*d, "gone.txt")->status, "deleted");
  EXPECT_EQ(Find(*d, "gone.txt")->deletions, 1);
  const GitFileDiff* moved = Find(*d, "new/name.txt");
  ASSERT_NE(moved, nullptr);
  EXPECT_EQ(moved->status, "renamed");
  EXPECT_EQ(moved->old_path, "old/name.txt");
  EXPECT_EQ(Find(*d, "old/name.txt"), nullptr) << "a rename is one entry";
  const GitFileDiff* bin = Find(*d, "blob.bin");
  ASSERT_NE(bin, nullptr);
  EXPECT_TRUE(bin->binary);
  EXPECT_EQ(bin->additions, 0);

  auto history = repo->History(10);
  ASSERT_TRUE(history.ok()) << history.status().ToString();
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ((*history)[0].id, second);
  EXPECT_EQ((*history)[0].parent, first);
  EXPECT_EQ((*history)[0].message, "second");
  EXPECT_EQ((*history)[1].parent, "");
  EXPECT_EQ(repo->History(1)->size(), 1u) << "capped";

  EXPECT_EQ(repo->DiffCommit(std::string(40, 'a')).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(repo->DiffCommit("HEAD~1").status().code(), StatusCode::kNotFound)
      << "only commit ids, no revision syntax";
}

TEST(GitDiffTest, TheWorkingTreeShowsUntrackedFilesAndRespectsGitignore) {
  testing::TempDir dir;
  auto repo = GitRepo::Init(dir.path());
  ASSERT_TRUE(repo.ok());
  // Unborn HEAD: everything is new against the empty tree.
  WriteFile(dir.File("a.txt"), "a\n");
  auto unborn = repo->DiffWorkdir();
  ASSERT_TRUE(unborn.ok()) << unborn.status().ToString();
  ASSERT_EQ(unborn->files.size(), 1u);
  EXPECT_EQ(unborn->files[0].status, "added");
  const std::string first = Commit(*repo, "first");

  WriteFile(dir.File(".gitignore"), "build/\n*.log\n");
  WriteFile(dir.File("build/out.o"), "obj");
  WriteFile(dir.File("run.log"), "log");
  WriteFile(dir.File("src/new.cc"), "int main() {}\n");
  WriteFile(dir.File("a.txt"), "a\nb\n");
  auto d = repo->DiffWorkdir();
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  std::vector<std::string> paths;
  for (const auto& f : d->files) paths.push_back(f.path);
  EXPECT_EQ(paths, (std::vector<std::string>{".gitignore", "a.txt", "src/new.cc"}));
  EXPECT_EQ(Find(*d, "src/new.cc")->status, "added");
  EXPECT_NE(Find(*d, "src/new.cc")->patch.find("+int main() {}"), std::string::npos)
      << "an untracked file's content is in its patch";
  EXPECT_EQ(Find(*d, "a.txt")->status, "modified");

  // A range from the empty tree / from a commit to the working tree.
  auto all = repo->DiffRange("");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(Find(*all, "a.txt")->status, "added");
  auto since = repo->DiffRange(first);
  ASSERT_TRUE(since.ok());
  EXPECT_EQ(since->files.size(), 3u);
  EXPECT_EQ(repo->DiffRange("nope").status().code(), StatusCode::kNotFound);
  // Nothing was written: the working tree diff leaves the index alone.
  EXPECT_EQ(repo->ChangedFiles()->count("src/new.cc"), 1u);
}

TEST(GitDiffTest, ASymlinkOutsideIsItsTargetTextAndBadFileNamesAndBigPatchesAreHandled) {
  testing::TempDir dir;
  testing::TempDir outside;
  WriteFile(outside.File("secret.txt"), "TOP SECRET CONTENT\n");
  auto repo = GitRepo::Init(dir.path());
  ASSERT_TRUE(repo.ok());
  fs::create_symlink(outside.File("secret.txt"), dir.File("link"));
  const std::string bad_name = std::string("bad\xff\xfe") + ".txt";
  WriteFile(dir.File(bad_name), "x\n");
  std::string big;
  while (big.size() < kMaxPatchBytes + 1000) big += "a long line of text for the patch cap\n";
  WriteFile(dir.File("big.txt"), big);
  auto d = repo->DiffWorkdir();
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  const GitFileDiff* link = Find(*d, "link");
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(link->patch.find("TOP SECRET"), std::string::npos) << link->patch;
  EXPECT_NE(link->patch.find(outside.File("secret.txt")), std::string::npos) << link->patch;
  ASSERT_NE(Find(*d, bad_name), nullptr) << "the name's bytes are kept";
  const GitFileDiff* b = Find(*d, "big.txt");
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(b->patch_truncated);
  EXPECT_LE(b->patch.size(), kMaxPatchBytes);
  EXPECT_EQ(b->patch.back(), '\n') << "cut at a line end";
  EXPECT_GT(b->additions, 6000) << "the counts are of the whole file";
  // The commit keeps the link as a link: its diff shows the target text too.
  const std::string c = Commit(*repo, "links");
  auto committed = repo->DiffCommit(c);
  ASSERT_TRUE(committed.ok());
  ASSERT_NE(Find(*committed, "link"), nullptr);
  EXPECT_EQ(Find(*committed, "link")->patch.find("TOP SECRET"), std::string::npos);
}

TEST(GitDiffTest, AFifoInTheWorkingTreeIsNeverOpened) {
  testing::TempDir dir;
  auto repo = GitRepo::Init(dir.path());
  ASSERT_TRUE(repo.ok());
  WriteFile(dir.File("a.txt"), "a\n");
  ASSERT_EQ(::mkfifo(dir.File("pipe").c_str(), 0600), 0);
  // Reading the fifo would block this call forever (no writer).
  auto d = repo->DiffWorkdir();
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_NE(Find(*d, "a.txt"), nullptr);
  EXPECT_EQ(Find(*d, "pipe"), nullptr);
}

}  // namespace
}  // namespace maestro::tools
