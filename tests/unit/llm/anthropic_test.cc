#include "llm/anthropic.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "llm_test_files.h"

namespace maestro::llm {
namespace {

namespace fs = std::filesystem;

const char kTools[] =
    R"([{"type":"function","function":{"name":"ReadFile","description":"Reads a file",)"
    R"("parameters":{"type":"object","properties":{"path":{"type":"string"}}}}},)"
    R"({"type":"function","function":{"name":"Done"}}])";

size_t Count(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t at = s.find(needle); at != std::string::npos; at = s.find(needle, at + 1)) ++n;
  return n;
}

class AnthropicBodyTest : public test_files::LlmFileTest {
 protected:
  AnthropicBodyTest() : LlmFileTest("maestro_anth_") {
    profile_.provider = "anthropic";
    profile_.model = "claude-test";
  }

  // The body the wire format uploads for these lines, checked to come out
  // at its measured size.
  std::string Body(const std::vector<Json>& lines, Json params = Json::object(),
                   bool with_tools = true, bool stream = true) {
    RequestBodySpec spec;
    spec.model = profile_.model;
    spec.stream = stream;
    spec.params = std::move(params);
    spec.messages_path = Write("current.jsonl", test_files::JsonlText(lines));
    if (with_tools) spec.tools_json = kTools;
    auto body = NewAnthropicWire()->OpenBody(profile_, spec);
    EXPECT_TRUE(body.ok()) << body.status().ToString();
    if (!body.ok()) return "";
    std::string out;
    char buf[333];
    while (size_t k = (*body)->Read(buf, sizeof(buf))) out.append(buf, k);
    EXPECT_TRUE((*body)->error().ok()) << (*body)->error().ToString();
    EXPECT_EQ(out.size(), (*body)->size());
    return out;
  }
  Json BodyJson(const std::vector<Json>& lines, Json params = Json::object(),
                bool with_tools = true) {
    return Json::parse(Body(lines, std::move(params), with_tools));
  }

  ModelProfile profile_;
};

Json Msg(const char* role, Json content) { return {{"role", role}, {"content", content}}; }
Json ToolMsg(const char* id, Json content) {
  return {{"role", "tool"}, {"tool_call_id", id}, {"content", content}};
}
Json Call(const char* id, const char* name, const char* args) {
  return {{"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", args}}}};
}

TEST_F(AnthropicBodyTest, TranslatesARealisticConversation) {
  Json assistant_calls = {{"role", "assistant"},
                          {"content", nullptr},
                          {"tool_calls",
                           {Call("c1", "ReadFile", R"({"path":"a.txt"})"),
                            Call("c2", "ReadFile", R"({"path": "b.txt"})")}}};
  std::vector<Json> lines = {
      Msg("system", "You are maestro."),
      Msg("user", "Read a.txt and b.txt"),
      assistant_calls,
      ToolMsg("c1", "A"),
      ToolMsg("c2", Json::array(
                        {{{"type", "text"}, {"text", "B1"}}, {{"type", "text"}, {"text", "B2"}}})),
      Msg("user", "thanks"),
      Msg("assistant", "done"),
      Msg("user", "and c.txt?"),
  };
  std::string text = Body(lines);
  Json expected = Json::parse(R"({
    "model": "claude-test", "max_tokens": 8192, "stream": true,
    "tools": [
      {"name": "ReadFile", "description": "Reads a file",
       "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}},
      {"name": "Done", "input_schema": {"type": "object", "properties": {}},
       "cache_control": {"type": "ephemeral"}}],
    "system": [{"type": "text", "text": "You are maestro.", "cache_control": {"type": "ephemeral"}}],
    "messages": [
      {"role": "user", "content": [{"type": "text", "text": "Read a.txt and b.txt"}]},
      {"role": "assistant", "content": [
        {"type": "tool_use", "id": "c1", "name": "ReadFile", "input": {"path": "a.txt"}},
        {"type": "tool_use", "id": "c2", "name": "ReadFile", "input": {"path": "b.txt"}}]},
      {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "c1", "content": "A"},
        {"type": "tool_result", "tool_use_id": "c2", "content": "B1\nB2"}]},
      {"role": "user", "content": [
        {"type": "text", "text": "thanks", "cache_control": {"type": "ephemeral"}}]},
      {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
      {"role": "user", "content": [
        {"type": "text", "text": "and c.txt?", "cache_control": {"type": "ephemeral"}}]}]
  })");
  EXPECT_EQ(Json::parse(text), expected) << text;
  EXPECT_EQ(Count(text, "cache_control"), 4u);
  // The stable prefix comes first, messages last.
  EXPECT_LT(text.find("\"tools\""), text.find("\"system\""));
  EXPECT_LT(text.find("\"system\""), text.find("\"messages\""));
}

TEST(AnthropicMarksTest, NewestLineAndTheLineBeforeTheNewestAssistant) {
  auto tr = NewAnthropicTranslator(ModelProfile{}, RequestBodySpec{}, Json::array());
  using R = MessageRole;
  EXPECT_EQ(tr->Marks({}), std::vector<size_t>{});
  EXPECT_EQ(tr->Marks({R::kSystem}), std::vector<size_t>{});  // the system block has its own
  EXPECT_EQ(tr->Marks({R::kSystem, R::kUser}), std::vector<size_t>{1});
  EXPECT_EQ(tr->Marks({R::kSystem, R::kAssistant}), std::vector<size_t>{1});
  EXPECT_EQ(tr->Marks({R::kSystem, R::kUser, R::kAssistant, R::kTool}),
            (std::vector<size_t>{1, 3}));
  EXPECT_EQ(
      tr->Marks({R::kSystem, R::kUser, R::kAssistant, R::kTool, R::kTool, R::kAssistant, R::kTool}),
      (std::vector<size_t>{4, 6}));
  EXPECT_EQ(tr->Marks({R::kUser, R::kAssistant}), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(tr->Marks({R::kUser}), std::vector<size_t>{0});
  EXPECT_EQ(tr->MarkBytes(), std::string(R"(,"cache_control":{"type":"ephemeral"})").size());
}

TEST_F(AnthropicBodyTest, OneHourTtlOnEveryBreakpointAndNeverMoreThanFour) {
  profile_.cache_ttl = "1h";
  std::vector<Json> lines = {Msg("system", "S"), Msg("user", "u1"),      Msg("assistant", "a1"),
                             Msg("user", "u2"),  Msg("assistant", "a2"), Msg("user", "u3")};
  std::string text = Body(lines);
  EXPECT_EQ(Count(text, R"("cache_control":{"ttl":"1h","type":"ephemeral"})"), 4u) << text;
  EXPECT_EQ(Count(text, "cache_control"), 4u);
  Json j = Json::parse(text);
  EXPECT_TRUE(j["messages"][2]["content"][0].contains("cache_control"));   // u2
  EXPECT_FALSE(j["messages"][3]["content"][0].contains("cache_control"));  // a2
  EXPECT_TRUE(j["messages"][4]["content"][0].contains("cache_control"));   // u3

  // Without tools or a system prompt fewer breakpoints, still on the lines.
  std::string bare = Body({Msg("user", "u1"), Msg("assistant", "a1"), Msg("user", "u2")},
                          Json::object(), /*with_tools=*/false);
  EXPECT_EQ(Count(bare, "cache_control"), 2u) << bare;
  EXPECT_EQ(Json::parse(bare).count("system"), 0u);
  EXPECT_EQ(Json::parse(bare).count("tools"), 0u);
}

TEST_F(AnthropicBodyTest, MarkOnAToolCallGoesOnItsLastToolUseBlock) {
  Json calls = {{"role", "assistant"},
                {"content", "Reading."},
                {"tool_calls", {Call("c1", "ReadFile", "{}"), Call("c2", "Done", "")}}};
  Json j = BodyJson({Msg("system", "S"), Msg("user", "go"), calls});
  const Json& blocks = j["messages"][1]["content"];
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_EQ(blocks[0], (Json{{"type", "text"}, {"text", "Reading."}}));
  EXPECT_FALSE(blocks[1].contains("cache_control"));
  EXPECT_EQ(blocks[2]["cache_control"], (Json{{"type", "ephemeral"}}));
  EXPECT_EQ(blocks[2]["input"], Json::object());  // "" arguments
}

TEST_F(AnthropicBodyTest, ParamsAndToolChoice) {
  Json j = BodyJson({Msg("user", "hi")}, {{"max_tokens", 100},
                                          {"temperature", 0.5},
                                          {"top_p", 0.9},
                                          {"stop", "END"},
                                          {"seed", 7},
                                          {"frequency_penalty", 1},
                                          {"tool_choice", "required"}});
  EXPECT_EQ(j["max_tokens"], 100);
  EXPECT_EQ(j["temperature"], 0.5);
  EXPECT_EQ(j["top_p"], 0.9);
  EXPECT_EQ(j["stop_sequences"], Json::array({"END"}));
  EXPECT_EQ(j["tool_choice"], (Json{{"type", "any"}}));
  EXPECT_FALSE(j.contains("seed"));
  EXPECT_FALSE(j.contains("frequency_penalty"));
  EXPECT_FALSE(j.contains("stop"));

  const std::pair<Json, Json> choices[] = {
      {"auto", {{"type", "auto"}}},
      {"none", {{"type", "none"}}},
      {{{"type", "function"}, {"function", {{"name", "Done"}}}},
       {{"type", "tool"}, {"name", "Done"}}},
  };
  for (const auto& [openai, anthropic] : choices) {
    EXPECT_EQ(BodyJson({Msg("user", "hi")}, {{"tool_choice", openai}})["tool_choice"], anthropic)
        << openai.dump();
  }
  EXPECT_FALSE(BodyJson({Msg("user", "hi")}, {{"tool_choice", 3}}).contains("tool_choice"));

  profile_.max_output_tokens = 4096;
  Json d = BodyJson({Msg("user", "hi")}, {{"stop", {"a", "b"}}});
  EXPECT_EQ(d["max_tokens"], 4096);
  EXPECT_EQ(d["stop_sequences"], Json::array({"a", "b"}));
  EXPECT_FALSE(Json::parse(Body({Msg("user", "hi")}, Json::object(), true, false))["stream"]);
}

TEST_F(AnthropicBodyTest, ImagesAndEmptyText) {
  Json parts = Json::array(
      {{{"type", "text"}, {"text", ""}},
       {{"type", "text"}, {"text", "look"}},
       {{"type", "image_url"}, {"image_url", {{"url", "data:image/png;base64,iVBORw0K"}}}},
       {{"type", "image_url"}, {"image_url", {{"url", "https://example.com/a.jpg"}}}}});
  Json j =
      BodyJson({Msg("user", parts), Msg("assistant", ""), Msg("user", "")}, Json::object(), false);
  Json expected_user = Json::parse(R"([
    {"type": "text", "text": "look"},
    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"}},
    {"type": "image", "source": {"type": "url", "url": "https://example.com/a.jpg"},
     "cache_control": {"type": "ephemeral"}}])");
  EXPECT_EQ(j["messages"][0]["content"], expected_user);
  // R"js(...)js": the text "(empty)" would end a plain raw string.
  EXPECT_EQ(j["messages"][1]["content"], Json::parse(R"js([{"type":"text","text":"(empty)"}])js"));
  EXPECT_EQ(j["messages"][2]["content"], Json::parse(R"js([{"type":"text","text":"(empty)",
                               "cache_control":{"type":"ephemeral"}}])js"));
}

TEST_F(AnthropicBodyTest, BadArgumentsLateSystemAndNoSystemFirst) {
  Json bad = {
      {"role", "assistant"},
      {"tool_calls", {Call("c1", "ReadFile", R"({"path":)"), Call("c2", "ReadFile", "[1]")}}};
  Json j = BodyJson({Msg("user", "hi"), bad, ToolMsg("c1", "x"), ToolMsg("c2", "y"),
                     Msg("system", "Reminder: be brief")},
                    Json::object(), false);
  EXPECT_FALSE(j.contains("system"));
  EXPECT_EQ(j["messages"][1]["content"][0]["input"], (Json{{"_raw_arguments", R"({"path":)"}}));
  EXPECT_EQ(j["messages"][1]["content"][1]["input"], (Json{{"_raw_arguments", "[1]"}}));
  EXPECT_EQ(j["messages"][2]["content"].size(), 2u);
  EXPECT_EQ(j["messages"][3], Json::parse(R"({"role":"user","content":[
      {"type":"text","text":"[system] Reminder: be brief","cache_control":{"type":"ephemeral"}}]})"));
  // The line before the newest assistant turn (the user's) is the other mark.
  EXPECT_EQ(j["messages"][0]["content"][0]["cache_control"], (Json{{"type", "ephemeral"}}));
  EXPECT_FALSE(j["messages"][2]["content"][1].contains("cache_control"));
}

TEST_F(AnthropicBodyTest, TrailingToolResultsCloseTheBody) {
  Json calls = {{"role", "assistant"}, {"tool_calls", {Call("c1", "Done", "{}")}}};
  Json j = BodyJson({Msg("system", "S"), Msg("user", "go"), calls, ToolMsg("c1", "ok")});
  ASSERT_EQ(j["messages"].size(), 3u);
  EXPECT_EQ(j["messages"][2], Json::parse(R"({"role":"user","content":[{"type":"tool_result",
      "tool_use_id":"c1","content":"ok","cache_control":{"type":"ephemeral"}}]})"));
  EXPECT_EQ(BodyJson({Msg("system", "S")})["messages"], Json::array());
}

TEST_F(AnthropicBodyTest, UnknownRoleIsAnError) {
  std::string path = (dir_ / "current.jsonl").string();
  std::ofstream(path) << R"({"role":"user","content":"a"})"
                      << "\n"
                      << R"({"role":"narrator","content":"b"})"
                      << "\n";
  RequestBodySpec spec;
  spec.messages_path = path;
  auto body = NewAnthropicWire()->OpenBody(profile_, spec);
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().code(), StatusCode::kInternal);
  EXPECT_NE(body.status().message().find("message 1"), std::string::npos);
}

// ---- the reply

SseEvent Ev(const std::string& type, const std::string& data) {
  SseEvent ev;
  ev.event = type;
  ev.data = data;
  return ev;
}

class AnthropicReaderTest : public ::testing::Test {
 protected:
  std::unique_ptr<ReplyReader> reader_ =
      NewAnthropicReader([this](const LlmEvent& ev) { events_.push_back(ev); });
  std::vector<LlmEvent> events_;
  void Feed(const std::vector<std::pair<std::string, std::string>>& evs) {
    for (const auto& [type, data] : evs) {
      Status st = reader_->OnEvent(Ev(type, data));
      ASSERT_TRUE(st.ok()) << type << ": " << st.ToString();
    }
  }
};

const char kStart[] =
    R"({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant",)"
    R"("model":"claude-test","content":[],"stop_reason":null,"usage":{"input_tokens":10,)"
    R"("cache_creation_input_tokens":200,"cache_read_input_tokens":3000,"output_tokens":1}}})";

TEST_F(AnthropicReaderTest, StreamsText) {
  Feed(
      {{"message_start", kStart},
       {"content_block_start",
        R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})"},
       {"ping", R"({"type":"ping"})"},
       {"content_block_delta",
        R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}})"},
       {"content_block_delta",
        R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}})"},
       {"content_block_stop", R"({"type":"content_block_stop","index":0})"},
       {"brand_new_event", R"({"type":"brand_new_event","x":1})"},
       {"message_delta",
        R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}})"}});
  EXPECT_FALSE(reader_->complete());
  Feed({{"message_stop", R"({"type":"message_stop"})"}});
  EXPECT_TRUE(reader_->complete());
  ChatResponse r = reader_->Take();
  EXPECT_EQ(r.id, "msg_1");
  EXPECT_EQ(r.model, "claude-test");
  EXPECT_EQ(r.content, "Hello");
  EXPECT_EQ(r.finish_reason, "stop");
  EXPECT_TRUE(r.tool_calls.empty());
  EXPECT_TRUE(r.usage.reported);
  EXPECT_EQ(r.usage.prompt_tokens, 3210);
  EXPECT_EQ(r.usage.cached_tokens, 3000);
  EXPECT_EQ(r.usage.cache_write_tokens, 200);
  EXPECT_EQ(r.usage.completion_tokens, 7);
  ASSERT_EQ(events_.size(), 2u);
  EXPECT_EQ(events_[0].kind, LlmEvent::Kind::kText);
  EXPECT_EQ(events_[0].text, "Hel");
  EXPECT_EQ(events_[1].text, "lo");
}

TEST_F(AnthropicReaderTest, StreamsToolUseFragmentsAndThinking) {
  Feed(
      {{"message_start", kStart},
       {"content_block_start",
        R"({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}})"},
       {"content_block_delta",
        R"({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Need a file."}})"},
       {"content_block_delta",
        R"({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"abc"}})"},
       {"content_block_stop", R"({"type":"content_block_stop","index":0})"},
       {"content_block_start",
        R"({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"ReadFile","input":{}}})"},
       {"content_block_delta",
        R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}})"},
       {"content_block_delta",
        R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\": "}})"},
       {"content_block_delta",
        R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"a.txt\"}"}})"},
       {"content_block_stop", R"({"type":"content_block_stop","index":1})"},
       {"content_block_start",
        R"({"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_2","name":"Done","input":{}}})"},
       {"content_block_stop", R"({"type":"content_block_stop","index":2})"},
       {"message_delta",
        R"({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}})"},
       {"message_stop", R"({"type":"message_stop"})"}});
  ChatResponse r = reader_->Take();
  EXPECT_EQ(r.finish_reason, "tool_calls");
  EXPECT_EQ(r.reasoning, "Need a file.");
  EXPECT_EQ(r.content, "");
  ASSERT_EQ(r.tool_calls.size(), 2u);
  EXPECT_EQ(r.tool_calls[0].index, 0);
  EXPECT_EQ(r.tool_calls[0].id, "toolu_1");
  EXPECT_EQ(r.tool_calls[0].name, "ReadFile");
  EXPECT_EQ(r.tool_calls[0].arguments, R"({"path":"a.txt"})");
  EXPECT_EQ(r.tool_calls[1].index, 1);
  EXPECT_EQ(r.tool_calls[1].name, "Done");
  EXPECT_EQ(r.tool_calls[1].arguments, "{}");
  ASSERT_EQ(events_.size(), 5u);
  EXPECT_EQ(events_[0].kind, LlmEvent::Kind::kReasoning);
  EXPECT_EQ(events_[0].text, "Need a file.");
  EXPECT_EQ(events_[1].kind, LlmEvent::Kind::kToolCall);
  EXPECT_EQ(events_[1].index, 0);
  EXPECT_EQ(events_[1].tool_id, "toolu_1");
  EXPECT_EQ(events_[1].tool_name, "ReadFile");
  EXPECT_EQ(events_[1].text, "");
  EXPECT_EQ(events_[2].text, "{\"path\": ");
  EXPECT_EQ(events_[2].tool_id, "");
  EXPECT_EQ(events_[3].text, "\"a.txt\"}");
  EXPECT_EQ(events_[4].index, 1);
  EXPECT_EQ(events_[4].tool_name, "Done");
}

TEST_F(AnthropicReaderTest, MaxTokensIsLength) {
  Feed({{"message_start", kStart},
        {"message_delta", R"({"type":"message_delta","delta":{"stop_reason":"max_tokens"}})"},
        {"message_stop", R"({"type":"message_stop"})"}});
  EXPECT_EQ(reader_->Take().finish_reason, "length");
}

TEST_F(AnthropicReaderTest, ErrorEventsAndMalformedData) {
  Status overloaded = reader_->OnEvent(Ev(
      "error", R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"));
  EXPECT_EQ(overloaded.code(), StatusCode::kUnavailable);
  EXPECT_NE(overloaded.message().find("Overloaded"), std::string::npos);
  Status invalid = reader_->OnEvent(
      Ev("error", R"({"type":"error","error":{"type":"invalid_request_error","message":"bad"}})"));
  EXPECT_EQ(invalid.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(reader_->OnEvent(Ev("content_block_delta", "{not json")).code(),
            StatusCode::kUnavailable);
}

TEST_F(AnthropicReaderTest, CutStreamIsNotComplete) {
  Feed(
      {{"message_start", kStart},
       {"content_block_start",
        R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})"},
       {"content_block_delta",
        R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hal"}})"}});
  EXPECT_FALSE(reader_->complete());
  EXPECT_EQ(reader_->Take().finish_reason, "");
}

TEST_F(AnthropicReaderTest, ReadsAJsonReply) {
  Json body = Json::parse(R"({
    "id": "msg_2", "type": "message", "role": "assistant", "model": "claude-test",
    "content": [
      {"type": "thinking", "thinking": "hm", "signature": "s"},
      {"type": "text", "text": "Reading."},
      {"type": "tool_use", "id": "toolu_9", "name": "ReadFile", "input": {"path": "b.txt"}},
      {"type": "tool_use", "id": "toolu_10", "name": "Done", "input": {}}],
    "stop_reason": "tool_use",
    "usage": {"input_tokens": 5, "cache_creation_input_tokens": 0,
              "cache_read_input_tokens": 95, "output_tokens": 12}})");
  ASSERT_TRUE(reader_->OnJson(body).ok());
  EXPECT_TRUE(reader_->complete());
  ChatResponse r = reader_->Take();
  EXPECT_EQ(r.id, "msg_2");
  EXPECT_EQ(r.content, "Reading.");
  EXPECT_EQ(r.reasoning, "hm");
  EXPECT_EQ(r.finish_reason, "tool_calls");
  ASSERT_EQ(r.tool_calls.size(), 2u);
  EXPECT_EQ(r.tool_calls[0].id, "toolu_9");
  EXPECT_EQ(r.tool_calls[0].arguments, R"({"path":"b.txt"})");
  EXPECT_EQ(r.tool_calls[1].arguments, "{}");
  EXPECT_EQ(r.usage.prompt_tokens, 100);
  EXPECT_EQ(r.usage.cached_tokens, 95);
  EXPECT_EQ(r.usage.cache_write_tokens, 0);
  EXPECT_EQ(r.usage.completion_tokens, 12);

  auto other = NewAnthropicReader(nullptr);
  EXPECT_EQ(other
                ->OnJson(Json::parse(R"({"type":"error","error":{"type":"api_error",
                                           "message":"boom"}})"))
                .code(),
            StatusCode::kUnavailable);
  EXPECT_TRUE(other->OnJson(Json::parse(R"({"content":[]})")).ok());
  EXPECT_FALSE(other->complete());  // no stop_reason
}

TEST(AnthropicWireTest, UrlHeadersAndErrors) {
  auto wire = NewAnthropicWire();
  ModelProfile p;
  p.base_url = "http://127.0.0.1:9/v1/";
  EXPECT_EQ(wire->provider_name(), "anthropic");
  EXPECT_EQ(wire->Url(p, true), "http://127.0.0.1:9/v1/messages");
  EXPECT_EQ(wire->Url(p, false), "http://127.0.0.1:9/v1/messages");
  HttpHeaders h;
  wire->AddHeaders(p, &h);
  EXPECT_EQ(h, (HttpHeaders{{"anthropic-version", "2023-06-01"}}));
  p.api_key = "sk-ant";
  h.clear();
  wire->AddHeaders(p, &h);
  EXPECT_EQ(h, (HttpHeaders{{"x-api-key", "sk-ant"}, {"anthropic-version", "2023-06-01"}}));
  EXPECT_EQ(wire->ClassifyHttpError(529, R"({"type":"error","error":{"type":"overloaded_error"}})"),
            LlmErrorKind::kRetryable);
  EXPECT_EQ(wire->ClassifyHttpError(429, "{}"), LlmErrorKind::kRetryable);
  EXPECT_EQ(
      wire->ClassifyHttpError(
          400, R"({"error":{"message":"prompt is too long: 210000 tokens > 200000 maximum"}})"),
      LlmErrorKind::kContextLengthExceeded);
  EXPECT_EQ(wire->ClassifyHttpError(400, "{}"), LlmErrorKind::kTerminal);
}

}  // namespace
}  // namespace maestro::llm
