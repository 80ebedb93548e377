// The HTTP API of a real `maestro serve` (no workers: jobs stay where the
// test puts them) — gates, cancel, decisions, SSE resume, metrics.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "core/json.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace maestro {
namespace {

using namespace std::chrono_literals;
using testing::Process;

class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = testing::FreePort();
    env_ = {{"MAESTRO_DATA_DIR", dir_.File("data")},
            {"MAESTRO_LISTEN", "127.0.0.1:" + std::to_string(port_)},
            {"MAESTRO_WORKERS", "0"},
            {"MAESTRO_ADMIN_TOKEN", "tok"}};
    serve_ = std::make_unique<Process>(std::vector<std::string>{MAESTRO_BIN, "serve"}, env_,
                                       dir_.File("serve.out"), dir_.File("serve.err"));
    httplib::Client c("127.0.0.1", port_);
    for (int i = 0; i < 500; ++i) {
      if (auto r = c.Get("/api/health"); r && r->status == 200) return;
      std::this_thread::sleep_for(10ms);
    }
    FAIL() << "serve did not start: " << serve_->Stderr();
  }

  httplib::Client Client() {
    httplib::Client c("127.0.0.1", port_);
    c.set_bearer_token_auth("tok");
    return c;
  }
  std::pair<int, Json> Post(const std::string& path, const std::string& body) {
    auto r = Client().Post(path, body, "application/json");
    if (!r) return {0, Json()};
    return {r->status, Json::parse(r->body, nullptr, false)};
  }
  std::pair<int, Json> Get(const std::string& path) {
    auto r = Client().Get(path);
    if (!r) return {0, Json()};
    return {r->status, Json::parse(r->body, nullptr, false)};
  }
  std::string NewTask() {
    auto [code, body] = Post("/api/local/tasks", R"({"instruction":"write a haiku"})");
    EXPECT_EQ(code, 201) << body.dump();
    return body["task"]["id"];
  }

  testing::TempDir dir_;
  int port_ = 0;
  std::map<std::string, std::string> env_;
  std::unique_ptr<Process> serve_;
};

TEST_F(ApiTest, CommentGateCancelAndContinue) {
  std::string id = NewTask();
  std::string base = "/api/local/tasks/" + id;
  // Queued job: the comment joins it.
  auto [c1, r1] = Post(base + "/comments", R"({"body":"in 5-7-5 please"})");
  ASSERT_EQ(c1, 201) << r1.dump();
  EXPECT_EQ(r1["outcome"], "reused");
  // Not finished: continue is refused.
  auto [c2, r2] = Post(base + "/continue", "{}");
  EXPECT_EQ(c2, 409);
  EXPECT_EQ(r2["error"]["code"], "CONFLICT");
  // Cancel: the queued job is cancelled at once.
  auto [c3, r3] = Post(base + "/cancel", "");
  EXPECT_EQ(c3, 200);
  EXPECT_EQ(r3["cancelled"], 1);
  auto [c4, t4] = Get(base);
  EXPECT_EQ(t4["latest_job"]["status"], "cancelled");
  EXPECT_EQ(t4["task"]["status"], "cancelled");
  // Finished: a comment starts a follow-up job; continue works after it ends.
  auto [c5, r5] = Post(base + "/comments", R"({"body":"try again"})");
  EXPECT_EQ(r5["outcome"], "followup");
  EXPECT_EQ(r5["job"]["status"], "queued");
  Post(base + "/cancel", "");
  auto [c6, r6] = Post(base + "/continue", R"({"piece":"chat","note":"carry on"})");
  ASSERT_EQ(c6, 201) << r6.dump();
  EXPECT_EQ(r6["comment"]["kind"], "handoff");
  EXPECT_FALSE(r6["job"]["continued_from_job_id"].get<std::string>().empty());
  auto [c7, comments] = Get(base + "/comments");
  EXPECT_EQ(comments["comments"].size(), 4u);  // instruction, reply, reply, handoff
}

TEST_F(ApiTest, BadInputAndAuth) {
  std::string id = NewTask();
  std::string base = "/api/local/tasks/" + id;
  auto [c1, r1] = Post(base + "/comments", R"({"body": 5})");
  EXPECT_EQ(c1, 400);
  EXPECT_EQ(r1["error"]["field"], "body");
  auto [c2, r2] = Post(base + "/comments", "not json");
  EXPECT_EQ(c2, 400);
  auto [c3, r3] =
      Post("/api/local/tasks/00000000-0000-4000-8000-000000000000/comments", R"({"body":"x"})");
  EXPECT_EQ(c3, 404);
  auto [c4, r4] =
      Post(base + "/tool-requests/01JDW3K6V4Q8X2M7N5P0R9S1TB/decide", R"({"decision":"approve"})");
  EXPECT_EQ(c4, 404);
  auto [c5, r5] = Post(base + "/tool-requests/01JDW3K6V4Q8X2M7N5P0R9S1TB/decide", R"({})");
  EXPECT_EQ(r5["error"]["field"], "decision");
  auto [c6, r6] = Get(base + "/package-requests");
  EXPECT_EQ(c6, 200);
  EXPECT_TRUE(r6["requests"].empty());
  for (const char* bad :
       {R"({"instruction":"x","priority":101})", R"({"instruction":"x","priority":"high"})",
        R"({"instruction":"x","priority":1.5})",
        R"({"instruction":"x","priority":18446744073709551615})"}) {
    auto [code, reply] = Post("/api/local/tasks", bad);
    EXPECT_EQ(code, 400) << bad;
    EXPECT_EQ(reply["error"]["field"], "priority") << bad;
  }
  auto [c7, r7] = Post("/api/local/tasks", R"({"instruction":"urgent","priority":-100})");
  ASSERT_EQ(c7, 201) << r7.dump();
  EXPECT_EQ(r7["job"]["priority"], -100);
  httplib::Client anon("127.0.0.1", port_);
  EXPECT_EQ(anon.Get(base.c_str())->status, 401);
  EXPECT_EQ(anon.Get("/metrics")->status, 401);
}

// Reads SSE frames until `want` events arrived; returns their ids.
std::vector<std::string> ReadSse(int port, const std::string& path, const std::string& last_id,
                                 size_t want) {
  httplib::Client c("127.0.0.1", port);
  c.set_bearer_token_auth("tok");
  c.set_read_timeout(5, 0);
  httplib::Headers h = {{"Accept", "text/event-stream"}};
  if (!last_id.empty()) h.emplace("Last-Event-ID", last_id);
  std::vector<std::string> ids;
  std::string buf;
  c.Get(path.c_str(), h, [&](const char* data, size_t n) {
    buf.append(data, n);
    size_t pos;
    while ((pos = buf.find("\n\n")) != std::string::npos) {
      std::string frame = buf.substr(0, pos);
      buf.erase(0, pos + 2);
      if (frame.rfind("id: ", 0) == 0) ids.push_back(frame.substr(4, frame.find('\n') - 4));
    }
    return ids.size() < want;
  });
  return ids;
}

TEST_F(ApiTest, SseStreamsEventsLiveAndResumesFromLastEventId) {
  std::string id = NewTask();
  std::string path = "/api/local/tasks/" + id + "/events";
  auto first = ReadSse(port_, path, "", 3);  // task.created, comment.created, job.status
  ASSERT_EQ(first.size(), 3u);
  // A live event arrives on an open stream without polling.
  std::thread later([&] {
    std::this_thread::sleep_for(200ms);
    Post("/api/local/tasks/" + id + "/comments", R"({"body":"live"})");
  });
  auto live = ReadSse(port_, path, first.back(), 1);
  later.join();
  ASSERT_EQ(live.size(), 1u);
  EXPECT_GT(std::stoll(live[0]), std::stoll(first.back()));
  // Resuming from the first id replays exactly what came after it.
  auto resumed = ReadSse(port_, path, first[0], 3);
  ASSERT_EQ(resumed.size(), 3u);
  EXPECT_EQ(resumed[0], first[1]);
  EXPECT_EQ(resumed[1], first[2]);
  EXPECT_EQ(resumed[2], live[0]);
  // Polling clients get the same data as JSON.
  auto [code, polled] = Get(path + "?after=" + first[0]);
  EXPECT_EQ(code, 200);
  EXPECT_EQ(polled["events"].size(), 3u);
}

TEST_F(ApiTest, MetricsCountJobsByStatus) {
  NewTask();
  NewTask();
  auto r = Client().Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->body.find("maestro_jobs{status=\"queued\"} 2"), std::string::npos) << r->body;
}

TEST_F(ApiTest, CliClientDrivesTheRunningServer) {
  std::string id = NewTask();
  std::string server = "http://127.0.0.1:" + std::to_string(port_);
  auto run = [&](std::vector<std::string> args, const std::string& token, const char* name) {
    std::vector<std::string> argv = {MAESTRO_BIN, "task"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--server", server, "--token", token});
    return testing::RunCommand(argv, {}, dir_.File(name));
  };
  auto [c1, out1] = run({"comment", id, "make it rhyme"}, "tok", "comment");
  EXPECT_EQ(c1, 0) << out1;
  EXPECT_NE(out1.find("comment posted (reused)"), std::string::npos) << out1;
  // The comment is in the task's comments.
  auto [code, comments] = Get("/api/local/tasks/" + id + "/comments");
  EXPECT_NE(comments.dump().find("make it rhyme"), std::string::npos);
  // A wrong token is refused with exit code 2, and the token is not echoed.
  auto [c2, out2] = run({"comment", id, "x"}, "wrong-token", "denied");
  EXPECT_EQ(c2, 2) << out2;
  EXPECT_EQ(out2.find("wrong-token"), std::string::npos);
  // Deciding an unknown request is a 404 -> exit code 2.
  auto [c3, out3] = run({"approve", id, "01ARZ3NDEKTSV4RRFFQ69G5FAV"}, "tok", "approve");
  EXPECT_EQ(c3, 2) << out3;
  // continue is refused while the job is not finished (409 -> 2).
  auto [c4, out4] = run({"continue", id}, "tok", "continue");
  EXPECT_EQ(c4, 2) << out4;
  // cancel, then watch follows the events to the end: a cancelled task
  // exits 1; --json prints the events as the server sent them.
  auto [c5, out5] = run({"cancel", id}, "tok", "cancel");
  EXPECT_EQ(c5, 0) << out5;
  auto [c6, out6] = run({"watch", id}, "tok", "watch");
  EXPECT_EQ(c6, 1) << out6;
  EXPECT_NE(out6.find("task cancelled"), std::string::npos) << out6;
  auto [c7, out7] = run({"watch", id, "--json"}, "tok", "watch-json");
  EXPECT_EQ(c7, 1) << out7;
  EXPECT_NE(out7.find("\"task.created\""), std::string::npos) << out7;
  EXPECT_NE(out7.find("\"comment.created\""), std::string::npos) << out7;
  EXPECT_NE(out7.find("\"job.status\""), std::string::npos) << out7;
  EXPECT_NE(out7.find("cancelled"), std::string::npos) << out7;
}

}  // namespace
}  // namespace maestro
