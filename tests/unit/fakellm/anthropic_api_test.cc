// The Anthropic Messages fake (fakellm/anthropic_api.cc): validation, the
// breakpoint prompt-cache model, the reply's shapes and the Script's view.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/env_wrapper.h"
#include "fakellm/provider_api.h"

namespace maestro::fakellm {
namespace {

// The cache's clock, moved by the tests.
class AnthClockEnv final : public EnvWrapper {
 public:
  AnthClockEnv() : EnvWrapper(Env::Default()) {}
  int64_t MonotonicMs() override { return now_ms; }
  int64_t now_ms = 1'000'000;
};

constexpr int64_t kMinute = 60 * 1000;

// A long system text, so its prefix clears min_cache_tokens on its own.
std::string LongSystem(const std::string& tag) {
  std::string s = "You are a careful coding agent " + tag + ". ";
  for (int i = 0; i < 40; ++i)
    s += "Rule number " + std::to_string(i) + " keep the prefix stable. ";
  return s;
}

Json Cc(const std::string& ttl = "") {
  Json cc = {{"type", "ephemeral"}};
  if (!ttl.empty()) cc["ttl"] = ttl;
  return cc;
}

Json TextBlock(const std::string& text, bool breakpoint = false, const std::string& ttl = "") {
  Json b = {{"type", "text"}, {"text", text}};
  if (breakpoint) b["cache_control"] = Cc(ttl);
  return b;
}

// A conversation of `turns` user/assistant pairs plus the final user turn;
// the system block and the last block carry breakpoints.
Json Conversation(int turns, const std::string& system_tag = "A", const std::string& ttl = "") {
  Json msgs = Json::array();
  for (int i = 0; i < turns; ++i) {
    msgs.push_back({{"role", "user"}, {"content", "question " + std::to_string(i)}});
    msgs.push_back({{"role", "assistant"}, {"content", "answer " + std::to_string(i)}});
  }
  msgs.push_back(
      {{"role", "user"},
       {"content", Json::array({TextBlock("question " + std::to_string(turns), true, ttl)})}});
  return {{"model", "claude-test"},
          {"max_tokens", 100},
          {"system", Json::array({TextBlock(LongSystem(system_tag), true, ttl)})},
          {"messages", msgs}};
}

// `b` with a Read tool offered, an assistant turn calling it (toolu_1) and
// the user turn answering with `result` as the tool_result's one block.
Json WithReadRound(Json b, const Json& result) {
  b["tools"] = {{{"name", "Read"}, {"input_schema", {{"type", "object"}}}}};
  Json use = {{"type", "tool_use"}, {"id", "toolu_1"}, {"name", "Read"}, {"input", Json::object()}};
  b["messages"].push_back({{"role", "assistant"}, {"content", Json::array({use})}});
  b["messages"].push_back({{"role", "user"},
                           {"content", Json::array({{{"type", "tool_result"},
                                                     {"tool_use_id", "toolu_1"},
                                                     {"content", Json::array({result})}}})}});
  return b;
}

class AnthropicApiTest : public ::testing::Test {
 protected:
  void Make(const Json& script_doc = Json::object(), int64_t min_cache_tokens = 100,
            int64_t ctx_size = 0) {
    ServerOptions opts;
    opts.env = &env_;
    opts.min_cache_tokens = min_cache_tokens;
    opts.ctx_size = ctx_size;
    auto s = Script::FromJson(script_doc);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    script_ = std::make_unique<Script>(std::move(*s));
    api_ = NewAnthropicApi(opts, script_.get());
  }
  void SetUp() override { Make(); }

  HttpAnswer Post(const Json& body, Json* record = nullptr, bool version = true) {
    ProviderRequest req;
    req.path = "/v1/messages";
    req.body = body.dump();
    req.seq = seq_++;
    if (version) req.headers["anthropic-version"] = "2023-06-01";
    Json local;
    return api_->Handle(req, record ? record : &local);
  }
  // The error message of a request that must be a 400.
  std::string Rejected(const Json& body) {
    HttpAnswer a = Post(body);
    EXPECT_EQ(a.status, 400);
    Json err = Json::parse(a.body);
    EXPECT_EQ(err["type"], "error");
    EXPECT_EQ(err["error"]["type"], "invalid_request_error");
    return err["error"].value("message", "");
  }
  Json Cache(const Json& body) {
    Json rec;
    HttpAnswer a = Post(body, &rec);
    EXPECT_EQ(a.status, 200) << a.body;
    Json usage = Json::parse(a.body)["usage"];
    // The reply's usage is the record's figures in Anthropic's terms.
    EXPECT_EQ(usage["cache_read_input_tokens"], rec["cache"]["cache_read"]);
    EXPECT_EQ(usage["cache_creation_input_tokens"], rec["cache"]["cache_write"]);
    EXPECT_EQ(usage["input_tokens"].get<int64_t>(), rec["cache"]["prompt_tokens"].get<int64_t>() -
                                                        rec["cache"]["cache_read"].get<int64_t>() -
                                                        rec["cache"]["cache_write"].get<int64_t>());
    return rec["cache"];
  }

  AnthClockEnv env_;
  std::unique_ptr<Script> script_;
  std::unique_ptr<ProviderApi> api_;
  int64_t seq_ = 0;
};

Json Minimal() {
  return {{"model", "claude-test"},
          {"max_tokens", 10},
          {"messages", Json::array({{{"role", "user"}, {"content", "hi"}}})}};
}

TEST_F(AnthropicApiTest, ValidationNamesTheField) {
  Json b = Minimal();
  b.erase("model");
  EXPECT_EQ(Rejected(b), "model: Field required");
  b = Minimal();
  b.erase("max_tokens");
  EXPECT_EQ(Rejected(b), "max_tokens: Field required");
  b = Minimal();
  b["max_tokens"] = 0;
  EXPECT_EQ(Rejected(b), "max_tokens: Input should be greater than or equal to 1");
  b = Minimal();
  b["max_tokens"] = "10";
  EXPECT_EQ(Rejected(b), "max_tokens: Input should be a valid integer");
  b = Minimal();
  b["messages"] = Json::array();
  EXPECT_EQ(Rejected(b), "messages: at least one message is required");
  b = Minimal();
  b["messages"][0]["role"] = "system";
  EXPECT_EQ(Rejected(b), "messages.0.role: Input should be 'user' or 'assistant'");
  b = Minimal();
  b["messages"] = {{{"role", "assistant"}, {"content", "x"}}};
  EXPECT_EQ(Rejected(b), "messages.0.role: first message must use the \"user\" role");
  b = Minimal();
  b["messages"][0]["content"] = Json::array({TextBlock("")});
  EXPECT_EQ(Rejected(b), "messages.0.content.0.text: text content blocks must be non-empty");
  b = Minimal();
  b["messages"][0]["content"] = Json::array({{{"type", "video"}}});
  EXPECT_EQ(Rejected(b),
            "messages.0.content.0.type: Input should be 'text', 'image', 'tool_use', "
            "'tool_result' or 'thinking'");
  b = Minimal();
  b["system"] = Json::array({{{"type", "image"}}});
  EXPECT_EQ(Rejected(b), "system.0.type: Input should be 'text'");
  b = Minimal();
  b["tools"] = {{{"name", "Read"}, {"input_schema", {{"type", "array"}}}}};
  EXPECT_EQ(Rejected(b), "tools.0.input_schema.type: Input should be 'object'");
  b = Minimal();
  b["messages"][0]["content"] = Json::array({TextBlock("x", true, "2h")});
  EXPECT_EQ(Rejected(b), "messages.0.content.0.cache_control.ttl: Input should be '5m' or '1h'");
  b = Conversation(0);
  b["messages"][0]["content"][0]["cache_control"]["ttl"] = "1h";  // after the system's 5m
  EXPECT_EQ(Rejected(b),
            "cache_control.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' "
            "cache_control block. Note that blocks are processed in the following order: "
            "`tools`, `system`, `messages`.");
  b = Minimal();
  b["stream_options"] = Json::object();  // an OpenAI field sent to Anthropic
  EXPECT_EQ(Rejected(b), "stream_options: Extra inputs are not permitted");
}

TEST_F(AnthropicApiTest, ToolResultMustAnswerThePreviousToolUse) {
  Json b = Minimal();
  Json use = {{"type", "tool_use"}, {"id", "toolu_1"}, {"name", "Read"}, {"input", Json::object()}};
  Json result = {{"type", "tool_result"}, {"tool_use_id", "toolu_1"}, {"content", "text"}};
  b["messages"].push_back({{"role", "assistant"}, {"content", Json::array({use})}});
  b["messages"].push_back({{"role", "user"}, {"content", Json::array({result})}});
  EXPECT_EQ(Post(b).status, 200);

  Json wrong = b;
  wrong["messages"][2]["content"][0]["tool_use_id"] = "toolu_2";
  EXPECT_EQ(Rejected(wrong),
            "messages.2.content: unexpected `tool_use_id` found in `tool_result` blocks: "
            "toolu_2. Each `tool_result` block must have a corresponding `tool_use` block in the "
            "previous message.");
  Json unanswered = b;
  unanswered["messages"][2]["content"] = "no result";
  EXPECT_EQ(Rejected(unanswered),
            "messages.1: `tool_use` ids were found without `tool_result` blocks immediately "
            "after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` block "
            "in the next message.");
}

TEST_F(AnthropicApiTest, VersionHeaderRequired) {
  HttpAnswer a = Post(Minimal(), nullptr, /*version=*/false);
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(Json::parse(a.body)["error"]["message"], "anthropic-version: header is required");
  ASSERT_FALSE(a.headers.empty());
  EXPECT_EQ(a.headers[0], std::make_pair(std::string("request-id"), std::string("req_fake_0")));
}

TEST_F(AnthropicApiTest, MoreThanFourBreakpointsRejected) {
  Json b = Conversation(2);  // 2 breakpoints
  b["tools"] = {{{"name", "A"}, {"input_schema", {{"type", "object"}}}, {"cache_control", Cc()}},
                {{"name", "B"}, {"input_schema", {{"type", "object"}}}, {"cache_control", Cc()}}};
  EXPECT_EQ(Post(b).status, 200);  // 4 is the limit
  b["messages"][0]["content"] = Json::array({TextBlock("question 0", true)});
  EXPECT_EQ(Rejected(b),
            "cache_control: A maximum of 4 blocks with cache_control may be provided. Found 5.");
}

TEST_F(AnthropicApiTest, GrowingConversationReadsThePreviousPrefix) {
  Json first = Cache(Conversation(0));
  EXPECT_EQ(first["breakpoints"], 2);
  EXPECT_EQ(first["cache_read"], 0);
  EXPECT_EQ(first["cache_write"], first["prompt_tokens"]);  // up to the last breakpoint = all

  // The next turn moved the last breakpoint forward: the read is the whole
  // previous request (its last breakpoint's prefix), the write the new part.
  Json second = Cache(Conversation(1));
  EXPECT_EQ(second["cache_read"], first["prompt_tokens"]);
  EXPECT_EQ(second["cache_write"].get<int64_t>(),
            second["prompt_tokens"].get<int64_t>() - first["prompt_tokens"].get<int64_t>());
  EXPECT_GT(second["cache_write"].get<int64_t>(), 0);

  Json third = Cache(Conversation(2));
  EXPECT_EQ(third["cache_read"], second["prompt_tokens"]);

  // The same request again reads everything and writes nothing.
  Json again = Cache(Conversation(2));
  EXPECT_EQ(again["cache_read"], again["prompt_tokens"]);
  EXPECT_EQ(again["cache_write"], 0);
}

TEST_F(AnthropicApiTest, SystemBreakpointIsReadWhenTheConversationDiffers) {
  Json first = Cache(Conversation(0));
  Json sys_only = Conversation(0);
  sys_only["messages"][0]["content"] = "another question, no breakpoint";
  Json other = Cache(sys_only);
  // Only the system block's prefix is shared; nothing is written beyond it.
  EXPECT_EQ(other["breakpoints"], 1);
  EXPECT_GT(other["cache_read"].get<int64_t>(), 100);
  EXPECT_LT(other["cache_read"].get<int64_t>(), first["prompt_tokens"].get<int64_t>());
  EXPECT_EQ(other["cache_write"], 0);
}

TEST_F(AnthropicApiTest, BreakpointInsideAToolResultEndsThePrefixThere) {
  Json b = WithReadRound(Conversation(0), TextBlock("body", true));
  Json first = Cache(b);
  EXPECT_EQ(first["breakpoints"], 3);
  EXPECT_EQ(first["cache_write"], first["prompt_tokens"]);
  b["messages"][2]["content"][0]["content"][0].erase("cache_control");
  b["messages"].push_back({{"role", "assistant"}, {"content", "done"}});
  b["messages"].push_back({{"role", "user"}, {"content", Json::array({TextBlock("next", true)})}});
  Json second = Cache(b);
  EXPECT_EQ(second["cache_read"], first["prompt_tokens"]);
}

TEST_F(AnthropicApiTest, NoBreakpointNeverReads) {
  Json b = Conversation(1);
  b["system"] = LongSystem("A");
  b["messages"][2]["content"] = "question 1";
  for (int i = 0; i < 2; ++i) {
    Json c = Cache(b);
    EXPECT_EQ(c["breakpoints"], 0);
    EXPECT_EQ(c["cache_read"], 0);
    EXPECT_EQ(c["cache_write"], 0);
  }
}

TEST_F(AnthropicApiTest, ChangedSystemTextReadsNothing) {
  Cache(Conversation(1, "A"));
  Json c = Cache(Conversation(1, "B"));
  EXPECT_EQ(c["cache_read"], 0);
  EXPECT_EQ(c["cache_write"], c["prompt_tokens"]);
}

TEST_F(AnthropicApiTest, EntriesExpireAfterTheirTtlAndReadsRefreshThem) {
  Json first = Cache(Conversation(0));
  env_.now_ms += 4 * kMinute;
  EXPECT_EQ(Cache(Conversation(0))["cache_read"], first["prompt_tokens"]);
  env_.now_ms += 4 * kMinute;  // 8 min after the write, 4 after the refreshing read
  EXPECT_EQ(Cache(Conversation(0))["cache_read"], first["prompt_tokens"]);
  env_.now_ms += 6 * kMinute;
  Json expired = Cache(Conversation(0));
  EXPECT_EQ(expired["cache_read"], 0);
  EXPECT_EQ(expired["cache_write"], first["prompt_tokens"]);

  Json hour = Cache(Conversation(0, "H", "1h"));
  env_.now_ms += 50 * kMinute;
  EXPECT_EQ(Cache(Conversation(0, "H", "1h"))["cache_read"], hour["prompt_tokens"]);
}

TEST_F(AnthropicApiTest, BreakpointLooksBackAtMostTwentyBlocks) {
  Json first = Cache(Conversation(0));
  // 11 turns later the last breakpoint is 22 blocks past the previous one:
  // only the system breakpoint's prefix is found.
  Json far = Cache(Conversation(11));
  EXPECT_GT(far["cache_read"].get<int64_t>(), 0);
  EXPECT_LT(far["cache_read"].get<int64_t>(), first["prompt_tokens"].get<int64_t>());
  // 10 turns later (20 blocks) it still finds the previous end.
  Json first_b = Cache(Conversation(0, "B"));
  Json near = Cache(Conversation(10, "B"));
  EXPECT_EQ(near["cache_read"], first_b["prompt_tokens"]);
}

TEST_F(AnthropicApiTest, PrefixesUnderTheMinimumAreNeitherWrittenNorRead) {
  Make(Json::object(), /*min_cache_tokens=*/100000);
  for (int i = 0; i < 2; ++i) {
    Json c = Cache(Conversation(0));
    EXPECT_EQ(c["cache_read"], 0);
    EXPECT_EQ(c["cache_write"], 0);
  }
}

TEST_F(AnthropicApiTest, PromptLongerThanTheContextIsTooLong) {
  Make(Json::object(), 100, /*ctx_size=*/500);
  EXPECT_EQ(Post(Minimal()).status, 200);
  Json rec;
  HttpAnswer a = Post(Conversation(0), &rec);
  EXPECT_EQ(a.status, 400);
  std::string msg = Json::parse(a.body)["error"]["message"];
  EXPECT_EQ(msg.rfind("prompt is too long: ", 0), 0u) << msg;
  EXPECT_NE(msg.find(" tokens > 500 maximum"), std::string::npos) << msg;
  EXPECT_FALSE(rec.contains("reply"));  // rejected before the script is asked
}

// The SSE event types of a streamed answer, in order.
std::vector<std::string> EventTypes(const HttpAnswer& a) {
  std::vector<std::string> out;
  for (const std::string& f : a.frames) {
    EXPECT_EQ(f.rfind("event: ", 0), 0u) << f;
    EXPECT_EQ(f.substr(f.size() - 2), "\n\n");
    std::string type = f.substr(7, f.find('\n') - 7);
    Json data = Json::parse(f.substr(f.find("data: ") + 6));
    EXPECT_EQ(data["type"], type);
    out.push_back(type);
  }
  return out;
}

Json FrameData(const HttpAnswer& a, size_t i) {
  return Json::parse(a.frames.at(i).substr(a.frames[i].find("data: ") + 6));
}

TEST_F(AnthropicApiTest, StreamEventOrderAndToolIds) {
  Make(Json::parse(R"({"replies":[{"reasoning":"Hmm.","text":"Hi there","chunk_chars":4,
      "tool_calls":[{"name":"Read","arguments":{"p":1}},
                    {"id":"toolu_keep","name":"Write","arguments":"{}"}]}]})"));
  Json b = Minimal();
  b["stream"] = true;
  Json rec;
  HttpAnswer a = Post(b, &rec);
  ASSERT_TRUE(a.streamed);
  EXPECT_EQ(EventTypes(a),
            (std::vector<std::string>{
                "message_start", "ping", "content_block_start", "content_block_delta",
                "content_block_delta",
                "content_block_stop",  // thinking + signature
                "content_block_start", "content_block_delta", "content_block_delta",
                "content_block_stop",  // text
                "content_block_start", "content_block_delta", "content_block_delta",
                "content_block_stop",  // tool 1: {"p":1} in 4-byte pieces
                "content_block_start", "content_block_delta", "content_block_stop",  // tool 2
                "message_delta", "message_stop"}));
  Json start = FrameData(a, 0)["message"];
  EXPECT_EQ(start["id"], "msg_fake_0");
  EXPECT_EQ(start["model"], "claude-test");
  EXPECT_EQ(start["content"], Json::array());
  EXPECT_TRUE(start["stop_reason"].is_null());
  EXPECT_EQ(start["usage"]["output_tokens"], 1);
  EXPECT_EQ(FrameData(a, 3)["delta"],
            Json::parse(R"({"type":"thinking_delta","thinking":"Hmm."})"));
  EXPECT_EQ(FrameData(a, 4)["delta"]["type"], "signature_delta");
  EXPECT_EQ(FrameData(a, 6)["content_block"], Json::parse(R"({"type":"text","text":""})"));
  EXPECT_EQ(FrameData(a, 7)["delta"], Json::parse(R"({"type":"text_delta","text":"Hi t"})"));
  EXPECT_EQ(FrameData(a, 8)["delta"]["text"], "here");
  Json tool1 = FrameData(a, 10);
  EXPECT_EQ(tool1["index"], 2);
  EXPECT_EQ(tool1["content_block"], Json::parse(R"({"type":"tool_use","id":"toolu_call_0_0",
      "name":"Read","input":{}})"));
  EXPECT_EQ(FrameData(a, 11)["delta"],
            Json::parse(R"({"type":"input_json_delta","partial_json":"{\"p\""})"));
  EXPECT_EQ(FrameData(a, 12)["delta"]["partial_json"], ":1}");
  EXPECT_EQ(FrameData(a, 14)["content_block"]["id"], "toolu_keep");
  Json delta = FrameData(a, 17);
  EXPECT_EQ(delta["delta"], Json::parse(R"({"stop_reason":"tool_use","stop_sequence":null})"));
  EXPECT_GT(delta["usage"]["output_tokens"].get<int64_t>(), 1);
  EXPECT_EQ(rec["status"], 200);
  EXPECT_EQ(rec["reply"], 0);
}

TEST_F(AnthropicApiTest, NonStreamedMessage) {
  Make(Json::parse(R"({"replies":[{"text":"Done.","finish_reason":"length"},
      {"tool_calls":[{"id":"abc","name":"Read","arguments":{"path":"a"}}]}]})"));
  Json m = Json::parse(Post(Minimal()).body);
  EXPECT_EQ(m["id"], "msg_fake_0");
  EXPECT_EQ(m["type"], "message");
  EXPECT_EQ(m["role"], "assistant");
  EXPECT_EQ(m["content"], Json::parse(R"([{"type":"text","text":"Done."}])"));
  EXPECT_EQ(m["stop_reason"], "max_tokens");
  EXPECT_TRUE(m["stop_sequence"].is_null());
  Json t = Json::parse(Post(Minimal()).body);
  EXPECT_EQ(t["content"], Json::parse(R"([{"type":"tool_use","id":"toolu_abc","name":"Read",
      "input":{"path":"a"}}])"));
  EXPECT_EQ(t["stop_reason"], "tool_use");
}

TEST_F(AnthropicApiTest, ScriptedErrorsUseTheProvidersShape) {
  Make(Json::parse(R"({"replies":[{"status":529,"retry_after":2,"error_message":"Overloaded"},
      {"status":429,"retry_after_ms":50},{"text":"__stream_error__"}]})"));
  Json rec;
  HttpAnswer a = Post(Minimal(), &rec);
  EXPECT_EQ(a.status, 529);
  EXPECT_EQ(Json::parse(a.body), Json::parse(R"({"type":"error","error":{
      "type":"overloaded_error","message":"Overloaded"}})"));
  EXPECT_EQ(a.headers, (std::vector<std::pair<std::string, std::string>>{
                           {"request-id", "req_fake_0"}, {"retry-after", "2"}}));
  EXPECT_EQ(rec["status"], 529);
  HttpAnswer limited = Post(Minimal());
  EXPECT_EQ(limited.status, 429);
  EXPECT_EQ(Json::parse(limited.body)["error"]["type"], "rate_limit_error");
  EXPECT_EQ(limited.headers.back(),
            std::make_pair(std::string("retry-after-ms"), std::string("50")));
  Json b = Minimal();
  b["stream"] = true;
  HttpAnswer cut = Post(b);
  EXPECT_EQ(cut.status, 200);
  EXPECT_EQ(EventTypes(cut), (std::vector<std::string>{"message_start", "error"}));
  EXPECT_EQ(FrameData(cut, 1)["error"]["type"], "overloaded_error");
}

TEST_F(AnthropicApiTest, ScriptSeesTheOpenAiShape) {
  Make(Json::parse(R"({"replies":[
      {"match":{"system_contains":"careful","tool_offered":"Read",
                "last_message_contains":"file body"},"text":"matched"}]})"));
  Json b = WithReadRound(Conversation(0), TextBlock("the file body"));
  Json rec;
  Json m = Json::parse(Post(b, &rec).body);
  EXPECT_EQ(rec["reply"], 0);
  EXPECT_EQ(m["content"][0]["text"], "matched");
  EXPECT_EQ(rec["body"], b);
}

}  // namespace
}  // namespace maestro::fakellm
