// TreeRoot against a hostile tree: every refusal (absolute, `..`, symlinks
// in each position, dangling, a magic link, a FIFO, a directory where a file
// is expected), odd but legal names, and a race in which another thread
// swaps a directory for a symlink to an outside directory thousands of
// times while reads, listings, writes, mkdirs and renames go on: nothing
// outside is ever read, listed or created. Every test runs twice: with
// openat2 and with the fallback walk (TreeRoot::ForceWalkForTesting).
#include "core/tree_root.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <set>
#include <thread>

#include "support/temp_dir.h"

namespace maestro {
namespace {

namespace fs = std::filesystem;
using testing::ReadWholeFile;
using testing::TempDir;
using testing::WriteFile;

constexpr char kMarker[] = "OUTSIDE-MARKER-7f3a";

class TreeRootTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    TreeRoot::ForceWalkForTesting(GetParam());
    ws_ = tmp_.path() + "/ws";
    outside_ = tmp_.path() + "/outside";
    WriteFile(ws_ + "/a/b/file.txt", "inside");
    WriteFile(outside_ + "/secret.txt", kMarker);
    auto root = TreeRoot::Open(ws_);
    ASSERT_TRUE(root.ok()) << root.status().ToString();
    root_ = std::make_unique<TreeRoot>(std::move(*root));
  }
  void TearDown() override { TreeRoot::ForceWalkForTesting(false); }

  std::set<std::string> Names(const std::string& rel) {
    std::set<std::string> out;
    auto list = root_->List(rel);
    EXPECT_TRUE(list.ok()) << list.status().ToString();
    if (list.ok()) {
      for (const TreeEntry& e : *list) out.insert(e.name);
    }
    return out;
  }

  // Expects `st` to be a refusal of the path (kInvalidArgument, "path").
  static void ExpectRefused(const Status& st, const std::string& what) {
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << what << ": " << st.ToString();
    EXPECT_EQ(st.field(), "path") << what << ": " << st.ToString();
  }

  TempDir tmp_;
  std::string ws_;
  std::string outside_;
  std::unique_ptr<TreeRoot> root_;
};

TEST_P(TreeRootTest, ReadsListsStatsAndWritesBeneathTheRoot) {
  auto text = ReadTreeFile(*root_, "a/b/file.txt", 100);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, "inside");
  uint64_t size = 0;
  auto cut = ReadTreeFile(*root_, "./a//b/file.txt/", 3, &size);
  ASSERT_TRUE(cut.ok()) << cut.status().ToString();
  EXPECT_EQ(*cut, "ins");
  EXPECT_EQ(size, 6u);

  EXPECT_EQ(Names(""), (std::set<std::string>{"a"}));
  EXPECT_EQ(Names("."), (std::set<std::string>{"a"}));
  auto info = root_->Stat("a/b");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->type, DirEntry::Type::kDir);
  auto root_info = root_->Stat("");
  ASSERT_TRUE(root_info.ok());
  EXPECT_EQ(root_info->type, DirEntry::Type::kDir);

  ASSERT_TRUE(root_->MakeDirs("x/y/z").ok());
  ASSERT_TRUE(root_->MakeDirs("x/y/z").ok());  // existing is fine
  {
    auto w = root_->OpenWrite("x/y/z/new.txt", 0600, /*exclusive=*/true);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_TRUE((*w)->Append("hello").ok());
    ASSERT_TRUE((*w)->Close().ok());
  }
  EXPECT_EQ(ReadWholeFile(ws_ + "/x/y/z/new.txt"), "hello");
  EXPECT_EQ(fs::status(ws_ + "/x/y/z/new.txt").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(root_->OpenWrite("x/y/z/new.txt", 0644, true).status().code(), StatusCode::kConflict);
  {
    auto w = root_->OpenWrite("x/y/z/new.txt");  // truncates
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_TRUE((*w)->Append("hi").ok());
  }
  EXPECT_EQ(ReadWholeFile(ws_ + "/x/y/z/new.txt"), "hi");
  ASSERT_TRUE(root_->Rename("x/y/z/new.txt", "moved.txt").ok());
  EXPECT_EQ(ReadWholeFile(ws_ + "/moved.txt"), "hi");
  EXPECT_FALSE(fs::exists(ws_ + "/x/y/z/new.txt"));
  ASSERT_TRUE(root_->Remove("moved.txt").ok());
  ASSERT_TRUE(root_->Remove("moved.txt").ok());  // missing is fine
  ASSERT_TRUE(root_->Remove("no/such/dir/file").ok());
  ASSERT_TRUE(root_->Remove("x/y/z").ok());  // an empty directory
  EXPECT_FALSE(fs::exists(ws_ + "/x/y/z"));
  EXPECT_EQ(root_->OpenRead("missing").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(root_->List("missing").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(root_->Stat("a/missing/c").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(root_->OpenWrite("missing/f").status().code(), StatusCode::kNotFound);
}

TEST_P(TreeRootTest, OpenTakesTheOperatorsSymlinkAboveTheRootButNeedsADirectory) {
  ASSERT_EQ(::symlink(ws_.c_str(), (tmp_.path() + "/alias").c_str()), 0);
  auto alias = TreeRoot::Open(tmp_.path() + "/alias");
  ASSERT_TRUE(alias.ok()) << alias.status().ToString();
  EXPECT_TRUE(alias->Stat("a/b/file.txt").ok());
  EXPECT_EQ(TreeRoot::Open(tmp_.path() + "/none").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(TreeRoot::Open(ws_ + "/a/b/file.txt").status().code(), StatusCode::kInvalidArgument);
}

TEST_P(TreeRootTest, RefusesAbsolutePathsDotDotAndNul) {
  for (const std::string& bad :
       {std::string("/etc/passwd"), std::string("../outside/secret.txt"),
        std::string("a/../../outside/secret.txt"), std::string("a/.."), std::string("a\0b", 3)}) {
    ExpectRefused(root_->OpenRead(bad).status(), "read " + bad);
    ExpectRefused(root_->List(bad).status(), "list " + bad);
    ExpectRefused(root_->Stat(bad).status(), "stat " + bad);
    ExpectRefused(root_->OpenWrite(bad).status(), "write " + bad);
    ExpectRefused(root_->MakeDirs(bad), "mkdir " + bad);
    ExpectRefused(root_->Rename("a/b/file.txt", bad), "rename to " + bad);
    ExpectRefused(root_->Remove(bad), "remove " + bad);
  }
  EXPECT_EQ(ReadWholeFile(ws_ + "/a/b/file.txt"), "inside");
}

TEST_P(TreeRootTest, NeverFollowsASymlinkInAnyComponentEvenOneThatStaysInside) {
  // first component, middle component, last component; all pointing inside.
  ASSERT_EQ(::symlink("a", (ws_ + "/first").c_str()), 0);
  ASSERT_EQ(::symlink("b", (ws_ + "/a/mid").c_str()), 0);
  ASSERT_EQ(::symlink("file.txt", (ws_ + "/a/b/last").c_str()), 0);
  ASSERT_EQ(::symlink(outside_.c_str(), (ws_ + "/out").c_str()), 0);
  for (const std::string p : {"first/b/file.txt", "a/mid/file.txt", "a/b/last", "out/secret.txt"}) {
    ExpectRefused(root_->OpenRead(p).status(), "read " + p);
    ExpectRefused(root_->OpenWrite(p).status(), "write " + p);
  }
  for (const std::string p : {"first", "first/b", "a/mid", "out"}) {
    ExpectRefused(root_->List(p).status(), "list " + p);
    ExpectRefused(root_->MakeDirs(p + "/new"), "mkdir " + p);
    ExpectRefused(root_->OpenWrite(p + "/new.txt", 0644, true).status(), "create in " + p);
    ExpectRefused(root_->Rename("a/b/file.txt", p + "/moved"), "rename into " + p);
  }
  ExpectRefused(root_->Stat("first/b").status(), "stat through first");
  // The last component itself is reported, read and removed as the link.
  auto info = root_->Stat("a/b/last");
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->type, DirEntry::Type::kSymlink);
  EXPECT_EQ(info->size, 8u);
  auto target = root_->ReadLink("out");
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  EXPECT_EQ(*target, outside_);
  EXPECT_EQ(root_->ReadLink("a/b/file.txt").status().code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(root_->Remove("out").ok());
  EXPECT_FALSE(fs::exists(fs::symlink_status(ws_ + "/out")));
  EXPECT_EQ(ReadWholeFile(outside_ + "/secret.txt"), kMarker);
  EXPECT_EQ(ReadWholeFile(ws_ + "/a/b/file.txt"), "inside");
  EXPECT_EQ(std::distance(fs::directory_iterator(outside_), fs::directory_iterator()), 1);
}

TEST_P(TreeRootTest, RefusesDanglingSymlinksAndMagicLinks) {
  const std::string would_be = outside_ + "/created-through-link";
  ASSERT_EQ(::symlink(would_be.c_str(), (ws_ + "/dangling").c_str()), 0);
  ExpectRefused(root_->OpenWrite("dangling").status(), "write dangling");
  EXPECT_EQ(root_->OpenWrite("dangling", 0644, true).status().code(), StatusCode::kConflict);
  ExpectRefused(root_->OpenRead("dangling").status(), "read dangling");
  EXPECT_FALSE(fs::exists(would_be));

  ASSERT_EQ(::symlink("/proc/self/root", (ws_ + "/proc").c_str()), 0);
  ASSERT_EQ(::symlink("/proc/self/cwd", (ws_ + "/cwd").c_str()), 0);
  ExpectRefused(root_->OpenRead("proc/etc/passwd").status(), "read via /proc/self/root");
  ExpectRefused(root_->List("proc").status(), "list /proc/self/root");
  ExpectRefused(root_->List("proc/etc").status(), "list via /proc/self/root");
  ExpectRefused(root_->OpenWrite("cwd/planted").status(), "write via /proc/self/cwd");
  ExpectRefused(root_->MakeDirs("proc/tmp/planted"), "mkdir via /proc/self/root");
}

TEST_P(TreeRootTest, AFifoNeverBlocksAndADirectoryIsNotAFile) {
  ASSERT_EQ(::mkfifo((ws_ + "/fifo").c_str(), 0644), 0);
  const auto start = std::chrono::steady_clock::now();
  auto r = root_->OpenRead("fifo");
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().field(), "type");
  auto w = root_->OpenWrite("fifo");
  EXPECT_EQ(w.status().code(), StatusCode::kInvalidArgument) << w.status().ToString();
  EXPECT_EQ(root_->OpenWrite("fifo", 0644, true).status().code(), StatusCode::kConflict);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  auto info = root_->Stat("fifo");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->type, DirEntry::Type::kOther);

  auto dir = root_->OpenRead("a/b");
  EXPECT_EQ(dir.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(dir.status().field(), "type");
  EXPECT_EQ(root_->OpenWrite("a/b").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(root_->OpenWrite("a/b", 0644, true).status().code(), StatusCode::kConflict);
  EXPECT_EQ(root_->List("a/b/file.txt").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(root_->MakeDirs("a/b/file.txt/sub").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(root_->OpenRead("a/b/file.txt/x").status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(fs::is_directory(ws_ + "/a/b"));
}

TEST_P(TreeRootTest, OddButLegalNamesRoundTrip) {
  const std::string newline = "line\nbreak";
  const std::string latin1 = "caf\xE9\xFF";
  const std::string longest(255, 'n');
  for (const std::string& name : {newline, latin1, longest}) {
    auto w = root_->OpenWrite(name, 0644, true);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_TRUE((*w)->Append(name).ok());
    ASSERT_TRUE((*w)->Close().ok());
    auto back = ReadTreeFile(*root_, name, 1000);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, name);
  }
  EXPECT_EQ(Names(""), (std::set<std::string>{"a", newline, latin1, longest}));
  const std::string too_long(256, 'n');
  EXPECT_EQ(root_->OpenWrite(too_long).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(root_->OpenRead(too_long).status().code(), StatusCode::kInvalidArgument);
}

// The attack of issue 44: while the host works in `d`, the agent swaps `d`
// (atomically, RENAME_EXCHANGE) with a symlink to an outside directory that
// holds a file of the same name with a marker. Every operation either acts
// on the real `d` or is refused; none reaches the outside directory.
TEST_P(TreeRootTest, ASwappedDirectoryNeverLeadsOutside) {
  WriteFile(ws_ + "/d/secret.txt", "inside secret");
  WriteFile(outside_ + "/outside-only.txt", kMarker);
  ASSERT_EQ(::symlink(outside_.c_str(), (ws_ + "/swap").c_str()), 0);
  std::atomic<bool> stop{false};
  std::atomic<long> swaps{0};
  std::thread agent([&] {
    const std::string d = ws_ + "/d";
    const std::string swap = ws_ + "/swap";
    while (!stop.load(std::memory_order_relaxed)) {
      if (::renameat2(AT_FDCWD, d.c_str(), AT_FDCWD, swap.c_str(), RENAME_EXCHANGE) == 0) {
        swaps.fetch_add(1, std::memory_order_relaxed);
      }
    }
  });
  long ok = 0;
  long refused = 0;
  long outside_bytes = 0;
  long outside_entries = 0;
  auto count = [&](const Status& st) { st.ok() ? ++ok : ++refused; };
  constexpr int kRounds = 2000;
  for (int i = 0; i < kRounds; ++i) {
    auto text = ReadTreeFile(*root_, "d/secret.txt", 100);
    count(text.status());
    if (text.ok() && text->find(kMarker) != std::string::npos) ++outside_bytes;
    auto list = root_->List("d");
    count(list.status());
    if (list.ok()) {
      for (const TreeEntry& e : *list) outside_entries += e.name == "outside-only.txt";
    }
    const std::string n = std::to_string(i);
    auto w = root_->OpenWrite("d/w" + n, 0644, /*exclusive=*/true);
    count(w.status());
    count(root_->MakeDirs("d/m" + n));
    count(root_->Rename("d/outside-only.txt", "stolen" + n));
    if (w.ok()) count(root_->Rename("d/w" + n, "d/r" + n));
  }
  stop = true;
  agent.join();
  std::printf(
      "[ race ] %s: %d rounds, %ld swaps, %ld ok, %ld refused, %ld outside bytes, %ld "
      "outside entries\n",
      GetParam() ? "walk" : "openat2", kRounds, swaps.load(), ok, refused, outside_bytes,
      outside_entries);
  EXPECT_GT(swaps.load(), 100);
  EXPECT_GT(ok, 0);
  EXPECT_GT(refused, 0);  // the swap was really seen
  EXPECT_EQ(outside_bytes, 0);
  EXPECT_EQ(outside_entries, 0);
  std::set<std::string> outside;
  for (const auto& e : fs::directory_iterator(outside_)) outside.insert(e.path().filename());
  EXPECT_EQ(outside, (std::set<std::string>{"secret.txt", "outside-only.txt"}));
  EXPECT_EQ(ReadWholeFile(outside_ + "/secret.txt"), kMarker);
  for (const auto& e : fs::directory_iterator(ws_)) {
    EXPECT_NE(e.path().filename().string().rfind("stolen", 0), 0u) << e.path();
  }
}

INSTANTIATE_TEST_SUITE_P(Resolution, TreeRootTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Walk" : "Openat2"; });

}  // namespace
}  // namespace maestro
