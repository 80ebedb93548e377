// mcp::Client against the real reference servers (tests/mcp/node_modules,
// pinned by tests/mcp/package-lock.json, installed by scripts/mcp_servers.sh):
// @modelcontextprotocol/server-everything over stdio and Streamable HTTP,
// server-filesystem and server-memory over stdio. What a job's MCP tools
// will meet: the handshake, tools/list, calls with text / structured /
// image / resource content, progress, cancellation, tool errors, ping,
// list_changed, and a server process that is gone after Close().
#include "mcp/mcp_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "support/process.h"
#include "support/temp_dir.h"

namespace maestro::mcp {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

const std::string kModules = MAESTRO_MCP_NODE_MODULES;
const std::string kNode = MAESTRO_NODE;
const std::string kEverything = kModules + "/@modelcontextprotocol/server-everything/dist/index.js";
const std::string kFilesystem = kModules + "/@modelcontextprotocol/server-filesystem/dist/index.js";
const std::string kMemory = kModules + "/@modelcontextprotocol/server-memory/dist/index.js";

#define REQUIRE_NODE(script)                                                       \
  do {                                                                             \
    if (access(kNode.c_str(), X_OK) != 0) GTEST_SKIP() << "node is not installed"; \
    if (!std::filesystem::exists(script)) {                                        \
      GTEST_SKIP() << script << " is missing: run scripts/mcp_servers.sh";         \
    }                                                                              \
  } while (0)

std::map<std::string, std::string> ServerEnv(const std::string& home) {
  const char* path = getenv("PATH");
  return {{"PATH", path ? path : "/usr/bin:/bin"}, {"HOME", home}};
}

Transport Stdio(std::vector<std::string> argv, const std::string& home) {
  Transport t;
  t.argv = std::move(argv);
  t.env = ServerEnv(home);
  return t;
}

ClientOptions Quick() {
  ClientOptions o;
  o.connect_timeout = 10s;
  o.request_timeout = 10s;
  return o;
}

std::unique_ptr<Client> MustConnect(const Transport& t, ClientOptions o = Quick()) {
  auto c = Client::Connect(t, std::move(o));
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(c).value() : nullptr;
}

const Tool* Find(const std::vector<Tool>& tools, const std::string& name) {
  for (const auto& t : tools) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

bool WaitFor(const std::function<bool()>& cond, std::chrono::milliseconds most) {
  for (auto end = Clock::now() + most; Clock::now() < end;) {
    if (cond()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return cond();
}

// Gone: no such process, or a zombie whose parent is not us (the group's
// background child, reparented to whoever reaps orphans here).
bool Gone(pid_t pid) {
  if (kill(pid, 0) != 0 && errno == ESRCH) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  size_t paren = all.rfind(')');
  return paren != std::string::npos && all.size() > paren + 2 && all[paren + 2] == 'Z';
}

pid_t ReadPid(const std::string& file) {
  pid_t pid = 0;
  WaitFor(
      [&] {
        std::ifstream in(file);
        return static_cast<bool>(in >> pid) && pid > 0;
      },
      5s);
  return pid;
}

// Checks shared by the stdio and HTTP runs of the everything server.
void ExpectEverythingBasics(Client& c) {
  EXPECT_EQ(c.protocol_version(), "2025-11-25");
  EXPECT_EQ(c.server_info().value("name", ""), "mcp-servers/everything");
  EXPECT_TRUE(c.server_capabilities().contains("tools"));

  auto tools = c.ListTools();
  ASSERT_TRUE(tools.ok()) << tools.status().ToString();
  const Tool* echo = Find(*tools, "echo");
  ASSERT_NE(echo, nullptr);
  EXPECT_EQ(echo->title, "Echo Tool");
  EXPECT_TRUE(echo->read_only);
  EXPECT_EQ(echo->input_schema["type"], "object");
  EXPECT_TRUE(echo->input_schema["properties"].contains("message"));
  EXPECT_TRUE(echo->output_schema.is_null());
  const Tool* structured = Find(*tools, "get-structured-content");
  ASSERT_NE(structured, nullptr);
  EXPECT_TRUE(structured->output_schema.is_object());
  EXPECT_NE(Find(*tools, "get-sum"), nullptr);
  EXPECT_NE(Find(*tools, "trigger-long-running-operation"), nullptr);
  const Tool* toggle = Find(*tools, "toggle-simulated-logging");
  ASSERT_NE(toggle, nullptr);
  EXPECT_FALSE(toggle->read_only);

  auto said = c.CallTool("echo", {{"message", "hi there"}}, {});
  ASSERT_TRUE(said.ok()) << said.status().ToString();
  EXPECT_FALSE(said->is_error);
  EXPECT_EQ(said->text, "Echo: hi there");
  EXPECT_TRUE(said->structured.is_null());

  auto sum = c.CallTool("get-sum", {{"a", 2}, {"b", 40}}, {});
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  EXPECT_NE(sum->text.find("is 42"), std::string::npos) << sum->text;

  EXPECT_TRUE(c.Ping().ok());
}

void ExpectProgress(Client& c) {
  std::mutex mu;
  std::vector<std::pair<double, std::optional<double>>> seen;
  CallOptions opts;
  opts.on_progress = [&](double p, std::optional<double> total, const std::string&) {
    std::lock_guard<std::mutex> lock(mu);
    seen.emplace_back(p, total);
  };
  auto r = c.CallTool("trigger-long-running-operation", {{"duration", 0.6}, {"steps", 3}}, opts);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NE(r->text.find("Long running operation completed"), std::string::npos) << r->text;
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].first, 1);
  EXPECT_EQ(seen[2].first, 3);
  EXPECT_EQ(seen[2].second, std::optional<double>(3));
}

void ExpectCancel(Client& c) {
  CancelToken token;
  CallOptions opts;
  opts.cancel = &token;
  std::thread canceller([&] {
    std::this_thread::sleep_for(300ms);
    token.Cancel(CancelToken::Reason::kUserCancel);
  });
  const auto start = Clock::now();
  auto r = c.CallTool("trigger-long-running-operation", {{"duration", 10}, {"steps", 10}}, opts);
  const auto took = Clock::now() - start;
  canceller.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled) << r.status().ToString();
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 500ms);  // 300 ms until the cancel, then at most one poll + the notification
  // The session goes on.
  auto after = c.CallTool("echo", {{"message", "still here"}}, {});
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(after->text, "Echo: still here");
}

TEST(McpEverythingStdio, HandshakeToolsCallsAndPing) {
  REQUIRE_NODE(kEverything);
  testing::TempDir home;
  auto c = MustConnect(Stdio({kNode, kEverything}, home.path()));
  ASSERT_NE(c, nullptr);
  ExpectEverythingBasics(*c);
}

TEST(McpEverythingStdio, StructuredImageAndResourceContent) {
  REQUIRE_NODE(kEverything);
  testing::TempDir home;
  auto c = MustConnect(Stdio({kNode, kEverything}, home.path()));
  ASSERT_NE(c, nullptr);

  auto weather = c->CallTool("get-structured-content", {{"location", "Chicago"}}, {});
  ASSERT_TRUE(weather.ok()) << weather.status().ToString();
  EXPECT_EQ(weather->structured["temperature"], 36);
  EXPECT_EQ(weather->structured["conditions"], "Light rain / drizzle");
  // The server also sends the JSON as a text block: that is what the model reads.
  EXPECT_EQ(Json::parse(weather->text), weather->structured);

  auto image = c->CallTool("get-tiny-image", Json::object(), {});
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  EXPECT_NE(image->text.find("Here's the image you requested:\n[image image/png, "),
            std::string::npos)
      << image->text;
  EXPECT_NE(image->text.find(" bytes]"), std::string::npos);
  EXPECT_EQ(image->content.size(), 3u);
  EXPECT_EQ(image->content[1]["type"], "image");

  auto links = c->CallTool("get-resource-links", {{"count", 2}}, {});
  ASSERT_TRUE(links.ok()) << links.status().ToString();
  EXPECT_NE(links->text.find("\n[resource demo://resource/dynamic/blob/1 Blob Resource 1]\n"
                             "[resource demo://resource/dynamic/text/2 Text Resource 2]"),
            std::string::npos)
      << links->text;

  auto embedded = c->CallTool("get-resource-reference", {{"resourceType", "Text"}}, {});
  ASSERT_TRUE(embedded.ok()) << embedded.status().ToString();
  ASSERT_EQ(embedded->content.size(), 3u);
  EXPECT_EQ(embedded->content[1]["type"], "resource");
  const std::string resource_text = embedded->content[1]["resource"].value("text", "");
  EXPECT_FALSE(resource_text.empty());
  EXPECT_NE(embedded->text.find(resource_text), std::string::npos) << embedded->text;
}

TEST(McpEverythingStdio, ProgressNotificationsReachTheCaller) {
  REQUIRE_NODE(kEverything);
  testing::TempDir home;
  auto c = MustConnect(Stdio({kNode, kEverything}, home.path()));
  ASSERT_NE(c, nullptr);
  ExpectProgress(*c);
}

TEST(McpEverythingStdio, CancelEndsALongCallAtOnce) {
  REQUIRE_NODE(kEverything);
  testing::TempDir home;
  auto c = MustConnect(Stdio({kNode, kEverything}, home.path()));
  ASSERT_NE(c, nullptr);
  ExpectCancel(*c);
}

TEST(McpEverythingStdio, AFailingToolIsAResultNotAnError) {
  REQUIRE_NODE(kEverything);
  testing::TempDir home;
  auto c = MustConnect(Stdio({kNode, kEverything}, home.path()));
  ASSERT_NE(c, nullptr);
  auto bad = c->CallTool("get-sum", {{"a", "two"}, {"b", 2}}, {});
  ASSERT_TRUE(bad.ok()) << bad.status().ToString();
  EXPECT_TRUE(bad->is_error);
  EXPECT_NE(bad->text.find("Input validation error"), std::string::npos) << bad->text;
  auto unknown = c->CallTool("no-such-tool", Json::object(), {});
  ASSERT_TRUE(unknown.ok()) << unknown.status().ToString();
  EXPECT_TRUE(unknown->is_error);
  EXPECT_NE(unknown->text.find("not found"), std::string::npos) << unknown->text;
  auto not_object = c->CallTool("echo", Json::array(), {});
  EXPECT_EQ(not_object.status().code(), StatusCode::kInvalidArgument);
}

TEST(McpEverythingStdio, ListChangedIsRecorded) {
  REQUIRE_NODE(kEverything);
  testing::TempDir home;
  // The server registers its client-dependent tools once it sees
  // notifications/initialized, and says so with tools/list_changed.
  auto c = MustConnect(Stdio({kNode, kEverything}, home.path()));
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(WaitFor([&] { return c->tools_changed(); }, 2s));
}

TEST(McpEverythingStdio, StderrLinesReachTheCallback) {
  REQUIRE_NODE(kEverything);
  testing::TempDir home;
  std::mutex mu;
  std::vector<std::string> lines;
  ClientOptions o = Quick();
  o.on_stderr = [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    lines.push_back(line);
  };
  auto c = MustConnect(Stdio({kNode, kEverything}, home.path()), o);
  ASSERT_NE(c, nullptr);
  c->Close();  // joins the reader: every line is in
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "Starting default (STDIO) server...");
}

TEST(McpEverythingStdio, CloseKillsTheServerAndItsGroupWithinASecond) {
  REQUIRE_NODE(kEverything);
  testing::TempDir home;
  // The shell records its pid and its background child's, then becomes the
  // server (exec keeps the pid).
  const std::string script = "sleep 30 & echo $! > " + home.File("bg") + "; echo $$ > " +
                             home.File("pid") + "; exec \"$0\" \"$1\"";
  auto c = MustConnect(Stdio({"/bin/sh", "-c", script, kNode, kEverything}, home.path()));
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(c->Ping().ok());
  const pid_t pid = ReadPid(home.File("pid"));
  const pid_t bg = ReadPid(home.File("bg"));
  ASSERT_GT(pid, 0);
  ASSERT_GT(bg, 0);
  const auto start = Clock::now();
  c->Close();
  EXPECT_LT(Clock::now() - start, 1s);
  EXPECT_EQ(kill(pid, 0), -1);  // reaped by Close, not a zombie
  EXPECT_EQ(errno, ESRCH);
  EXPECT_TRUE(WaitFor([&] { return Gone(bg); }, 1s)) << "the group's sleep survived";
  c->Close();  // idempotent
  EXPECT_EQ(c->Ping().code(), StatusCode::kUnavailable);
}

TEST(McpEverythingStdio, CloseFromAnotherThreadFailsThePendingCall) {
  REQUIRE_NODE(kEverything);
  testing::TempDir home;
  auto c = MustConnect(Stdio({kNode, kEverything}, home.path()));
  ASSERT_NE(c, nullptr);
  std::thread closer([&] {
    std::this_thread::sleep_for(200ms);
    c->Close();
  });
  const auto start = Clock::now();
  auto r = c->CallTool("trigger-long-running-operation", {{"duration", 10}, {"steps", 10}}, {});
  const auto took = Clock::now() - start;
  closer.join();
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
  EXPECT_LT(took, 400ms);  // at once, not after the server is dead
}

TEST(McpEverythingStdio, AServerKilledMidCallFailsTheCallUnavailable) {
  REQUIRE_NODE(kEverything);
  testing::TempDir home;
  const std::string script = "echo $$ > " + home.File("pid") + "; exec \"$0\" \"$1\"";
  auto c = MustConnect(Stdio({"/bin/sh", "-c", script, kNode, kEverything}, home.path()));
  ASSERT_NE(c, nullptr);
  const pid_t pid = ReadPid(home.File("pid"));
  ASSERT_GT(pid, 0);
  std::thread killer([&] {
    std::this_thread::sleep_for(200ms);
    kill(pid, SIGKILL);
  });
  auto r = c->CallTool("trigger-long-running-operation", {{"duration", 10}, {"steps", 10}}, {});
  killer.join();
  ASSERT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
  EXPECT_NE(r.status().message().find("killed by signal 9"), std::string::npos)
      << r.status().message();
  EXPECT_EQ(c->Ping().code(), StatusCode::kUnavailable);  // the session stays lost
  c->Close();
  EXPECT_EQ(kill(pid, 0), -1);  // reaped
}

TEST(McpEverythingStdio, AServerThatIgnoresSigtermIsKilledAfterTheGrace) {
  REQUIRE_NODE(kEverything);
  testing::TempDir home;
  // Neither SIGTERM nor the end of its stdin stops this one.
  const std::string boot =
      "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000); import(process.argv[1]);";
  auto c = MustConnect(Stdio({kNode, "-e", boot, kEverything}, home.path()));
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(c->Ping().ok());
  const auto start = Clock::now();
  c->Close();
  const auto took = Clock::now() - start;
  EXPECT_GE(took, 550ms);  // it had its 100 + 500 ms
  EXPECT_LT(took, 1s);
}

TEST(McpStdio, AServerThatDiesFailsTheConnectWithItsLastWords) {
  REQUIRE_NODE(kEverything);
  testing::TempDir home;
  const std::string script = "echo $$ > " + home.File("pid") + "; exec \"$0\" -e \"$1\"";
  auto dead = Client::Connect(
      Stdio({"/bin/sh", "-c", script, kNode, "console.error('no config here'); process.exit(3)"},
            home.path()),
      Quick());
  ASSERT_FALSE(dead.ok());
  EXPECT_EQ(dead.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(dead.status().message().find("exited with code 3"), std::string::npos)
      << dead.status().message();
  EXPECT_NE(dead.status().message().find("no config here"), std::string::npos);
  const pid_t pid = ReadPid(home.File("pid"));
  ASSERT_GT(pid, 0);
  EXPECT_EQ(kill(pid, 0), -1) << "a failed Connect left its server unreaped";

  auto missing = Client::Connect(Stdio({"/no/such/mcp-server"}, home.path()), Quick());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(missing.status().message().find("cannot start"), std::string::npos);
}

TEST(McpStdio, ASilentServerTimesOutTheConnect) {
  REQUIRE_NODE(kEverything);
  testing::TempDir home;
  ClientOptions o = Quick();
  o.connect_timeout = 300ms;
  const auto start = Clock::now();
  const std::string script = "echo $$ > " + home.File("pid") + "; exec sleep 30";
  auto c = Client::Connect(Stdio({"/bin/sh", "-c", script}, home.path()), o);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kDeadlineExceeded) << c.status().ToString();
  EXPECT_LT(Clock::now() - start, 1500ms);  // 300 ms + killing the sleeper
  const pid_t pid = ReadPid(home.File("pid"));
  ASSERT_GT(pid, 0);
  EXPECT_EQ(kill(pid, 0), -1);
}

TEST(McpFilesystemStdio, ReadsAFileInTheAllowedDirectory) {
  REQUIRE_NODE(kFilesystem);
  testing::TempDir home, root;
  { std::ofstream(root.File("notes.txt")) << "first line\nsecond line\n"; }
  auto c = MustConnect(Stdio({kNode, kFilesystem, root.path()}, home.path()));
  ASSERT_NE(c, nullptr);
  auto tools = c->ListTools();
  ASSERT_TRUE(tools.ok()) << tools.status().ToString();
  const Tool* read = Find(*tools, "read_text_file");
  ASSERT_NE(read, nullptr);
  EXPECT_TRUE(read->read_only);
  auto r = c->CallTool("read_text_file", {{"path", root.File("notes.txt")}}, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->is_error) << r->text;
  EXPECT_EQ(r->text, "first line\nsecond line\n");
  EXPECT_EQ(r->structured["content"], "first line\nsecond line\n");
  auto outside = c->CallTool("read_text_file", {{"path", "/etc/hostname"}}, {});
  ASSERT_TRUE(outside.ok()) << outside.status().ToString();
  EXPECT_TRUE(outside->is_error) << outside->text;
}

TEST(McpMemoryStdio, CreatesEntitiesAndReadsTheGraph) {
  REQUIRE_NODE(kMemory);
  testing::TempDir home;
  Transport t = Stdio({kNode, kMemory}, home.path());
  t.env["MEMORY_FILE_PATH"] = home.File("memory.jsonl");
  auto c = MustConnect(t);
  ASSERT_NE(c, nullptr);
  Json entities = {
      {"entities",
       {{{"name", "maestro"}, {"entityType", "project"}, {"observations", {"speaks MCP"}}}}}};
  auto created = c->CallTool("create_entities", entities, {});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_FALSE(created->is_error) << created->text;
  EXPECT_EQ(created->structured["entities"][0]["name"], "maestro");
  auto graph = c->CallTool("read_graph", Json::object(), {});
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  EXPECT_NE(graph->text.find("speaks MCP"), std::string::npos) << graph->text;
}

// The everything server in Streamable HTTP mode on a free loopback port
// (it reads PORT from the environment, default 3001, and listens on all
// interfaces).
class McpEverythingHttp : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_NODE(kEverything);
    port_ = testing::FreePort();
    server_ = std::make_unique<testing::Process>(
        std::vector<std::string>{kNode, kEverything, "streamableHttp"},
        std::map<std::string, std::string>{{"PORT", std::to_string(port_)}}, dir_.File("out"),
        dir_.File("err"));
    ASSERT_TRUE(server_->started());
    ASSERT_TRUE(WaitFor([&] { return Listening(); }, 5s)) << server_->Stderr();
  }
  bool Listening() const {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port_));
    bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    close(fd);
    return ok;
  }
  Transport Http() const {
    Transport t;
    t.url = "http://127.0.0.1:" + std::to_string(port_) + "/mcp";
    return t;
  }

  testing::TempDir dir_;
  int port_ = 0;
  std::unique_ptr<testing::Process> server_;
};

TEST_F(McpEverythingHttp, HandshakeToolsCallsAndPing) {
  auto c = MustConnect(Http());
  ASSERT_NE(c, nullptr);
  ExpectEverythingBasics(*c);
}

TEST_F(McpEverythingHttp, ProgressArrivesOnTheSseReply) {
  auto c = MustConnect(Http());
  ASSERT_NE(c, nullptr);
  ExpectProgress(*c);
}

TEST_F(McpEverythingHttp, CancelEndsALongCallAtOnce) {
  auto c = MustConnect(Http());
  ASSERT_NE(c, nullptr);
  ExpectCancel(*c);
}

TEST_F(McpEverythingHttp, ListChangedArrivesOnTheGetStream) {
  auto c = MustConnect(Http());
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(WaitFor([&] { return c->tools_changed(); }, 2s));
}

TEST_F(McpEverythingHttp, CallsFromManyThreadsAreMatchedToTheirReplies) {
  auto c = MustConnect(Http());
  ASSERT_NE(c, nullptr);
  std::vector<std::thread> threads;
  std::atomic<int> right{0};
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&, i] {
      auto r = c->CallTool("get-sum", {{"a", i}, {"b", 1000}}, {});
      if (r.ok() && r->text.find("is " + std::to_string(i + 1000)) != std::string::npos) ++right;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(right.load(), 6);
}

TEST_F(McpEverythingHttp, CloseEndsTheSession) {
  auto c = MustConnect(Http());
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(c->Ping().ok());
  c->Close();
  EXPECT_TRUE(WaitFor(
      [&] {
        return server_->Stdout().find("Received session termination request") != std::string::npos;
      },
      2s))
      << server_->Stdout();
  EXPECT_EQ(c->Ping().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace maestro::mcp
