// Integration: the real HttpLlmClient against the real maestro-fakellm binary
// over loopback. Covers retries (429 / 500 / cut stream), terminal errors,
// typed context-length errors, cancellation latency and the prompt-cache
// figures for append / tool change / system change.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "fakellm/prompt_cache.h"
#include "fakellm_fixture.h"
#include "llm/llm_client.h"

namespace maestro::llm {
namespace {

namespace fs = std::filesystem;
using maestro::testing::FakeLlmProcess;
using maestro::testing::FakeLlmTest;
using Clock = std::chrono::steady_clock;

int64_t MsSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

class LlmFakeTest : public FakeLlmTest {
 protected:
  LlmFakeTest() : FakeLlmTest("maestro_llmit_") {}

  static ModelProfile Profile(const FakeLlmProcess& f) {
    ModelProfile p = FastRetryProfile(f.base_url());
    p.model = "fake-model";
    return p;
  }
};

TEST_F(LlmFakeTest, StreamsTextReasoningAndToolCallsWithDeltas) {
  auto f = Start(R"({"replies":[{"reasoning":"think first","text":"Reading it now.","chunk_chars":3,
    "keepalive":true,"tool_calls":[{"name":"ReadFile","arguments":{"path":"a b.txt","n":[1,2]}},
                                   {"name":"Grep","arguments":{"pattern":"x"}}]}]})");
  HttpLlmClient client(Profile(*f));
  ChatRequest req = Conversation();
  req.tools_path = Write("tools.json", R"([{"type":"function","function":{"name":"ReadFile"}}])");
  req.request_json_path = (dir_ / "request.json").string();
  std::string streamed;
  int tool_fragments = 0;
  LlmCallResult r = client.Chat(
      req,
      [&](const LlmEvent& e) {
        if (e.kind == LlmEvent::Kind::kText) streamed += e.text;
        if (e.kind == LlmEvent::Kind::kToolCall) ++tool_fragments;
      },
      nullptr);
  ASSERT_TRUE(r.ok()) << r.status.ToString();
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(r.response.content, "Reading it now.");
  EXPECT_EQ(streamed, "Reading it now.");
  EXPECT_EQ(r.response.reasoning, "think first");
  ASSERT_EQ(r.response.tool_calls.size(), 2u);
  EXPECT_EQ(Json::parse(r.response.tool_calls[0].arguments)["path"], "a b.txt");
  EXPECT_EQ(r.response.tool_calls[1].name, "Grep");
  EXPECT_GT(tool_fragments, 4);  // arguments arrived in many chunks
  EXPECT_EQ(r.response.finish_reason, "tool_calls");
  EXPECT_GT(r.response.usage.prompt_tokens, 0);
  EXPECT_GE(r.response.usage.ttft_ms, 0);
  // The server received exactly the files' content, and request.json holds it.
  Json reqs = Requests(*f);
  ASSERT_EQ(reqs.size(), 1u);
  Json body = reqs[0]["body"];
  EXPECT_EQ(body["messages"][1]["content"], "hello");
  EXPECT_EQ(body["tools"][0]["function"]["name"], "ReadFile");
  EXPECT_EQ(body["stream_options"]["include_usage"], true);
  std::ifstream tee(req.request_json_path);
  EXPECT_EQ(Json::parse(tee), body);
  EXPECT_EQ(reqs[0]["cache"]["prompt_tokens"], r.response.usage.prompt_tokens);
}

TEST_F(LlmFakeTest, NonStreamingMode) {
  auto f = Start(R"({"replies":[{"text":"plain","tool_calls":[{"name":"A","arguments":{}}]}]})");
  ModelProfile p = Profile(*f);
  p.stream = false;
  HttpLlmClient client(p);
  LlmCallResult r = client.Chat(Conversation(), nullptr, nullptr);
  ASSERT_TRUE(r.ok()) << r.status.ToString();
  EXPECT_EQ(r.response.content, "plain");
  ASSERT_EQ(r.response.tool_calls.size(), 1u);
  EXPECT_GT(r.response.usage.prompt_tokens, 0);
  EXPECT_EQ(Requests(*f)[0]["body"]["stream"], false);
}

// The client's connection to the server is kept alive between calls (core's
// HttpClient with keep_connections): an agent loop pays one TCP connect, not
// one per request. A server that went away leaves nothing in the way: the
// next server still gets the call. (A kept connection the server closed
// under a client, the body rewound and resent: core/http_exchange_test.cc.)
TEST_F(LlmFakeTest, OneConnectionServesTheCallsOfAClient) {
  auto f = Start(R"({"default":{"text":"ok"}})");
  HttpLlmClient client(Profile(*f));
  for (int i = 0; i < 3; ++i) {
    LlmCallResult r = client.Chat(Conversation(), nullptr, nullptr);
    ASSERT_TRUE(r.ok()) << r.status.ToString();
  }
  Json reqs = Requests(*f);
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[1]["remote_port"], reqs[0]["remote_port"]);
  EXPECT_EQ(reqs[2]["remote_port"], reqs[0]["remote_port"]);

  f.reset();
  auto g = Start(R"({"default":{"text":"second server"}})");
  HttpLlmClient other(Profile(*g));
  LlmCallResult r = other.Chat(Conversation(), nullptr, nullptr);
  ASSERT_TRUE(r.ok()) << r.status.ToString();
  EXPECT_EQ(r.response.content, "second server");
}

TEST_F(LlmFakeTest, RetriesOn429HonouringRetryAfter) {
  auto f = Start(R"({"replies":[{"status":429,"retry_after_ms":300},{"text":"after wait"}]})");
  ModelProfile p = Profile(*f);
  HttpLlmClient client(p);
  std::vector<LlmEvent> retries;
  auto t0 = Clock::now();
  LlmCallResult r = ChatKeepingRetries(client, &retries);
  ASSERT_TRUE(r.ok()) << r.status.ToString();
  EXPECT_EQ(r.response.content, "after wait");
  EXPECT_EQ(r.attempts, 2);
  ASSERT_EQ(retries.size(), 1u);
  EXPECT_EQ(retries[0].delay_ms, 300);  // not our 10 ms backoff
  EXPECT_NE(retries[0].error.find("429"), std::string::npos);
  EXPECT_GE(MsSince(t0), 300);
}

TEST_F(LlmFakeTest, RetriesOn500WithBackoffUntilTheLimit) {
  auto f = Start(R"({"replies":[{"status":500},{"status":503},{"text":"third time"}]})");
  HttpLlmClient client(Profile(*f));
  LlmCallResult r = client.Chat(Conversation(), nullptr, nullptr);
  ASSERT_TRUE(r.ok()) << r.status.ToString();
  EXPECT_EQ(r.attempts, 3);

  auto g = Start(R"({"replies":[{"status":500,"repeat":0}]})");
  ModelProfile p = Profile(*g);
  p.max_attempts = 3;
  HttpLlmClient failing(p);
  LlmCallResult e = failing.Chat(Conversation(), nullptr, nullptr);
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.error_kind, LlmErrorKind::kRetryable);
  EXPECT_EQ(e.status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(e.http_status, 500);
  EXPECT_EQ(e.attempts, 3);
  EXPECT_EQ(Requests(*g).size(), 3u);
}

TEST_F(LlmFakeTest, CutStreamIsRetriedAndThePartialAnswerDiscarded) {
  auto f = Start(R"({"replies":[
      {"text":"PARTIAL ANSWER THAT GETS CUT","chunk_chars":4,"cut_after":4},
      {"text":"complete answer"}]})");
  HttpLlmClient client(Profile(*f));
  std::vector<std::string> log;
  LlmCallResult r = client.Chat(
      Conversation(),
      [&](const LlmEvent& e) {
        if (e.kind == LlmEvent::Kind::kText) log.push_back("text:" + e.text);
        if (e.kind == LlmEvent::Kind::kRetry) log.push_back("retry");
      },
      nullptr);
  ASSERT_TRUE(r.ok()) << r.status.ToString();
  EXPECT_EQ(r.response.content, "complete answer");
  EXPECT_EQ(r.attempts, 2);
  ASSERT_GE(log.size(), 3u);
  EXPECT_EQ(log[0], "text:PART");  // deltas of the cut attempt were streamed...
  auto retry = std::find(log.begin(), log.end(), "retry");
  ASSERT_NE(retry, log.end());               // ...then voided by a retry event
  EXPECT_EQ(*(retry + 1), "text:complete");  // default chunk_chars 8
}

TEST_F(LlmFakeTest, TerminalErrorsAreNotRetried) {
  for (int status : {400, 401, 403, 404}) {
    auto f =
        Start(R"({"replies":[{"status":)" + std::to_string(status) + R"(},{"text":"never"}]})");
    HttpLlmClient client(Profile(*f));
    LlmCallResult r = client.Chat(Conversation(), nullptr, nullptr);
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.error_kind, LlmErrorKind::kTerminal) << status;
    EXPECT_EQ(r.status.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.http_status, status);
    EXPECT_EQ(r.attempts, 1);
    EXPECT_EQ(Requests(*f).size(), 1u);
  }
}

TEST_F(LlmFakeTest, ContextLengthExceededIsItsOwnTypedError) {
  auto f = Start(R"({"replies":[]})", {"--ctx-size", "20"});
  HttpLlmClient client(Profile(*f));
  LlmCallResult r = client.Chat(Conversation(std::string(400, 'q')), nullptr, nullptr);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error_kind, LlmErrorKind::kContextLengthExceeded);
  EXPECT_EQ(r.status.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(r.attempts, 1);
}

TEST_F(LlmFakeTest, CancelAbortsAStreamWithin200ms) {
  auto f = Start(R"({"replies":[
      {"text":"a long slow answer that would take many seconds to stream out","chunk_chars":1,
       "token_delay_ms":100},
      {"text":"stalled","delay_ms":10000}]})");
  HttpLlmClient client(Profile(*f));
  // 1. Mid-stream: cancel right after the first delta.
  CancelToken cancel;
  std::atomic<int64_t> cancelled_at_ns{0};
  std::thread canceller;
  auto t0 = Clock::now();
  LlmCallResult r = client.Chat(
      Conversation(),
      [&](const LlmEvent& e) {
        if (e.kind == LlmEvent::Kind::kText && !canceller.joinable()) {
          canceller = std::thread([&] {
            cancelled_at_ns = Clock::now().time_since_epoch().count();
            cancel.Cancel(CancelToken::Reason::kUserCancel);
          });
        }
      },
      &cancel);
  auto done = Clock::now();
  canceller.join();
  EXPECT_EQ(r.error_kind, LlmErrorKind::kCancelled);
  EXPECT_EQ(r.status.code(), StatusCode::kCancelled);
  int64_t latency_ms = (done.time_since_epoch().count() - cancelled_at_ns.load()) / 1'000'000;
  EXPECT_LT(latency_ms, 200);
  EXPECT_LT(MsSince(t0), 2000);

  // 2. Idle stream (no byte for 10 s): the poll loop still notices.
  CancelToken idle_cancel;
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    idle_cancel.Cancel(CancelToken::Reason::kShutdown);
  });
  auto t1 = Clock::now();
  LlmCallResult r2 = client.Chat(Conversation(), nullptr, &idle_cancel);
  int64_t elapsed = MsSince(t1);
  later.join();
  EXPECT_EQ(r2.error_kind, LlmErrorKind::kCancelled);
  EXPECT_LT(elapsed, 300 + 200);
}

TEST_F(LlmFakeTest, CancelDuringRetryBackoff) {
  auto f = Start(R"({"replies":[{"status":429,"retry_after":30}]})");
  HttpLlmClient client(Profile(*f));
  CancelToken cancel;
  LlmCallResult r = client.Chat(
      Conversation(),
      [&](const LlmEvent& e) {
        if (e.kind == LlmEvent::Kind::kRetry) cancel.Cancel(CancelToken::Reason::kUserCancel);
      },
      &cancel);
  EXPECT_EQ(r.error_kind, LlmErrorKind::kCancelled);
}

// The prompt-cache figures the client reports, for the three KV-cache laws.
class CacheFiguresTest : public LlmFakeTest {
 protected:
  static std::string Tools(const std::string& desc) {
    Json tools = Json::array();
    for (const char* name : {"ReadFile", "WriteFile", "Grep", "RunCommand"}) {
      Json params = {{"type", "object"}};
      params["properties"]["path"]["type"] = "string";
      Json fn = {{"name", name}, {"description", std::string(name) + ": " + desc}};
      fn["parameters"] = params;
      tools.push_back({{"type", "function"}, {"function", fn}});
    }
    return tools.dump();
  }
  std::string system_ = RulesSystem(400);
};

TEST_F(CacheFiguresTest, AppendToolChangeAndSystemChange) {
  auto f = Start(R"({"default":{"text":"Understood, continuing with the task."}})");
  HttpLlmClient client(Profile(*f));
  std::string history = History(system_, 10);
  ChatRequest req;
  req.tools_path = Write("tools.json", Tools("does its job."));
  req.messages_path = Write("current.jsonl", AskNext(history));
  LlmCallResult first = client.Chat(req, nullptr, nullptr);
  ASSERT_TRUE(first.ok()) << first.status.ToString();
  EXPECT_EQ(first.response.usage.cached_tokens, 0);

  // (a) Append-only: the previous answer and a new user message.
  Write("current.jsonl", OneTurnLater(history));
  LlmCallResult a = client.Chat(req, nullptr, nullptr);
  ASSERT_TRUE(a.ok());
  EXPECT_GE(a.response.usage.CachedPct(), 99.0)
      << a.response.usage.cached_tokens << "/" << a.response.usage.prompt_tokens;

  // (b) One byte of one tool description changes: only the system text survives.
  req.tools_path = Write("tools2.json", Tools("does its job!"));
  LlmCallResult b = client.Chat(req, nullptr, nullptr);
  ASSERT_TRUE(b.ok());
  int64_t system_tokens =
      static_cast<int64_t>(fakellm::Tokenize("<|im_start|>system\n" + system_).size());
  EXPECT_GE(b.response.usage.cached_tokens, system_tokens);
  EXPECT_LT(b.response.usage.cached_tokens, system_tokens + 150);  // tools header + first tool head
  EXPECT_LT(b.response.usage.CachedPct(), 95.0);

  // (c) A changed system text: nothing is reused.
  std::string changed =
      Line("system", "Changed. " + system_) + history.substr(Line("system", system_).size());
  Write("current.jsonl", AskNext(changed));
  LlmCallResult c = client.Chat(req, nullptr, nullptr);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c.response.usage.cached_tokens, 0);
  EXPECT_EQ(c.response.usage.CachedPct(), 0.0);

  // The client's figures are the server's.
  Json reqs = Requests(*f);
  ASSERT_EQ(reqs.size(), 4u);
  EXPECT_EQ(reqs[1]["cache"]["cache_n"], a.response.usage.cached_tokens);
  EXPECT_EQ(reqs[2]["cache"]["cache_n"], b.response.usage.cached_tokens);
}

}  // namespace
}  // namespace maestro::llm
