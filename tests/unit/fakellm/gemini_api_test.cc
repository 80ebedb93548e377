// The Gemini generateContent fake (gemini_api.cc): validation names the
// field, the script sees the OpenAI shape, implicit prefix caching, the SSE
// frames and the error shape.
#include <gtest/gtest.h>

#include "fakellm/prompt_cache.h"
#include "fakellm/provider_api.h"

namespace maestro::fakellm {
namespace {

constexpr char kGenerate[] = "/v1beta/models/gemini-test:generateContent";
constexpr char kStream[] = "/v1beta/models/gemini-test:streamGenerateContent";

Json UserText(const std::string& text) {
  return {{"role", "user"}, {"parts", Json::array({{{"text", text}}})}};
}

Json ModelText(const std::string& text) {
  return {{"role", "model"}, {"parts", Json::array({{{"text", text}}})}};
}

Json Body(const std::string& system, Json contents) {
  return {{"systemInstruction", {{"parts", Json::array({{{"text", system}}})}}},
          {"contents", std::move(contents)}};
}

class GeminiApiTest : public ::testing::Test {
 protected:
  void Start(const Json& replies, int64_t min_cache_tokens = 1024) {
    auto s = Script::FromJson({{"replies", replies}});
    ASSERT_TRUE(s.ok()) << s.status().message();
    script_ = std::make_unique<Script>(std::move(*s));
    ServerOptions opts;
    opts.min_cache_tokens = min_cache_tokens;
    api_ = NewGeminiApi(opts, script_.get());
  }
  HttpAnswer Call(const Json& body, const std::string& path = kGenerate,
                  std::map<std::string, std::string> query = {}) {
    return CallRaw(body.dump(), path, std::move(query));
  }
  HttpAnswer CallRaw(const std::string& body, const std::string& path = kGenerate,
                     std::map<std::string, std::string> query = {}) {
    ProviderRequest req;
    req.path = path;
    req.body = body;
    req.query = std::move(query);
    req.headers["x-goog-api-key"] = "anything";
    req.seq = seq_++;
    record_ = Json::object();
    return api_->Handle(req, &record_);
  }
  // The error of a 400 answer; checks the shape.
  std::string Invalid(const Json& body, const std::string& path = kGenerate,
                      std::map<std::string, std::string> query = {}) {
    HttpAnswer a = Call(body, path, std::move(query));
    EXPECT_EQ(a.status, 400);
    EXPECT_FALSE(a.streamed);
    EXPECT_EQ(record_["status"], 400);
    EXPECT_EQ(record_["reply"], -1);
    Json e = Json::parse(a.body)["error"];
    EXPECT_EQ(e["code"], 400);
    EXPECT_EQ(e["status"], "INVALID_ARGUMENT");
    return e["message"].get<std::string>();
  }

  std::unique_ptr<Script> script_;
  std::unique_ptr<ProviderApi> api_;
  Json record_;
  int64_t seq_ = 0;
};

TEST_F(GeminiApiTest, ValidationErrorsNameTheField) {
  Start(Json::array({{{"text", "valid"}}}));
  const Json call_turn = {
      {"role", "model"},
      {"parts", Json::array({{{"functionCall", {{"name", "ReadFile"}, {"args", "x"}}}}})}};
  const Json call = {{"functionCall", {{"name", "ReadFile"}, {"args", Json::object()}}}};
  const Json two_calls = {{"role", "model"}, {"parts", Json::array({call, call})}};
  const Json one_response = {
      {"role", "user"},
      {"parts",
       Json::array({{{"functionResponse", {{"name", "ReadFile"}, {"response", {{"r", 1}}}}}}})}};
  struct Case {
    Json body;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{{"contents", Json::array()}},
       "* GenerateContentRequest.contents: contents is not specified"},
      {{{"contents", Json::array({UserText("hi")})}, {"foo", 1}},
       "Invalid JSON payload received. Unknown name \"foo\": Cannot find field."},
      {{{"contents",
         Json::array({UserText("a"), {{"role", "assistant"}, {"parts", {{{"text", "b"}}}}}})}},
       "* GenerateContentRequest.contents[1].role: Please use a valid role: user, model."},
      {{{"contents", Json::array({UserText("a"), {{"parts", {{{"text", "b"}}}}}})}},
       "* GenerateContentRequest.contents[1].role: Please use a valid role: user, model."},
      {{{"contents", Json::array({{{"role", "user"}, {"parts", Json::array()}}})}},
       "* GenerateContentRequest.contents[0].parts: contents.parts must not be empty."},
      {{{"contents", Json::array({{{"role", "user"}, {"parts", {Json::object()}}}})}},
       "* GenerateContentRequest.contents[0].parts[0].data: required oneof field 'data'"},
      {{{"contents",
         Json::array({{{"role", "user"},
                       {"parts", {{{"text", "a"}, {"functionCall", {{"name", "f"}}}}}}}})}},
       "Invalid value at 'contents[0].parts[0]' (oneof), oneof field 'data' is already set. "
       "Cannot overwrite 'text' with 'function_call'"},
      {{{"contents",
         Json::array({{{"role", "user"}, {"parts", {{{"text", "a"}, {"bogus", 1}}}}}})}},
       "Invalid JSON payload received. Unknown name \"bogus\" at 'contents[0].parts[0]': Cannot "
       "find field."},
      {{{"contents", Json::array({UserText("a"), call_turn})}},
       "Invalid value at 'contents[1].parts[0].function_call.args'"},
      {{{"contents", Json::array({{{"role", "user"},
                                   {"parts", {{{"functionResponse", {{"name", "ReadFile"}}}}}}}})}},
       "* GenerateContentRequest.contents[0].parts[0].function_response.response:"},
      {{{"contents",
         Json::array({{{"role", "user"}, {"parts", {{{"inlineData", {{"data", "aGk="}}}}}}}})}},
       "* GenerateContentRequest.contents[0].parts[0].inline_data.mime_type:"},
      {{{"contents", Json::array({UserText("a")})},
        {"tools", {{{"functionDeclarations", {{{"name", "1bad"}}}}}}}},
       "* GenerateContentRequest.tools[0].function_declarations[0].name: Invalid function name."},
      {{{"contents", Json::array({UserText("a")})}, {"generationConfig", {{"maxTokens", 5}}}},
       "Invalid JSON payload received. Unknown name \"maxTokens\" at 'generation_config': "
       "Cannot find field."},
      {{{"contents", Json::array({UserText("a")})},
        {"systemInstruction", {{"parts", Json::array()}}}},
       "* GenerateContentRequest.system_instruction.parts:"},
      {{{"contents", Json::array({UserText("a"), two_calls, one_response})}},
       "* GenerateContentRequest.contents[2]: Please ensure that the number of function response "
       "parts (1) is equal to the number of function call parts of the function call turn (2).\n"},
      {{{"contents", Json::array({UserText("a"), ModelText("b"), one_response})}},
       "* GenerateContentRequest.contents[2]: Please ensure that function response turn comes "
       "immediately after a function call turn.\n"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Invalid(c.body).rfind(c.expected, 0), 0u)
        << Invalid(c.body) << "\nfor " << c.body.dump();
  }
  // Streaming is SSE only.
  EXPECT_EQ(Invalid({{"contents", Json::array({UserText("a")})}}, kStream),
            "* GenerateContentRequest.alt: this fake streams as SSE only: add alt=sse\n");
  HttpAnswer bad = CallRaw("{not json");
  EXPECT_EQ(bad.status, 400);
  // No invalid request consumed the one reply; a first content may omit its role.
  HttpAnswer ok = Call({{"contents", Json::array({{{"parts", {{{"text", "hi"}}}}}})}});
  ASSERT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(record_["reply"], 0);
  EXPECT_EQ(Json::parse(ok.body)["candidates"][0]["content"]["parts"][0]["text"], "valid");
}

// Every part kind maestro's translator sends, with the optional fields.
TEST_F(GeminiApiTest, AcceptsEveryPartKindAndConfig) {
  Start(Json::array({{{"text", "fine"}}}));
  Json body = Json::parse(R"({
    "systemInstruction": {"role": "user", "parts": [{"text": "sys"}]},
    "contents": [
      {"role": "user", "parts": [{"text": "look"},
        {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
        {"fileData": {"fileUri": "https://example.com/a.png", "mimeType": "image/png"}}]},
      {"role": "model", "parts": [{"text": "hmm", "thought": true},
        {"functionCall": {"id": "c1", "name": "Grep", "args": {"q": "x"}},
         "thoughtSignature": "skip_thought_signature_validator"}]},
      {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "Grep",
        "response": {"result": "none"}}}]}],
    "tools": [{"functionDeclarations": [{"name": "Grep", "description": "d",
      "parametersJsonSchema": {"type": "object"}}]}],
    "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["Grep"]}},
    "generationConfig": {"maxOutputTokens": 8192, "temperature": 0.2, "topP": 0.9, "seed": 7,
      "stopSequences": ["END"], "thinkingConfig": {"includeThoughts": true}},
    "safetySettings": []})");
  HttpAnswer a = Call(body);
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(record_["reply"], 0);
}

TEST_F(GeminiApiTest, ScriptSeesTheOpenAiShape) {
  Start(
      Json::array({{{"match",
                     {{"system_contains", "You are G"},
                      {"tool_offered", "ReadFile"},
                      {"last_message_contains", "R-42"},
                      {"any_message_contains", Json::array({"first question", "thinking aloud"})}}},
                    {"text", "matched"}},
                   {{"text", "fallback"}, {"repeat", 0}}}));
  Json body = Body(
      "You are G.",
      Json::array({UserText("first question"),
                   {{"role", "model"},
                    {"parts",
                     {{{"text", "thinking aloud"}},
                      {{"functionCall", {{"name", "ReadFile"}, {"args", {{"path", "a.txt"}}}}}}}}},
                   {{"role", "user"},
                    {"parts",
                     {{{"functionResponse",
                        {{"name", "ReadFile"}, {"response", {{"result", "R-42"}}}}}}}}}}));
  body["tools"] = {{{"functionDeclarations",
                     {{{"name", "ReadFile"},
                       {"description", "Reads."},
                       {"parameters", {{"type", "OBJECT"}}}}}}}};
  HttpAnswer a = Call(body);
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(record_["reply"], 0);
  EXPECT_EQ(record_["body"], body);
  // Without the tool the match fails.
  body.erase("tools");
  Call(body);
  EXPECT_EQ(record_["reply"], 1);
}

TEST_F(GeminiApiTest, GrowingConversationReadsItsPreviousPrefix) {
  Start(Json::array({{{"text", "answer"}, {"repeat", 0}}}), /*min_cache_tokens=*/50);
  const std::string system(400, 's');  // 100 tokens
  Json first = Body(system, Json::array({UserText("question one")}));
  HttpAnswer a1 = Call(first);
  ASSERT_EQ(a1.status, 200);
  const int64_t p1 = record_["cache"]["prompt_tokens"];
  EXPECT_GT(p1, 100);
  EXPECT_EQ(record_["cache"], Json({{"prompt_tokens", p1}, {"cache_read", 0}, {"cache_write", 0}}));
  Json u1 = Json::parse(a1.body)["usageMetadata"];
  EXPECT_EQ(u1["promptTokenCount"], p1);
  EXPECT_FALSE(u1.contains("cachedContentTokenCount"));  // the API omits a zero

  Json second = first;
  second["contents"].push_back(ModelText("answer"));
  second["contents"].push_back(UserText("question two"));
  HttpAnswer a2 = Call(second);
  const int64_t p2 = record_["cache"]["prompt_tokens"];
  EXPECT_GT(p2, p1);
  EXPECT_EQ(record_["cache"]["cache_read"], p1);  // all of the first request
  Json u2 = Json::parse(a2.body)["usageMetadata"];
  EXPECT_EQ(u2["promptTokenCount"], p2);
  EXPECT_EQ(u2["cachedContentTokenCount"], p1);
  EXPECT_EQ(u2["cacheTokensDetails"],
            Json::parse(R"([{"modality":"TEXT","tokenCount":)" + std::to_string(p1) + "}]"));

  // A changed systemInstruction shares only a few tokens: under the minimum.
  Json changed = second;
  changed["systemInstruction"]["parts"][0]["text"] = "t" + system;
  Call(changed);
  EXPECT_EQ(record_["cache"]["cache_read"], 0);
  // A branch from the first request reads the first request's prefix only.
  Json branch = first;
  branch["contents"].push_back(UserText("more detail"));
  Call(branch);
  EXPECT_EQ(record_["cache"]["cache_read"], p1);
}

TEST_F(GeminiApiTest, PrefixesUnderTheMinimumAreNotCached) {
  Start(Json::array({{{"text", "answer"}, {"repeat", 0}}}));  // default 1024
  Json first = Body(std::string(400, 's'), Json::array({UserText("q")}));
  Call(first);
  Json second = first;
  second["contents"].push_back(ModelText("answer"));
  second["contents"].push_back(UserText("q2"));
  HttpAnswer a = Call(second);
  EXPECT_EQ(record_["cache"]["cache_read"], 0);
  EXPECT_FALSE(Json::parse(a.body)["usageMetadata"].contains("cachedContentTokenCount"));
}

// Parses "data: {...}\r\n\r\n" frames.
std::vector<Json> Frames(const HttpAnswer& a) {
  std::vector<Json> out;
  for (const std::string& f : a.frames) {
    EXPECT_EQ(f.rfind("data: ", 0), 0u) << f;
    EXPECT_TRUE(f.ends_with("\r\n\r\n")) << f;
    out.push_back(Json::parse(f.substr(6, f.size() - 10)));
  }
  return out;
}

TEST_F(GeminiApiTest, StreamEventsCarryPiecesThenFinishAndUsage) {
  Start(Json::array({{{"reasoning", "think hard"},
                      {"text", "Hello world"},
                      {"chunk_chars", 4},
                      {"token_delay_ms", 3},
                      {"cut_after", 5},
                      {"tool_calls", Json::array({{{"name", "ReadFile"},
                                                   {"id", "c-1"},
                                                   {"arguments", {{"path", "a.txt"}}}}})}}}));
  HttpAnswer a = Call({{"contents", Json::array({UserText("go")})}}, kStream, {{"alt", "sse"}});
  ASSERT_EQ(a.status, 200);
  EXPECT_TRUE(a.streamed);
  EXPECT_EQ(a.content_type, "text/event-stream");
  EXPECT_EQ(a.cut_after, 5);
  EXPECT_EQ(a.token_delay_ms, 3);
  std::vector<Json> ev = Frames(a);
  ASSERT_EQ(ev.size(), 7u);  // 3 thought pieces, 3 text pieces, 1 call
  std::vector<Json> parts;
  for (size_t i = 0; i < ev.size(); ++i) {
    const Json& c = ev[i]["candidates"][0];
    EXPECT_EQ(c["content"]["role"], "model");
    ASSERT_EQ(c["content"]["parts"].size(), 1u);
    parts.push_back(c["content"]["parts"][0]);
    EXPECT_EQ(ev[i]["modelVersion"], "gemini-test");
    EXPECT_EQ(ev[i]["responseId"], "fakegem-0");
    EXPECT_EQ(c.contains("finishReason"), i == 6);
    EXPECT_EQ(ev[i].contains("usageMetadata"), i == 6);
  }
  EXPECT_EQ(parts[0], Json({{"text", "thin"}, {"thought", true}}));
  EXPECT_EQ(parts[2], Json({{"text", "rd"}, {"thought", true}}));
  EXPECT_EQ(parts[3], Json({{"text", "Hell"}}));
  EXPECT_EQ(parts[5], Json({{"text", "rld"}}));
  EXPECT_EQ(parts[6], Json::parse(R"({"functionCall":{"id":"c-1","name":"ReadFile",
                                      "args":{"path":"a.txt"}}})"));
  EXPECT_EQ(ev[6]["candidates"][0]["finishReason"], "STOP");
  const Json& u = ev[6]["usageMetadata"];
  const auto thoughts = static_cast<int64_t>(Tokenize("think hard").size());
  const auto out = static_cast<int64_t>(
      Tokenize(std::string("Hello world") + "ReadFile" + R"({"path":"a.txt"})").size());
  EXPECT_EQ(u["thoughtsTokenCount"], thoughts);
  EXPECT_EQ(u["candidatesTokenCount"], out);
  EXPECT_EQ(u["totalTokenCount"], u["promptTokenCount"].get<int64_t>() + out + thoughts);
  EXPECT_EQ(u["promptTokensDetails"][0]["modality"], "TEXT");
}

TEST_F(GeminiApiTest, WholeReplyFunctionCallIdsArgsAndFinish) {
  Start(Json::array({{{"tool_calls", Json::array({{{"name", "A"}, {"arguments", {{"x", 1}}}},
                                                  {{"name", "B"}, {"arguments", "not json"}}})}},
                     {{"text", "cut short"}, {"finish_reason", "length"}, {"delay_ms", 20}}}));
  HttpAnswer a = Call({{"contents", Json::array({UserText("go")})}});
  ASSERT_EQ(a.status, 200);
  EXPECT_FALSE(a.streamed);
  Json r = Json::parse(a.body);
  const Json& c = r["candidates"][0];
  EXPECT_EQ(c["index"], 0);
  EXPECT_EQ(c["finishReason"], "STOP");  // Gemini has no tool-call finish reason
  EXPECT_EQ(c["content"]["parts"],
            Json::parse(R"([{"functionCall":{"id":"call_0_0","name":"A","args":{"x":1}}},
                            {"functionCall":{"id":"call_0_1","name":"B","args":{}}}])"));
  EXPECT_FALSE(r["usageMetadata"].contains("thoughtsTokenCount"));

  HttpAnswer b = Call({{"contents", Json::array({UserText("again")})}});
  EXPECT_EQ(b.delay_ms, 20);
  Json rb = Json::parse(b.body);
  EXPECT_EQ(rb["candidates"][0]["finishReason"], "MAX_TOKENS");
  EXPECT_EQ(rb["candidates"][0]["content"]["parts"], Json::parse(R"([{"text":"cut short"}])"));
}

TEST_F(GeminiApiTest, ScriptedErrorsUseGoogleRpcStatus) {
  Start(Json::array({{{"status", 429}, {"retry_after", 7}, {"error_message", "quota"}},
                     {{"status", 503}},
                     {{"status", 504}}}));
  const Json body = {{"contents", Json::array({UserText("go")})}};
  HttpAnswer a = Call(body, kStream, {{"alt", "sse"}});
  EXPECT_EQ(a.status, 429);
  EXPECT_FALSE(a.streamed);
  EXPECT_EQ(a.headers, (std::vector<std::pair<std::string, std::string>>{{"Retry-After", "7"}}));
  EXPECT_EQ(Json::parse(a.body), Json::parse(R"({"error":{"code":429,"message":"quota",
      "status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo",
      "retryDelay":"7s"}]}})"));
  EXPECT_EQ(record_["status"], 429);
  EXPECT_EQ(record_["reply"], 0);
  HttpAnswer b = Call(body);
  EXPECT_EQ(Json::parse(b.body)["error"]["status"], "UNAVAILABLE");
  EXPECT_TRUE(b.headers.empty());
  EXPECT_EQ(Json::parse(Call(body).body)["error"]["status"], "DEADLINE_EXCEEDED");
}

}  // namespace
}  // namespace maestro::fakellm
