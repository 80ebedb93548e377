// Integration: maestro's HttpLlmClient with provider "anthropic" against the
// real maestro-fakellm binary's Messages fake over loopback — the body
// translated from current.jsonl (the fake validates it as the API does),
// streamed and whole replies, a tool round trip, the retries and error kinds,
// and the prompt cache driven by maestro's breakpoints.
#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "fakellm_fixture.h"
#include "llm/llm_client.h"

namespace maestro::llm {
// Named, not anonymous: the test files may be compiled as one unit.
namespace anthropic_fakellm_test {

namespace fs = std::filesystem;
using maestro::testing::FakeLlmProcess;
using maestro::testing::FakeLlmTest;

class AnthropicFakeTest : public FakeLlmTest {
 protected:
  AnthropicFakeTest() : FakeLlmTest("maestro_anthit_") {}

  static ModelProfile Profile(const FakeLlmProcess& f) {
    ModelProfile p = FastRetryProfile(f.base_url());
    p.provider = "anthropic";
    p.api_key = "test-key";
    p.model = "claude-sonnet-4-5";
    return p;
  }
  std::string ReadFileTool() {
    return Write("tools.json", R"([{"type":"function","function":{"name":"ReadFile",
      "description":"Read a file","parameters":{"type":"object",
      "properties":{"path":{"type":"string"}},"required":["path"]}}}])");
  }
};

TEST_F(AnthropicFakeTest, StreamsTextAndAToolCall) {
  auto f = Start(R"({"replies":[{"text":"Reading it now.","chunk_chars":4,
    "tool_calls":[{"id":"toolu_1","name":"ReadFile","arguments":{"path":"a b.txt"}}]}]})");
  HttpLlmClient client(Profile(*f));
  ChatRequest req = Conversation();
  req.tools_path = ReadFileTool();
  req.request_json_path = (dir_ / "request.json").string();
  std::string streamed, args;
  std::vector<LlmEvent> calls;
  LlmCallResult r = client.Chat(
      req,
      [&](const LlmEvent& e) {
        if (e.kind == LlmEvent::Kind::kText) streamed += e.text;
        if (e.kind == LlmEvent::Kind::kToolCall) {
          if (!e.tool_name.empty()) calls.push_back(e);
          args += e.text;
        }
      },
      nullptr);
  ASSERT_TRUE(r.ok()) << r.status.ToString();
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(r.response.content, "Reading it now.");
  EXPECT_EQ(streamed, "Reading it now.");
  ASSERT_EQ(r.response.tool_calls.size(), 1u);
  EXPECT_EQ(r.response.tool_calls[0].id, "toolu_1");
  EXPECT_EQ(r.response.tool_calls[0].name, "ReadFile");
  EXPECT_EQ(r.response.tool_calls[0].arguments, R"({"path":"a b.txt"})");
  EXPECT_EQ(Json::parse(args), Json::parse(r.response.tool_calls[0].arguments));
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].tool_id, "toolu_1");
  EXPECT_EQ(r.response.finish_reason, "tool_calls");
  EXPECT_EQ(r.response.model, "claude-sonnet-4-5");
  EXPECT_TRUE(r.response.usage.reported);
  EXPECT_GT(r.response.usage.prompt_tokens, 0);
  EXPECT_GT(r.response.usage.completion_tokens, 0);
  EXPECT_GE(r.response.usage.ttft_ms, 0);

  Json reqs = Requests(*f);
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0]["status"], 200);
  const Json& body = reqs[0]["body"];
  EXPECT_EQ(body["system"], Json::parse(R"([{"type":"text","text":"You are terse.",
                                             "cache_control":{"type":"ephemeral"}}])"));
  EXPECT_EQ(body["messages"], Json::parse(R"([{"role":"user","content":[{"type":"text",
      "text":"hello","cache_control":{"type":"ephemeral"}}]}])"));
  EXPECT_EQ(body["tools"][0]["name"], "ReadFile");
  EXPECT_EQ(body["tools"][0]["input_schema"]["required"], Json::array({"path"}));
  EXPECT_EQ(body["max_tokens"], 8192);
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(reqs[0]["cache"]["prompt_tokens"], r.response.usage.prompt_tokens);
  std::ifstream tee(req.request_json_path);
  EXPECT_EQ(Json::parse(tee), body);
}

TEST_F(AnthropicFakeTest, NonStreamedReply) {
  auto f =
      Start(R"({"replies":[{"text":"plain","tool_calls":[{"name":"A","arguments":{"x":1}}]}]})");
  ModelProfile p = Profile(*f);
  p.stream = false;
  HttpLlmClient client(p);
  LlmCallResult r = client.Chat(Conversation(), nullptr, nullptr);
  ASSERT_TRUE(r.ok()) << r.status.ToString();
  EXPECT_EQ(r.response.content, "plain");
  ASSERT_EQ(r.response.tool_calls.size(), 1u);
  EXPECT_EQ(r.response.tool_calls[0].name, "A");
  EXPECT_EQ(r.response.tool_calls[0].arguments, R"({"x":1})");
  EXPECT_EQ(r.response.finish_reason, "tool_calls");
  EXPECT_GT(r.response.usage.prompt_tokens, 0);
  Json reqs = Requests(*f);
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0]["status"], 200);
  EXPECT_EQ(reqs[0]["body"]["stream"], false);
}

// The answer's calls go back as the assistant's tool_use blocks and the
// results as one user message of tool_result blocks; the fake (which
// rejects a tool_use without its result) accepts the turn and its script
// sees the results.
TEST_F(AnthropicFakeTest, ToolCallRoundTrip) {
  auto f = Start(R"({"replies":[
    {"tool_calls":[{"id":"toolu_a","name":"ReadFile","arguments":{"path":"a"}},
                   {"id":"toolu_b","name":"ReadFile","arguments":{"path":"b"}}]},
    {"match":{"any_message_contains":["CONTENT OF A","CONTENT OF B"]},"text":"Both read."}]})");
  HttpLlmClient client(Profile(*f));
  ChatRequest req = Conversation("read a and b");
  req.tools_path = ReadFileTool();
  LlmCallResult first = client.Chat(req, nullptr, nullptr);
  ASSERT_TRUE(first.ok()) << first.status.ToString();
  ASSERT_EQ(first.response.tool_calls.size(), 2u);

  Write("current.jsonl", Line("system", "You are terse.") + Line("user", "read a and b") +
                             ToolCallsLine(first.response.tool_calls) +
                             ToolLine("toolu_a", "CONTENT OF A") +
                             ToolLine("toolu_b", "CONTENT OF B"));
  LlmCallResult second = client.Chat(req, nullptr, nullptr);
  ASSERT_TRUE(second.ok()) << second.status.ToString();
  EXPECT_EQ(second.response.content, "Both read.");
  EXPECT_EQ(second.response.finish_reason, "stop");

  Json reqs = Requests(*f);
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[1]["reply"], 1);
  const Json& msgs = reqs[1]["body"]["messages"];
  ASSERT_EQ(msgs.size(), 3u);
  EXPECT_EQ(msgs[1], Json::parse(R"({"role":"assistant","content":[
    {"type":"tool_use","id":"toolu_a","name":"ReadFile","input":{"path":"a"}},
    {"type":"tool_use","id":"toolu_b","name":"ReadFile","input":{"path":"b"}}]})"));
  EXPECT_EQ(msgs[2], Json::parse(R"({"role":"user","content":[
    {"type":"tool_result","tool_use_id":"toolu_a","content":"CONTENT OF A"},
    {"type":"tool_result","tool_use_id":"toolu_b","content":"CONTENT OF B",
     "cache_control":{"type":"ephemeral"}}]})"));
}

TEST_F(AnthropicFakeTest, OverloadedIsRetried) {
  auto f = Start(R"({"replies":[{"status":529,"error_message":"Overloaded"},
                                {"text":"second try"}]})");
  HttpLlmClient client(Profile(*f));
  std::vector<LlmEvent> retries;
  LlmCallResult r = ChatKeepingRetries(client, &retries);
  ASSERT_TRUE(r.ok()) << r.status.ToString();
  EXPECT_EQ(r.response.content, "second try");
  EXPECT_EQ(r.attempts, 2);
  ASSERT_EQ(retries.size(), 1u);
  EXPECT_EQ(retries[0].attempt, 1);
  EXPECT_NE(retries[0].error.find("overloaded_error"), std::string::npos) << retries[0].error;
  EXPECT_EQ(Requests(*f).size(), 2u);
}

TEST_F(AnthropicFakeTest, RateLimitHonoursRetryAfter) {
  auto f = Start(R"({"replies":[{"status":429,"error_message":"Rate limited","retry_after":0},
                                {"text":"after wait"}]})");
  ModelProfile p = Profile(*f);
  p.backoff_base_ms = 40;  // our own backoff would wait this long (± jitter), not 0
  HttpLlmClient client(p);
  std::vector<LlmEvent> retries;
  LlmCallResult r = ChatKeepingRetries(client, &retries);
  ASSERT_TRUE(r.ok()) << r.status.ToString();
  EXPECT_EQ(r.response.content, "after wait");
  EXPECT_EQ(r.attempts, 2);
  ASSERT_EQ(retries.size(), 1u);
  EXPECT_EQ(retries[0].delay_ms, 0);  // the server's Retry-After
  EXPECT_NE(retries[0].error.find("rate_limit_error"), std::string::npos) << retries[0].error;
}

TEST_F(AnthropicFakeTest, InvalidRequestIsTerminal) {
  auto f = Start(R"({"replies":[{"status":400,"error_message":"Bad request"},{"text":"never"}]})");
  HttpLlmClient client(Profile(*f));
  LlmCallResult r = client.Chat(Conversation(), nullptr, nullptr);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error_kind, LlmErrorKind::kTerminal);
  EXPECT_EQ(r.status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.http_status, 400);
  EXPECT_EQ(r.attempts, 1);
  EXPECT_NE(r.status.ToString().find("invalid_request_error"), std::string::npos);
  EXPECT_EQ(Requests(*f).size(), 1u);
}

TEST_F(AnthropicFakeTest, PromptTooLongIsTheContextLengthError) {
  auto f = Start(R"({"replies":[{"status":400,
    "error_message":"prompt is too long: 215000 tokens > 200000 maximum"}]})");
  HttpLlmClient client(Profile(*f));
  LlmCallResult r = client.Chat(Conversation(), nullptr, nullptr);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error_kind, LlmErrorKind::kContextLengthExceeded);
  EXPECT_EQ(r.status.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(r.attempts, 1);
}

// An `error` event mid-stream (the API overloading) and a stream cut before
// message_stop are both retried; the answer is the next attempt's.
TEST_F(AnthropicFakeTest, StreamErrorAndCutStreamAreRetried) {
  auto f = Start(R"({"replies":[{"text":"__stream_error__"},
    {"text":"PARTIAL ANSWER THAT GETS CUT","chunk_chars":4,"cut_after":3},
    {"text":"whole"}]})");
  HttpLlmClient client(Profile(*f));
  std::vector<std::string> errors;
  LlmCallResult r = client.Chat(
      Conversation(),
      [&](const LlmEvent& e) {
        if (e.kind == LlmEvent::Kind::kRetry) errors.push_back(e.error);
      },
      nullptr);
  ASSERT_TRUE(r.ok()) << r.status.ToString();
  EXPECT_EQ(r.response.content, "whole");
  EXPECT_EQ(r.attempts, 3);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].find("Overloaded"), std::string::npos) << errors[0];
}

// The breakpoints at work: the first request of a conversation writes its
// prefix to the cache, the next (one turn longer) reads nearly all of its
// prompt from it — through the breakpoint on the line before the newest
// assistant turn.
TEST_F(AnthropicFakeTest, GrowingConversationReadsItsPrefixFromTheCache) {
  for (const char* ttl : {"5m", "1h"}) {
    SCOPED_TRACE(ttl);
    auto f = Start(R"({"default":{"text":"Understood, continuing with the task."}})");
    ModelProfile p = Profile(*f);
    p.cache_ttl = ttl;
    HttpLlmClient client(p);
    std::string history = History(RulesSystem(300), 30);
    ChatRequest req;
    req.tools_path = ReadFileTool();
    req.messages_path = Write("current.jsonl", AskNext(history));
    LlmCallResult first = client.Chat(req, nullptr, nullptr);
    ASSERT_TRUE(first.ok()) << first.status.ToString();
    EXPECT_GT(first.response.usage.cache_write_tokens, 0);
    EXPECT_GT(first.response.usage.prompt_tokens, 1024);

    Write("current.jsonl", OneTurnLater(history));
    LlmCallResult second = client.Chat(req, nullptr, nullptr);
    ASSERT_TRUE(second.ok()) << second.status.ToString();
    const LlmUsage& u = second.response.usage;
    EXPECT_GT(u.prompt_tokens, first.response.usage.prompt_tokens);
    EXPECT_GE(u.CachedPct(), 95.0) << u.cached_tokens << "/" << u.prompt_tokens;
    EXPECT_GT(u.cache_write_tokens, 0);  // the new tail, for the request after
    EXPECT_GE(u.prompt_tokens, u.cached_tokens + u.cache_write_tokens);
    std::printf("anthropic cache (%s): %lld of %lld prompt tokens read (%.1f%%), %lld written\n",
                ttl, static_cast<long long>(u.cached_tokens),
                static_cast<long long>(u.prompt_tokens), u.CachedPct(),
                static_cast<long long>(u.cache_write_tokens));

    Json reqs = Requests(*f);
    ASSERT_EQ(reqs.size(), 2u);
    EXPECT_EQ(reqs[1]["cache"]["cache_read"], u.cached_tokens);
    EXPECT_EQ(reqs[1]["cache"]["cache_write"], u.cache_write_tokens);
    EXPECT_EQ(reqs[1]["cache"]["prompt_tokens"], u.prompt_tokens);
  }
}

}  // namespace anthropic_fakellm_test
}  // namespace maestro::llm
