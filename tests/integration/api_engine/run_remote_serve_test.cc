// RunRemote end to end (issue 45 item 7): the real `maestro serve` and the
// scripted `maestro-fakellm`, with Debian's sshd started by the test on
// 127.0.0.1 (support/sshd_server.h). A task in a space whose Tool Policy
// allows that host is offered RunRemote (its schema naming the host), the
// model's call runs `echo` there and the model reads the output and the exit
// code; a task in a space without SSH is never offered the tool and its call
// is refused; a host given as an option is refused without a connection; the
// call is in the task's ledger; and the private key — given to serve in an
// environment variable — is in no file of the data directory, no log, no
// event and no request the model was sent.
#include <filesystem>

#include "serve_fixture.h"
#include "support/sshd_server.h"

namespace maestro::testing {
namespace {

namespace fs = std::filesystem;

Json OnlyFor(Json reply, const std::string& tag, const std::string& last = "") {
  reply["match"] = {{"any_message_contains", tag}};
  if (!last.empty()) reply["match"]["last_message_contains"] = last;
  return reply;
}

// The tool names offered in one logged request.
std::set<std::string> Offered(const Json& logged) {
  std::set<std::string> out;
  for (const auto& t : logged["body"].value("tools", Json::array())) {
    out.insert(t["function"].value("name", ""));
  }
  return out;
}

class RunRemoteServeTest : public ServeEngineTest {
 protected:
  // Every file under `root`, read whole.
  static std::string AllFilesUnder(const std::string& root) {
    std::string all;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_regular_file(ec)) all += ReadWholeFile(it->path().string()) + "\n";
    }
    return all;
  }
};

TEST_F(RunRemoteServeTest, OnlyASpaceThatAllowsTheHostRunsOnItAndTheKeyStaysOutOfEverything) {
  fs::create_directories(dir_.File("sshd"));
  TestSshd sshd(dir_.File("sshd"));
  ASSERT_EQ(sshd.error(), "");
  extra_config_ = "spaces:\n  ops:\n    path: " + dir_.File("ops") +
                  "\n    ssh:\n      - name: box\n        host: 127.0.0.1\n        port: " +
                  std::to_string(sshd.port()) + "\n        user: " + sshd.user() +
                  "\n        key: $OPS_SSH_KEY\n        known_hosts: \"[127.0.0.1]:" +
                  std::to_string(sshd.port()) + " " + sshd.HostKeyLine() +
                  "\"\n  plain:\n    path: " + dir_.File("plain") + "\n";
  serve_env_ = {{"OPS_SSH_KEY", sshd.ClientKey()}};
  const std::string pwned = dir_.File("pwned");
  Start(Json::array(
            {OnlyFor(
                 ToolCallReply("RunRemote", {{"host", "box"},
                                             {"command", "echo remote-hello-$((40 + 2)); exit 3"}}),
                 "SSH-OPS"),
             OnlyFor(SucceedReply("ran it"), "SSH-OPS", "remote-hello-42"),
             OnlyFor(ToolCallReply("RunRemote", {{"host", "box"}, {"command", "touch " + pwned}}),
                     "SSH-PLAIN"),
             OnlyFor(SucceedReply("refused"), "SSH-PLAIN", "RunRemote"),
             OnlyFor(ToolCallReply("RunRemote", {{"host", "-oProxyCommand=touch " + pwned},
                                                 {"command", "touch " + pwned}}),
                     "SSH-HOSTILE"),
             OnlyFor(SucceedReply("refused"), "SSH-HOSTILE", "invalid arguments")}),
        1);

  auto create = [&](const std::string& instruction, const std::string& space) {
    auto [code, created] = Post(
        "/api/local/tasks", {{"instruction", instruction}, {"piece", "chat"}, {"space", space}});
    EXPECT_EQ(code, 201) << created.dump();
    return created;
  };
  Json ops = create("SSH-OPS: say hello from the box", "ops");
  WaitStatus(ops, "succeeded", 60s);
  const int logins = sshd.Logins();
  EXPECT_EQ(logins, 1) << sshd.Log();
  const int connections = sshd.Connections();
  Json plain = create("SSH-PLAIN: try the box", "plain");
  WaitStatus(plain, "succeeded", 60s);
  Json hostile = create("SSH-HOSTILE: try an option as the host", "ops");
  WaitStatus(hostile, "succeeded", 60s);

  const Json requests = FakeRequests();
  // The space that allows the host: offered, with the host in the schema;
  // the model read the output and the exit code.
  Json ops_requests = RequestsWith(requests, "SSH-OPS");
  ASSERT_GE(ops_requests.size(), 2u);
  ASSERT_TRUE(Offered(ops_requests[0]).count("RunRemote"));
  for (const auto& t : ops_requests[0]["body"]["tools"]) {
    if (t["function"]["name"] == "RunRemote") {
      EXPECT_EQ(t["function"]["parameters"]["properties"]["host"]["enum"], Json::array({"box"}));
    }
  }
  const std::string seen = MessagesText(ops_requests[1]);
  EXPECT_TRUE(Contains(seen, "[exit code 3]\\nremote-hello-42")) << seen;
  // The space without SSH: never offered, its call refused, nothing ran.
  Json plain_requests = RequestsWith(requests, "SSH-PLAIN");
  ASSERT_GE(plain_requests.size(), 2u);
  for (const auto& r : plain_requests) EXPECT_FALSE(Offered(r).count("RunRemote"));
  EXPECT_TRUE(Contains(MessagesText(plain_requests[1]), "unknown tool 'RunRemote'"))
      << MessagesText(plain_requests[1]);
  // An option as the host: refused by the schema before any process.
  Json hostile_requests = RequestsWith(requests, "SSH-HOSTILE");
  ASSERT_GE(hostile_requests.size(), 2u);
  EXPECT_TRUE(Contains(MessagesText(hostile_requests[1]), "invalid arguments for RunRemote"));
  EXPECT_EQ(sshd.Connections(), connections) << "no connection after the first task";
  EXPECT_EQ(sshd.Logins(), logins);
  EXPECT_FALSE(fs::exists(pwned));

  // The call is in the task's ledger (tools.jsonl), started then finished,
  // like RunCommand's.
  std::string ledger;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(DataDir(), ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().filename() == "tools.jsonl") ledger += ReadWholeFile(it->path().string());
  }
  std::istringstream records(ledger);
  std::map<std::string, std::vector<std::string>> events;  // task id -> RunRemote records
  for (std::string line; std::getline(records, line);) {
    Json r = Json::parse(line, nullptr, false);
    if (r.is_object() && r.value("tool", "") == "RunRemote") {
      events[r.value("task_id", "")].push_back(r.value("event", ""));
    }
  }
  auto id = [](const Json& created) { return created["task"]["id"].get<std::string>(); };
  EXPECT_EQ(events[id(ops)], (std::vector<std::string>{"started", "finished"})) << ledger;
  // Refused calls are audited closed (`error` without `started`).
  EXPECT_EQ(events[id(plain)], std::vector<std::string>{"error"}) << ledger;
  EXPECT_EQ(events[id(hostile)], std::vector<std::string>{"error"}) << ledger;
  const std::string data = AllFilesUnder(DataDir());

  // The key: in no data file, log, event, workspace or model request.
  std::string everything = data + AllFilesUnder(dir_.File("ops")) + serve_->Stderr() +
                           serve_->Stdout() + requests.dump();
  for (const Json* created : {&ops, &plain, &hostile}) {
    everything += Events((*created)["task"]["id"].get<std::string>()).dump();
  }
  std::istringstream key(sshd.ClientKey());
  int lines = 0;
  for (std::string line; std::getline(key, line);) {
    if (line.size() < 16 || line.rfind("-----", 0) == 0) continue;
    ++lines;
    EXPECT_FALSE(Contains(everything, line)) << "a line of the private key leaked";
  }
  EXPECT_GE(lines, 3);
}

}  // namespace
}  // namespace maestro::testing
