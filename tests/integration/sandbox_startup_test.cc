// The sandbox at startup (issue 47 item 1): the real `maestro serve` and
// `maestro worker` refuse to start — exit 1, one message naming the reason,
// the host fixes, the container settings' docs anchor and
// `sandbox.required: false` — when RunCommand's bubblewrap or BrowseWeb's
// Chromium cannot run; they start (warned, the tool left out) with
// `sandbox.required: false`, and `serve --workers 0` checks nothing.
//
// The failing bubblewrap is a `bwrap` script first in PATH that fails as
// bwrap does in a seccomp'ed container (exit 1, its message on stderr): the
// binary looks bwrap up in PATH exactly as the real one is found.
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "support/process.h"
#include "support/temp_dir.h"

namespace maestro {
namespace {

using namespace std::chrono_literals;
using testing::Process;

// What Debian's bwrap says when the kernel or a seccomp filter refuses it.
constexpr const char* kBwrapRefusal =
    "bwrap: No permissions to creating new namespace, likely because the kernel does not allow "
    "non-privileged user namespaces.";

class SandboxStartupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = testing::FreePort();
    // A bwrap that fails like a container's, first in PATH.
    testing::WriteFile(dir_.File("fakebin/bwrap"),
                       std::string("#!/bin/sh\necho '") + kBwrapRefusal + "' >&2\nexit 1\n");
    chmod(dir_.File("fakebin/bwrap").c_str(), 0755);
    const char* path = std::getenv("PATH");
    fake_path_ = dir_.File("fakebin") + ":" + (path ? path : "/usr/bin:/bin");
    env_ = {{"MAESTRO_DATA_DIR", dir_.File("data")},
            {"MAESTRO_LISTEN", "127.0.0.1:" + std::to_string(port_)},
            {"MAESTRO_ADMIN_TOKEN", "tok"}};
  }

  // maestro.yaml: `workers` threads, an LLM server configured (the engine,
  // and with it the sandbox, is built only then; nothing listens there, and
  // startup never calls it), then `extra`.
  void WriteConfig(int workers, const std::string& extra = "") {
    testing::WriteFile(dir_.File("maestro.yaml"),
                       "workers: " + std::to_string(workers) +
                           "\n"
                           "log:\n  level: info\n"
                           "llm:\n  base_url: http://127.0.0.1:9/v1\n  model: fake\n" +
                           extra);
  }

  std::unique_ptr<Process> Start(const std::string& command = "serve",
                                 std::map<std::string, std::string> env = {},
                                 std::vector<std::string> flags = {}) {
    for (const auto& [k, v] : env_) env.emplace(k, v);
    std::vector<std::string> argv = {MAESTRO_BIN, "--config", dir_.File("maestro.yaml"), command};
    argv.insert(argv.end(), flags.begin(), flags.end());
    ++runs_;
    return std::make_unique<Process>(argv, env, dir_.File("run" + std::to_string(runs_) + ".out"),
                                     dir_.File("run" + std::to_string(runs_) + ".err"));
  }

  // Waits for /api/health to answer 200 while `p` runs.
  bool Healthy(Process& p) const {
    httplib::Client c("127.0.0.1", port_);
    for (int i = 0; i < 1500; ++i) {
      if (auto r = c.Get("/api/health"); r && r->status == 200) return true;
      if (!p.running()) return false;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }

  // The start was refused: exit 1 within the probe's time, nothing served.
  std::string ExpectRefused(Process& p) const {
    auto code = p.Wait(30s);
    EXPECT_TRUE(code.has_value()) << "still running:\n" << p.Stderr();
    EXPECT_EQ(code.value_or(-1), 1) << p.Stderr();
    httplib::Client c("127.0.0.1", port_);
    c.set_connection_timeout(1, 0);
    EXPECT_FALSE(c.Get("/api/health")) << "the refused process left something serving";
    return p.Stderr();
  }

  // The fixes every refusal names.
  static void ExpectFixes(const std::string& err) {
    EXPECT_NE(err.find("sandbox.required: true"), std::string::npos) << err;
    EXPECT_NE(err.find("docs/operations.md#the-sandbox-in-a-container"), std::string::npos) << err;
    EXPECT_NE(err.find("sandbox.required: false"), std::string::npos) << err;
    EXPECT_NE(err.find("MAESTRO_SANDBOX_REQUIRED=false"), std::string::npos) << err;
    EXPECT_NE(err.find("CLONE_NEWUSER"), std::string::npos) << err;
  }

  testing::TempDir dir_;
  int port_ = 0;
  int runs_ = 0;
  std::string fake_path_;
  std::map<std::string, std::string> env_;
};

TEST_F(SandboxStartupTest, ServeRefusesToStartWhenBubblewrapCannotCreateNamespaces) {
  WriteConfig(2);
  auto serve = Start("serve", {{"PATH", fake_path_}});
  const std::string err = ExpectRefused(*serve);
  EXPECT_NE(err.find("RunCommand's sandbox (bubblewrap) cannot run here"), std::string::npos)
      << err;
  EXPECT_NE(err.find(kBwrapRefusal), std::string::npos) << "bwrap's own reason:\n" << err;
  EXPECT_NE(err.find("kernel.unprivileged_userns_clone"), std::string::npos) << err;
  EXPECT_NE(err.find("user.max_user_namespaces"), std::string::npos) << err;
  EXPECT_NE(err.find("apt-get install bubblewrap"), std::string::npos) << err;
  ExpectFixes(err);
  EXPECT_EQ(err.find("RunCommand disabled"), std::string::npos) << "no silent downgrade:\n" << err;
}

TEST_F(SandboxStartupTest, WorkerRefusesToStartToo) {
  WriteConfig(1);
  auto worker = Start("worker", {{"PATH", fake_path_}});
  auto code = worker->Wait(30s);
  ASSERT_TRUE(code.has_value()) << worker->Stderr();
  EXPECT_EQ(*code, 1) << worker->Stderr();
  EXPECT_NE(worker->Stderr().find("RunCommand's sandbox (bubblewrap) cannot run here"),
            std::string::npos)
      << worker->Stderr();
  ExpectFixes(worker->Stderr());
}

TEST_F(SandboxStartupTest, NotRequiredStartsWithRunCommandOffAndSaysSo) {
  // Once through the file, once through the variable.
  for (const bool by_env : {false, true}) {
    SCOPED_TRACE(by_env ? "MAESTRO_SANDBOX_REQUIRED=false" : "sandbox.required: false");
    WriteConfig(2, by_env ? "" : "sandbox:\n  required: false\n");
    std::map<std::string, std::string> env = {{"PATH", fake_path_}};
    if (by_env) env["MAESTRO_SANDBOX_REQUIRED"] = "false";
    auto serve = Start("serve", env);
    ASSERT_TRUE(Healthy(*serve)) << serve->Stderr();
    serve->Signal(SIGTERM);
    ASSERT_EQ(serve->Wait(30s).value_or(-1), 0) << serve->Stderr();
    const std::string err = serve->Stderr();
    EXPECT_NE(err.find("RunCommand disabled: bubblewrap cannot create namespaces here"),
              std::string::npos)
        << err;
    EXPECT_NE(err.find("(sandbox.required: false; docs/operations.md#the-sandbox-in-a-container)"),
              std::string::npos)
        << err;
    EXPECT_EQ(err.find("cannot run here"), std::string::npos) << err;
  }
}

TEST_F(SandboxStartupTest, ApiOnlyServeChecksNothing) {
  // --workers 0 (the scale-out API) and workers: 0 in the file: no job runs
  // here, so a broken bubblewrap (and a missing Chromium) does not matter.
  WriteConfig(0, "browser:\n  chromium: " + dir_.File("no-such-chromium") + "\n");
  for (const bool by_flag : {false, true}) {
    SCOPED_TRACE(by_flag ? "--workers 0" : "workers: 0");
    if (by_flag) {
      WriteConfig(3, "browser:\n  chromium: " + dir_.File("no-such-chromium") + "\n");
    }
    auto serve =
        Start("serve", {{"PATH", fake_path_}},
              by_flag ? std::vector<std::string>{"--workers", "0"} : std::vector<std::string>{});
    ASSERT_TRUE(Healthy(*serve)) << serve->Stderr();
    serve->Signal(SIGTERM);
    ASSERT_EQ(serve->Wait(30s).value_or(-1), 0) << serve->Stderr();
    EXPECT_EQ(serve->Stderr().find("cannot run here"), std::string::npos) << serve->Stderr();
  }
}

TEST_F(SandboxStartupTest, MissingChromiumStopsTheStartNamingIt) {
  const std::string chromium = dir_.File("no-such-chromium");
  for (const std::string sandbox : {"bwrap", "none"}) {
    SCOPED_TRACE("browser.sandbox: " + sandbox);
    WriteConfig(1, "browser:\n  chromium: " + chromium + "\n  sandbox: " + sandbox + "\n");
    auto serve = Start("serve");  // the real bwrap: RunCommand's check passes
    const std::string err = ExpectRefused(*serve);
    EXPECT_NE(err.find("BrowseWeb's Chromium cannot run here"), std::string::npos) << err;
    EXPECT_NE(err.find(chromium), std::string::npos) << "names the command:\n" << err;
    EXPECT_NE(err.find("browser.sandbox: " + sandbox), std::string::npos) << err;
    EXPECT_NE(err.find("install chromium and socat"), std::string::npos) << err;
    ExpectFixes(err);
  }
}

TEST_F(SandboxStartupTest, ChromiumThatFailsInItsSandboxStopsTheStart) {
  // Installed, but it dies at once (a broken install, a refused namespace
  // inside): its exit and words are in the message. Under /var/tmp: the
  // browser's sandbox has its own /tmp, where the test's dir is not.
  std::string tmpl = "/var/tmp/maestro-chromium-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup{tmpl};
  const std::string chromium = tmpl + "/chromium";
  testing::WriteFile(chromium,
                     "#!/bin/sh\necho 'chromium: cannot open shared object' >&2\nexit 3\n");
  chmod(chromium.c_str(), 0755);
  for (const std::string sandbox : {"bwrap", "none"}) {
    SCOPED_TRACE("browser.sandbox: " + sandbox);
    WriteConfig(1, "browser:\n  chromium: " + chromium + "\n  sandbox: " + sandbox + "\n");
    auto serve = Start("serve");
    const std::string err = ExpectRefused(*serve);
    EXPECT_NE(err.find("BrowseWeb's Chromium cannot run here: '" + chromium + " --version'"),
              std::string::npos)
        << err;
    EXPECT_NE(err.find("exited 3: chromium: cannot open shared object"), std::string::npos) << err;
    EXPECT_NE(err.find("(browser.sandbox: " + sandbox + ")"), std::string::npos) << err;
  }
}

TEST_F(SandboxStartupTest, ChromiumNotRequiredStartsWithBrowseWebOff) {
  WriteConfig(1, "sandbox:\n  required: false\nbrowser:\n  chromium: " +
                     dir_.File("no-such-chromium") + "\n");
  auto serve = Start("serve");
  ASSERT_TRUE(Healthy(*serve)) << serve->Stderr();
  serve->Signal(SIGTERM);
  ASSERT_EQ(serve->Wait(30s).value_or(-1), 0) << serve->Stderr();
  EXPECT_NE(serve->Stderr().find("BrowseWeb disabled: "), std::string::npos) << serve->Stderr();
  EXPECT_NE(serve->Stderr().find("no-such-chromium"), std::string::npos) << serve->Stderr();
}

TEST_F(SandboxStartupTest, WorkingSandboxAndChromiumStart) {
  // The check passes on a machine that has both (CI's, after
  // scripts/setup.sh): the default, required, starts.
  WriteConfig(1, "browser:\n  allowed_hosts: [\"127.0.0.1\"]\n");
  auto serve = Start("serve");
  ASSERT_TRUE(Healthy(*serve)) << serve->Stderr();
  serve->Signal(SIGTERM);
  ASSERT_EQ(serve->Wait(30s).value_or(-1), 0) << serve->Stderr();
  EXPECT_EQ(serve->Stderr().find("disabled"), std::string::npos) << serve->Stderr();
}

TEST_F(SandboxStartupTest, BadRequiredValueIsAConfigErrorWithItsPosition) {
  WriteConfig(1, "sandbox:\n  required: maybe\n");
  auto serve = Start("serve");
  auto code = serve->Wait(30s);
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 2) << serve->Stderr();
  // maestro.yaml line 8 (after workers, log, llm and `sandbox:`), column 3.
  EXPECT_NE(serve->Stderr().find(dir_.File("maestro.yaml") +
                                 ":8:3: sandbox.required: must be one of true|false, got 'maybe'"),
            std::string::npos)
      << serve->Stderr();

  WriteConfig(1, "sandbox:\n  limitz: {}\n");
  auto typo = Start("serve");
  ASSERT_EQ(typo->Wait(30s).value_or(-1), 2) << typo->Stderr();
  EXPECT_NE(typo->Stderr().find(":8:3: unknown key 'sandbox.limitz'; did you mean "
                                "'sandbox.limits'?"),
            std::string::npos)
      << typo->Stderr();

  WriteConfig(1);
  auto by_env = Start("serve", {{"MAESTRO_SANDBOX_REQUIRED", "maybe"}});
  ASSERT_EQ(by_env->Wait(30s).value_or(-1), 2) << by_env->Stderr();
  EXPECT_NE(by_env->Stderr().find("MAESTRO_SANDBOX_REQUIRED: must be one of true|false"),
            std::string::npos)
      << by_env->Stderr();
}

// The real binary in a real container (podman, when it runs here): the
// settings docs/operations.md "The sandbox in a container" gives are the ones
// that work. No image is needed: the container's root is a directory of
// mount points with the host's /usr bound read-only (this build's binary runs
// on its own libraries), as a non-root user, on no network.
class SandboxContainerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto [found, where] =
        testing::RunCommand({"/bin/sh", "-c", "command -v podman"}, {}, dir_.File("which"));
    if (found != 0) GTEST_SKIP() << "podman is not installed (scripts/setup.sh --for-containers)";
    podman_ = where.substr(0, where.find('\n'));  // Process spawns by path
    const std::string root = dir_.File("root");
    for (const char* d : {"usr", "etc", "tmp", "proc", "dev", "sys", "run", "cfg"}) {
      std::filesystem::create_directories(root + "/" + d);
    }
    for (const char* l : {"bin", "sbin", "lib", "lib64"}) {
      std::filesystem::create_symlink(std::string("usr/") + l, root + "/" + l);
    }
    testing::WriteFile(root + "/cfg/maestro.yaml",
                       "workers: 1\nllm:\n  base_url: http://127.0.0.1:9/v1\n  model: fake\n");
    std::filesystem::permissions(root, std::filesystem::perms::all,
                                 std::filesystem::perm_options::add);
    // podman's --tmpfs takes the mode of the directory it covers.
    std::filesystem::permissions(root + "/tmp",
                                 std::filesystem::perms::all | std::filesystem::perms::sticky_bit);
    for (const char* d : {"cfg", "cfg/maestro.yaml"}) {
      std::filesystem::permissions(
          root + "/" + d, std::filesystem::perms::others_read | std::filesystem::perms::others_exec,
          std::filesystem::perm_options::add);
    }
    auto [code, out] = Run({}, "exit 0");
    if (code != 0) GTEST_SKIP() << "podman cannot run a container here:\n" << out;
  }

  // `podman run` of `script` (sh -c) with `opts`; {exit code, output}.
  std::pair<int, std::string> Run(const std::vector<std::string>& opts, const std::string& script,
                                  const std::vector<std::string>& env = {}) {
    const std::string bin_dir = std::filesystem::path(MAESTRO_BIN).parent_path().string();
    std::vector<std::string> argv = {
        podman_,  "run",       "--rm",    "--runtime",        "runc", "--network", "none",
        "--user", "1000:1000", "--tmpfs", "/tmp:rw,mode=1777"};
    // Explicit limits: the defaults cannot be raised on every host.
    for (const char* u : {"nofile=16384:16384", "nproc=16384:16384"}) {
      argv.insert(argv.end(), {"--ulimit", u});
    }
    for (const std::string& v : {std::string("/usr:/usr:ro"), bin_dir + ":" + bin_dir + ":ro"}) {
      argv.insert(argv.end(), {"-v", v});
    }
    std::vector<std::string> all_env = {"HOME=/tmp", "MAESTRO_DATA_DIR=/tmp/data",
                                        "MAESTRO_LISTEN=127.0.0.1:8080", "MAESTRO_ADMIN_TOKEN=tok"};
    all_env.insert(all_env.end(), env.begin(), env.end());
    for (const std::string& e : all_env) argv.insert(argv.end(), {"-e", e});
    argv.insert(argv.end(), opts.begin(), opts.end());
    argv.insert(argv.end(), {"--rootfs", dir_.File("root"), "/bin/sh", "-c", script});
    return testing::RunCommand(argv, {{"PATH", std::getenv("PATH") ? std::getenv("PATH") : ""}},
                               dir_.File("podman" + std::to_string(++runs_)));
  }

  // Starts serve, waits for its "listening" line (or its exit), stops it
  // with SIGTERM and prints its exit and its log.
  std::pair<int, std::string> Serve(const std::vector<std::string>& opts,
                                    const std::vector<std::string>& env = {}) {
    return Run(opts,
               std::string(MAESTRO_BIN) +
                   " --config /cfg/maestro.yaml serve >/tmp/log 2>&1 & p=$!\n"
                   "i=0; until grep -q 'listening on' /tmp/log || ! kill -0 $p 2>/dev/null || "
                   "[ $i -gt 300 ]; do sleep 0.1; i=$((i+1)); done\n"
                   "kill -TERM $p 2>/dev/null; wait $p; echo \"serve exit $?\"; cat /tmp/log\n",
               env);
  }

  testing::TempDir dir_;
  std::string podman_;
  int runs_ = 0;
};

TEST_F(SandboxContainerTest, WithoutTheProcSettingServeRefusesNamingTheFix) {
  // seccomp and AppArmor relaxed, /proc still masked: bubblewrap cannot
  // mount the sandbox's /proc.
  auto [code, out] =
      Serve({"--security-opt", "seccomp=unconfined", "--security-opt", "apparmor=unconfined"});
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("serve exit 1"), std::string::npos) << out;
  EXPECT_NE(out.find("RunCommand's sandbox (bubblewrap) cannot run here"), std::string::npos)
      << out;
  EXPECT_NE(out.find("Can't mount proc"), std::string::npos) << "bwrap's own words:\n" << out;
  EXPECT_NE(out.find("docs/operations.md#the-sandbox-in-a-container"), std::string::npos) << out;
  EXPECT_EQ(out.find("listening on"), std::string::npos) << out;
}

TEST_F(SandboxContainerTest, TheDocumentedSettingStartsServeWithItsSandbox) {
  auto [code, out] = Serve({"--security-opt", "unmask=/proc/*"});
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("listening on"), std::string::npos) << out;
  EXPECT_NE(out.find("serve exit 0"), std::string::npos) << out;
  EXPECT_EQ(out.find("cannot run here"), std::string::npos) << out;
  EXPECT_EQ(out.find("RunCommand disabled"), std::string::npos) << out;
}

TEST_F(SandboxContainerTest, NotRequiredStartsWithoutTheSettingAndSaysRunCommandIsOff) {
  auto [code, out] = Serve({}, {"MAESTRO_SANDBOX_REQUIRED=false"});
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("listening on"), std::string::npos) << out;
  EXPECT_NE(out.find("RunCommand disabled: bubblewrap cannot create namespaces here"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace maestro
