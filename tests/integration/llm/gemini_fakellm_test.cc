// Integration: maestro's HttpLlmClient with provider "gemini" against the
// real maestro-fakellm binary's generateContent fake over loopback — the
// body translated from current.jsonl, streamed and whole replies, a function
// call round trip, the retries and error kinds, and the implicit cache.
#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "fakellm_fixture.h"
#include "llm/llm_client.h"

namespace maestro::llm {
// Named, not anonymous: the test files may be compiled as one unit.
namespace gemini_fakellm_test {

namespace fs = std::filesystem;
using maestro::testing::FakeLlmProcess;
using maestro::testing::FakeLlmTest;

class GeminiFakeTest : public FakeLlmTest {
 protected:
  GeminiFakeTest() : FakeLlmTest("maestro_gemit_") {}

  static ModelProfile Profile(const FakeLlmProcess& f) {
    ModelProfile p = FastRetryProfile("http://127.0.0.1:" + std::to_string(f.port()) + "/v1beta");
    p.provider = "gemini";
    p.api_key = "test-key";
    p.model = "gemini-2.5-flash";
    return p;
  }
  std::string ReadFileTool() {
    return Write("tools.json", R"([{"type":"function","function":{"name":"ReadFile",
      "description":"Read a file","parameters":{"type":"object",
      "properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}}}])");
  }
};

TEST_F(GeminiFakeTest, StreamsThoughtsTextAndAFunctionCall) {
  auto f = Start(R"({"replies":[{"reasoning":"think first","text":"Reading it now.",
    "chunk_chars":4,"tool_calls":[{"id":"fc1","name":"ReadFile","arguments":{"path":"a b.txt"}}]}]})");
  HttpLlmClient client(Profile(*f));
  ChatRequest req = Conversation();
  req.tools_path = ReadFileTool();
  req.request_json_path = (dir_ / "request.json").string();
  std::string streamed, thought;
  std::vector<LlmEvent> calls;
  LlmCallResult r = client.Chat(
      req,
      [&](const LlmEvent& e) {
        if (e.kind == LlmEvent::Kind::kText) streamed += e.text;
        if (e.kind == LlmEvent::Kind::kReasoning) thought += e.text;
        if (e.kind == LlmEvent::Kind::kToolCall) calls.push_back(e);
      },
      nullptr);
  ASSERT_TRUE(r.ok()) << r.status.ToString();
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(r.response.content, "Reading it now.");
  EXPECT_EQ(streamed, "Reading it now.");
  EXPECT_EQ(r.response.reasoning, "think first");
  EXPECT_EQ(thought, "think first");
  ASSERT_EQ(r.response.tool_calls.size(), 1u);
  EXPECT_EQ(r.response.tool_calls[0].id, "fc1");
  EXPECT_EQ(r.response.tool_calls[0].name, "ReadFile");
  EXPECT_EQ(r.response.tool_calls[0].arguments, R"({"path":"a b.txt"})");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].tool_name, "ReadFile");
  EXPECT_EQ(r.response.finish_reason, "tool_calls");
  EXPECT_EQ(r.response.model, "gemini-2.5-flash");
  EXPECT_TRUE(r.response.usage.reported);
  EXPECT_GT(r.response.usage.prompt_tokens, 0);
  EXPECT_GT(r.response.usage.completion_tokens, 0);
  EXPECT_GE(r.response.usage.ttft_ms, 0);

  Json reqs = Requests(*f);
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0]["status"], 200);
  const Json& body = reqs[0]["body"];
  EXPECT_EQ(body["systemInstruction"], Json::parse(R"({"parts":[{"text":"You are terse."}]})"));
  EXPECT_EQ(body["contents"], Json::parse(R"([{"role":"user","parts":[{"text":"hello"}]}])"));
  EXPECT_EQ(body["tools"][0]["functionDeclarations"][0]["name"], "ReadFile");
  EXPECT_EQ(
      body["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"]["additionalProperties"],
      false);
  EXPECT_EQ(body["generationConfig"]["maxOutputTokens"], 8192);
  EXPECT_EQ(reqs[0]["cache"]["prompt_tokens"], r.response.usage.prompt_tokens);
  std::ifstream tee(req.request_json_path);
  EXPECT_EQ(Json::parse(tee), body);
}

TEST_F(GeminiFakeTest, NonStreamedReply) {
  auto f =
      Start(R"({"replies":[{"text":"plain","tool_calls":[{"name":"A","arguments":{"x":1}}]}]})");
  ModelProfile p = Profile(*f);
  p.stream = false;
  HttpLlmClient client(p);
  int deltas = 0;
  LlmCallResult r = client.Chat(
      Conversation(), [&](const LlmEvent&) { ++deltas; }, nullptr);
  ASSERT_TRUE(r.ok()) << r.status.ToString();
  EXPECT_EQ(r.response.content, "plain");
  ASSERT_EQ(r.response.tool_calls.size(), 1u);
  EXPECT_EQ(r.response.tool_calls[0].name, "A");
  EXPECT_EQ(r.response.tool_calls[0].arguments, R"({"x":1})");
  EXPECT_EQ(r.response.finish_reason, "tool_calls");
  EXPECT_EQ(deltas, 2);  // the text and the call, as one reply
  EXPECT_GT(r.response.usage.prompt_tokens, 0);
  EXPECT_EQ(Requests(*f)[0]["status"], 200);
}

// The answer's call goes back as the model turn's functionCall and its
// results as functionResponse parts naming it; the fake accepts the turn
// and its script sees the results.
TEST_F(GeminiFakeTest, FunctionCallRoundTrip) {
  auto f = Start(R"({"replies":[
    {"tool_calls":[{"id":"c-a","name":"ReadFile","arguments":{"path":"a"}},
                   {"id":"c-b","name":"ReadFile","arguments":{"path":"b"}}]},
    {"match":{"any_message_contains":["CONTENT OF A","CONTENT OF B"]},"text":"Both read."}]})");
  HttpLlmClient client(Profile(*f));
  ChatRequest req = Conversation("read a and b");
  req.tools_path = ReadFileTool();
  LlmCallResult first = client.Chat(req, nullptr, nullptr);
  ASSERT_TRUE(first.ok()) << first.status.ToString();
  ASSERT_EQ(first.response.tool_calls.size(), 2u);

  std::string history = Line("system", "You are terse.") + Line("user", "read a and b") +
                        ToolCallsLine(first.response.tool_calls) + ToolLine("c-a", "CONTENT OF A") +
                        ToolLine("c-b", "CONTENT OF B");
  Write("current.jsonl", history);
  LlmCallResult second = client.Chat(req, nullptr, nullptr);
  ASSERT_TRUE(second.ok()) << second.status.ToString();
  EXPECT_EQ(second.response.content, "Both read.");
  EXPECT_EQ(second.response.finish_reason, "stop");

  Json reqs = Requests(*f);
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[1]["reply"], 1);
  const Json& contents = reqs[1]["body"]["contents"];
  ASSERT_EQ(contents.size(), 3u);
  EXPECT_EQ(contents[1], Json::parse(R"({"role":"model","parts":[
    {"functionCall":{"id":"c-a","name":"ReadFile","args":{"path":"a"}}},
    {"functionCall":{"id":"c-b","name":"ReadFile","args":{"path":"b"}}}]})"));
  EXPECT_EQ(contents[2], Json::parse(R"({"role":"user","parts":[
    {"functionResponse":{"id":"c-a","name":"ReadFile","response":{"result":"CONTENT OF A"}}},
    {"functionResponse":{"id":"c-b","name":"ReadFile","response":{"result":"CONTENT OF B"}}}]})"));
}

// Gemini 3 models: the replayed call carries the documented signature
// sentinel, and the fake (which validates every part) accepts it.
TEST_F(GeminiFakeTest, Gemini3ReplayedCallCarriesTheSignatureSentinel) {
  auto f = Start(R"({"default":{"text":"ok"}})");
  ModelProfile p = Profile(*f);
  p.model = "gemini-3-flash-preview";
  HttpLlmClient client(p);
  ChatRequest req;
  req.tools_path = ReadFileTool();
  req.messages_path =
      Write("current.jsonl", Line("user", "read a") +
                                 Line(Json::parse(R"({"role":"assistant","content":null,
        "tool_calls":[{"id":"c1","type":"function","function":{"name":"ReadFile",
        "arguments":"{\"path\":\"a\"}"}}]})")) +
                                 ToolLine("c1", "A"));
  LlmCallResult r = client.Chat(req, nullptr, nullptr);
  ASSERT_TRUE(r.ok()) << r.status.ToString();
  Json reqs = Requests(*f);
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0]["body"]["contents"][1]["parts"][0]["thoughtSignature"],
            "skip_thought_signature_validator");
  EXPECT_FALSE(reqs[0]["body"].contains("systemInstruction"));
}

TEST_F(GeminiFakeTest, ResourceExhaustedIsRetried) {
  auto f = Start(R"({"replies":[{"status":429,"error_message":"Quota exceeded","retry_after":0},
                                {"text":"after wait"}]})");
  HttpLlmClient client(Profile(*f));
  std::vector<LlmEvent> retries;
  LlmCallResult r = ChatKeepingRetries(client, &retries);
  ASSERT_TRUE(r.ok()) << r.status.ToString();
  EXPECT_EQ(r.response.content, "after wait");
  EXPECT_EQ(r.attempts, 2);
  ASSERT_EQ(retries.size(), 1u);
  EXPECT_EQ(retries[0].delay_ms, 0);  // the server's Retry-After, not our backoff
  EXPECT_NE(retries[0].error.find("RESOURCE_EXHAUSTED"), std::string::npos) << retries[0].error;
}

TEST_F(GeminiFakeTest, UnavailableIsRetried) {
  auto f = Start(R"({"replies":[{"status":503,"error_message":"The model is overloaded."},
                                {"text":"second try"}]})");
  HttpLlmClient client(Profile(*f));
  LlmCallResult r = client.Chat(Conversation(), nullptr, nullptr);
  ASSERT_TRUE(r.ok()) << r.status.ToString();
  EXPECT_EQ(r.response.content, "second try");
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(Requests(*f).size(), 2u);
}

TEST_F(GeminiFakeTest, InvalidArgumentIsTerminal) {
  auto f = Start(R"({"replies":[{"status":400,"error_message":"Bad request"},{"text":"never"}]})");
  HttpLlmClient client(Profile(*f));
  LlmCallResult r = client.Chat(Conversation(), nullptr, nullptr);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error_kind, LlmErrorKind::kTerminal);
  EXPECT_EQ(r.status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.http_status, 400);
  EXPECT_EQ(r.attempts, 1);
  EXPECT_NE(r.status.ToString().find("INVALID_ARGUMENT"), std::string::npos);
  EXPECT_EQ(Requests(*f).size(), 1u);
}

TEST_F(GeminiFakeTest, ContextLengthErrorIsTyped) {
  auto f = Start(R"({"replies":[{"status":400,"error_message":
    "The input token count (2000000) exceeds the maximum number of tokens allowed (1048576)."}]})");
  HttpLlmClient client(Profile(*f));
  LlmCallResult r = client.Chat(Conversation(), nullptr, nullptr);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error_kind, LlmErrorKind::kContextLengthExceeded);
  EXPECT_EQ(r.status.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(r.attempts, 1);
}

// A stream cut before its finishReason is incomplete: retried, and the
// answer is the second attempt's.
TEST_F(GeminiFakeTest, CutStreamIsRetried) {
  auto f = Start(R"({"replies":[{"text":"PARTIAL ANSWER THAT GETS CUT","chunk_chars":4,
                                 "cut_after":2},{"text":"whole"}]})");
  HttpLlmClient client(Profile(*f));
  LlmCallResult r = client.Chat(Conversation(), nullptr, nullptr);
  ASSERT_TRUE(r.ok()) << r.status.ToString();
  EXPECT_EQ(r.response.content, "whole");
  EXPECT_EQ(r.attempts, 2);
}

// Implicit caching: maestro's byte-stable prefix (system, tools, replayed
// turns) makes the next request of a growing conversation read almost all
// of its prompt from the cache.
TEST_F(GeminiFakeTest, GrowingConversationReadsItsPrefixFromTheCache) {
  auto f = Start(R"({"default":{"text":"Understood, continuing with the task."}})");
  HttpLlmClient client(Profile(*f));
  std::string history = History(RulesSystem(300), 10);
  ChatRequest req;
  req.tools_path = ReadFileTool();
  req.messages_path = Write("current.jsonl", AskNext(history));
  LlmCallResult first = client.Chat(req, nullptr, nullptr);
  ASSERT_TRUE(first.ok()) << first.status.ToString();
  EXPECT_EQ(first.response.usage.cached_tokens, 0);
  EXPECT_GT(first.response.usage.prompt_tokens, 1024);

  Write("current.jsonl", OneTurnLater(history));
  LlmCallResult second = client.Chat(req, nullptr, nullptr);
  ASSERT_TRUE(second.ok()) << second.status.ToString();
  const LlmUsage& u = second.response.usage;
  EXPECT_GT(u.prompt_tokens, first.response.usage.prompt_tokens);
  EXPECT_GE(u.CachedPct(), 90.0) << u.cached_tokens << "/" << u.prompt_tokens;
  std::printf("gemini implicit cache: %lld of %lld prompt tokens read (%.1f%%)\n",
              static_cast<long long>(u.cached_tokens), static_cast<long long>(u.prompt_tokens),
              u.CachedPct());
  EXPECT_EQ(u.cache_write_tokens, 0);

  Json reqs = Requests(*f);
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[1]["cache"]["cache_read"], u.cached_tokens);
  EXPECT_EQ(reqs[1]["cache"]["prompt_tokens"], u.prompt_tokens);
}

}  // namespace gemini_fakellm_test
}  // namespace maestro::llm
