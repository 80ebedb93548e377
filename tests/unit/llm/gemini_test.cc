// The Gemini adapter (llm/gemini.h): the request body translated from the
// engine's OpenAI-shaped conversation, and the reply read from
// GenerateContentResponse events or one JSON reply.
#include "llm/gemini.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/sse_parser.h"

namespace maestro::llm {
// Named, not anonymous: the test files may be compiled as one unit.
namespace gemini_test {

ModelProfile Profile(const std::string& model = "gemini-2.5-flash") {
  ModelProfile p;
  p.provider = "gemini";
  p.base_url = "http://127.0.0.1:1/v1beta/";
  p.model = model;
  p.max_output_tokens = 4096;
  return p;
}

const Json kTools = Json::parse(R"([
  {"type":"function","function":{"name":"ReadFile","description":"Read a file",
   "parameters":{"type":"object","properties":{"path":{"type":"string"}},
                 "required":["path"],"additionalProperties":false}}},
  {"type":"function","function":{"name":"Done"}}])");

// One pass of the translator as TranslatedBody drives it.
std::string Translate(MessageTranslator& tr, const std::vector<Json>& lines) {
  std::string out;
  tr.Reset();
  EXPECT_TRUE(tr.Head(&out).ok());
  for (size_t i = 0; i < lines.size(); ++i) {
    Status st = tr.Message(lines[i], i, false, &out);
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
  EXPECT_TRUE(tr.Finish(&out).ok());
  return out;
}

Json TranslateJson(const ModelProfile& p, const Json& params, const Json& tools,
                   const std::vector<Json>& lines) {
  RequestBodySpec spec;
  spec.model = p.model;
  spec.params = params;
  auto tr = NewGeminiTranslator(p, spec, tools);
  std::string text = Translate(*tr, lines);
  Json j = Json::parse(text, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << text;
  return j;
}

std::vector<Json> Conversation() {
  return {
      Json::parse(R"({"role":"system","content":"You are maestro."})"),
      Json::parse(R"({"role":"user","content":"Read a and b."})"),
      Json::parse(R"({"role":"assistant","content":"Reading.","tool_calls":[
        {"id":"c1","type":"function","function":{"name":"ReadFile","arguments":"{\"path\":\"a\"}"}},
        {"id":"c2","type":"function","function":{"name":"ReadFile","arguments":"{oops"}}]})"),
      Json::parse(R"({"role":"tool","tool_call_id":"c1","content":"A text"})"),
      Json::parse(
          R"({"role":"tool","tool_call_id":"c2","content":[{"type":"text","text":"B text"}]})"),
      Json::parse(R"({"role":"user","content":"Thanks."})"),
      Json::parse(R"({"role":"assistant","content":"Done."})"),
  };
}

TEST(GeminiTranslatorTest, RealisticConversationBody) {
  Json params = {{"temperature", 0.5}, {"top_p", 0.9}, {"stop", "END"}};
  Json body = TranslateJson(Profile(), params, kTools, Conversation());
  Json expected = Json::parse(R"({
    "generationConfig":{"maxOutputTokens":4096,"temperature":0.5,"topP":0.9,"stopSequences":["END"]},
    "tools":[{"functionDeclarations":[
      {"name":"ReadFile","description":"Read a file",
       "parametersJsonSchema":{"type":"object","properties":{"path":{"type":"string"}},
                               "required":["path"],"additionalProperties":false}},
      {"name":"Done"}]}],
    "systemInstruction":{"parts":[{"text":"You are maestro."}]},
    "contents":[
      {"role":"user","parts":[{"text":"Read a and b."}]},
      {"role":"model","parts":[{"text":"Reading."},
        {"functionCall":{"id":"c1","name":"ReadFile","args":{"path":"a"}}},
        {"functionCall":{"id":"c2","name":"ReadFile","args":{"_raw_arguments":"{oops"}}}]},
      {"role":"user","parts":[
        {"functionResponse":{"id":"c1","name":"ReadFile","response":{"result":"A text"}}},
        {"functionResponse":{"id":"c2","name":"ReadFile","response":{"result":"B text"}}}]},
      {"role":"user","parts":[{"text":"Thanks."}]},
      {"role":"model","parts":[{"text":"Done."}]}]})");
  EXPECT_EQ(body, expected) << body.dump(1);
}

// The byte-stable prefix (generation config, tools, system) comes before
// the contents, and every pass gives the same bytes.
TEST(GeminiTranslatorTest, StablePrefixFirstAndPassesRepeat) {
  RequestBodySpec spec;
  auto tr = NewGeminiTranslator(Profile(), spec, kTools);
  std::string first = Translate(*tr, Conversation());
  std::string second = Translate(*tr, Conversation());
  EXPECT_EQ(first, second);
  EXPECT_EQ(first.rfind("{\"generationConfig\":", 0), 0u);
  EXPECT_LT(first.find("\"tools\""), first.find("\"systemInstruction\""));
  EXPECT_LT(first.find("\"systemInstruction\""), first.find("\"contents\""));
  EXPECT_TRUE(tr->Marks({MessageRole::kSystem, MessageRole::kUser}).empty());
  EXPECT_EQ(tr->MarkBytes(), 0u);
  // A conversation that grew keeps the earlier body as its prefix, up to
  // the closing of the contents.
  std::vector<Json> longer = Conversation();
  longer.push_back(Json::parse(R"({"role":"user","content":"More."})"));
  std::string grown = Translate(*tr, longer);
  EXPECT_EQ(grown.substr(0, first.size() - 2), first.substr(0, first.size() - 2));
}

TEST(GeminiTranslatorTest, NoSystemNoToolsAndLaterSystemNote) {
  Json body = TranslateJson(Profile(), Json::object(), Json::array(),
                            {Json::parse(R"({"role":"user","content":"Hi"})"),
                             Json::parse(R"({"role":"assistant","content":null})"),
                             Json::parse(R"({"role":"system","content":"Budget low."})"),
                             Json::parse(R"({"role":"user","content":""})")});
  Json expected = Json::parse(R"({
    "generationConfig":{"maxOutputTokens":4096},
    "contents":[
      {"role":"user","parts":[{"text":"Hi"}]},
      {"role":"model","parts":[{"text":" "}]},
      {"role":"user","parts":[{"text":"[system] Budget low."}]},
      {"role":"user","parts":[{"text":" "}]}]})");
  EXPECT_EQ(body, expected) << body.dump(1);
}

TEST(GeminiTranslatorTest, SystemOnlyStillHasContents) {
  Json body = TranslateJson(Profile(), {{"max_tokens", 100}}, Json::array(),
                            {Json::parse(R"({"role":"system","content":"S"})")});
  EXPECT_EQ(body["generationConfig"], Json::parse(R"({"maxOutputTokens":100})"));
  EXPECT_EQ(body["systemInstruction"], Json::parse(R"({"parts":[{"text":"S"}]})"));
  EXPECT_EQ(body["contents"], Json::parse(R"([{"role":"user","parts":[{"text":" "}]}])"));
}

TEST(GeminiTranslatorTest, ToolChoiceMapping) {
  auto config = [](const Json& choice) {
    Json body = TranslateJson(Profile(), {{"tool_choice", choice}}, kTools,
                              {Json::parse(R"({"role":"user","content":"x"})")});
    return body["toolConfig"]["functionCallingConfig"];
  };
  EXPECT_EQ(config("auto"), Json::parse(R"({"mode":"AUTO"})"));
  EXPECT_EQ(config("none"), Json::parse(R"({"mode":"NONE"})"));
  EXPECT_EQ(config("required"), Json::parse(R"({"mode":"ANY"})"));
  EXPECT_EQ(config(Json::parse(R"({"type":"function","function":{"name":"Done"}})")),
            Json::parse(R"({"mode":"ANY","allowedFunctionNames":["Done"]})"));
  // No tool_choice: no toolConfig at all.
  Json plain = TranslateJson(Profile(), Json::object(), kTools,
                             {Json::parse(R"({"role":"user","content":"x"})")});
  EXPECT_FALSE(plain.contains("toolConfig"));
}

TEST(GeminiTranslatorTest, Images) {
  Json body = TranslateJson(Profile(), Json::object(), Json::array(), {Json::parse(R"({
    "role":"user","content":[
      {"type":"text","text":"Look:"},
      {"type":"text","text":""},
      {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},
      {"type":"image_url","image_url":{"url":"https://example.com/shot.JPG?x=1"}},
      {"type":"image_url","image_url":{"url":"https://example.com/render"}}]})")});
  Json expected = Json::parse(R"([
    {"text":"Look:"},
    {"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}},
    {"fileData":{"fileUri":"https://example.com/shot.JPG?x=1","mimeType":"image/jpeg"}},
    {"fileData":{"fileUri":"https://example.com/render","mimeType":"image/*"}}])");
  EXPECT_EQ(body["contents"][0]["parts"], expected);
}

// A tool result whose call is not in the assistant turn before it (a
// compacted history) still names a function; empty arguments are {}.
TEST(GeminiTranslatorTest, UnknownCallNameAndEmptyArguments) {
  Json body = TranslateJson(Profile(), Json::object(), Json::array(),
                            {Json::parse(R"({"role":"user","content":"go"})"),
                             Json::parse(R"({"role":"assistant","content":"","tool_calls":[
         {"id":"c9","type":"function","function":{"name":"Done","arguments":""}}]})"),
                             Json::parse(R"({"role":"tool","tool_call_id":"zz","content":"r"})")});
  EXPECT_EQ(body["contents"][1], Json::parse(R"({"role":"model","parts":[
    {"functionCall":{"id":"c9","name":"Done","args":{}}}]})"));
  EXPECT_EQ(body["contents"][2], Json::parse(R"({"role":"user","parts":[
    {"functionResponse":{"id":"zz","name":"unknown","response":{"result":"r"}}}]})"));
}

// Gemini 3 wants a thoughtSignature on a replayed turn's first call.
TEST(GeminiTranslatorTest, Gemini3CallsCarryTheSignatureSentinel) {
  Json body =
      TranslateJson(Profile("gemini-3-pro-preview"), Json::object(), Json::array(), Conversation());
  const Json& parts = body["contents"][1]["parts"];
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1]["thoughtSignature"], "skip_thought_signature_validator");
  EXPECT_FALSE(parts[2].contains("thoughtSignature"));
}

TEST(GeminiTranslatorTest, UnknownRoleIsAnError) {
  RequestBodySpec spec;
  auto tr = NewGeminiTranslator(Profile(), spec, Json::array());
  std::string out;
  tr->Reset();
  ASSERT_TRUE(tr->Head(&out).ok());
  Status st = tr->Message(Json::parse(R"({"role":"developer","content":"x"})"), 3, false, &out);
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_NE(st.ToString().find("line 4"), std::string::npos) << st.ToString();
}

TEST(GeminiWireTest, UrlHeadersAndName) {
  auto wire = NewGeminiWire();
  ModelProfile p = Profile();
  EXPECT_EQ(wire->provider_name(), "gcp.gemini");
  EXPECT_EQ(wire->Url(p, true),
            "http://127.0.0.1:1/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
  EXPECT_EQ(wire->Url(p, false),
            "http://127.0.0.1:1/v1beta/models/gemini-2.5-flash:generateContent");
  p.model = "models/gemini-2.5-pro";
  EXPECT_EQ(wire->Url(p, false), "http://127.0.0.1:1/v1beta/models/gemini-2.5-pro:generateContent");
  HttpHeaders h;
  wire->AddHeaders(p, &h);
  EXPECT_TRUE(h.empty());
  p.api_key = "k1";
  wire->AddHeaders(p, &h);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].first, "x-goog-api-key");
  EXPECT_EQ(h[0].second, "k1");
  EXPECT_EQ(wire->ClassifyHttpError(429, R"({"error":{"status":"RESOURCE_EXHAUSTED"}})"),
            LlmErrorKind::kRetryable);
  EXPECT_EQ(wire->ClassifyHttpError(503, ""), LlmErrorKind::kRetryable);
  EXPECT_EQ(wire->ClassifyHttpError(400, R"({"error":{"status":"INVALID_ARGUMENT"}})"),
            LlmErrorKind::kTerminal);
  EXPECT_EQ(wire->ClassifyHttpError(
                400, "The input token count (2000000) exceeds the maximum number of tokens"),
            LlmErrorKind::kContextLengthExceeded);
}

// --- the reader ---

struct Read {
  std::vector<Status> statuses;
  std::vector<LlmEvent> events;
  bool complete = false;
  ChatResponse resp;
};

Read ReadEvents(const std::vector<std::string>& datas) {
  Read r;
  auto reader = NewGeminiReader([&](const LlmEvent& e) { r.events.push_back(e); });
  for (const std::string& d : datas) {
    SseEvent ev;
    ev.data = d;
    r.statuses.push_back(reader->OnEvent(ev));
  }
  r.complete = reader->complete();
  r.resp = reader->Take();
  return r;
}

TEST(GeminiReaderTest, TextInSeveralEventsWithUsageLast) {
  Read r = ReadEvents({
      R"({"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]}}],
          "usageMetadata":{"promptTokenCount":10},"modelVersion":"gemini-2.5-flash","responseId":"r1"})",
      R"({"candidates":[{"content":{"role":"model","parts":[{"text":"lo"}]}}]})",
      R"({"candidates":[{"content":{"role":"model","parts":[{"text":"!"}]},"finishReason":"STOP"}],
          "usageMetadata":{"promptTokenCount":1200,"cachedContentTokenCount":1100,
                           "candidatesTokenCount":3,"thoughtsTokenCount":5,"totalTokenCount":1208}})",
  });
  for (const Status& st : r.statuses) EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.resp.content, "Hello!");
  EXPECT_EQ(r.resp.finish_reason, "stop");
  EXPECT_EQ(r.resp.id, "r1");
  EXPECT_EQ(r.resp.model, "gemini-2.5-flash");
  EXPECT_EQ(r.resp.usage.prompt_tokens, 1200);
  EXPECT_EQ(r.resp.usage.cached_tokens, 1100);
  EXPECT_EQ(r.resp.usage.cache_write_tokens, 0);
  EXPECT_EQ(r.resp.usage.completion_tokens, 8);
  EXPECT_TRUE(r.resp.usage.reported);
  ASSERT_EQ(r.events.size(), 3u);
  EXPECT_EQ(r.events[0].kind, LlmEvent::Kind::kText);
  EXPECT_EQ(r.events[0].text, "Hel");
  EXPECT_EQ(r.events[2].text, "!");
}

TEST(GeminiReaderTest, ThoughtsAndFunctionCalls) {
  Read r = ReadEvents({
      R"({"candidates":[{"content":{"parts":[{"text":"Let me think","thought":true}]}}]})",
      R"({"candidates":[{"content":{"parts":[{"text":"Reading both."},
          {"functionCall":{"name":"ReadFile","args":{"path":"a"}}},
          {"functionCall":{"id":"fc-2","name":"Done","args":{}},"thoughtSignature":"c2ln"}]},
          "finishReason":"STOP"}]})",
  });
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.resp.reasoning, "Let me think");
  EXPECT_EQ(r.resp.content, "Reading both.");
  EXPECT_EQ(r.resp.finish_reason, "tool_calls");
  ASSERT_EQ(r.resp.tool_calls.size(), 2u);
  EXPECT_EQ(r.resp.tool_calls[0].index, 0);
  // No id from the server: a made-up one, unique to this reply.
  const std::string made_up = r.resp.tool_calls[0].id;
  EXPECT_EQ(made_up.rfind("call_0_", 0), 0u) << made_up;
  EXPECT_EQ(made_up.size(), 7u + 12u);
  EXPECT_EQ(r.resp.tool_calls[0].name, "ReadFile");
  EXPECT_EQ(r.resp.tool_calls[0].arguments, R"({"path":"a"})");
  EXPECT_EQ(r.resp.tool_calls[1].index, 1);
  EXPECT_EQ(r.resp.tool_calls[1].id, "fc-2");
  EXPECT_EQ(r.resp.tool_calls[1].arguments, "{}");
  EXPECT_FALSE(r.resp.usage.reported);
  ASSERT_EQ(r.events.size(), 4u);
  EXPECT_EQ(r.events[0].kind, LlmEvent::Kind::kReasoning);
  EXPECT_EQ(r.events[1].kind, LlmEvent::Kind::kText);
  EXPECT_EQ(r.events[2].kind, LlmEvent::Kind::kToolCall);
  EXPECT_EQ(r.events[2].index, 0);
  EXPECT_EQ(r.events[2].tool_id, made_up);
  EXPECT_EQ(r.events[2].tool_name, "ReadFile");
  EXPECT_EQ(r.events[2].text, R"({"path":"a"})");
  EXPECT_EQ(r.events[3].tool_id, "fc-2");
}

// Two replies without call ids never give the same id (the engine keys
// its tool ledger by call id within a job).
TEST(GeminiReaderTest, MadeUpCallIdsDoNotRepeatAcrossReplies) {
  const std::string reply =
      R"({"candidates":[{"content":{"parts":[{"functionCall":{"name":"Done","args":{}}}]},
          "finishReason":"STOP"}]})";
  std::string a = ReadEvents({reply}).resp.tool_calls.at(0).id;
  std::string b = ReadEvents({reply}).resp.tool_calls.at(0).id;
  EXPECT_EQ(a.rfind("call_0_", 0), 0u);
  EXPECT_EQ(b.rfind("call_0_", 0), 0u);
  EXPECT_NE(a, b);
}

TEST(GeminiReaderTest, FinishReasons) {
  auto finish = [](const std::string& reason) {
    return ReadEvents({R"({"candidates":[{"content":{"parts":[{"text":"x"}]},"finishReason":")" +
                       reason + R"("}]})"})
        .resp.finish_reason;
  };
  EXPECT_EQ(finish("STOP"), "stop");
  EXPECT_EQ(finish("MAX_TOKENS"), "length");
  EXPECT_EQ(finish("SAFETY"), "stop");
  EXPECT_EQ(finish("RECITATION"), "stop");
}

TEST(GeminiReaderTest, NoFinishReasonIsIncomplete) {
  Read r = ReadEvents({R"({"candidates":[{"content":{"parts":[{"text":"cut"}]}}]})"});
  EXPECT_TRUE(r.statuses[0].ok());
  EXPECT_FALSE(r.complete);
  EXPECT_EQ(r.resp.content, "cut");
}

TEST(GeminiReaderTest, ErrorObjects) {
  Read busy = ReadEvents(
      {R"({"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}})"});
  EXPECT_EQ(busy.statuses[0].code(), StatusCode::kUnavailable);
  EXPECT_NE(busy.statuses[0].ToString().find("Quota exceeded"), std::string::npos);
  EXPECT_FALSE(busy.complete);
  Read bad = ReadEvents(
      {R"({"error":{"code":400,"message":"Invalid JSON payload","status":"INVALID_ARGUMENT"}})"});
  EXPECT_EQ(bad.statuses[0].code(), StatusCode::kInvalidArgument);
  Read garbage = ReadEvents({"{not json"});
  EXPECT_EQ(garbage.statuses[0].code(), StatusCode::kUnavailable);
}

TEST(GeminiReaderTest, OneJsonReply) {
  std::vector<LlmEvent> events;
  auto reader = NewGeminiReader([&](const LlmEvent& e) { events.push_back(e); });
  Status st = reader->OnJson(Json::parse(R"({
    "candidates":[{"content":{"role":"model","parts":[{"text":"Calling."},
      {"functionCall":{"id":"x1","name":"ReadFile","args":{"path":"b","n":2}}}]},
      "finishReason":"STOP","index":0}],
    "usageMetadata":{"promptTokenCount":50,"candidatesTokenCount":7},
    "modelVersion":"gemini-2.5-pro"})"));
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(reader->complete());
  ChatResponse resp = reader->Take();
  EXPECT_EQ(resp.content, "Calling.");
  EXPECT_EQ(resp.finish_reason, "tool_calls");
  ASSERT_EQ(resp.tool_calls.size(), 1u);
  EXPECT_EQ(resp.tool_calls[0].id, "x1");
  EXPECT_EQ(resp.tool_calls[0].arguments, R"({"n":2,"path":"b"})");
  EXPECT_EQ(resp.usage.prompt_tokens, 50);
  EXPECT_EQ(resp.usage.cached_tokens, 0);
  EXPECT_EQ(resp.usage.completion_tokens, 7);
  EXPECT_EQ(resp.model, "gemini-2.5-pro");
  EXPECT_EQ(events.size(), 2u);
}

// The reader over real SSE framing, fed in small pieces.
TEST(GeminiReaderTest, ThroughTheSseParser) {
  const std::string wire =
      "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]}}]}\r\n\r\n"
      "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"b\"}]},"
      "\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":4,"
      "\"candidatesTokenCount\":2}}\r\n\r\n";
  auto reader = NewGeminiReader(nullptr);
  Status first;
  SseParser parser([&](const SseEvent& ev) {
    Status st = reader->OnEvent(ev);
    if (first.ok() && !st.ok()) first = st;
  });
  for (size_t i = 0; i < wire.size(); i += 7) parser.Feed(std::string_view(wire).substr(i, 7));
  parser.Finish();
  ASSERT_TRUE(first.ok()) << first.ToString();
  EXPECT_TRUE(reader->complete());
  ChatResponse resp = reader->Take();
  EXPECT_EQ(resp.content, "ab");
  EXPECT_EQ(resp.usage.prompt_tokens, 4);
  EXPECT_EQ(resp.usage.completion_tokens, 2);
}

}  // namespace gemini_test
}  // namespace maestro::llm
