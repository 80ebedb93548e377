#include "llm/stream_assembler.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/sse_parser.h"

namespace maestro::llm {
namespace {

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(MAESTRO_LLM_FIXTURES) + "/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Parsed {
  Status status;
  ChatResponse resp;
  std::vector<LlmEvent> events;
  bool done = false;
  bool cut = false;
};

Parsed ParseStream(const std::string& bytes, size_t step) {
  Parsed out;
  StreamAssembler a([&](const LlmEvent& e) { out.events.push_back(e); });
  SseParser p([&](const SseEvent& e) {
    Status st = a.OnData(e.data);
    if (out.status.ok() && !st.ok()) out.status = st;
  });
  for (size_t i = 0; i < bytes.size(); i += step) p.Feed(std::string_view(bytes).substr(i, step));
  out.cut = p.Finish();
  out.done = a.done();
  out.resp = a.Take();
  return out;
}

std::string Data(const std::string& json) { return "data: " + json + "\n\n"; }

TEST(StreamAssembler, LlamaCppToolCallWithTimings) {
  std::string s = ReadFixture("llamacpp_tool_call.sse");
  ASSERT_FALSE(s.empty());
  for (size_t step : {1, 7, 64, 100000}) {
    Parsed p = ParseStream(s, step);
    ASSERT_TRUE(p.status.ok()) << p.status.ToString();
    EXPECT_TRUE(p.done);
    EXPECT_EQ(p.resp.reasoning, "Let me read the file.");
    EXPECT_EQ(p.resp.content, "");
    ASSERT_EQ(p.resp.tool_calls.size(), 1u);
    EXPECT_EQ(p.resp.tool_calls[0].id, "wW3kfc1Hp0");
    EXPECT_EQ(p.resp.tool_calls[0].name, "ReadFile");
    EXPECT_EQ(p.resp.tool_calls[0].arguments, R"({"path": "src/main.cc", "limit": 200})");
    EXPECT_EQ(p.resp.finish_reason, "tool_calls");
    EXPECT_EQ(p.resp.usage.prompt_tokens, 1200);
    EXPECT_EQ(p.resp.usage.cached_tokens, 1188);  // from timings.cache_n
    EXPECT_EQ(p.resp.usage.completion_tokens, 31);
  }
}

TEST(StreamAssembler, VllmTextWithUsageInEmptyChoicesChunk) {
  Parsed p = ParseStream(ReadFixture("vllm_text.sse"), 5);
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_EQ(p.resp.content, "Hello, world!");
  EXPECT_EQ(p.resp.reasoning, "Thinking briefly.");
  EXPECT_EQ(p.resp.finish_reason, "stop");
  EXPECT_EQ(p.resp.usage.prompt_tokens, 50);
  EXPECT_EQ(p.resp.usage.cached_tokens, 32);
  EXPECT_EQ(p.resp.usage.completion_tokens, 10);
  EXPECT_EQ(p.resp.model, "Qwen/Qwen3-8B");
  // Deltas arrive in order, as the UI must see them.
  std::string streamed;
  for (const LlmEvent& e : p.events) {
    if (e.kind == LlmEvent::Kind::kText) streamed += e.text;
  }
  EXPECT_EQ(streamed, "Hello, world!");
}

TEST(StreamAssembler, OpenAiTwoToolCalls) {
  Parsed p = ParseStream(ReadFixture("openai_parallel_tools.sse"), 13);
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  ASSERT_EQ(p.resp.tool_calls.size(), 2u);
  EXPECT_EQ(p.resp.tool_calls[0].name, "get_weather");
  EXPECT_EQ(p.resp.tool_calls[0].arguments, R"({"location": "Paris"})");
  EXPECT_EQ(p.resp.tool_calls[1].id, "call_b2");
  EXPECT_EQ(p.resp.tool_calls[1].arguments, R"({"tz": "CET"})");
  EXPECT_EQ(p.resp.usage.cached_tokens, 64);
  EXPECT_EQ(p.resp.usage.prompt_tokens, 82);
}

TEST(StreamAssembler, CrLfKeepAlives) {
  Parsed p = ParseStream(ReadFixture("crlf_keepalive.sse"), 1);
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.resp.content, "Hi there");
  EXPECT_EQ(p.resp.finish_reason, "stop");
  EXPECT_TRUE(p.done);
}

TEST(StreamAssembler, ParallelToolCallsInterleavedByIndex) {
  std::string s;
  s += Data(
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"ReadFile","arguments":""}}]}}]})");
  s += Data(
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","type":"function","function":{"name":"Grep","arguments":"{\"pat"}}]}}]})");
  s += Data(
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}}]})");
  s += Data(
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"tern\":\"x\"}"}}]}}]})");
  s += Data(
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"a.txt\"}"}}]}}]})");
  s += Data(R"({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})");
  s += Data("[DONE]");
  Parsed p = ParseStream(s, 9);
  ASSERT_TRUE(p.status.ok());
  ASSERT_EQ(p.resp.tool_calls.size(), 2u);
  EXPECT_EQ(p.resp.tool_calls[0].id, "a");
  EXPECT_EQ(p.resp.tool_calls[0].arguments, R"({"path":"a.txt"})");
  EXPECT_EQ(p.resp.tool_calls[1].name, "Grep");
  EXPECT_EQ(p.resp.tool_calls[1].arguments, R"({"pattern":"x"})");
  EXPECT_TRUE(Json::parse(p.resp.tool_calls[0].arguments).is_object());
}

TEST(StreamAssembler, ArgumentsSplitIntoSingleCharacters) {
  const std::string args = R"({"cmd":"ls -la \"dir with spaces\"","n":[1,2,3]})";
  std::string s = Data(
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"RunCommand"}}]}}]})");
  for (char ch : args) {
    Json d = {{"choices",
               {{{"index", 0},
                 {"delta",
                  {{"tool_calls",
                    {{{"index", 0}, {"function", {{"arguments", std::string(1, ch)}}}}}}}}}}}};
    s += Data(d.dump());
  }
  s += Data(R"({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})");
  Parsed p = ParseStream(s, 3);
  ASSERT_EQ(p.resp.tool_calls.size(), 1u);
  EXPECT_EQ(p.resp.tool_calls[0].arguments, args);
  size_t fragments = 0;
  for (const LlmEvent& e : p.events) fragments += e.kind == LlmEvent::Kind::kToolCall;
  EXPECT_EQ(fragments, args.size() + 1);
}

TEST(StreamAssembler, StreamCutMidwayHasNoFinishReason) {
  std::string s = ReadFixture("vllm_text.sse");
  std::string cut = s.substr(0, s.size() / 2);
  Parsed p = ParseStream(cut, 11);
  EXPECT_TRUE(p.status.ok());
  EXPECT_TRUE(p.resp.finish_reason.empty());
  EXPECT_FALSE(p.done);
  EXPECT_TRUE(p.cut);
}

TEST(StreamAssembler, ErrorChunkAndMalformedChunkAreErrors) {
  Parsed p = ParseStream(Data(R"({"error":{"code":500,"message":"boom"}})"), 100);
  EXPECT_EQ(p.status.code(), StatusCode::kUnavailable);
  EXPECT_NE(p.status.message().find("boom"), std::string::npos);
  p = ParseStream(Data("{not json"), 100);
  EXPECT_FALSE(p.status.ok());
}

TEST(StreamAssembler, NonStreamedCompletion) {
  StreamAssembler a;
  Json j = Json::parse(R"({"id":"x","model":"m","choices":[{"index":0,"message":{"role":"assistant",
    "content":"hi","tool_calls":[{"id":"t","type":"function","function":{"name":"f","arguments":"{}"}}]},
    "finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":2,
    "prompt_tokens_details":{"cached_tokens":8}}})");
  ASSERT_TRUE(a.ApplyCompletion(j).ok());
  ChatResponse r = a.Take();
  EXPECT_EQ(r.content, "hi");
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].name, "f");
  EXPECT_EQ(r.usage.cached_tokens, 8);
  EXPECT_NEAR(r.usage.CachedPct(), 80.0, 1e-9);
}

}  // namespace
}  // namespace maestro::llm
