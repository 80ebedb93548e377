// Integration (issue 50): the official @anthropic-ai/sdk (pinned in
// tests/llm-sdks) against maestro-fakellm's Anthropic Messages fake, so the
// fake speaks the real wire format before maestro's adapter is tested on it.
// tests/llm-sdks/anthropic_check.mjs drives the SDK (create and stream: text,
// tool_use, thinking, cache usage, a 529 retried by the SDK, a 400 it throws,
// an in-stream error) with the replies of anthropic_script.json and prints
// what the SDK saw; this test asserts it, then checks from the fake's
// /v1/_requests that every SDK request passed validation.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "core/json.h"
#include "fakellm_process.h"
#include "support/process.h"

namespace maestro::llm {
namespace {

namespace fs = std::filesystem;
using maestro::testing::FakeLlmProcess;
using maestro::testing::Process;

const std::string kSdks = MAESTRO_LLM_SDKS_DIR;

class AnthropicSdkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("maestro_anth_sdk_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs anthropic_check.mjs against the fake at `port`; its stdout as JSON.
  Json RunCheck(int port) {
    Process node({"/usr/bin/env", "node", kSdks + "/anthropic_check.mjs",
                  "http://127.0.0.1:" + std::to_string(port)},
                 {}, (dir_ / "node.out").string(), (dir_ / "node.err").string());
    auto code = node.Wait(std::chrono::seconds(60));
    EXPECT_TRUE(code.has_value() && *code == 0) << node.Stdout() << node.Stderr();
    Json out = Json::parse(node.Stdout(), nullptr, false);
    EXPECT_TRUE(out.is_object()) << node.Stdout() << node.Stderr();
    return out;
  }

  static Json Requests(int port) {
    httplib::Client cli("127.0.0.1", port);
    auto res = cli.Get("/v1/_requests");
    if (!res || res->status != 200) return Json::array();
    return Json::parse(res->body)["requests"];
  }

  fs::path dir_;
};

// What the SDK's usage object reads for a recorded request's cache figures.
Json UsageOf(const Json& rec, int64_t output_tokens) {
  const Json& c = rec["cache"];
  return {{"input_tokens", c["prompt_tokens"].get<int64_t>() - c["cache_read"].get<int64_t>() -
                               c["cache_write"].get<int64_t>()},
          {"output_tokens", output_tokens},
          {"cache_creation_input_tokens", c["cache_write"]},
          {"cache_read_input_tokens", c["cache_read"]}};
}

TEST_F(AnthropicSdkTest, OfficialClientReadsTheFake) {
  ASSERT_TRUE(fs::exists(kSdks + "/node_modules/@anthropic-ai/sdk/package.json"))
      << "@anthropic-ai/sdk is not installed: run scripts/npm_pinned.sh tests/llm-sdks";
  FakeLlmProcess fake({"--script", kSdks + "/anthropic_script.json"});
  Json out = RunCheck(fake.port());
  Json recs = Requests(fake.port());

  // Every SDK request was valid but the deliberate 529 (retried) and 400.
  std::vector<int> statuses;
  for (const Json& r : recs) statuses.push_back(r.value("status", 0));
  EXPECT_EQ(statuses, (std::vector<int>{200, 200, 200, 200, 200, 200, 200, 529, 200, 400, 200}));
  ASSERT_EQ(recs.size(), 11u);
  for (const Json& r : recs) EXPECT_EQ(r["path"], "/v1/messages");

  // create, text.
  const Json& plain = out["plain"];
  EXPECT_EQ(plain["id"], "msg_fake_0");
  EXPECT_EQ(plain["type"], "message");
  EXPECT_EQ(plain["role"], "assistant");
  EXPECT_EQ(plain["model"], "claude-fake-1");
  EXPECT_EQ(plain["stop_reason"], "end_turn");
  EXPECT_EQ(plain["content"], Json::parse(R"([{"type":"text","text":"Hello from the fake."}])"));
  EXPECT_EQ(plain["usage"], UsageOf(recs[0], plain["usage"]["output_tokens"].get<int64_t>()));
  EXPECT_EQ(plain["usage"]["cache_read_input_tokens"], 0);
  EXPECT_GT(plain["usage"]["input_tokens"].get<int64_t>(), 0);

  // create, tool_use with its input object.
  EXPECT_EQ(out["tool"], Json::parse(R"({"stop_reason":"tool_use","content":[{"type":"tool_use",
      "id":"toolu_call_read","name":"read_file","input":{"path":"README.md","lines":20}}]})"));

  // stream: text deltas as the SDK's 'text' events.
  const Json& st = out["streamText"];
  EXPECT_EQ(st["deltas"], Json::parse(R"(["Strea","ming ","works"," fine","."])"));
  EXPECT_EQ(st["text"], "Streaming works fine.");
  EXPECT_EQ(st["stop_reason"], "end_turn");
  EXPECT_EQ(st["usage"], UsageOf(recs[2], st["usage"]["output_tokens"].get<int64_t>()));

  // stream: the SDK assembles input_json_delta pieces into the input.
  const Json& tool = out["streamTool"];
  EXPECT_EQ(tool["partials"].size(), 9u);  // {"content":"x y z","path":"a.txt"} by 4 bytes
  EXPECT_EQ(tool["stop_reason"], "tool_use");
  EXPECT_EQ(tool["content"], Json::parse(R"([{"type":"tool_use","id":"toolu_write1",
      "name":"write_file","input":{"path":"a.txt","content":"x y z"}}])"));

  // stream: thinking deltas, the signature, then the text.
  const Json& th = out["streamThinking"];
  EXPECT_EQ(th["thinking_deltas"], Json::parse(R"(["Let me"," think"," it ov","er."])"));
  ASSERT_EQ(th["content"].size(), 2u);
  EXPECT_EQ(th["content"][0]["type"], "thinking");
  EXPECT_EQ(th["content"][0]["thinking"], "Let me think it over.");
  EXPECT_EQ(th["content"][0]["signature"].get<std::string>().rfind("fakesig_", 0), 0u);
  EXPECT_EQ(th["content"][1], Json::parse(R"({"type":"text","text":"Thought done."})"));
  EXPECT_EQ(recs[4]["body"]["thinking"]["type"], "enabled");

  // Cache: the first request writes up to its last breakpoint (everything);
  // the next turn reads exactly that and writes only the new turn.
  const Json& cache = out["cache"];
  EXPECT_EQ(recs[5]["cache"]["breakpoints"], 2);
  EXPECT_EQ(cache["first"], UsageOf(recs[5], cache["first"]["output_tokens"].get<int64_t>()));
  EXPECT_EQ(cache["second"], UsageOf(recs[6], cache["second"]["output_tokens"].get<int64_t>()));
  const int64_t first_prompt = recs[5]["cache"]["prompt_tokens"].get<int64_t>();
  const int64_t second_prompt = recs[6]["cache"]["prompt_tokens"].get<int64_t>();
  EXPECT_GT(first_prompt, 1024);  // above the fake's cache minimum
  EXPECT_EQ(cache["first"]["cache_creation_input_tokens"], first_prompt);
  EXPECT_EQ(cache["first"]["cache_read_input_tokens"], 0);
  EXPECT_EQ(cache["first"]["input_tokens"], 0);
  EXPECT_EQ(cache["second"]["cache_read_input_tokens"], first_prompt);
  EXPECT_EQ(cache["second"]["cache_creation_input_tokens"], second_prompt - first_prompt);
  EXPECT_EQ(cache["second"]["input_tokens"], 0);
  EXPECT_EQ(cache["second_text"], "second answer");

  // The 529 (overloaded_error) is retried by the SDK itself (maxRetries 1).
  EXPECT_EQ(out["retried"], Json::parse(R"({"text":"recovered"})"));
  EXPECT_EQ(recs[7]["reply"], 7);
  EXPECT_EQ(recs[8]["reply"], 8);

  // A 400 is the SDK's BadRequestError, its message naming the field.
  EXPECT_EQ(out["badRequest"], Json::parse(R"({"thrown":true,"bad_request":true,"status":400,
      "type":"invalid_request_error",
      "message":"messages.0.content.0.text: text content blocks must be non-empty",
      "request_id":"req_fake_9"})"));

  // An in-stream `event: error` is thrown by the SDK as an APIError.
  EXPECT_EQ(out["streamError"],
            Json::parse(R"({"thrown":true,"api_error":true,"type":"overloaded_error"})"));
}

}  // namespace
}  // namespace maestro::llm
