// RunCommand under bubblewrap: no network unless allowed, no writes outside
// the workspace, killed (with its whole process group) on timeout and cancel.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "core/process.h"
#include "support/temp_dir.h"
#include "tools/workspace_tools.h"

namespace maestro::tools {
namespace {

namespace fs = std::filesystem;
using std::chrono::steady_clock;

const Sandbox& SharedSandbox() {
  static const Sandbox s = Sandbox::Probe();
  return s;
}

// A listening TCP socket on 127.0.0.1 (the kernel completes connects even
// without accept()).
class Listener {
 public:
  Listener() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    listen(fd_, 16);
    socklen_t len = sizeof(a);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  ~Listener() { close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

class RunCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!SharedSandbox().available()) {
      GTEST_SKIP() << "bubblewrap unavailable here: " << SharedSandbox().unavailable_reason();
    }
    fs::create_directories(dir_.File("ws"));
    root_ = fs::canonical(dir_.File("ws")).string();
    ASSERT_TRUE(RegisterRunCommand(registry_, std::make_shared<Sandbox>(SharedSandbox())).ok());
    ctx_.workspace_root = root_;
    ctx_.cancel = &cancel_;
  }
  ToolResult Run(const Json& args) { return (*registry_.Handler("RunCommand"))(args, ctx_); }

  testing::TempDir dir_;
  std::string root_;
  ToolRegistry registry_;
  CancelToken cancel_;
  ToolContext ctx_;
};

TEST_F(RunCommandTest, ReturnsExitCodeAndOutput) {
  ToolResult r = Run({{"command", "echo hello; echo oops >&2; exit 7"}});
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.content.rfind("[exit code 7]\n", 0), 0u) << r.content;
  EXPECT_NE(r.content.find("hello"), std::string::npos);
  EXPECT_NE(r.content.find("oops"), std::string::npos);
  // The workspace is presented at /workspace, never at its host path.
  ToolResult pwd = Run({{"command", "pwd; echo $HOME"}});
  EXPECT_NE(pwd.content.find("\n/workspace\n/workspace\n"), std::string::npos) << pwd.content;
  EXPECT_EQ(pwd.content.find(root_), std::string::npos) << pwd.content;
}

TEST_F(RunCommandTest, WritesInsideTheWorkspaceOnly) {
  const std::string outside = dir_.File("outside.txt");
  const std::string tmp_file = "/tmp/maestro-sandbox-probe-" + std::to_string(getpid());
  ToolResult r = Run(
      {{"command", "echo in > inside.txt; echo out > " + outside +
                       "; echo sys > /usr/maestro-probe; echo t > " + tmp_file + "; echo done"}});
  EXPECT_NE(r.content.find("done"), std::string::npos) << r.content;
  EXPECT_TRUE(fs::exists(root_ + "/inside.txt"));
  EXPECT_FALSE(fs::exists(outside));
  EXPECT_FALSE(fs::exists("/usr/maestro-probe"));
  EXPECT_FALSE(fs::exists(tmp_file));  // /tmp in the sandbox is private
  // The data dir and anything else outside the workspace is not even visible.
  ToolResult ls = Run(
      {{"command", "ls " + dir_.path() + " 2>&1; cat /work/shared/DESIGN.md 2>&1 | head -c 40"}});
  // (The workspace is bound at /workspace, so not even its host parent exists.)
  EXPECT_EQ(ls.content.find("outside"), std::string::npos);
  EXPECT_NE(ls.content.find("cannot access '" + dir_.path() + "'"), std::string::npos)
      << ls.content;
  EXPECT_NE(ls.content.find("DESIGN.md: No such"), std::string::npos) << ls.content;
}

TEST_F(RunCommandTest, RunsWithoutCapabilities) {
  ToolResult r = Run(
      {{"command",
        "grep CapEff /proc/self/status; mount -o remount,rw /usr 2>/dev/null && echo REMOUNTED"}});
  EXPECT_NE(r.content.find("CapEff:\t0000000000000000"), std::string::npos) << r.content;
  EXPECT_EQ(r.content.find("REMOUNTED"), std::string::npos);
}

TEST_F(RunCommandTest, NoNetworkUnlessAllowed) {
  Listener host;
  const std::string probe = "bash -c 'exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(host.port()) +
                            " && echo CONNECTED || echo REFUSED'";
  ToolResult denied = Run({{"command", probe}});
  EXPECT_NE(denied.content.find("REFUSED"), std::string::npos) << denied.content;

  // Asking for the network without permission is refused before running.
  ToolResult asked = Run({{"command", probe}, {"network", true}});
  EXPECT_TRUE(asked.is_error);

  ctx_.network_allowed = true;  // what the authorizer sets when policy/grant allows
  ToolResult allowed = Run({{"command", probe}, {"network", true}});
  EXPECT_NE(allowed.content.find("CONNECTED"), std::string::npos) << allowed.content;
}

TEST_F(RunCommandTest, KilledOnTimeoutWithItsBackgroundChildren) {
  const auto start = steady_clock::now();
  ToolResult r = Run({{"command", "(sleep 2; echo late > late.txt) & echo started; sleep 30"},
                      {"timeout_seconds", 1}});
  const auto took = steady_clock::now() - start;
  EXPECT_LT(took, std::chrono::seconds(5));
  EXPECT_NE(r.content.find("[timed out"), std::string::npos) << r.content;
  EXPECT_NE(r.content.find("started"), std::string::npos);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_FALSE(fs::exists(root_ + "/late.txt")) << "a background child survived the kill";
}

TEST_F(RunCommandTest, KilledOnCancel) {
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel_.Cancel(CancelToken::Reason::kUserCancel);
  });
  const auto start = steady_clock::now();
  ToolResult r = Run({{"command", "sleep 30"}});
  const auto took = steady_clock::now() - start;
  canceller.join();
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(r.content.find("[cancelled"), std::string::npos) << r.content;
  EXPECT_LT(took, std::chrono::seconds(3));
}

TEST_F(RunCommandTest, LongOutputIsCappedHeadAndTail) {
  ToolResult r = Run({{"command", "echo FIRST; seq 1 200000; echo LAST"}});
  EXPECT_LT(r.content.size(), 40u * 1024);
  EXPECT_NE(r.content.find("FIRST"), std::string::npos);
  EXPECT_NE(r.content.find("LAST"), std::string::npos);
  EXPECT_NE(r.content.find("bytes cut"), std::string::npos);
}

TEST(RunCommandUnavailableTest, AnUnavailableSandboxNeverRunsTheCommand) {
  testing::TempDir dir;
  ToolRegistry reg;
  ASSERT_TRUE(
      RegisterRunCommand(reg, std::make_shared<Sandbox>(Sandbox::Unavailable("no namespaces")))
          .ok());
  ToolContext ctx;
  ctx.workspace_root = fs::canonical(dir.path()).string();
  ToolResult r = (*reg.Handler("RunCommand"))({{"command", "touch ran.txt"}}, ctx);
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(r.content.find("no namespaces"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.File("ran.txt")));
}

TEST(SandboxProbeTest, AMissingBwrapIsReportedNotIgnored) {
  Sandbox s = Sandbox::Probe("/nonexistent/bwrap");
  EXPECT_FALSE(s.available());
  EXPECT_NE(s.unavailable_reason().find("bubblewrap"), std::string::npos);
}

TEST(ProcessRunnerTest, KillsTheProcessGroupOnTimeout) {
  testing::TempDir dir;
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "(sleep 1; touch " + dir.File("late") + ") & sleep 30"};
  spec.timeout = std::chrono::milliseconds(300);
  auto r = RunPosixProcess(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->exit_code, 128 + 9);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_FALSE(fs::exists(dir.File("late")));
}

TEST(ProcessRunnerTest, ABackgroundChildDoesNotHoldTheCallOpen) {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "sleep 30 & echo quick; exit 3"};
  spec.timeout = std::chrono::seconds(20);
  auto r = RunPosixProcess(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->output, "quick\n");
  EXPECT_LT(r->duration_ms, 3000);
}

TEST(ProcessRunnerTest, AMissingProgramIsAnError) {
  ProcessSpec spec;
  spec.argv = {"/nonexistent/program"};
  EXPECT_FALSE(RunPosixProcess(spec).ok());
}

// Packages installed for the task (an approved RequestPackage) are usable by
// commands — on PYTHONPATH and readable — but cannot be modified from inside.
TEST_F(RunCommandTest, SeesTheTasksInstalledPackagesReadOnly) {
  const std::string pkgs = dir_.File("data/tasks/t1/packages");
  fs::create_directories(pkgs + "/pip/demo_pkg");
  std::ofstream(pkgs + "/pip/demo_pkg/__init__.py") << "VALUE = 'from-package'\n";
  ctx_.packages_dir = pkgs;
  ToolResult r = Run({{"command",
                       "echo \"dir=$MAESTRO_PACKAGES_DIR\"; echo \"pp=$PYTHONPATH\"; "
                       "cat \"$PYTHONPATH/demo_pkg/__init__.py\"; "
                       "echo x > \"$PYTHONPATH/demo_pkg/evil.py\" 2>/dev/null || echo READ-ONLY"}});
  EXPECT_NE(r.content.find("dir=" + pkgs), std::string::npos) << r.content;
  EXPECT_NE(r.content.find("pp=" + pkgs + "/pip"), std::string::npos) << r.content;
  EXPECT_NE(r.content.find("VALUE = 'from-package'"), std::string::npos) << r.content;
  EXPECT_NE(r.content.find("READ-ONLY"), std::string::npos) << r.content;
  EXPECT_FALSE(fs::exists(pkgs + "/pip/demo_pkg/evil.py"));

  // No packages dir yet (nothing approved): the command runs as before.
  ctx_.packages_dir = dir_.File("data/tasks/t2/packages");
  ToolResult plain = Run({{"command", "echo \"[${MAESTRO_PACKAGES_DIR:-none}]\""}});
  EXPECT_NE(plain.content.find("[none]"), std::string::npos) << plain.content;
}

}  // namespace
}  // namespace maestro::tools
