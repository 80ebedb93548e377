#include "llm/anthropic.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

#include "core/utf8.h"
#include "llm/openai_message.h"

namespace maestro::llm {
// A named namespace rather than an anonymous one: maestro_llm is a unity
// build, and the other adapters have helpers with the same purposes.
namespace anthropic_wire {

constexpr char kApiVersion[] = "2023-06-01";

// Lossless for valid text; replaces what is not UTF-8 rather than throwing
// (the translation runs twice and must give the same bytes both times).
std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// obj[key], or null when obj is no object or lacks it (never throws: a
// message or an event of an unexpected shape is read as far as it goes).
const Json& Get(const Json& obj, const char* key) {
  static const Json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

std::string Str(const Json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t Int(const Json& obj, const char* key, int64_t dflt) {
  if (!obj.is_object()) return dflt;
  auto it = obj.find(key);
  return it != obj.end() && it->is_number_integer() ? it->get<int64_t>() : dflt;
}

Json TextBlock(std::string text) { return {{"type", "text"}, {"text", std::move(text)}}; }

// An OpenAI image_url part: a data: URL becomes an inline base64 image, any
// other URL an image the API fetches itself.
Json ImageBlock(const std::string& url) {
  if (url.rfind("data:", 0) == 0) {
    size_t comma = url.find(',');
    size_t semi = url.find(';');
    size_t type_end = std::min(semi, comma);
    std::string media_type = url.substr(5, type_end == std::string::npos ? 0 : type_end - 5);
    std::string data = comma == std::string::npos ? "" : url.substr(comma + 1);
    return {{"type", "image"},
            {"source", {{"type", "base64"}, {"media_type", media_type}, {"data", data}}}};
  }
  return {{"type", "image"}, {"source", {{"type", "url"}, {"url", url}}}};
}

// User content: text blocks (empty ones dropped: the API rejects them) and
// images; other part kinds (audio, files) have no Anthropic counterpart here.
void AddUserBlocks(const Json& content, const std::string& prefix, std::vector<Json>* blocks) {
  if (content.is_string()) {
    std::string text = prefix + content.get<std::string>();
    if (!text.empty()) blocks->push_back(TextBlock(std::move(text)));
    return;
  }
  if (!content.is_array()) return;
  bool first_text = true;
  for (const Json& part : content) {
    std::string type = Str(part, "type");
    if (type == "text") {
      std::string text = (first_text ? prefix : "") + Str(part, "text");
      first_text = false;
      if (!text.empty()) blocks->push_back(TextBlock(std::move(text)));
    } else if (type == "image_url") {
      const Json& img = Get(part, "image_url");
      std::string url = img.is_string() ? img.get<std::string>() : Str(img, "url");
      if (!url.empty()) blocks->push_back(ImageBlock(url));
    }
  }
}

// OpenAI tool_choice -> Anthropic's; null (dropped) for a value it cannot say.
Json ToolChoice(const Json& choice) {
  if (choice.is_string()) {
    const std::string& s = choice.get_ref<const std::string&>();
    if (s == "auto") return {{"type", "auto"}};
    if (s == "required") return {{"type", "any"}};
    if (s == "none") return {{"type", "none"}};
    return nullptr;
  }
  std::string name = Str(Get(choice, "function"), "name");
  if (choice.is_object() && !name.empty()) return {{"type", "tool"}, {"name", name}};
  return nullptr;
}

class AnthropicTranslator final : public MessageTranslator {
 public:
  AnthropicTranslator(const ModelProfile& p, const RequestBodySpec& spec, Json tools) {
    Json cc = {{"type", "ephemeral"}};
    if (p.cache_ttl == "1h") cc["ttl"] = "1h";
    mark_ = ",\"cache_control\":" + Dump(cc);
    head_ = BuildHead(p, spec, tools);
  }

  void Reset() override {
    messages_open_ = false;
    any_message_ = false;
    tool_results_open_ = false;
  }

  Status Head(std::string* out) override {
    *out += head_;
    return Status::Ok();
  }

  Status Message(const Json& m, size_t index, bool mark, std::string* out) override {
    MessageRole role = RoleOf(m);
    if (index == 0 && role == MessageRole::kSystem) {
      // The static system prompt: the top-level `system`, always a breakpoint.
      std::string text = ContentText(Get(m, "content"));
      if (!text.empty()) *out += ",\"system\":[" + Marked(Dump(TextBlock(text)), true) + "]";
      return Status::Ok();
    }
    OpenMessages(out);
    if (role == MessageRole::kTool) {
      Json block = {{"type", "tool_result"},
                    {"tool_use_id", Str(m, "tool_call_id")},
                    {"content", ContentText(Get(m, "content"))}};
      if (tool_results_open_) {
        *out += ',';
      } else {
        StartMessage(out);
        *out += R"({"role":"user","content":[)";
        tool_results_open_ = true;
      }
      *out += Marked(Dump(block), mark);
      return Status::Ok();
    }
    CloseToolResults(out);
    std::vector<Json> blocks;
    std::string api_role = "user";
    switch (role) {
      case MessageRole::kUser:
        AddUserBlocks(Get(m, "content"), "", &blocks);
        break;
      case MessageRole::kSystem:
        // Anthropic has one system prompt; a later system message (a
        // reminder the engine injects) goes to the model as user text.
        AddUserBlocks(Json(ContentText(Get(m, "content"))), "[system] ", &blocks);
        break;
      case MessageRole::kAssistant:
        api_role = "assistant";
        AssistantBlocks(m, &blocks);
        break;
      default:
        return Internal(fmt::format("message {}: role {} has no Anthropic counterpart", index,
                                    Dump(Get(m, "role"))));
    }
    if (blocks.empty()) blocks.push_back(TextBlock("(empty)"));
    StartMessage(out);
    *out += R"({"role":")" + api_role + R"(","content":[)";
    for (size_t i = 0; i < blocks.size(); ++i) {
      if (i > 0) *out += ',';
      *out += Marked(Dump(blocks[i]), mark && i + 1 == blocks.size());
    }
    *out += "]}";
    return Status::Ok();
  }

  Status Finish(std::string* out) override {
    OpenMessages(out);
    CloseToolResults(out);
    *out += "]}";
    return Status::Ok();
  }

  // The newest line (written for the next request) and the line before the
  // newest assistant turn (where the previous request's prefix ended, read
  // now). Line 0 as the system prompt carries its own breakpoint; with the
  // last tool's that makes at most four, the API's limit.
  std::vector<size_t> Marks(const std::vector<MessageRole>& roles) const override {
    std::vector<size_t> out;
    if (roles.empty()) return out;
    auto markable = [&](size_t i) { return !(i == 0 && roles[0] == MessageRole::kSystem); };
    const size_t last = roles.size() - 1;
    for (size_t i = roles.size(); i-- > 1;) {
      if (roles[i] != MessageRole::kAssistant) continue;
      if (markable(i - 1) && i - 1 != last) out.push_back(i - 1);
      break;
    }
    if (markable(last)) out.push_back(last);
    return out;
  }

  size_t MarkBytes() const override { return mark_.size(); }

 private:
  std::string BuildHead(const ModelProfile& p, const RequestBodySpec& spec, const Json& tools) {
    const Json& params = spec.params.is_object() ? spec.params : Json::object();
    std::string h = "{\"model\":" + Dump(spec.model.empty() ? p.model : spec.model);
    int64_t max_tokens = Int(params, "max_tokens", Int(params, "max_completion_tokens", 0));
    h += ",\"max_tokens\":" + std::to_string(max_tokens > 0 ? max_tokens : p.max_output_tokens);
    for (const char* key : {"temperature", "top_p"}) {
      if (auto it = params.find(key); it != params.end() && it->is_number()) {
        h += fmt::format(",\"{}\":{}", key, Dump(*it));
      }
    }
    if (auto it = params.find("stop"); it != params.end()) {
      Json stops = it->is_string() ? Json::array({*it}) : *it;
      if (stops.is_array() && !stops.empty()) h += ",\"stop_sequences\":" + Dump(stops);
    }
    if (auto it = params.find("tool_choice"); it != params.end()) {
      Json choice = ToolChoice(*it);
      if (!choice.is_null()) h += ",\"tool_choice\":" + Dump(choice);
    }
    h += spec.stream ? ",\"stream\":true" : ",\"stream\":false";
    if (tools.is_array() && !tools.empty()) {
      h += ",\"tools\":[";
      for (size_t i = 0; i < tools.size(); ++i) {
        const Json& fn = Get(tools[i], "function");
        Json t = {{"name", Str(fn, "name")}};
        if (fn.contains("description")) t["description"] = fn["description"];
        Json schema = Get(fn, "parameters");
        t["input_schema"] =
            schema.is_object() ? schema : Json{{"type", "object"}, {"properties", Json::object()}};
        if (i > 0) h += ',';
        h += Marked(Dump(t), i + 1 == tools.size());
      }
      h += ']';
    }
    return h;
  }

  // `block` with the cache breakpoint inside its object when `mark`.
  std::string Marked(std::string block, bool mark) const {
    if (mark) block.insert(block.size() - 1, mark_);
    return block;
  }

  void OpenMessages(std::string* out) {
    if (messages_open_) return;
    *out += ",\"messages\":[";
    messages_open_ = true;
  }
  void StartMessage(std::string* out) {
    if (any_message_) *out += ',';
    any_message_ = true;
  }
  void CloseToolResults(std::string* out) {
    if (!tool_results_open_) return;
    *out += "]}";
    tool_results_open_ = false;
  }

  static void AssistantBlocks(const Json& m, std::vector<Json>* blocks) {
    std::string text = ContentText(Get(m, "content"));
    if (!text.empty()) blocks->push_back(TextBlock(std::move(text)));
    const Json& calls = Get(m, "tool_calls");
    if (!calls.is_array()) return;
    for (const Json& call : calls) {
      const Json& fn = Get(call, "function");
      blocks->push_back({{"type", "tool_use"},
                         {"id", Str(call, "id")},
                         {"name", Str(fn, "name")},
                         {"input", ArgumentsObject(Str(fn, "arguments"))}});
    }
  }

  std::string head_;
  std::string mark_;  // `,"cache_control":{...}`
  bool messages_open_ = false;
  bool any_message_ = false;
  bool tool_results_open_ = false;
};

std::string FinishReason(const std::string& stop_reason) {
  if (stop_reason == "tool_use") return "tool_calls";
  if (stop_reason == "max_tokens" || stop_reason == "model_context_window_exceeded") {
    return "length";
  }
  return "stop";  // end_turn, stop_sequence, pause_turn, refusal
}

// An `error` event or error body: overload and server trouble are worth
// another attempt, anything else is the request's fault.
Status ErrorStatus(const Json& err) {
  std::string type = Str(err, "type");
  std::string msg =
      fmt::format("anthropic {}: {}", type.empty() ? "error" : type, Str(err, "message"));
  if (type == "overloaded_error" || type == "api_error" || type == "rate_limit_error") {
    return Unavailable(msg);
  }
  return InvalidArgument(msg);
}

class AnthropicReader final : public ReplyReader {
 public:
  explicit AnthropicReader(LlmEventFn on_delta) : on_delta_(std::move(on_delta)) {}

  Status OnEvent(const SseEvent& ev) override {
    Json data = Json::parse(ev.data, nullptr, false);
    if (data.is_discarded() || !data.is_object()) {
      return Unavailable(
          fmt::format("malformed anthropic event: {}", ValidUtf8(Utf8Prefix(ev.data, 200))));
    }
    std::string type = Str(data, "type");
    if (type.empty()) type = ev.event;
    if (type == "message_start") {
      const Json& msg = Get(data, "message");
      resp_.id = Str(msg, "id");
      resp_.model = Str(msg, "model");
      ApplyUsage(Get(msg, "usage"));
    } else if (type == "content_block_start") {
      BlockStart(Int(data, "index", 0), Get(data, "content_block"));
    } else if (type == "content_block_delta") {
      BlockDelta(Int(data, "index", 0), Get(data, "delta"));
    } else if (type == "message_delta") {
      std::string stop = Str(Get(data, "delta"), "stop_reason");
      if (!stop.empty()) stop_reason_ = stop;
      ApplyUsage(Get(data, "usage"));
    } else if (type == "message_stop") {
      complete_ = true;
    } else if (type == "error") {
      return ErrorStatus(Get(data, "error"));
    }
    // ping, content_block_stop and event types added later need nothing.
    return Status::Ok();
  }

  Status OnJson(const Json& body) override {
    if (Str(body, "type") == "error") return ErrorStatus(Get(body, "error"));
    resp_.id = Str(body, "id");
    resp_.model = Str(body, "model");
    const Json& content = Get(body, "content");
    if (content.is_array()) {
      for (size_t i = 0; i < content.size(); ++i) {
        Json block = content[i];
        if (!block.is_object()) continue;
        Json input = Get(block, "input");
        if (!input.is_object()) input = Json::object();
        block.erase("input");  // as streamed: the input arrives as a delta
        BlockStart(static_cast<int64_t>(i), block);
        if (Str(block, "type") == "tool_use") {
          BlockDelta(static_cast<int64_t>(i),
                     {{"type", "input_json_delta"}, {"partial_json", Dump(input)}});
        }
      }
    }
    stop_reason_ = Str(body, "stop_reason");
    ApplyUsage(Get(body, "usage"));
    complete_ = !stop_reason_.empty();
    return Status::Ok();
  }

  bool complete() const override { return complete_; }

  ChatResponse Take() override {
    resp_.finish_reason = stop_reason_.empty() ? "" : FinishReason(stop_reason_);
    for (ToolCall& call : tools_) {
      // Compact JSON like the other providers; a tool without input streams
      // no input_json_delta at all.
      if (call.arguments.empty()) {
        call.arguments = "{}";
      } else {
        Json args = Json::parse(call.arguments, nullptr, false);
        if (!args.is_discarded()) call.arguments = Dump(args);
      }
    }
    resp_.tool_calls = std::move(tools_);
    if (usage_seen_) {
      resp_.usage.reported = true;
      resp_.usage.prompt_tokens = input_ + cache_write_ + cache_read_;
      resp_.usage.cached_tokens = cache_read_;
      resp_.usage.cache_write_tokens = cache_write_;
      resp_.usage.completion_tokens = output_;
    }
    return std::move(resp_);
  }

 private:
  // content_block_start: `index` is the block's position in the reply; a
  // tool_use block's tool index is its ordinal among the tool blocks.
  void BlockStart(int64_t index, const Json& block) {
    std::string type = Str(block, "type");
    if (type == "tool_use") {
      ToolCall call;
      call.index = static_cast<int>(tools_.size());
      call.id = Str(block, "id");
      call.name = Str(block, "name");
      tool_of_block_[index] = tools_.size();
      tools_.push_back(call);
      LlmEvent ev;
      ev.kind = LlmEvent::Kind::kToolCall;
      ev.index = call.index;
      ev.tool_id = call.id;
      ev.tool_name = call.name;
      Emit(std::move(ev));
    } else if (type == "text") {
      AddText(LlmEvent::Kind::kText, Str(block, "text"));
    } else if (type == "thinking") {
      AddText(LlmEvent::Kind::kReasoning, Str(block, "thinking"));
    }
  }

  void BlockDelta(int64_t index, const Json& delta) {
    std::string type = Str(delta, "type");
    if (type == "text_delta") {
      AddText(LlmEvent::Kind::kText, Str(delta, "text"));
    } else if (type == "thinking_delta") {
      AddText(LlmEvent::Kind::kReasoning, Str(delta, "thinking"));
    } else if (type == "input_json_delta") {
      auto it = tool_of_block_.find(index);
      std::string part = Str(delta, "partial_json");
      if (it == tool_of_block_.end() || part.empty()) return;
      ToolCall& call = tools_[it->second];
      call.arguments += part;
      LlmEvent ev;
      ev.kind = LlmEvent::Kind::kToolCall;
      ev.index = call.index;
      ev.text = std::move(part);
      Emit(std::move(ev));
    }
    // signature_delta (thinking's signature), citations_delta: not kept.
  }

  void AddText(LlmEvent::Kind kind, const std::string& text) {
    if (text.empty()) return;
    (kind == LlmEvent::Kind::kText ? resp_.content : resp_.reasoning) += text;
    LlmEvent ev;
    ev.kind = kind;
    ev.text = text;
    Emit(std::move(ev));
  }

  // message_start carries the input figures; message_delta the output and,
  // from newer API versions, updated input figures. A figure absent keeps its
  // value.
  void ApplyUsage(const Json& usage) {
    if (!usage.is_object()) return;
    usage_seen_ = true;
    input_ = Int(usage, "input_tokens", input_);
    cache_write_ = Int(usage, "cache_creation_input_tokens", cache_write_);
    cache_read_ = Int(usage, "cache_read_input_tokens", cache_read_);
    output_ = Int(usage, "output_tokens", output_);
  }

  void Emit(LlmEvent ev) {
    if (on_delta_) on_delta_(ev);
  }

  LlmEventFn on_delta_;
  ChatResponse resp_;
  std::vector<ToolCall> tools_;
  std::map<int64_t, size_t> tool_of_block_;  // content block index -> tools_ position
  std::string stop_reason_;
  bool complete_ = false;
  bool usage_seen_ = false;
  int64_t input_ = 0, cache_write_ = 0, cache_read_ = 0, output_ = 0;
};

class AnthropicWire final : public WireFormat {
 public:
  std::string_view provider_name() const override { return "anthropic"; }
  std::string Url(const ModelProfile& p, bool) const override {
    std::string url = p.base_url;
    while (!url.empty() && url.back() == '/') url.pop_back();
    return url + "/messages";
  }
  void AddHeaders(const ModelProfile& p, HttpHeaders* out) const override {
    if (!p.api_key.empty()) out->emplace_back("x-api-key", p.api_key);
    out->emplace_back("anthropic-version", kApiVersion);
  }
  Result<std::unique_ptr<LlmBody>> OpenBody(const ModelProfile& p,
                                            const RequestBodySpec& spec) const override {
    MAESTRO_ASSIGN_OR_RETURN(Json tools, ReadToolsArray(spec));
    MAESTRO_ASSIGN_OR_RETURN(
        auto body,
        TranslatedBody::Open(spec, std::make_unique<AnthropicTranslator>(p, spec, tools)));
    return std::unique_ptr<LlmBody>(std::move(body));
  }
  std::unique_ptr<ReplyReader> NewReader(LlmEventFn on_delta) const override {
    return std::make_unique<AnthropicReader>(std::move(on_delta));
  }
  LlmErrorKind ClassifyHttpError(int http, std::string_view body) const override {
    if (http == 529) return LlmErrorKind::kRetryable;  // overloaded_error
    return WireFormat::ClassifyHttpError(http, body);
  }
};

}  // namespace anthropic_wire

std::unique_ptr<WireFormat> NewAnthropicWire() {
  return std::make_unique<anthropic_wire::AnthropicWire>();
}

std::unique_ptr<MessageTranslator> NewAnthropicTranslator(const ModelProfile& p,
                                                          const RequestBodySpec& spec, Json tools) {
  return std::make_unique<anthropic_wire::AnthropicTranslator>(p, spec, std::move(tools));
}

std::unique_ptr<ReplyReader> NewAnthropicReader(LlmEventFn on_delta) {
  return std::make_unique<anthropic_wire::AnthropicReader>(std::move(on_delta));
}

}  // namespace maestro::llm
