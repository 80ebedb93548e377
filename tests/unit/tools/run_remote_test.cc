// RunRemote against Debian's OpenSSH server started by the test on
// 127.0.0.1 (support/sshd_server.h): a command runs on the allowed host with
// its output and exit code; a host not allowed — in any spelling — is refused
// before any process starts; a wrong pinned host key fails closed; the
// private key reaches no result and its call directory is gone after the
// call; huge output is capped; a hostile command reaches the server as the
// one string it was.
#include "tools/run_remote.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "context/ledger.h"
#include "core/ssh_host.h"
#include "support/fault_injection_env.h"
#include "support/sshd_server.h"
#include "support/temp_dir.h"
#include "tools/dispatcher.h"
#include "tools/tool_names.h"
#include "workspace/workspace.h"

namespace maestro::tools {
namespace {

namespace fs = std::filesystem;
using testing::TestSshd;

bool Has(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

// The base64 body lines of a private key: what must never show anywhere.
std::vector<std::string> KeyLines(const std::string& key) {
  std::vector<std::string> out;
  std::istringstream in(key);
  for (std::string line; std::getline(in, line);) {
    if (line.size() >= 16 && line.rfind("-----", 0) != 0) out.push_back(line);
  }
  return out;
}

class RunRemoteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_.File("sshd"));
    fs::create_directories(dir_.File("calls"));
    sshd_ = std::make_unique<TestSshd>(dir_.File("sshd"));
    ASSERT_EQ(sshd_->error(), "");
    // A recording ssh: notes each start and the call directory's modes,
    // then runs the real client with the same arguments.
    testing::WriteFile(dir_.File("ssh-wrapper"),
                       "#!/bin/sh\necho started >> " + dir_.File("ssh-starts") +
                           "\nstat -c '%a' . id known_hosts >> " + dir_.File("ssh-modes") +
                           "\nexec /usr/bin/ssh \"$@\"\n");
    fs::permissions(dir_.File("ssh-wrapper"), fs::perms::owner_all);
  }

  SshHostConfig Box(const std::string& pin = "") const {
    SshHostConfig h;
    h.name = "box";
    h.host = "127.0.0.1";
    h.port = sshd_->port();
    h.user = sshd_->user();
    h.key = "$BOX_KEY";
    h.known_hosts = {pin.empty() ? sshd_->HostKeyLine() : pin};
    return h;
  }

  // Registers RunRemote for `hosts` with the secrets of this test.
  void Register(std::vector<SshHostConfig> hosts) {
    RunRemoteOptions o;
    o.hosts = std::move(hosts);
    o.temp_parent = dir_.File("calls");
    o.secrets = [this](const std::string& name) -> std::optional<std::string> {
      if (name == "BOX_KEY") return sshd_->ClientKey();
      if (name == "RECORDER_KEY") return sshd_->RecorderKey();
      return std::nullopt;
    };
    o.ssh_program = dir_.File("ssh-wrapper");
    ASSERT_TRUE(RegisterRunRemote(registry_, std::move(o)).ok());
  }

  ToolResult Call(const Json& args, Env* env = Env::Default()) {
    ToolContext ctx;
    ctx.env = env;
    ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    return (*registry_.Handler(kRunRemote))(args, ctx);
  }
  int SshStarts() const {
    std::ifstream in(dir_.File("ssh-starts"));
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }
  bool CallDirsLeft() const { return !fs::is_empty(dir_.File("calls")); }
  // ESTABLISHED connections to the server once a closing one had its moment.
  int EstablishedTcpAfterSettle() const {
    for (int i = 0; i < 100 && testing::EstablishedTcp(sshd_->port()) > 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return testing::EstablishedTcp(sshd_->port());
  }

  testing::TempDir dir_;
  std::unique_ptr<TestSshd> sshd_;
  ToolRegistry registry_;
};

TEST_F(RunRemoteTest, RunsTheCommandOnTheAllowedHostWithItsOutputAndExitCode) {
  Register({Box()});
  ToolResult r =
      Call({{"host", "box"}, {"command", "echo remote-hello; echo to-stderr >&2; exit 7"}});
  EXPECT_FALSE(r.is_error) << r.content;
  EXPECT_EQ(r.content.rfind("[exit code 7]\n", 0), 0u) << r.content;
  EXPECT_TRUE(Has(r.content, "remote-hello")) << r.content;
  EXPECT_TRUE(Has(r.content, "to-stderr")) << r.content;
  ToolResult ok = Call({{"host", "box"}, {"command", "echo $((6 * 7))"}});
  EXPECT_EQ(ok.content, "[exit code 0]\n42\n");
  EXPECT_EQ(sshd_->Logins(), 2);
  // The key lived 0600 in a 0700 directory, and only during the call.
  EXPECT_EQ(testing::ReadWholeFile(dir_.File("ssh-modes")), "700\n600\n600\n700\n600\n600\n");
  EXPECT_FALSE(CallDirsLeft());
  EXPECT_EQ(EstablishedTcpAfterSettle(), 0);
}

TEST_F(RunRemoteTest, AHostNotAllowedInAnySpellingIsRefusedBeforeAnyProcessStarts) {
  Register({Box()});
  const int connections = sshd_->Connections();
  for (const std::string& host : std::vector<std::string>{
           "other", "127.0.0.1", "box ", " box", "BOX", "box\n", "root@box", "box:22", "box.",
           "-oProxyCommand=touch " + dir_.File("pwned"), "-o", "", std::string("box\0x", 5)}) {
    ToolResult r = Call({{"host", host}, {"command", "echo should-not-run"}});
    EXPECT_TRUE(r.is_error) << host;
    EXPECT_TRUE(Has(r.content, "is not one this space allows (allowed: box)")) << r.content;
    EXPECT_TRUE(Has(r.content, "nothing was run")) << r.content;
  }
  // Through the dispatcher the schema refuses first (host is an enum).
  Dispatcher d(&registry_, ToolAuthorizer(nullptr));
  ToolScope ctx;
  ctx.policy.allowed_tools = {kRunRemote};
  auto out = d.Run({{"c1", kRunRemote, {{"host", "-oProxyCommand=x"}, {"command", "id"}}}}, ctx);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].is_error) << out[0].content;
  EXPECT_TRUE(Has(out[0].content, "invalid arguments for RunRemote")) << out[0].content;
  EXPECT_EQ(SshStarts(), 0) << "no ssh process was started";
  EXPECT_EQ(sshd_->Connections(), connections) << "no connection was made";
  EXPECT_FALSE(fs::exists(dir_.File("pwned")));
  EXPECT_FALSE(CallDirsLeft());
}

TEST_F(RunRemoteTest, AWrongPinnedHostKeyFailsClosed) {
  Register({Box(sshd_->StrangerKeyLine())});
  const std::string marker = dir_.File("ran");
  ToolResult r = Call({{"host", "box"}, {"command", "touch " + marker}});
  EXPECT_TRUE(r.is_error) << r.content;
  EXPECT_TRUE(Has(r.content, "does not match the key pinned")) << r.content;
  EXPECT_TRUE(Has(r.content, "[exit code 255]")) << r.content;
  EXPECT_EQ(SshStarts(), 1);
  EXPECT_FALSE(fs::exists(marker)) << "nothing ran on the host";
  EXPECT_EQ(sshd_->Logins(), 0) << "the client never authenticated:\n" << sshd_->Log();
  EXPECT_FALSE(Has(sshd_->Log(), "Postponed publickey")) << "the key was never offered";
  EXPECT_EQ(EstablishedTcpAfterSettle(), 0) << "no connection kept";
  EXPECT_FALSE(CallDirsLeft());
}

TEST_F(RunRemoteTest, TheKeyIsInNoResultEvenWhenTheHostReadsItsFile) {
  Register({Box()});
  // The host is this machine: a command may try to read the call's key.
  ToolResult r = Call(
      {{"host", "box"}, {"command", "cat " + dir_.File("calls") + "/maestro-ssh-*/id; echo done"}});
  EXPECT_TRUE(Has(r.content, "[redacted]")) << r.content;
  EXPECT_TRUE(Has(r.content, "done")) << r.content;
  for (const std::string& line : KeyLines(sshd_->ClientKey())) {
    EXPECT_FALSE(Has(r.content, line)) << "key text in the result: " << r.content;
  }
  EXPECT_FALSE(CallDirsLeft());
}

TEST_F(RunRemoteTest, HugeOutputIsCappedKeepingHeadAndTail) {
  Register({Box()});
  ToolResult r = Call({{"host", "box"},
                       {"command",
                        "echo FIRST; head -c 5000000 /dev/zero | tr '\\0' x; echo; "
                        "echo LAST"}});
  EXPECT_FALSE(r.is_error) << r.content.substr(0, 200);
  EXPECT_LE(r.content.size(), 40u * 1024) << "5 MB of output cut to the cap";
  EXPECT_EQ(r.content.rfind("[exit code 0]\nFIRST", 0), 0u) << r.content.substr(0, 100);
  EXPECT_TRUE(Has(r.content, "LAST"));
}

TEST_F(RunRemoteTest, AHostileCommandReachesTheServerAsTheOneStringItWas) {
  SshHostConfig rec = Box();
  rec.name = "recorder";
  rec.key = "$RECORDER_KEY";
  Register({rec});
  const std::string hostile = "-oProxyCommand=touch " + dir_.File("pwned1") + " $(touch " +
                              dir_.File("pwned2") + ") `touch " + dir_.File("pwned3") +
                              "` \"a  b\" 'c' ; -- \\ \n second line";
  ToolResult r = Call({{"host", "recorder"}, {"command", hostile}});
  EXPECT_EQ(r.content.rfind("[exit code 0]", 0), 0u) << r.content;
  EXPECT_EQ(testing::ReadWholeFile(sshd_->recorded_command_file()), hostile);
  for (const char* f : {"pwned1", "pwned2", "pwned3"}) {
    EXPECT_FALSE(fs::exists(dir_.File(f))) << f << ": no shell ran the command";
  }
}

TEST_F(RunRemoteTest, ATimeoutKillsSshAndLeavesNoConnection) {
  Register({Box()});
  const auto start = std::chrono::steady_clock::now();
  ToolResult r =
      Call({{"host", "box"}, {"command", "echo started; sleep 30"}, {"timeout_seconds", 1}});
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(Has(r.content, "[timed out after 1000 ms: ssh was killed]")) << r.content;
  EXPECT_LT(took, std::chrono::seconds(10));
  EXPECT_EQ(EstablishedTcpAfterSettle(), 0) << "the killed client's connection is gone";
  EXPECT_FALSE(CallDirsLeft());
}

TEST_F(RunRemoteTest, AKeyThatCannotBeWrittenRunsNothingAndLeavesNoDirectory) {
  Register({Box()});
  for (int op : {1, 2}) {  // the key's write, the known_hosts write
    testing::FaultInjectionEnv env;
    env.FailFromOp(op);
    ToolResult r = Call({{"host", "box"}, {"command", "echo hi"}}, &env);
    EXPECT_TRUE(r.is_error) << op << r.content;
    EXPECT_TRUE(Has(r.content, "nothing was run")) << r.content;
    EXPECT_FALSE(CallDirsLeft()) << op;
  }
  EXPECT_EQ(SshStarts(), 0);
  EXPECT_EQ(sshd_->Connections(), 0);
}

TEST_F(RunRemoteTest, AnUnsetKeyIsAnErrorNamingTheVariableAndNothingRuns) {
  SshHostConfig h = Box();
  h.key = "$NOT_SET_ANYWHERE";
  Register({h});
  ToolResult r = Call({{"host", "box"}, {"command", "echo hi"}});
  EXPECT_TRUE(r.is_error);
  EXPECT_TRUE(Has(r.content, "NOT_SET_ANYWHERE")) << r.content;
  EXPECT_EQ(SshStarts(), 0);
}

TEST_F(RunRemoteTest, AKeyFileWorksAndTheSchemaListsTheHosts) {
  SshHostConfig h = Box();
  h.key = sshd_->ClientKeyPath();
  SshHostConfig second = Box();
  second.name = "box-two";
  Register({h, second});
  const ToolSpec* spec = registry_.Find(kRunRemote);
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->parameters["properties"]["host"]["enum"], Json::array({"box", "box-two"}));
  EXPECT_EQ(Call({{"host", "box"}, {"command", "echo from-file-key"}}).content,
            "[exit code 0]\nfrom-file-key\n");
}

TEST(RunRemoteRegistration, RefusesHostsThatBreakTheRules) {
  SshHostConfig good;
  good.name = "h";
  good.host = "example.org";
  good.user = "deploy";
  good.key = "$K";
  good.known_hosts = {
      "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILD5UimFcEDrqnfMcQj+OeRH3fS9D6VTpGXFP92uB0um"};
  ASSERT_TRUE(ValidateSshHost(good, "ssh[0]").ok()) << ValidateSshHost(good, "ssh[0]").ToString();
  for (const std::string host : {"-oProxyCommand=x", "user@host", "host:22", "[::1]", "127.1",
                                 "0177.0.0.1", "127.000.0.1", "a b", "fe80::1%eth0", "-", ""}) {
    SshHostConfig h = good;
    h.host = host;
    ToolRegistry r;
    RunRemoteOptions o;
    o.hosts = {h};
    Status s = RegisterRunRemote(r, o);
    EXPECT_FALSE(s.ok()) << host;
    EXPECT_EQ(s.field(), "ssh[0].host") << host << s.ToString();
  }
  ToolRegistry none;
  EXPECT_FALSE(RegisterRunRemote(none, {}).ok());
}

TEST(RunRemoteSpace, ASpaceWithSshOffersRunRemoteAndOneWithoutDoesNot) {
  SpaceConfig with;
  with.name = "ops";
  with.path = "/srv/ops";
  SshHostConfig h;
  h.name = h.host = "example.org";
  h.user = "deploy";
  h.key = "$K";
  h.known_hosts = {
      "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILD5UimFcEDrqnfMcQj+OeRH3fS9D6VTpGXFP92uB0um"};
  with.ssh = {h};
  auto s = SpaceFromConfig(with);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(s->policy.allowed_tools.count(kRunRemote));
  EXPECT_EQ(s->policy.ssh_hosts.size(), 1u);
  SpaceConfig without = with;
  without.ssh.clear();
  auto n = SpaceFromConfig(without);
  ASSERT_TRUE(n.ok());
  EXPECT_FALSE(n->policy.allowed_tools.count(kRunRemote));
  without.tools = {"ReadFile", "RunRemote"};
  auto listed = SpaceFromConfig(without);
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.status().field(), "spaces.ops.tools");
}

}  // namespace
}  // namespace maestro::tools
