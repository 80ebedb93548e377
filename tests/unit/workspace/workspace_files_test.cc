// WorkspaceFiles: the listing (sorted depth first, .git left out, symlinks
// listed not followed, capped) and the reads the files route makes — `..`,
// absolute paths, `.git`, percent-decoded `%2e%2e`, symlinks out of the
// workspace or into `.git` refused; binary and invalid UTF-8 detected; a
// directory swapped for a symlink while reading and listing shows nothing
// of the outside.
#include "workspace/workspace_files.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "support/dir_swapper.h"
#include "support/temp_dir.h"

namespace maestro::tools {
namespace {

namespace fs = std::filesystem;

using testing::WriteFile;

std::vector<std::string> ListedPaths(const WorkspaceListing& l) {
  std::vector<std::string> out;
  for (const auto& e : l.entries) out.push_back(e.path + ":" + e.type);
  return out;
}

TEST(WorkspaceFilesTest, TheListingIsSortedDepthFirstWithoutGitAndCapped) {
  testing::TempDir ws;
  testing::TempDir outside;
  WriteFile(outside.File("o/secret.txt"), "s");
  WriteFile(ws.File("b.txt"), "bb");
  WriteFile(ws.File("a/z.md"), "z");
  WriteFile(ws.File("a-b.txt"), "x");
  WriteFile(ws.File(".git/config"), "[core]");
  WriteFile(ws.File("sub/.git"), "gitdir: elsewhere");
  fs::create_directory_symlink(outside.File("o"), ws.File("out"));
  const std::string root = fs::canonical(ws.path()).string();
  WorkspaceListing all = ListWorkspace(root);
  EXPECT_FALSE(all.truncated);
  EXPECT_EQ(ListedPaths(all), (std::vector<std::string>{"a:dir", "a/z.md:file", "a-b.txt:file",
                                                        "b.txt:file", "out:symlink", "sub:dir"}));
  EXPECT_EQ(all.entries[3].size, 2);
  EXPECT_GT(all.entries[3].modified_at, 1'600'000'000'000) << "ms since the epoch";

  WorkspaceListing capped = ListWorkspace(root, 2);
  EXPECT_TRUE(capped.truncated);
  EXPECT_EQ(ListedPaths(capped), (std::vector<std::string>{"a:dir", "a/z.md:file"}));
  EXPECT_TRUE(ListWorkspace(root + "/missing").entries.empty());
}

TEST(WorkspaceFilesTest, ReadsRefuseEscapesGitAndNonFiles) {
  testing::TempDir ws;
  testing::TempDir outside;
  WriteFile(outside.File("secret.txt"), "TOP SECRET");
  WriteFile(ws.File("dir/a.md"), "# hello\n");
  WriteFile(ws.File(".git/config"), "[core]\n");
  fs::create_symlink(outside.File("secret.txt"), ws.File("leak"));
  fs::create_symlink(".git/config", ws.File("gitlink"));
  fs::create_symlink("dir/a.md", ws.File("inside"));
  const std::string root = fs::canonical(ws.path()).string();

  auto ok = ReadWorkspaceFile(*Env::Default(), root, "dir/a.md", 1024);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->bytes, "# hello\n");
  EXPECT_EQ(ok->size, 8);
  EXPECT_FALSE(ok->truncated);
  auto via_link = ReadWorkspaceFile(*Env::Default(), root, "inside", 1024);
  ASSERT_TRUE(via_link.ok()) << "a symlink inside the workspace is fine";
  EXPECT_EQ(via_link->bytes, "# hello\n");

  for (const std::string bad : {"../x", "dir/../../x", "/etc/passwd", ".git/config", "dir/.git/x",
                                "leak", "gitlink", "dir", ""}) {
    auto r = ReadWorkspaceFile(*Env::Default(), root, bad, 1024);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(r.status().field(), "path") << bad;
  }
  // "%2e%2e/x" is decoded by the route (api::DecodePath, router_test) before
  // it gets here; the integration test sends it over HTTP.
  EXPECT_EQ(ReadWorkspaceFile(*Env::Default(), root, "dir/none.md", 1024).status().code(),
            StatusCode::kNotFound);

  auto cut = ReadWorkspaceFile(*Env::Default(), root, "dir/a.md", 3);
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(cut->bytes, "# h");
  EXPECT_TRUE(cut->truncated);
  EXPECT_EQ(cut->size, 8);
}

// Issue 44: the agent swaps `d` for a symlink to an outside directory (a
// file of the same name with a marker, and a directory of its own) while the
// file pane reads and lists: no marker byte and no outside entry, ever.
TEST(WorkspaceFilesTest, ADirectorySwappedForASymlinkNeverShowsTheOutside) {
  testing::TempDir ws;
  testing::TempDir outside;
  WriteFile(ws.File("d/secret.txt"), "inside");
  WriteFile(outside.File("secret.txt"), "OUTSIDE-MARKER");
  WriteFile(outside.File("host-only/x.txt"), "x");
  fs::create_directory_symlink(outside.path(), ws.File("swap"));
  const std::string root = fs::canonical(ws.path()).string();
  long reads = 0, refused = 0, marker = 0, listings = 0, outside_entries = 0;
  testing::DirSwapper agent(root + "/d", root + "/swap");
  for (int i = 0; i < 2000; ++i) {
    auto r = ReadWorkspaceFile(*Env::Default(), root, "d/secret.txt", 1024);
    ++reads;
    if (!r.ok()) ++refused;
    if (r.ok() && r->bytes.find("MARKER") != std::string::npos) ++marker;
    if (i % 4 == 0) {
      ++listings;
      for (const auto& e : ListWorkspace(root).entries) {
        outside_entries += e.path.find("host-only") != std::string::npos;
      }
    }
  }
  agent.Stop();
  std::printf(
      "[ race ] %ld reads (%ld refused), %ld listings, %ld swaps: %ld outside reads, %ld "
      "outside entries\n",
      reads, refused, listings, agent.swaps(), marker, outside_entries);
  EXPECT_GT(agent.swaps(), 100);
  EXPECT_GT(refused, 0);
  EXPECT_LT(refused, reads);
  EXPECT_EQ(marker, 0);
  EXPECT_EQ(outside_entries, 0);
}

TEST(WorkspaceFilesTest, TextIsValidUtf8WithoutNul) {
  EXPECT_TRUE(LooksLikeText("plain text\n", false));
  EXPECT_TRUE(LooksLikeText("caf\xc3\xa9", false));
  EXPECT_FALSE(LooksLikeText(std::string("a\0b", 3), false));
  EXPECT_FALSE(LooksLikeText("bad \xff byte", false));
  EXPECT_FALSE(LooksLikeText("caf\xc3", false)) << "cut character in a whole file";
  EXPECT_TRUE(LooksLikeText("caf\xc3", true)) << "the read stopped inside a character";
  EXPECT_FALSE(LooksLikeText("\xff caf\xc3", true));
}

}  // namespace
}  // namespace maestro::tools
