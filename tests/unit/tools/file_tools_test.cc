// Workspace file tools and the path gate: `..`, absolute paths and escaping
// symlinks are refused; the tools do what they say inside the workspace.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "support/dir_swapper.h"
#include "support/temp_dir.h"
#include "tools/workspace_tools.h"
#include "workspace/workspace_path.h"

namespace maestro::tools {
namespace {

namespace fs = std::filesystem;

class FileToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_.File("ws/src/sub"));
    root_ = fs::canonical(dir_.File("ws")).string();
    Write("src/a.cc", "int a = 1;\nint b = 2;\nint c = 3;\n");
    Write("src/sub/b.cc", "// TODO: b\n");
    Write("notes.md", "todo list\n");
    std::ofstream(dir_.File("secret.txt")) << "outside\n";
    ctx_.workspace_root = root_;
  }
  void Write(const std::string& rel, const std::string& text) {
    std::ofstream(root_ + "/" + rel) << text;
  }
  std::string Read(const std::string& rel) {
    std::ifstream in(root_ + "/" + rel);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  testing::TempDir dir_;
  std::string root_;
  ToolContext ctx_;
};

TEST_F(FileToolsTest, DotDotAndAbsolutePathsAreRefused) {
  for (std::string p : {"../secret.txt", "src/../../secret.txt", "src/.."}) {
    auto r = ResolveInWorkspace(root_, p);
    ASSERT_FALSE(r.ok()) << p;
    EXPECT_EQ(r.status().field(), "path");
    EXPECT_NE(r.status().message().find("'..'"), std::string::npos);
  }
  auto abs = ResolveInWorkspace(root_, dir_.File("secret.txt"));
  ASSERT_FALSE(abs.ok());
  EXPECT_NE(abs.status().message().find("absolute"), std::string::npos);

  ToolResult read = ReadFileTool({{"path", "../secret.txt"}}, ctx_);
  EXPECT_TRUE(read.is_error);
  EXPECT_EQ(read.content.rfind("Error: ", 0), 0u);
  ToolResult write = WriteFileTool({{"path", "/tmp/maestro-escape.txt"}, {"content", "x"}}, ctx_);
  EXPECT_TRUE(write.is_error);
  EXPECT_FALSE(fs::exists("/tmp/maestro-escape.txt"));
}

TEST_F(FileToolsTest, PathsUnderTheWorkspaceMountNameTheWorkspace) {
  // The model sees every workspace at /workspace (the system text, RunCommand's pwd).
  EXPECT_EQ(*ResolveInWorkspace(root_, "/workspace"), root_);
  EXPECT_EQ(*ResolveInWorkspace(root_, "/workspace/"), root_);
  EXPECT_EQ(*ResolveInWorkspace(root_, "/workspace/src/a.txt"), root_ + "/src/a.txt");
  for (std::string p : {"/workspace/../secret.txt", "/workspaces/a.txt", "/workspace2"}) {
    auto r = ResolveInWorkspace(root_, p);
    EXPECT_FALSE(r.ok()) << p;
  }
  ASSERT_FALSE(WriteFileTool({{"path", "/workspace/w.txt"}, {"content", "hi"}}, ctx_).is_error);
  EXPECT_TRUE(fs::exists(root_ + "/w.txt"));
  ToolResult read = ReadFileTool({{"path", "/workspace/w.txt"}}, ctx_);
  EXPECT_NE(read.content.find("hi"), std::string::npos) << read.content;
}

TEST_F(FileToolsTest, SymlinksThatEscapeAreRefusedInsideOnesWork) {
  fs::create_symlink(dir_.File("secret.txt"), root_ + "/leak");
  fs::create_symlink(dir_.path(), root_ + "/up");
  fs::create_symlink(dir_.File("nowhere/new.txt"), root_ + "/dangling");
  fs::create_symlink(root_ + "/src", root_ + "/srclink");

  EXPECT_TRUE(ReadFileTool({{"path", "leak"}}, ctx_).is_error);
  EXPECT_TRUE(ReadFileTool({{"path", "up/secret.txt"}}, ctx_).is_error);
  ToolResult w = WriteFileTool({{"path", "dangling"}, {"content", "x"}}, ctx_);
  EXPECT_TRUE(w.is_error);
  EXPECT_FALSE(fs::exists(dir_.File("nowhere/new.txt")));
  ToolResult w2 = WriteFileTool({{"path", "up/planted.txt"}, {"content", "x"}}, ctx_);
  EXPECT_TRUE(w2.is_error);
  EXPECT_FALSE(fs::exists(dir_.File("planted.txt")));

  ToolResult ok = ReadFileTool({{"path", "srclink/a.cc"}}, ctx_);
  EXPECT_FALSE(ok.is_error) << ok.content;
  EXPECT_NE(ok.content.find("int a"), std::string::npos);
}

// ResolveInTree follows a link only by reading it and yields a path with no
// symlink left: a link the sandbox's view names (/workspace/...), a
// relative one climbing within the workspace, a chain; loops, links that
// climb out and links to nothing are refused with the words the model sees.
TEST_F(FileToolsTest, SymlinksInsideResolveToASymlinkFreePath) {
  fs::create_symlink("/workspace/src", root_ + "/mounted");
  fs::create_symlink("../notes.md", root_ + "/src/up-notes");
  fs::create_symlink("mounted", root_ + "/chain");
  fs::create_symlink("loop2", root_ + "/loop1");
  fs::create_symlink("loop1", root_ + "/loop2");
  fs::create_symlink("../..", root_ + "/src/climb");
  fs::create_symlink("missing/x", root_ + "/nothing");
  auto root = TreeRoot::Open(root_);
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(*ResolveInTree(*root, "mounted/a.cc"), "src/a.cc");
  EXPECT_EQ(*ResolveInTree(*root, "/workspace/chain/sub/b.cc"), "src/sub/b.cc");
  EXPECT_EQ(*ResolveInTree(*root, "src/up-notes"), "notes.md");
  EXPECT_EQ(*ResolveInTree(*root, "src/new/deeper.txt"), "src/new/deeper.txt");
  EXPECT_EQ(*ResolveInTree(*root, "."), "");
  auto loop = ResolveInTree(*root, "loop1");
  EXPECT_NE(loop.status().message().find("dangling symlink"), std::string::npos)
      << loop.status().ToString();
  auto climb = ResolveInTree(*root, "src/climb/secret.txt");
  EXPECT_NE(climb.status().message().find("symlink 'src/climb' points outside the workspace"),
            std::string::npos)
      << climb.status().ToString();
  auto nothing = ResolveInTree(*root, "nothing");
  EXPECT_NE(nothing.status().message().find("dangling symlink 'nothing'"), std::string::npos)
      << nothing.status().ToString();
  EXPECT_EQ(ReadFileTool({{"path", "mounted/a.cc"}, {"end_line", 1}}, ctx_).content,
            "int a = 1;\n");
  ToolResult gone = ReadFileTool({{"path", "x"}}, ToolContext{});
  EXPECT_TRUE(gone.is_error);
  EXPECT_NE(gone.content.find("workspace (/workspace) is not available"), std::string::npos)
      << gone.content;
}

TEST_F(FileToolsTest, ReadFileReturnsTheRequestedLines) {
  ToolResult r = ReadFileTool({{"path", "src/a.cc"}, {"start_line", 2}, {"end_line", 3}}, ctx_);
  EXPECT_EQ(r.content, "int b = 2;\nint c = 3;\n");
  EXPECT_TRUE(ReadFileTool({{"path", "src/a.cc"}, {"start_line", 9}}, ctx_).is_error);
  EXPECT_TRUE(ReadFileTool({{"path", "missing.txt"}}, ctx_).is_error);
}

TEST_F(FileToolsTest, ReadFileBoundsMemoryAndRefusesSpecialFiles) {
  Write("noeol.txt", "one\ntwo");
  EXPECT_EQ(ReadFileTool({{"path", "noeol.txt"}}, ctx_).content, "one\ntwo\n");
  EXPECT_EQ(ReadFileTool({{"path", "noeol.txt"}, {"start_line", 2}}, ctx_).content, "two\n");
  Write("huge.txt", std::string(3 << 20, 'x'));  // one 3 MiB line
  ToolResult big = ReadFileTool({{"path", "huge.txt"}}, ctx_);
  EXPECT_FALSE(big.is_error);
  EXPECT_NE(big.content.find("stopped after 1048576 bytes, in line 1"), std::string::npos);
  EXPECT_LT(big.content.size(), (1u << 20) + 200);
  ASSERT_EQ(mkfifo((root_ + "/pipe").c_str(), 0644), 0);
  ToolResult fifo = ReadFileTool({{"path", "pipe"}}, ctx_);  // must not block
  EXPECT_TRUE(fifo.is_error);
  EXPECT_NE(fifo.content.find("not a regular file"), std::string::npos);
  ToolResult dir = ReadFileTool({{"path", "src"}}, ctx_);
  EXPECT_TRUE(dir.is_error);
  EXPECT_NE(dir.content.find("is a directory; use ListDir"), std::string::npos) << dir.content;
  ToolResult missing = ReadFileTool({{"path", "missing.txt"}}, ctx_);
  EXPECT_NE(missing.content.find("file 'missing.txt' not found"), std::string::npos)
      << missing.content;
}

// Line ranges across the 64 KiB read buffer, and the 1 MiB limit exactly:
// a file of exactly 1 MiB comes whole; one byte more stops in the next line.
TEST_F(FileToolsTest, ReadFileRangesAndTheByteLimitAreExact) {
  std::string lines;
  for (int i = 1; i <= 1024; ++i) {
    std::string head = "line " + std::to_string(i) + " ";
    lines += head + std::string(1023 - head.size(), '.') + "\n";
  }
  ASSERT_EQ(lines.size(), 1u << 20);
  Write("mib.txt", lines);
  EXPECT_EQ(ReadFileTool({{"path", "mib.txt"}}, ctx_).content, lines);
  EXPECT_EQ(
      ReadFileTool({{"path", "mib.txt"}, {"start_line", 60}, {"end_line", 130}}, ctx_).content,
      lines.substr(59 * 1024, 71 * 1024));
  Write("mib1.txt", lines + "x");
  ToolResult over = ReadFileTool({{"path", "mib1.txt"}}, ctx_);
  EXPECT_EQ(over.content.substr(0, 1u << 20), lines);
  EXPECT_NE(over.content.find("stopped after 1048576 bytes, in line 1025"), std::string::npos);
}

TEST_F(FileToolsTest, WriteFileCreatesParentsAndEditFileNeedsAUniqueMatch) {
  ToolResult w = WriteFileTool({{"path", "new/dir/x.txt"}, {"content", "alpha beta alpha"}}, ctx_);
  ASSERT_FALSE(w.is_error) << w.content;
  EXPECT_EQ(Read("new/dir/x.txt"), "alpha beta alpha");

  ToolResult twice =
      EditFileTool({{"path", "new/dir/x.txt"}, {"old_string", "alpha"}, {"new_string", "A"}}, ctx_);
  EXPECT_TRUE(twice.is_error);
  EXPECT_NE(twice.content.find("occurs 2 times"), std::string::npos);
  EXPECT_EQ(Read("new/dir/x.txt"), "alpha beta alpha");  // unchanged

  ToolResult none =
      EditFileTool({{"path", "new/dir/x.txt"}, {"old_string", "gamma"}, {"new_string", "G"}}, ctx_);
  EXPECT_TRUE(none.is_error);

  ToolResult once =
      EditFileTool({{"path", "new/dir/x.txt"}, {"old_string", "beta"}, {"new_string", "B"}}, ctx_);
  EXPECT_FALSE(once.is_error) << once.content;
  EXPECT_EQ(Read("new/dir/x.txt"), "alpha B alpha");
}

TEST_F(FileToolsTest, ListDirGlobAndGrep) {
  ToolResult ls = ListDirTool(Json::object(), ctx_);
  EXPECT_EQ(ls.content, "notes.md\nsrc/\n");

  ToolResult g = GlobTool({{"pattern", "**/*.cc"}}, ctx_);
  EXPECT_EQ(g.content, "src/a.cc\nsrc/sub/b.cc\n");
  ToolResult g2 = GlobTool({{"pattern", "src/*.cc"}}, ctx_);
  EXPECT_EQ(g2.content, "src/a.cc\n");

  ToolResult grep = GrepTool({{"pattern", "todo"}, {"case_insensitive", true}}, ctx_);
  EXPECT_EQ(grep.content, "notes.md:1: todo list\nsrc/sub/b.cc:1: // TODO: b\n");
  ToolResult scoped = GrepTool({{"pattern", "int [bc]"}, {"path", "src"}, {"glob", "*.cc"}}, ctx_);
  EXPECT_EQ(scoped.content, "src/a.cc:2: int b = 2;\nsrc/a.cc:3: int c = 3;\n");
  EXPECT_TRUE(GrepTool({{"pattern", "("}}, ctx_).is_error);
  EXPECT_TRUE(GrepTool({{"pattern", "x"}, {"path", ".."}}, ctx_).is_error);
}

TEST_F(FileToolsTest, GrepStopsAtTheMatchCap) {
  std::string many;
  for (int i = 0; i < 2000; ++i) many += "hit\n";
  Write("many.txt", many);
  ToolResult r = GrepTool({{"pattern", "hit"}}, ctx_);
  EXPECT_NE(r.content.find("stopped after 500 matches"), std::string::npos);
  EXPECT_EQ(std::count(r.content.begin(), r.content.end(), '\n'), 501);
}

TEST(GlobPatternTest, StarsStayInAComponentAndDoubleStarsCrossThem) {
  EXPECT_TRUE(GlobPattern("*.cc").Matches("a.cc"));
  EXPECT_FALSE(GlobPattern("*.cc").Matches("src/a.cc"));
  EXPECT_TRUE(GlobPattern("src/**/*.cc").Matches("src/a.cc"));
  EXPECT_TRUE(GlobPattern("src/**/*.cc").Matches("src/x/y/a.cc"));
  EXPECT_FALSE(GlobPattern("src/**/*.cc").Matches("srcx/a.cc"));
  EXPECT_TRUE(GlobPattern("**").Matches("a/b/c"));
  EXPECT_TRUE(GlobPattern("a?c").Matches("abc"));
  EXPECT_FALSE(GlobPattern("a?c").Matches("a/c"));
  EXPECT_TRUE(GlobPattern("**/README.md").Matches("README.md"));
  EXPECT_TRUE(GlobPattern("docs/*").Matches("docs/x.md"));
  EXPECT_FALSE(GlobPattern("docs/*").Matches("docs/a/x.md"));
}

TEST_F(FileToolsTest, ABacktrackingGlobOnLongNamesEndsAtOnce) {
  // std::regex took > 75 s on such patterns; the NFA is linear per name.
  for (int i = 0; i < 200; ++i) Write("d/" + std::string(200, 'a') + std::to_string(i), "x");
  const auto start = std::chrono::steady_clock::now();
  ToolResult r = GlobTool({{"pattern", "**/*a*a*a*a*a*a*a*a*a*a*a*a*a*b"}}, ctx_);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_FALSE(r.is_error) << r.content;
  EXPECT_NE(r.content.find("no files match"), std::string::npos) << r.content;
  EXPECT_LT(took, std::chrono::seconds(10)) << "the match must not backtrack";
}

TEST_F(FileToolsTest, GrepRefusesBackReferencesAndStopsOnCancelInsideAFile) {
  EXPECT_TRUE(GrepTool({{"pattern", "(a*)*\\1"}}, ctx_).is_error);
  std::string big;
  for (int i = 0; i < 100000; ++i) big += "line without the word\n";
  Write("big.txt", big);
  CancelToken cancel;
  cancel.Cancel(CancelToken::Reason::kUserCancel);
  ctx_.cancel = &cancel;
  ToolResult r = GrepTool({{"pattern", "never"}}, ctx_);
  EXPECT_NE(r.content.find("search stopped"), std::string::npos) << r.content;
}

// Issue 44: a process of the agent swaps src/ for a symlink to an outside
// directory (a file of the same name holding a marker) in a tight loop
// while the tools run: no tool shows a marker byte or an outside name, and
// nothing is written outside.
TEST_F(FileToolsTest, ADirectorySwappedForASymlinkNeverLeadsTheToolsOutside) {
  fs::create_directories(dir_.File("outside"));
  std::ofstream(dir_.File("outside/a.cc")) << "OUTSIDE-MARKER\n";
  std::ofstream(dir_.File("outside/host-only.txt")) << "OUTSIDE-MARKER\n";
  fs::create_directory_symlink(dir_.File("outside"), root_ + "/swap");
  long calls = 0, errors = 0, leaks = 0;
  auto run = [&](const ToolResult& r) {
    ++calls;
    errors += r.is_error;
    leaks += r.content.find("OUTSIDE-MARKER") != std::string::npos ||
             r.content.find("host-only") != std::string::npos;
  };
  testing::DirSwapper agent(root_ + "/src", root_ + "/swap");
  for (int i = 0; i < 300; ++i) {
    run(ReadFileTool({{"path", "src/a.cc"}}, ctx_));
    run(ListDirTool({{"path", "src"}}, ctx_));
    run(WriteFileTool({{"path", "src/w" + std::to_string(i) + ".txt"}, {"content", "x"}}, ctx_));
    run(EditFileTool({{"path", "src/a.cc"}, {"old_string", "int a"}, {"new_string", "int a"}},
                     ctx_));
    if (i % 10 == 0) {
      run(GrepTool({{"pattern", "OUTSIDE"}}, ctx_));
      run(GlobTool({{"pattern", "**"}}, ctx_));
    }
  }
  agent.Stop();
  std::printf("[ race ] %ld tool calls (%ld errors), %ld swaps, %ld outside leaks\n", calls, errors,
              agent.swaps(), leaks);
  EXPECT_GT(agent.swaps(), 100);
  EXPECT_GT(errors, 0);
  EXPECT_LT(errors, calls);
  EXPECT_EQ(leaks, 0);
  std::set<std::string> outside;
  for (const auto& e : fs::directory_iterator(dir_.File("outside"))) {
    outside.insert(e.path().filename().string());
  }
  EXPECT_EQ(outside, (std::set<std::string>{"a.cc", "host-only.txt"}));
  std::ifstream in(dir_.File("outside/a.cc"));
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "OUTSIDE-MARKER\n");
}

}  // namespace
}  // namespace maestro::tools
