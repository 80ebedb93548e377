// The escape suite (issue 13 item 6): a scripted model makes the calls an
// attacker would, through a real `maestro serve` with real bubblewrap. Each
// probe's result must show it was blocked, and afterwards the host is checked
// for the markers a successful escape would have left.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "serve_fixture.h"

namespace maestro::testing {
namespace {

namespace fs = std::filesystem;

struct Probe {
  std::string name;
  std::string command;
  // The result must contain this (the blocked outcome) ...
  std::string expect;
  // ... and must not contain this (what an escape would print); "" = none.
  std::string forbid;
};

class EscapeTest : public ServeEngineTest {};

TEST_F(EscapeTest, EveryProbeIsBlockedAndNoMarkerReachesTheHost) {
  const std::string host = dir_.File("host-markers");
  fs::create_directories(host);
  const std::string secret = "SECRET-IN-SERVE-ENV-4242";
  serve_env_["MAESTRO_PROBE_SECRET"] = secret;
  // A port the host listens on: a sandbox with its own network namespace
  // cannot reach it (its loopback is its own, so the connect is refused).
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int port_placeholder = ntohs(addr.sin_port);
  const std::vector<Probe> probes = {
      {"shadow", "cat /etc/shadow /etc/shadow- /etc/gshadow- 2>&1; echo rc=$?", "rc=1", "root:"},
      {"host env", "cat /proc/1/environ 2>&1 | tr '\\0' '\\n'; echo end", "end", secret},
      {"sys", "ls /sys 2>&1 | head -3; echo end", "end", "kernel"},
      {"devices", "ls /dev; cat /dev/sda 2>&1 | head -c 50; echo end", "end", "sda\n"},
      {"mount", "mount -t tmpfs x /tmp 2>&1; echo rc=$?", "rc=", "rc=0"},
      {"host path", "echo x > " + host + "/written 2>&1; echo rc=$?", "rc=", "rc=0"},
      // The server's process is not in the sandbox's pid namespace (no ptrace,
      // no signals, no /proc/<pid>/mem to reach).
      {"server pid",
       "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done; echo done",
       "done", " serve"},
      {"raw socket",
       "python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, 1)' 2>&1 | "
       "tail -1",
       "Error", ""},
      {"dns", "getent hosts example.com; echo rc=$?", "rc=2", ""},
      {"network",
       "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", " +
           std::to_string(port_placeholder) + "), 1); print(\"connected\")' 2>&1 | tail -1",
       "Refused", "connected"},
      // Hooks, fsmonitor and a filter driver in the workspace's .git: maestro's
      // job-end commit (on the host) must run none of them.
      {"git hooks",
       "git init -q . 2>/dev/null; mkdir -p .git/hooks; for h in pre-commit post-commit; do "
       "printf '#!/bin/sh\\ntouch " +
           host +
           "/hook-$h\\n' > .git/hooks/$h; chmod +x .git/hooks/$h; done; "
           "git config core.fsmonitor 'touch " +
           host + "/fsmonitor'; git config filter.x.clean 'touch " + host +
           "/filter'; echo '* filter=x' > .gitattributes; echo planted",
       "planted", ""},
  };
  Json replies = Json::array();
  for (const Probe& p : probes) {
    replies.push_back(ToolCallReply("RunCommand", {{"command", p.command}}));
  }
  replies.push_back(ToolCallReply("WriteFile", {{"path", "note.txt"}, {"content", "done"}}));
  replies.push_back(ToolCallReply("complete", {{"status", "success"}, {"result", "probed"}}));
  Start(replies, 1);
  Json c = Create("probe the sandbox");
  Json job = WaitStatus(c, "succeeded", 60s);
  ASSERT_EQ(job["status"], "succeeded") << LogTail();

  Json reqs = FakeRequests();
  ASSERT_EQ(reqs.size(), probes.size() + 2);
  std::vector<std::string> results;
  for (const auto& m : reqs.back()["body"]["messages"]) {
    if (m.value("role", "") == "tool") results.push_back(m["content"].get<std::string>());
  }
  ASSERT_EQ(results.size(), probes.size() + 1);
  for (size_t i = 0; i < probes.size(); ++i) {
    SCOPED_TRACE(probes[i].name + ": " + results[i]);
    EXPECT_TRUE(Contains(results[i], probes[i].expect));
    if (!probes[i].forbid.empty()) {
      EXPECT_FALSE(Contains(results[i], probes[i].forbid));
    }
  }
  // The job ended and committed the workspace: wait for that, then look.
  std::this_thread::sleep_for(500ms);
  std::vector<std::string> markers;
  for (const auto& e : fs::directory_iterator(host)) markers.push_back(e.path().filename());
  EXPECT_TRUE(markers.empty()) << "escaped: " << ::testing::PrintToString(markers);
  EXPECT_TRUE(Get("/api/health").is_object());
  ::close(listener);
}

TEST_F(EscapeTest, AForkBombAndAHugeAllocationEndAsToolErrorsWhileAnotherTaskStreams) {
  Json bomb = Matching(ToolCallReply("RunCommand", {{"command", "f(){ f | f & }; f; sleep 5"}}),
                       "TASK-BOMB");
  Json alloc = Matching(
      ToolCallReply("RunCommand", {{"command", "python3 -c 'b = bytearray(3 * 1024**3)'"}}),
      "process limit");
  Json stream = Matching(ToolCallReply("complete", {{"status", "success"}, {"result", "streamed"}}),
                         "TASK-STREAM");
  stream["text"] = std::string(400, 's');
  stream["token_delay_ms"] = 10;  // ~50 deltas over half a second, beside the bomb
  stream["chunk_chars"] = 8;
  Json done = ToolCallReply("complete", {{"status", "success"}, {"result", "contained"}});
  done["repeat"] = 0;
  Start(Json::array({bomb, stream, alloc, done}), 2);
  Json a = Create("TASK-BOMB fork forever");
  Json b = Create("TASK-STREAM tell a story");
  Json sb = WaitStatus(b, "succeeded", 60s);
  EXPECT_EQ(sb["status"], "succeeded") << "the other task kept going";
  Json sa = WaitStatus(a, "succeeded", 90s);
  EXPECT_EQ(sa["status"], "succeeded") << LogTail();
  EXPECT_TRUE(Get("/api/health").is_object());
  Json reqs = RequestsWith(FakeRequests(), "TASK-BOMB");
  ASSERT_EQ(reqs.size(), 3u);
  std::string bomb_result, alloc_result;
  for (const auto& m : reqs.back()["body"]["messages"]) {
    if (m.value("role", "") != "tool") continue;
    (bomb_result.empty() ? bomb_result : alloc_result) = m["content"].get<std::string>();
  }
  EXPECT_TRUE(Contains(bomb_result, "Error: the command reached the process limit") ||
              Contains(bomb_result, "timed out"))
      << bomb_result;
  EXPECT_TRUE(Contains(alloc_result, "Error: the command ran out of memory")) << alloc_result;
}

}  // namespace
}  // namespace maestro::testing
