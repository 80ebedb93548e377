// The sandbox with real bubblewrap: what a command can see (a minimal
// filesystem, no host secrets) and the limits every RunCommand runs under (a
// fork bomb, a big allocation, a big file, a CPU hog end with a clear error
// and leave the host responsive).
#include "sandbox/sandbox.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "core/process.h"
#include "support/temp_dir.h"
#include "tools/workspace_tools.h"

namespace maestro::tools {
namespace {

namespace fs = std::filesystem;
using std::chrono::steady_clock;

std::set<std::string> Lines(const std::string& text) {
  std::set<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.insert(line);
  }
  return out;
}

// The text between "<name>{" and "}<name>" in `s`.
std::string Section(const std::string& s, const std::string& name) {
  auto b = s.find(name + "{");
  auto e = s.find("}" + name);
  if (b == std::string::npos || e == std::string::npos) return "<missing " + name + ">";
  b += name.size() + 1;
  return s.substr(b, e - b);
}

// How long the host takes to fork and reap a trivial child.
std::chrono::milliseconds HostForkTime() {
  const auto start = steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return std::chrono::duration_cast<std::chrono::milliseconds>(steady_clock::now() - start);
}

class SandboxTest : public ::testing::Test {
 protected:
  static const Sandbox& Probed() {
    static const Sandbox s = Sandbox::Probe();
    return s;
  }

  void SetUp() override {
    if (!Probed().available()) {
      GTEST_SKIP() << "bubblewrap unavailable here: " << Probed().unavailable_reason();
    }
    fs::create_directories(dir_.File("ws"));
    root_ = fs::canonical(dir_.File("ws")).string();
    ctx_.workspace_root = root_;
    ctx_.cancel = &cancel_;
  }

  // A RunCommand with `limits` as the global defaults.
  ToolResult Run(const Json& args, const SandboxLimits& limits = {}) {
    auto sandbox = std::make_shared<Sandbox>(Probed());
    sandbox->SetLimits(limits, {});
    ToolRegistry registry;
    EXPECT_TRUE(RegisterRunCommand(registry, sandbox).ok());
    return (*registry.Handler("RunCommand"))(args, ctx_);
  }

  testing::TempDir dir_;
  std::string root_;
  CancelToken cancel_;
  ToolContext ctx_;
};

TEST_F(SandboxTest, SeesOnlyAMinimalFilesystem) {
  setenv("MAESTRO_TEST_HOST_ONLY", "1", 1);  // must not show up inside
  ToolResult r = Run({{"command",
                       "echo 'root{'; ls -a /; echo '}root'; echo 'etc{'; ls -a /etc; echo '}etc';"
                       "echo 'secrets{'; cat /etc/shadow /etc/shadow- /etc/gshadow /etc/gshadow- "
                       "/etc/sudoers /etc/machine-id 2>/dev/null; echo '}secrets';"
                       "echo 'sys{'; ls -a /sys 2>/dev/null; echo '}sys';"
                       "echo 'passwd{'; cat /etc/passwd; echo '}passwd';"
                       "echo 'id{'; id -u; id -g; echo '}id';"
                       "echo 'pids{'; ls /proc | grep -c '^[0-9]'; echo '}pids';"
                       "echo 'init{'; tr '\\0' '\\n' < /proc/1/environ; echo '}init';"
                       "echo 'tmp{'; ls -a /tmp; echo '}tmp';"
                       "echo 'dev{'; ls -a /dev; echo '}dev'"}});
  const std::string& o = r.content;
  ASSERT_EQ(o.rfind("[exit code 0]", 0), 0u) << o;

  // `/` holds the system dirs, the mount points and /workspace — nothing
  // else (the workspace's host path is not there at all).
  const std::set<std::string> root_allowed = {".",    "..",    "usr",   "bin",      "sbin",
                                              "lib",  "lib32", "lib64", "libx32",   "etc",
                                              "proc", "dev",   "tmp",   "workspace"};
  for (const auto& e : Lines(Section(o, "root"))) {
    EXPECT_TRUE(root_allowed.count(e)) << "unexpected in /: " << e;
  }
  EXPECT_TRUE(Lines(Section(o, "root")).count("usr")) << o;

  const std::set<std::string> etc_allowed = {".",
                                             "..",
                                             "passwd",
                                             "group",
                                             "hosts",
                                             "nsswitch.conf",
                                             "ld.so.cache",
                                             "ld.so.conf",
                                             "ld.so.conf.d",
                                             "ssl",
                                             "ca-certificates",
                                             "ca-certificates.conf",
                                             "alternatives",
                                             "localtime",
                                             "timezone",
                                             "protocols",
                                             "services",
                                             "os-release",
                                             "debian_version",
                                             "mtab"};
  for (const auto& e : Lines(Section(o, "etc"))) {
    EXPECT_TRUE(etc_allowed.count(e)) << "unexpected in /etc: " << e;
  }
  EXPECT_FALSE(Lines(Section(o, "etc")).count("resolv.conf")) << "resolv.conf without network";
  EXPECT_EQ(Section(o, "secrets"), "\n") << "a host secret is readable";
  EXPECT_EQ(Section(o, "sys"), "\n") << "/sys is visible";
  EXPECT_EQ(Lines(Section(o, "passwd")).size(), 2u) << Section(o, "passwd");
  EXPECT_EQ(Section(o, "id"), "\n65534\n65534\n");
  // A fresh /proc of the sandbox's own pid namespace: a handful of pids, and
  // pid 1 is the sandbox's init, not the host's (no host variable in it).
  EXPECT_LT(std::stoi(Section(o, "pids").substr(1)), 10) << o;
  EXPECT_EQ(Section(o, "init").find("MAESTRO_TEST_HOST_ONLY"), std::string::npos);
  // /tmp is private and empty (the test's workspace lives under the host's
  // /tmp, but inside it is only /workspace).
  EXPECT_EQ(Lines(Section(o, "tmp")), (std::set<std::string>{".", ".."}));
  for (const auto& e : Lines(Section(o, "dev"))) {
    static const std::set<std::string> dev_allowed = {
        ".",    "..",  "null", "zero",  "full",   "random", "urandom", "tty",   "pts",
        "ptmx", "shm", "fd",   "stdin", "stdout", "stderr", "core",    "mqueue"};
    EXPECT_TRUE(dev_allowed.count(e)) << "unexpected in /dev: " << e;
  }
}

TEST_F(SandboxTest, ResolvConfOnlyWithTheNetwork) {
  if (!fs::exists("/etc/resolv.conf")) GTEST_SKIP() << "no /etc/resolv.conf on this host";
  ctx_.network_allowed = true;
  ToolResult r = Run({{"command", "ls /etc"}, {"network", true}});
  EXPECT_NE(r.content.find("resolv.conf"), std::string::npos) << r.content;
}

TEST_F(SandboxTest, AForkBombEndsWithAProcessLimitErrorAndTheHostStaysResponsive) {
  SandboxLimits limits;
  limits.processes = 64;
  const auto start = steady_clock::now();
  ToolResult r =
      Run({{"command", "bomb(){ bomb | bomb & }; bomb; sleep 3"}, {"timeout_seconds", 8}}, limits);
  EXPECT_LT(steady_clock::now() - start, std::chrono::seconds(15));
  EXPECT_TRUE(r.is_error) << r.content;
  EXPECT_NE(r.content.find("process limit (64"), std::string::npos) << r.content.substr(0, 400);
  EXPECT_LT(HostForkTime(), std::chrono::milliseconds(500));
}

TEST_F(SandboxTest, ManyBackgroundProcessesHitTheDefaultLimit) {
  const auto start = steady_clock::now();
  ToolResult r = Run({{"command", "for i in $(seq 1000); do sleep 100 & done; echo spawned"},
                      {"timeout_seconds", 20}});
  EXPECT_LT(steady_clock::now() - start, std::chrono::seconds(25));
  EXPECT_TRUE(r.is_error) << r.content.substr(0, 400);
  EXPECT_EQ(r.content.rfind("Error: the command reached the process limit (512", 0), 0u)
      << r.content.substr(0, 400);
  EXPECT_LT(HostForkTime(), std::chrono::milliseconds(500));
  // Nothing of it is left on the host.
  ProcessSpec ps;
  ps.argv = {"pgrep", "-x", "-f", "sleep 100"};
  auto left = RunPosixProcess(ps);
  ASSERT_TRUE(left.ok());
  EXPECT_NE(left->exit_code, 0) << "left behind: " << left->output;
}

TEST_F(SandboxTest, ATwoGigabyteAllocationFailsClearly) {
  ToolResult r = Run({{"command", "python3 -c 'b = bytearray(2 * 1024**3)'"}});
  EXPECT_TRUE(r.is_error) << r.content;
  EXPECT_EQ(r.content.rfind("Error: the command ran out of memory (address space limit 2 GiB", 0),
            0u)
      << r.content;
  EXPECT_NE(r.content.find("MemoryError"), std::string::npos) << r.content;
  EXPECT_LT(HostForkTime(), std::chrono::milliseconds(500));
}

TEST_F(SandboxTest, AFileBeyondTheSizeLimitFailsClearly) {
  SandboxLimits limits;
  limits.file_size_bytes = 1 << 20;
  ToolResult r = Run({{"command", "head -c 3000000 /dev/zero > big; ls -l big"}}, limits);
  EXPECT_TRUE(r.is_error) << r.content;
  EXPECT_EQ(r.content.rfind("Error: the command reached the file size limit (1 MiB", 0), 0u)
      << r.content;
  EXPECT_LE(fs::file_size(root_ + "/big"), 1u << 20);
}

TEST_F(SandboxTest, ACpuHogIsStoppedByTheCpuLimit) {
  SandboxLimits limits;
  limits.cpu_seconds = 1;
  ToolResult r = Run({{"command", "while :; do :; done"}, {"timeout_seconds", 20}}, limits);
  EXPECT_TRUE(r.is_error) << r.content;
  EXPECT_EQ(r.content.rfind("Error: the command reached the CPU time limit (1 s)", 0), 0u)
      << r.content;
}

TEST_F(SandboxTest, OpenFilesAreLimited) {
  SandboxLimits limits;
  limits.open_files = 32;
  ToolResult r = Run({{"command", "ulimit -n"}}, limits);
  EXPECT_NE(r.content.find("\n32"), std::string::npos) << r.content;
}

TEST(SandboxLimitsTest, PerSpaceLimitsApplyAtAndUnderTheSpaceRoot) {
  Sandbox s = Sandbox::Unavailable("test");
  SandboxLimits defaults;
  SandboxLimits space = defaults;
  space.processes = 7;
  s.SetLimits(defaults, {{"/srv/space", space}});
  EXPECT_EQ(s.LimitsFor("/srv/space").processes, 7);
  EXPECT_EQ(s.LimitsFor("/srv/space/sub").processes, 7);
  EXPECT_EQ(s.LimitsFor("/srv/spacer").processes, 512);
  EXPECT_EQ(s.LimitsFor("/elsewhere").processes, 512);
}

TEST(SandboxLimitsTest, FromJsonOverridesTheBaseAndNamesBadKeys) {
  SandboxLimits base;
  auto l = SandboxLimits::FromJson(Json{{"processes", 100}, {"open_files", "256"}}, base, "x");
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(l->processes, 100);
  EXPECT_EQ(l->open_files, 256);
  EXPECT_EQ(l->address_space_bytes, int64_t{2} << 30);
  auto bad = SandboxLimits::FromJson(Json{{"procs", 1}}, base, "sandbox.limits");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'procs'"), std::string::npos);
  EXPECT_FALSE(SandboxLimits::FromJson(Json{{"processes", -1}}, base, "x").ok());
}

}  // namespace
}  // namespace maestro::tools
