// Tool output is data, never a crash (issue 13 item 4): random bytes, cut
// UTF-8 sequences, NULs, an invalid file name and a 10 MB output go through
// RunCommand, ReadFile, ListDir, Glob and Grep of a real `maestro serve`, and
// out through the job stream and the task events. The server must keep
// answering /api/health, the job must end normally, and every JSON it writes
// must parse.
#include <atomic>

#include "core/utf8.h"
#include "serve_fixture.h"

namespace maestro::testing {
namespace {

TEST_F(ServeEngineTest, HostileToolOutputNeverCrashesTheServerAndEveryJsonParses) {
  const std::vector<Json> calls = {
      ToolCallReply("RunCommand", {{"command", "head -c 65536 /dev/urandom"}}),
      ToolCallReply("RunCommand",
                    {{"command", "printf 'cut \\342\\202 here \\377\\376 and a\\000nul'"}}),
      ToolCallReply("RunCommand", {{"command", "head -c 10000000 /dev/urandom | tr -d '\\n'"}}),
      ToolCallReply("RunCommand",
                    {{"command",
                      "head -c 4096 /dev/urandom > rnd.bin; printf 'x\\377' > \"$(printf "
                      "'bad\\377name')\"; printf '\\342\\202' > cut.txt"}}),
      ToolCallReply("ReadFile", {{"path", "rnd.bin"}}),
      ToolCallReply("ReadFile", {{"path", "cut.txt"}}),
      ToolCallReply("ListDir", Json::object()),
      ToolCallReply("Glob", {{"pattern", "*"}}),
      ToolCallReply("Grep", {{"pattern", "x"}}),
  };
  Json replies = Json::array();
  for (const Json& c : calls) replies.push_back(c);
  replies.push_back(ToolCallReply("complete", {{"status", "success"}, {"result", "survived"}}));
  Start(replies, 1);
  // Health is polled all along: the server must never stop answering.
  std::atomic<bool> done{false};
  std::atomic<int> health_failures{0};
  std::thread prober([&] {
    while (!done) {
      httplib::Client h("127.0.0.1", port_);
      h.set_read_timeout(5, 0);
      auto r = h.Get("/api/health");
      if (!r || r->status != 200) ++health_failures;
      std::this_thread::sleep_for(50ms);
    }
  });
  Json c = Create("read hostile output");
  Json job = WaitStatus(c, "succeeded", 60s);
  done = true;
  prober.join();
  EXPECT_EQ(health_failures.load(), 0) << LogTail();
  EXPECT_TRUE(serve_->running());
  EXPECT_EQ(job["status"], "succeeded") << job.dump();

  // The job stream: every SSE data line is valid UTF-8 and parses as JSON.
  std::string body;
  auto r = Client().Get("/api/local/jobs/" + c["job"]["id"].get<std::string>() + "/stream");
  ASSERT_TRUE(r) << "job stream unreachable";
  body = r->body;
  int deltas = 0, tool_results = 0;
  size_t at = 0;
  while ((at = body.find("data: ", at)) != std::string::npos) {
    size_t end = body.find('\n', at);
    std::string data = body.substr(at + 6, end - at - 6);
    at = end;
    EXPECT_TRUE(IsValidUtf8(data));
    Json d = Json::parse(data, nullptr, false);
    EXPECT_FALSE(d.is_discarded()) << data.substr(0, 200);
    ++deltas;
    if (d.is_object() && d.value("type", "") == "tool_result" &&
        d.value("name", "") != "complete") {
      ++tool_results;
    }
  }
  EXPECT_GT(deltas, 0);
  EXPECT_EQ(tool_results, static_cast<int>(calls.size()));
  // The task's events and the task itself are JSON too.
  EXPECT_TRUE(Events(c["task"]["id"]).size() > 0);
  EXPECT_TRUE(Get(TaskPath(c)).is_object());
  // What the model was sent is valid JSON with valid strings.
  Json reqs = FakeRequests();
  ASSERT_EQ(reqs.size(), calls.size() + 1);
  const Json& last = reqs.back()["body"]["messages"];
  int tool_messages = 0;
  for (const auto& m : last) {
    if (m.value("role", "") != "tool") continue;
    ++tool_messages;
    EXPECT_TRUE(IsValidUtf8(m["content"].get<std::string>()));
  }
  EXPECT_EQ(tool_messages, static_cast<int>(calls.size()));
  EXPECT_TRUE(Contains(last.dump(), "\xEF\xBF\xBD")) << "invalid bytes became U+FFFD";
}

}  // namespace
}  // namespace maestro::testing
