// The `mcp_servers` config section and the exposed tool names (the parts of
// the engine adapter that need no server; the servers themselves are
// exercised in tests/integration/api_engine/mcp_engine_test.cc), and the
// egress policy in front of a Streamable-HTTP server's URL.
#include "mcp/mcp_tools.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <thread>

namespace maestro::mcp {
namespace {

TEST(McpToolsTest, ServersParseWithTheirPolicy) {
  Json section = Json::parse(R"({
    "fs": {"command": "/usr/bin/node", "args": ["srv.js", 8080, "{workspace}"],
           "readonly_paths": ["/opt/mcp"], "tools_deny": ["write_file"], "approval": "once"},
    "remote": {"url": "https://mcp.example/mcp", "bearer_env": "REMOTE_TOKEN", "required": true,
               "approval": "always", "timeout_ms": 5000}
  })");
  auto servers = ServersFromConfig(section, "maestro.yaml:3:1");
  ASSERT_TRUE(servers.ok()) << servers.status().ToString();
  const ServerConfig& fs = servers->at("fs");
  EXPECT_EQ(fs.command,
            (std::vector<std::string>{"/usr/bin/node", "srv.js", "8080", "{workspace}"}));
  EXPECT_EQ(fs.approval, Approval::kOnce);
  EXPECT_EQ(fs.tools_deny, std::vector<std::string>{"write_file"});
  const ServerConfig& remote = servers->at("remote");
  EXPECT_TRUE(remote.required);
  EXPECT_EQ(remote.approval, Approval::kAlways);
  EXPECT_EQ(remote.timeout_ms, 5000);
  EXPECT_EQ(remote.bearer_env, "REMOTE_TOKEN");
}

TEST(McpToolsTest, BadServersNameTheKey) {
  struct Case {
    const char* json;
    const char* field;
  } const cases[] = {
      {R"({"a": {"command": "x", "url": "http://h/mcp"}})", "mcp_servers.a"},
      {R"({"a": {}})", "mcp_servers.a"},
      {R"({"a": {"command": "x", "aproval": "once"}})", "mcp_servers.a.aproval"},
      {R"({"a": {"command": "x", "approval": "sometimes"}})", "mcp_servers.a.approval"},
      {R"({"a b": {"command": "x"}})", "mcp_servers.a b"},
      {R"({"a": {"command": "x", "required": "yes"}})", "mcp_servers.a.required"},
  };
  for (const auto& c : cases) {
    auto servers = ServersFromConfig(Json::parse(c.json), "m.yaml:1:1");
    ASSERT_FALSE(servers.ok()) << c.json;
    EXPECT_EQ(servers.status().field(), c.field) << servers.status().ToString();
    EXPECT_NE(servers.status().message().find("m.yaml:1:1"), std::string::npos);
  }
  auto typo = ServersFromConfig(Json::parse(R"({"a": {"command": "x", "aproval": "once"}})"), "m");
  EXPECT_NE(typo.status().message().find("did you mean 'approval'"), std::string::npos)
      << typo.status().message();
}

TEST(McpToolsTest, ExposedNamesAreSafeAndAtMost64Characters) {
  EXPECT_EQ(ExposedName("everything", "echo"), "mcp__everything__echo");
  EXPECT_EQ(ExposedName("fs", "read.text file"), "mcp__fs__read_text_file");
  const std::string long_tool(80, 'x');
  const std::string a = ExposedName("srv", long_tool);
  EXPECT_EQ(a.size(), 64u);
  EXPECT_EQ(a, ExposedName("srv", long_tool)) << "stable across jobs";
  EXPECT_NE(a, ExposedName("srv", long_tool + "y")) << "the hash tells long names apart";
}

// A configured HTTP server on loopback is never contacted under the
// default policy (the job's required server fails naming the refusal); the
// operator's allow-list lets the same server be tried.
TEST(McpToolsTest, AnHttpServerOnAnInternalAddressIsReachedOnlyWhenAllowed) {
  httplib::Server canary;
  std::atomic<int> requests{0};
  canary.Post("/mcp", [&](const httplib::Request&, httplib::Response& res) {
    ++requests;
    res.status = 500;
  });
  const int port = canary.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread serving([&] { canary.listen_after_bind(); });
  std::map<std::string, ServerConfig> servers;
  ServerConfig s;
  s.name = "internal";
  s.url = "http://127.1:" + std::to_string(port) + "/mcp";
  s.required = true;
  s.timeout_ms = 2'000;
  servers["internal"] = s;
  JobMcpOptions o;
  o.servers = &servers;
  auto refused = JobMcp::Open(o);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("egress"), std::string::npos)
      << refused.status().ToString();
  EXPECT_EQ(requests, 0);

  auto allow = EgressPolicy::WithAllowList({"127.0.0.1"});
  ASSERT_TRUE(allow.ok());
  servers["internal"].egress = std::make_shared<const EgressPolicy>(*allow);
  auto tried = JobMcp::Open(o);
  EXPECT_FALSE(tried.ok()) << "the canary is no MCP server";
  EXPECT_GE(requests, 1) << "allowed, the server was contacted";
  canary.stop();
  serving.join();
}

}  // namespace
}  // namespace maestro::mcp
