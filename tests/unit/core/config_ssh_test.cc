// `spaces.<name>.ssh`: RunRemote's hosts are read with their pinned keys, and
// every malformed or dangerous entry stops the start naming file:line:col and
// the key — an option as a host, a spelling trick, a key pasted in the
// config, a key file inside the space, a pin that is not a host key.
#include <gtest/gtest.h>

#include <fstream>
#include <vector>

#include "core/config.h"
#include "core/ssh_host.h"
#include "support/temp_dir.h"

namespace maestro {
namespace {

// A real ed25519 public key (a pin's shape; no server has it).
constexpr char kPin[] =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILD5UimFcEDrqnfMcQj+OeRH3fS9D6VTpGXFP92uB0um";

std::string SshConfigFile(const testing::TempDir& dir, const std::string& text) {
  std::ofstream(dir.File("maestro.yaml")) << text;
  return dir.File("maestro.yaml");
}

std::string Space(const std::string& entry) {
  return "spaces:\n  ops:\n    path: /srv/ops\n    ssh:\n" + entry;
}

TEST(ConfigSshTest, HostsAreReadWithTheirPinsAndDefaults) {
  testing::TempDir dir;
  auto cfg =
      LoadConfig(SshConfigFile(dir, Space("      - host: build.example.org\n"
                                          "        user: deploy\n"
                                          "        key: $OPS_SSH_KEY\n"
                                          "        known_hosts: |\n"
                                          "          # ssh-keyscan -p 2222 build.example.org\n"
                                          "          [build.example.org]:2222 " +
                                          std::string(kPin) +
                                          " comment\n"
                                          "        port: 2222\n"
                                          "      - name: db\n"
                                          "        host: 10.0.0.5\n"
                                          "        user: postgres\n"
                                          "        key: /etc/maestro/db_key\n"
                                          "        known_hosts: [\"" +
                                          std::string(kPin) + "\"]\n")),
                 {});
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  const auto& ssh = cfg->spaces.at("ops").ssh;
  ASSERT_EQ(ssh.size(), 2u);
  EXPECT_EQ(ssh[0].name, "build.example.org");
  EXPECT_EQ(ssh[0].port, 2222);
  EXPECT_EQ(ssh[0].user, "deploy");
  EXPECT_EQ(ssh[0].key, "$OPS_SSH_KEY");
  EXPECT_EQ(ssh[0].known_hosts, std::vector<std::string>{kPin});
  EXPECT_EQ(SshKnownHostsPattern(ssh[0]), "[build.example.org]:2222");
  EXPECT_EQ(ssh[1].name, "db");
  EXPECT_EQ(ssh[1].port, 22);
  EXPECT_EQ(SshKnownHostsPattern(ssh[1]), "10.0.0.5");
  EXPECT_TRUE(cfg->spaces.at("ops").tools.empty());
}

TEST(ConfigSshTest, BadEntriesNameFileLineColAndTheKey) {
  testing::TempDir dir;
  const std::string pin = std::string("        known_hosts: \"") + kPin + "\"\n";
  const std::string rest = "        user: u\n        key: $K\n" + pin;
  struct Case {
    std::string entry;
    std::string field;
  };
  for (const Case& c : std::vector<Case>{
           {"      - host: \"-oProxyCommand=touch /tmp/x\"\n" + rest, "spaces.ops.ssh[0].host"},
           {"      - host: root@box\n" + rest, "spaces.ops.ssh[0].host"},
           {"      - host: box:22\n" + rest, "spaces.ops.ssh[0].host"},
           {"      - host: 127.1\n" + rest, "spaces.ops.ssh[0].host"},
           {"      - host: \"box \"\n" + rest, "spaces.ops.ssh[0].host"},
           {"      - host: box\n        port: 0\n" + rest, "spaces.ops.ssh[0].port"},
           {"      - host: box\n        port: 70000\n" + rest, "spaces.ops.ssh[0].port"},
           {"      - host: box\n        user: \"-l root\"\n        key: $K\n" + pin,
            "spaces.ops.ssh[0].user"},
           {"      - host: box\n        user: u\n        key: \"-----BEGIN OPENSSH PRIVATE "
            "KEY-----\"\n" +
                pin,
            "spaces.ops.ssh[0].key"},
           {"      - host: box\n        user: u\n        key: keys/id\n" + pin,
            "spaces.ops.ssh[0].key"},
           {"      - host: box\n        user: u\n        key: /srv/ops/.ssh/id\n" + pin,
            "spaces.ops.ssh[0].key"},
           {"      - host: box\n        user: u\n        key: $K\n",
            "spaces.ops.ssh[0].known_hosts"},
           {"      - host: box\n        user: u\n        key: $K\n        known_hosts: \"not a "
            "key\"\n",
            "spaces.ops.ssh[0].known_hosts"},
           {"      - host: box\n        user: u\n        key: $K\n        known_hosts: \"@cert-"
            "authority * " +
                std::string(kPin) + "\"\n",
            "spaces.ops.ssh[0].known_hosts"},
           {"      - host: box\n        user: u\n        key: $K\n        known_hosts: "
            "\"ssh-rsa " +
                std::string(kPin).substr(12) + "\"\n",
            "spaces.ops.ssh[0].known_hosts"},
           {"      - user: u\n        key: $K\n" + pin, "spaces.ops.ssh[0].host"},
           {"      - host: box\n        key: $K\n" + pin, "spaces.ops.ssh[0].user"},
           {"      - host: box\n        hots: x\n" + rest, "spaces.ops.ssh[0].hots"},
           {"      - host: box\n" + rest + "      - host: box\n" + rest, "spaces.ops.ssh[1].name"},
           {"      host: box\n", "spaces.ops.ssh"},
       }) {
    auto cfg = LoadConfig(SshConfigFile(dir, Space(c.entry)), {});
    ASSERT_FALSE(cfg.ok()) << c.entry;
    EXPECT_EQ(cfg.status().field(), c.field) << c.entry << cfg.status().message();
    EXPECT_NE(cfg.status().message().find("maestro.yaml:"), std::string::npos)
        << "names file:line:col: " << cfg.status().message();
  }
  auto typo =
      LoadConfig(SshConfigFile(dir, Space("      - host: box\n        hots: x\n" + rest)), {});
  EXPECT_NE(typo.status().message().find("did you mean 'host'"), std::string::npos)
      << typo.status().message();
  auto pasted = LoadConfig(
      SshConfigFile(dir, Space("      - host: box\n        user: u\n        key: \"-----BEGIN "
                               "OPENSSH PRIVATE KEY-----\"\n" +
                               pin)),
      {});
  EXPECT_EQ(pasted.status().message().find("BEGIN"), std::string::npos)
      << "an error never echoes a pasted key: " << pasted.status().message();
}

TEST(ConfigSshTest, TheHelpListsTheKey) {
  const std::string help = SettingsHelp();
  EXPECT_NE(help.find("spaces.<name>.ssh"), std::string::npos) << help;
  EXPECT_NE(help.find("known_hosts"), std::string::npos) << help;
}

TEST(ConfigSshTest, HostNamesAcceptOnlyOneSpelling) {
  for (const char* ok : {"example.org", "a-b.example.org", "10.0.0.5", "127.0.0.1", "::1",
                         "2001:db8::1", "localhost", "Box1"}) {
    EXPECT_TRUE(ValidSshHostName(ok)) << ok;
  }
  for (const char* bad : {"",
                          "-x",
                          "-oProxyCommand=x",
                          "a..b",
                          ".a",
                          "a.",
                          "-a.b",
                          "a-.b",
                          "user@h",
                          "h:22",
                          "[::1]",
                          "fe80::1%eth0",
                          "127.1",
                          "0177.0.0.1",
                          "127.000.0.1",
                          "0x7f.0.0.1",
                          "1.2.3.4.5",
                          "h h",
                          "h\n",
                          "h\t",
                          "h/x",
                          "exa_mple.org",
                          "ｅxample.org"}) {
    EXPECT_FALSE(ValidSshHostName(bad)) << bad;
  }
}

}  // namespace
}  // namespace maestro
