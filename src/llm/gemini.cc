#include "llm/gemini.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/strings.h"
#include "llm/openai_message.h"

namespace maestro::llm {
// A named namespace, not an anonymous one: the library is one unity
// translation unit, and the Anthropic adapter has classes of the same roles.
namespace gemini_wire {

// Gemini 3 rejects a replayed functionCall part without the thoughtSignature
// its reply carried ("Function call is missing a thought_signature"). The
// engine's OpenAI-shaped transcript has no place for one, so replayed calls
// carry the sentinel Google documents for histories built elsewhere.
constexpr const char* kSkipSignature = "skip_thought_signature_validator";

// "gemini-2.5-flash" and "models/gemini-1.5-pro" predate signatures; any
// other model gets the sentinel (an unknown model is more likely newer).
bool NeedsThoughtSignature(std::string_view model) {
  if (model.substr(0, 7) == "models/") model.remove_prefix(7);
  return !(model.substr(0, 9) == "gemini-1." || model.substr(0, 9) == "gemini-2.");
}

// A file URL's MIME type from its extension; Gemini needs one, and
// "image/*" is what an image part without a known extension is.
std::string GuessMime(std::string_view url) {
  std::string_view path = url.substr(0, url.find_first_of("?#"));
  std::string ext(
      path.substr(path.rfind('.') == std::string_view::npos ? path.size() : path.rfind('.')));
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::map<std::string, std::string> kMimes = {
      {".png", "image/png"},      {".jpg", "image/jpeg"},  {".jpeg", "image/jpeg"},
      {".gif", "image/gif"},      {".webp", "image/webp"}, {".heic", "image/heic"},
      {".pdf", "application/pdf"}};
  auto it = kMimes.find(ext);
  return it == kMimes.end() ? "image/*" : it->second;
}

// An image_url part: a base64 data: URL inline, any other URL by reference.
Json ImagePart(const std::string& url) {
  constexpr std::string_view kBase64 = ";base64,";
  size_t comma = url.find(kBase64);
  if (url.rfind("data:", 0) == 0 && comma != std::string::npos) {
    std::string mime = url.substr(5, url.find(';') - 5);
    return {{"inlineData",
             {{"mimeType", mime.empty() ? "image/*" : mime},
              {"data", url.substr(comma + kBase64.size())}}}};
  }
  return {{"fileData", {{"fileUri", url}, {"mimeType", GuessMime(url)}}}};
}

// A user turn's parts. Gemini rejects an empty text part and a turn with no
// parts, so empty texts are skipped and an empty turn becomes one space.
Json UserParts(const Json& content, const std::string& prefix) {
  Json parts = Json::array();
  if (content.is_array()) {
    for (const Json& part : content) {
      if (!part.is_object()) continue;
      std::string type = part.value("type", "");
      if (type == "text") {
        std::string text = part.value("text", "");
        if (!text.empty()) parts.push_back({{"text", prefix + text}});
      } else if (type == "image_url" && part.contains("image_url")) {
        const Json& img = part["image_url"];
        std::string url = img.is_object()   ? img.value("url", "")
                          : img.is_string() ? img.get<std::string>()
                                            : "";
        if (!url.empty()) parts.push_back(ImagePart(url));
      }
    }
  } else {
    std::string text = ContentText(content);
    if (!text.empty()) parts.push_back({{"text", prefix + text}});
  }
  if (parts.empty()) parts.push_back({{"text", " "}});
  return parts;
}

std::string StringField(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

class GeminiTranslator final : public MessageTranslator {
 public:
  GeminiTranslator(const ModelProfile& p, const RequestBodySpec& spec, const Json& tools)
      : head_(BuildHead(p, spec.params, tools)), signatures_(NeedsThoughtSignature(p.model)) {}

  void Reset() override {
    contents_open_ = false;
    any_content_ = false;
    in_tool_turn_ = false;
    call_names_.clear();
  }

  Status Head(std::string* out) override {
    out->append(head_);
    return Status::Ok();
  }

  Status Message(const Json& m, size_t index, bool, std::string* out) override {
    MessageRole role = RoleOf(m);
    if (role == MessageRole::kOther) {
      return Internal("current.jsonl line " + std::to_string(index + 1) +
                      ": not a system, user, assistant or tool message");
    }
    static const Json kNoContent;
    auto found = m.find("content");
    const Json& content = found == m.end() ? kNoContent : *found;
    if (index == 0 && role == MessageRole::kSystem) {
      // The static system text goes before `contents`, after the tools: the
      // byte-stable prefix comes first.
      std::string text = ContentText(content);
      if (!text.empty()) {
        out->append("\"systemInstruction\":");
        out->append(DumpJson({{"parts", {{{"text", text}}}}}));
        out->append(",");
      }
      OpenContents(out);
      return Status::Ok();
    }
    OpenContents(out);
    if (role == MessageRole::kTool) return ToolResult(m, content, out);
    CloseToolTurn(out);
    if (any_content_) out->append(",");
    any_content_ = true;
    if (role == MessageRole::kAssistant) {
      out->append(DumpJson(ModelTurn(m, content)));
    } else {
      // A later system message (a note the engine adds) has no place of its
      // own in `contents`: it is a user part that says what it is.
      std::string prefix = role == MessageRole::kSystem ? "[system] " : "";
      out->append(DumpJson({{"role", "user"}, {"parts", UserParts(content, prefix)}}));
    }
    return Status::Ok();
  }

  Status Finish(std::string* out) override {
    OpenContents(out);
    CloseToolTurn(out);
    // Gemini rejects empty contents (a conversation of its system text only).
    if (!any_content_) out->append(R"({"role":"user","parts":[{"text":" "}]})");
    out->append("]}");
    return Status::Ok();
  }

 private:
  static std::string BuildHead(const ModelProfile& p, const Json& params, const Json& tools);

  void OpenContents(std::string* out) {
    if (contents_open_) return;
    contents_open_ = true;
    out->append("\"contents\":[");
  }

  void CloseToolTurn(std::string* out) {
    if (!in_tool_turn_) return;
    in_tool_turn_ = false;
    out->append("]}");
  }

  // Consecutive tool results are one user turn of functionResponse parts.
  Status ToolResult(const Json& m, const Json& content, std::string* out) {
    if (!in_tool_turn_) {
      if (any_content_) out->append(",");
      any_content_ = true;
      in_tool_turn_ = true;
      out->append(R"({"role":"user","parts":[)");
    } else {
      out->append(",");
    }
    std::string id = StringField(m, "tool_call_id");
    auto it = call_names_.find(id);
    Json response = {{"name", it == call_names_.end() ? "unknown" : it->second},
                     {"response", {{"result", ContentText(content)}}}};
    if (!id.empty()) response["id"] = id;
    out->append(DumpJson({{"functionResponse", std::move(response)}}));
    return Status::Ok();
  }

  // An assistant message as a "model" turn: its text, then its calls (whose
  // names the tool results after it look up).
  Json ModelTurn(const Json& m, const Json& content) {
    call_names_.clear();
    Json parts = Json::array();
    std::string text = ContentText(content);
    if (!text.empty()) parts.push_back({{"text", text}});
    auto calls = m.find("tool_calls");
    if (calls != m.end() && calls->is_array()) {
      bool signed_any = false;
      for (const Json& call : *calls) {
        if (!call.is_object()) continue;
        const Json fn = call.contains("function") ? call["function"] : Json::object();
        if (!fn.is_object()) continue;
        std::string id = StringField(call, "id");
        std::string name = StringField(fn, "name");
        call_names_[id] = name;
        Json fc = {{"name", name}, {"args", ArgumentsObject(StringField(fn, "arguments"))}};
        if (!id.empty()) fc["id"] = id;
        Json part = {{"functionCall", std::move(fc)}};
        // Only a turn's first call carries a signature (parallel calls).
        if (signatures_ && !signed_any) part["thoughtSignature"] = kSkipSignature;
        signed_any = true;
        parts.push_back(std::move(part));
      }
    }
    if (parts.empty()) parts.push_back({{"text", " "}});
    return {{"role", "model"}, {"parts", std::move(parts)}};
  }

  const std::string head_;
  const bool signatures_;
  bool contents_open_ = false;
  bool any_content_ = false;
  bool in_tool_turn_ = false;
  std::map<std::string, std::string> call_names_;  // the last assistant turn's calls
};

// OpenAI tool_choice as functionCallingConfig: "auto", "none", "required",
// or {"type":"function","function":{"name"}} (that one function, forced).
Json FunctionCallingConfig(const Json& choice) {
  if (choice.is_string()) {
    std::string c = choice.get<std::string>();
    return {{"mode", c == "none" ? "NONE" : c == "required" || c == "any" ? "ANY" : "AUTO"}};
  }
  if (choice.is_object() && choice.contains("function") && choice["function"].is_object()) {
    std::string name = StringField(choice["function"], "name");
    if (!name.empty()) return {{"mode", "ANY"}, {"allowedFunctionNames", {name}}};
  }
  return {{"mode", "AUTO"}};
}

Json GenerationConfig(const ModelProfile& p, const Json& params) {
  Json g = Json::object();
  int64_t max_tokens = p.max_output_tokens;
  for (const char* key : {"max_tokens", "max_completion_tokens"}) {
    if (params.contains(key) && params[key].is_number_integer())
      max_tokens = params[key].get<int64_t>();
  }
  g["maxOutputTokens"] = max_tokens;
  if (params.contains("temperature") && params["temperature"].is_number())
    g["temperature"] = params["temperature"];
  if (params.contains("top_p") && params["top_p"].is_number()) g["topP"] = params["top_p"];
  if (params.contains("stop")) {
    const Json& stop = params["stop"];
    if (stop.is_string()) g["stopSequences"] = Json::array({stop});
    if (stop.is_array() && !stop.empty()) g["stopSequences"] = stop;
  }
  if (params.contains("seed") && params["seed"].is_number_integer()) g["seed"] = params["seed"];
  return g;
}

// OpenAI tools as one Gemini tool of functionDeclarations. The parameters go
// in as `parametersJsonSchema` untouched: `parameters` takes only Gemini's
// OpenAPI subset and rejects additionalProperties and the like.
Json FunctionDeclarations(const Json& tools) {
  Json decls = Json::array();
  if (!tools.is_array()) return decls;
  for (const Json& t : tools) {
    if (!t.is_object() || !t.contains("function") || !t["function"].is_object()) continue;
    const Json& fn = t["function"];
    Json d = {{"name", StringField(fn, "name")}};
    if (fn.contains("description") && fn["description"].is_string())
      d["description"] = fn["description"];
    if (fn.contains("parameters") && fn["parameters"].is_object())
      d["parametersJsonSchema"] = fn["parameters"];
    decls.push_back(std::move(d));
  }
  return decls;
}

// `{"generationConfig":...,"tools":...,"toolConfig":...,` — everything
// before systemInstruction and contents (Message adds those).
std::string GeminiTranslator::BuildHead(const ModelProfile& p, const Json& params,
                                        const Json& tools) {
  std::string head = "{\"generationConfig\":" + DumpJson(GenerationConfig(p, params)) + ",";
  Json decls = FunctionDeclarations(tools);
  if (!decls.empty()) {
    head += "\"tools\":" + DumpJson(Json::array({{{"functionDeclarations", decls}}})) + ",";
    if (params.contains("tool_choice")) {
      head += "\"toolConfig\":" +
              DumpJson({{"functionCallingConfig", FunctionCallingConfig(params["tool_choice"])}}) +
              ",";
    }
  }
  return head;
}

// Reads GenerateContentResponse objects (one per SSE event, or one whole
// reply) into a ChatResponse, forwarding deltas as they come.
class GeminiReader final : public ReplyReader {
 public:
  explicit GeminiReader(LlmEventFn on_delta) : on_delta_(std::move(on_delta)) {}

  Status OnEvent(const SseEvent& ev) override {
    if (Trim(ev.data).empty()) return Status::Ok();
    Json j = Json::parse(ev.data, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      return Unavailable("Gemini stream: an event that is not a JSON object");
    }
    return Apply(j);
  }

  Status OnJson(const Json& body) override {
    // Some proxies answer a non-streamed call with the streamed array.
    if (body.is_array()) {
      for (const Json& j : body) MAESTRO_RETURN_IF_ERROR(OnJson(j));
      return Status::Ok();
    }
    if (!body.is_object()) return Unavailable("Gemini reply is not a JSON object");
    return Apply(body);
  }

  bool complete() const override { return !finish_.empty(); }

  ChatResponse Take() override {
    if (finish_ == "MAX_TOKENS") {
      resp_.finish_reason = "length";
    } else {
      if (!finish_.empty() && finish_ != "STOP") {
        spdlog::warn("gemini finishReason={} (taken as stop)", finish_);
      }
      resp_.finish_reason = resp_.tool_calls.empty() ? "stop" : "tool_calls";
    }
    return std::move(resp_);
  }

 private:
  Status Apply(const Json& j) {
    if (j.contains("error")) return ErrorStatus(j["error"]);
    if (resp_.id.empty()) resp_.id = StringField(j, "responseId");
    if (resp_.model.empty()) resp_.model = StringField(j, "modelVersion");
    auto cands = j.find("candidates");
    if (cands != j.end() && cands->is_array() && !cands->empty() && (*cands)[0].is_object()) {
      ApplyCandidate((*cands)[0]);
    } else if (j.contains("promptFeedback") && j["promptFeedback"].is_object() &&
               j["promptFeedback"].contains("blockReason")) {
      // The prompt itself was blocked: a whole (empty) answer, not a cut.
      finish_ = "PROMPT_BLOCKED:" + StringField(j["promptFeedback"], "blockReason");
    }
    if (j.contains("usageMetadata") && j["usageMetadata"].is_object()) {
      ApplyUsage(j["usageMetadata"]);
    }
    return Status::Ok();
  }

  void ApplyCandidate(const Json& c) {
    if (c.contains("content") && c["content"].is_object() && c["content"].contains("parts") &&
        c["content"]["parts"].is_array()) {
      for (const Json& part : c["content"]["parts"]) {
        if (part.is_object()) ApplyPart(part);
      }
    }
    std::string reason = StringField(c, "finishReason");
    if (!reason.empty() && reason != "FINISH_REASON_UNSPECIFIED") finish_ = reason;
  }

  void ApplyPart(const Json& part) {
    if (part.contains("functionCall") && part["functionCall"].is_object()) {
      const Json& fc = part["functionCall"];
      ToolCall call;
      call.index = static_cast<int>(resp_.tool_calls.size());
      call.id = StringField(fc, "id");
      if (call.id.empty()) call.id = "call_" + std::to_string(call.index) + "_" + IdSuffix();
      call.name = StringField(fc, "name");
      call.arguments = fc.contains("args") && fc["args"].is_object() ? DumpJson(fc["args"]) : "{}";
      LlmEvent ev;
      ev.kind = LlmEvent::Kind::kToolCall;
      ev.text = call.arguments;
      ev.index = call.index;
      ev.tool_id = call.id;
      ev.tool_name = call.name;
      Emit(ev);
      resp_.tool_calls.push_back(std::move(call));
      return;
    }
    auto text = part.find("text");
    if (text == part.end() || !text->is_string() || text->get_ref<const std::string&>().empty())
      return;
    bool thought = part.value("thought", false);
    (thought ? resp_.reasoning : resp_.content) += text->get<std::string>();
    LlmEvent ev;
    ev.kind = thought ? LlmEvent::Kind::kReasoning : LlmEvent::Kind::kText;
    ev.text = text->get<std::string>();
    Emit(ev);
  }

  // The latest usageMetadata wins: streams repeat it, growing, per event.
  void ApplyUsage(const Json& u) {
    auto count = [&](const char* key) -> int64_t {
      return u.contains(key) && u[key].is_number_integer() ? u[key].get<int64_t>() : 0;
    };
    LlmUsage& usage = resp_.usage;
    usage.prompt_tokens = count("promptTokenCount");  // the cached part included
    usage.cached_tokens = count("cachedContentTokenCount");
    usage.cache_write_tokens = 0;  // implicit caching writes nothing billable
    usage.completion_tokens = count("candidatesTokenCount") + count("thoughtsTokenCount");
    usage.reported = true;
  }

  static Status ErrorStatus(const Json& err) {
    std::string status = err.is_object() ? StringField(err, "status") : "";
    std::string message = err.is_object() ? StringField(err, "message") : DumpJson(err);
    std::string text = "Gemini error " + status + ": " + message;
    if (status == "RESOURCE_EXHAUSTED" || status == "UNAVAILABLE" || status == "INTERNAL" ||
        status == "DEADLINE_EXCEEDED") {
      return Unavailable(text);
    }
    return InvalidArgument(text);
  }

  void Emit(const LlmEvent& ev) {
    if (on_delta_) on_delta_(ev);
  }

  // Gemini's API often sends calls without an id, but the engine keys its
  // tool ledger and its unanswered-call check by call id within a job, so a
  // made-up id must not repeat across turns: "call_<n>_<random of this
  // reply>".
  const std::string& IdSuffix() {
    if (id_suffix_.empty()) {
      thread_local std::mt19937_64 rng{std::random_device{}()};
      id_suffix_ = fmt::format("{:012x}", rng() & 0xffffffffffffULL);
    }
    return id_suffix_;
  }

  LlmEventFn on_delta_;
  ChatResponse resp_;
  std::string finish_;     // the candidate's finishReason, once seen
  std::string id_suffix_;  // of the calls that came without an id
};

class GeminiWire final : public WireFormat {
 public:
  std::string_view provider_name() const override { return "gcp.gemini"; }

  std::string Url(const ModelProfile& p, bool stream) const override {
    std::string url = p.base_url;
    while (!url.empty() && url.back() == '/') url.pop_back();
    std::string_view model = p.model;
    if (model.substr(0, 7) == "models/") model.remove_prefix(7);
    return url + "/models/" + std::string(model) +
           (stream ? ":streamGenerateContent?alt=sse" : ":generateContent");
  }

  void AddHeaders(const ModelProfile& p, HttpHeaders* out) const override {
    if (!p.api_key.empty()) out->emplace_back("x-goog-api-key", p.api_key);
  }

  Result<std::unique_ptr<LlmBody>> OpenBody(const ModelProfile& p,
                                            const RequestBodySpec& spec) const override {
    MAESTRO_ASSIGN_OR_RETURN(Json tools, ReadToolsArray(spec));
    MAESTRO_ASSIGN_OR_RETURN(auto body,
                             TranslatedBody::Open(spec, NewGeminiTranslator(p, spec, tools)));
    return std::unique_ptr<LlmBody>(std::move(body));
  }

  std::unique_ptr<ReplyReader> NewReader(LlmEventFn on_delta) const override {
    return NewGeminiReader(std::move(on_delta));
  }
};

}  // namespace gemini_wire

std::unique_ptr<WireFormat> NewGeminiWire() { return std::make_unique<gemini_wire::GeminiWire>(); }

std::unique_ptr<MessageTranslator> NewGeminiTranslator(const ModelProfile& p,
                                                       const RequestBodySpec& spec, Json tools) {
  return std::make_unique<gemini_wire::GeminiTranslator>(p, spec, tools);
}

std::unique_ptr<ReplyReader> NewGeminiReader(LlmEventFn on_delta) {
  return std::make_unique<gemini_wire::GeminiReader>(std::move(on_delta));
}

}  // namespace maestro::llm
