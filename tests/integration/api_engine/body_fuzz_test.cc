// Issue 14 at the real edge (`maestro serve` + `maestro-fakellm`):
// - every route that reads a body answers random bytes, invalid UTF-8,
//   numbers out of range, deep nesting and wrong field types with a 4xx
//   whose JSON names the problem and carries no exception or library text,
//   and the server stays healthy throughout;
// - the job and event streams end with a final `shutdown` frame on SIGTERM;
// - more streams than a token may hold are refused with 429.
#include <random>

#include "serve_fixture.h"

namespace maestro::testing {
namespace {

class BodyFuzzTest : public ServeEngineTest {
 protected:
  // Posts raw bytes; returns (status, body), status 0 when no answer.
  std::pair<int, std::string> PostRaw(const std::string& path, const std::string& body) const {
    auto r = Client().Post(path, body, "application/json");
    if (!r) return {0, ""};
    return {r->status, r->body};
  }
  bool Healthy() const {
    auto r = Client().Get("/api/health");
    return r && r->status == 200;
  }
};

// Random mutations of a valid body: each one is invalid for a known reason.
std::vector<std::string> HostileBodies(const Json& valid, std::mt19937& rng) {
  std::vector<std::string> out;
  std::uniform_int_distribution<int> byte(0, 255);
  for (int i = 0; i < 40; ++i) {  // random bytes (a leading '[' makes any parse a non-object)
    std::string s(static_cast<size_t>(1 + i * 7), '\0');
    for (char& c : s) c = static_cast<char>(byte(rng));
    s[0] = static_cast<char>(i % 2 ? '[' : byte(rng) | 0x80);
    out.push_back(s);
  }
  const std::string text = valid.dump();
  for (size_t cut = 1; cut < text.size(); cut += 3)
    out.push_back(text.substr(0, cut));     // truncated
  out.push_back(std::string(200000, '['));  // deep
  out.push_back(std::string(20000, '{'));
  for (const auto& [field, value] : valid.items()) {
    (void)value;
    for (const std::string& bad :
         {std::string("\"\xff\xfe\""), std::string("\"\xe2\x82\""), std::string("\"\xc0\xaf\""),
          std::string("1e400"), std::string("-1e400"), std::string("123456789e999999")}) {
      Json copy = valid;
      copy.erase(field);
      std::string s = copy.dump();
      s.insert(1, "\"" + field + "\":" + bad + (copy.empty() ? "" : ","));
      out.push_back(s);
    }
  }
  return out;
}

// Each field of `valid` replaced by values of the wrong type: a 400 that
// names that field.
std::vector<std::pair<std::string, Json>> WrongTypes(const Json& valid) {
  std::vector<std::pair<std::string, Json>> out;
  for (const auto& [field, value] : valid.items()) {
    for (const Json& bad : {Json(7), Json(true), Json::object({{"x", 1}}), Json(1.5e300)}) {
      if (value.is_array() && bad.is_object()) continue;
      Json copy = valid;
      copy[field] = bad;
      out.emplace_back(field, copy);
    }
    if (value.is_array()) {
      Json copy = valid;
      copy[field] = Json::array({1, Json::array()});  // an array of the wrong items
      out.emplace_back(field, copy);
    }
  }
  return out;
}

TEST_F(BodyFuzzTest, EveryBodyRouteAnswersHostileInputWith4xxAndStaysUp) {
  Start(Json::array({SucceedReply("done")}));
  Json created = Create("a task the fuzz can name");
  const std::string task = TaskPath(created);
  const std::string rid = "01JD0000000000000000000000";
  const std::vector<std::pair<std::string, Json>> routes = {
      {"/api/local/tasks", {{"instruction", "x"}, {"title", "t"}, {"piece", "chat"}}},
      {task + "/comments", {{"body", "hello"}}},
      {task + "/continue", {{"piece", "chat"}, {"note", "n"}}},
      {task + "/tool-requests/" + rid + "/decide", {{"decision", "approve"}, {"scope", "once"}}},
      {task + "/package-requests/" + rid + "/decide", {{"decision", "deny"}}},
      {task + "/spawn-requests/" + rid + "/decide", {{"decision", "approve"}}},
      {"/api/local/notifications/read", {{"ids", Json::array({"a"})}}},
      {"/api/local/tokens", {{"user", "someone"}}},
  };
  std::mt19937 rng(14);
  int sent = 0;
  for (const auto& [path, valid] : routes) {
    for (const std::string& body : HostileBodies(valid, rng)) {
      auto [status, text] = PostRaw(path, body);
      ++sent;
      ASSERT_GE(status, 400) << path << " body=" << Json(body).dump().substr(0, 120);
      ASSERT_LT(status, 500) << path << " " << text;
      auto j = ParseJson(text);
      ASSERT_TRUE(j.ok()) << path << " " << text;
      EXPECT_TRUE((*j)["error"].contains("code")) << text;
      EXPECT_EQ(text.find("json.exception"), std::string::npos) << text;
      EXPECT_EQ(text.find("what()"), std::string::npos) << text;
    }
    for (const auto& [field, body] : WrongTypes(valid)) {
      auto [status, text] = PostRaw(path, body.dump());
      ++sent;
      ASSERT_EQ(status, 400) << path << " " << body.dump() << " -> " << text;
      EXPECT_EQ(Json::parse(text)["error"]["field"], field) << path << " " << text;
    }
    ASSERT_TRUE(Healthy()) << "after " << path;
  }
  EXPECT_GT(sent, 500);
  // Nothing hostile was written: the one task is still the only one.
  EXPECT_EQ(Get("/api/local/tasks")["tasks"].size(), 1u);
  EXPECT_EQ(LogTail().find("AddressSanitizer"), std::string::npos) << LogTail();
}

TEST_F(BodyFuzzTest, SigtermEndsOpenStreamsWithAFinalFrame) {
  Start(Json::array({Json{{"text", "slow"}, {"delay_ms", 20000}}}));
  Json created = Create("hold a job open");
  const std::string task = TaskPath(created);
  std::string job_id = created["job"]["id"];
  std::string events, deltas;
  std::thread a([&] {
    Client().Get(task + "/events", {{"Accept", "text/event-stream"}},
                 [&](const char* d, size_t n) { return events.append(d, n), true; });
  });
  std::thread b([&] {
    Client().Get("/api/local/jobs/" + job_id + "/stream", {{"Accept", "text/event-stream"}},
                 [&](const char* d, size_t n) { return deltas.append(d, n), true; });
  });
  std::this_thread::sleep_for(500ms);
  serve_->Signal(SIGTERM);
  a.join();
  b.join();
  EXPECT_NE(events.find("event: task.created"), std::string::npos) << events;
  EXPECT_NE(events.find("event: shutdown\ndata: {\"reason\":\"server stopping\"}"),
            std::string::npos)
      << events;
  EXPECT_NE(deltas.find("event: shutdown"), std::string::npos) << deltas;
  EXPECT_TRUE(serve_->Wait(std::chrono::seconds(20)).has_value()) << LogTail();
}

TEST_F(BodyFuzzTest, StreamsBeyondTheTokensAllowanceAre429) {
  serve_env_["MAESTRO_HTTP_MAX_STREAMS_PER_TOKEN"] = "2";
  Start(Json::array({SucceedReply("done")}));
  const std::string task = TaskPath(Create("watch me"));
  std::atomic<bool> stop{false};
  std::vector<std::thread> open;
  for (int i = 0; i < 2; ++i) {
    open.emplace_back([&] {
      Client().Get(task + "/events", {{"Accept", "text/event-stream"}},
                   [&](const char*, size_t) { return !stop.load(); });
    });
  }
  std::this_thread::sleep_for(500ms);
  auto third = Client().Get(task + "/events", {{"Accept", "text/event-stream"}});
  ASSERT_TRUE(third);
  EXPECT_EQ(third->status, 429) << third->body;
  EXPECT_EQ(third->get_header_value("Retry-After"), "5");
  EXPECT_EQ(Json::parse(third->body)["error"]["code"], "RESOURCE_EXHAUSTED");
  stop = true;
  // A stream that gets no more bytes only notices `stop` at its next frame:
  // publish one (a comment) so both readers return.
  Post(task + "/comments", {{"body", "wake the streams"}});
  for (auto& t : open) t.join();
}

}  // namespace
}  // namespace maestro::testing
