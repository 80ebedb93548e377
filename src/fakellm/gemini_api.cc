// The Gemini generateContent fake of maestro-fakellm (issue 50; the contract
// is provider_api.h).
//
// Routes (server.cc): POST /v1beta/models/{model}:generateContent (one JSON
// GenerateContentResponse) and :streamGenerateContent?alt=sse (one SSE
// `data:` frame per response chunk). Without alt=sse the real API streams a
// JSON array; the fake serves SSE only and answers that with a 400 naming
// `alt`. The API key (x-goog-api-key or key=) is accepted whatever it is.
//
// Validation follows the published GenerateContentRequest: unknown fields are
// the real "Invalid JSON payload received. Unknown name ..." error; semantic
// errors are "* GenerateContentRequest.<field>: ..." with the field path in
// the API's snake_case, so every 400 names its field.
//
// Cache model (implicit caching): the request is rendered in prefix order
// (systemInstruction parts, tool declarations, then each content's parts,
// each a JSON dump led by its role) and tokenized (prompt_cache.h). A request
// reads the longest token prefix it shares with any remembered earlier
// request, when that prefix reaches ServerOptions::min_cache_tokens (Gemini's
// implicit cache has such a minimum); it writes nothing the client pays for
// (cache_write 0). Chosen over PromptCache's llama-server slots because
// Gemini's cache is shared by prefix, not pinned to a slot that another
// conversation can evict after a few requests. A remembered prompt that is a
// prefix of a newer one is dropped (the newer one serves every read it
// could), and at most kGemRemembered prompts are kept.
//
// Replies: thought parts ({"text", "thought": true}) carry the script's
// reasoning (the fake always returns them, as if includeThoughts were set);
// then the text; then each tool call whole as a functionCall part with its
// script id and its arguments parsed (arguments that are not a JSON object
// become {} — Gemini has no way to send invalid arguments).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <deque>
#include <optional>
#include <set>

#include "core/mutex.h"
#include "fakellm/prompt_cache.h"
#include "fakellm/provider_api.h"
#include "fakellm/reply_text.h"

namespace maestro::fakellm {
namespace gemini_fake {
namespace {

constexpr size_t kGemRemembered = 64;

using Problem = std::optional<std::string>;

// "functionDeclarations[0].parametersJsonSchema" -> "function_declarations[0]
// .parameters_json_schema": the real API names fields in its proto spelling.
std::string GemSnake(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c >= 'A' && c <= 'Z') {
      out += '_';
      out += static_cast<char>(c - 'A' + 'a');
    } else {
      out += c;
    }
  }
  return out;
}

std::string GemJoin(const std::string& at, const std::string& field) {
  return at.empty() ? field : at + "." + field;
}

Problem GemField(const std::string& path, const std::string& reason) {
  return fmt::format("* GenerateContentRequest.{}: {}\n", GemSnake(path), reason);
}

Problem GemUnknown(const std::string& at, const std::string& name) {
  if (at.empty()) {
    return fmt::format("Invalid JSON payload received. Unknown name \"{}\": Cannot find field.",
                       name);
  }
  return fmt::format(
      "Invalid JSON payload received. Unknown name \"{}\" at '{}': Cannot find field.", name,
      GemSnake(at));
}

Problem GemBadValue(const std::string& path, const std::string& expected, const Json& got) {
  return fmt::format("Invalid value at '{}' ({}), {}", GemSnake(path), expected, got.dump());
}

// Unknown keys of `obj` (at `at`) are the real API's parse error.
Problem GemOnlyKeys(const Json& obj, const std::string& at, const std::set<std::string>& known) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (!known.count(it.key())) return GemUnknown(at, it.key());
  }
  return std::nullopt;
}

bool GemNonEmptyString(const Json& j, const char* key) {
  return j.contains(key) && j[key].is_string() && !j[key].get<std::string>().empty();
}

bool GemIsBase64(const std::string& s) {
  for (char c : s) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '+' || c == '/' || c == '=' || c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

// The published function-name rule.
bool GemValidFunctionName(const std::string& n) {
  if (n.empty() || n.size() > 64) return false;
  if (!(std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_')) return false;
  for (char c : n) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':' ||
          c == '-')) {
      return false;
    }
  }
  return true;
}

Problem CheckInlineData(const Json& d, const std::string& at) {
  if (!d.is_object()) return GemBadValue(at, "Blob", d);
  if (auto p = GemOnlyKeys(d, at, {"mimeType", "data", "displayName"})) return p;
  if (!GemNonEmptyString(d, "mimeType")) return GemField(at + ".mimeType", "mime_type is required");
  if (!d.contains("data") || !d["data"].is_string() || !GemIsBase64(d["data"].get<std::string>())) {
    return GemField(at + ".data", "data must be base64-encoded bytes");
  }
  return std::nullopt;
}

Problem CheckFunctionCall(const Json& f, const std::string& at) {
  if (!f.is_object()) return GemBadValue(at, "FunctionCall", f);
  if (auto p = GemOnlyKeys(f, at, {"id", "name", "args"})) return p;
  if (!GemNonEmptyString(f, "name")) return GemField(at + ".name", "Name cannot be empty.");
  if (f.contains("args") && !f["args"].is_object()) {
    return GemBadValue(at + ".args", "type.googleapis.com/google.protobuf.Struct", f["args"]);
  }
  return std::nullopt;
}

Problem CheckFunctionResponse(const Json& f, const std::string& at) {
  if (!f.is_object()) return GemBadValue(at, "FunctionResponse", f);
  if (auto p =
          GemOnlyKeys(f, at, {"id", "name", "response", "parts", "willContinue", "scheduling"}))
    return p;
  if (!GemNonEmptyString(f, "name")) return GemField(at + ".name", "Name cannot be empty.");
  if (!f.contains("response") || !f["response"].is_object()) {
    return GemField(at + ".response", "response must be an object (google.protobuf.Struct)");
  }
  return std::nullopt;
}

// A Part holds exactly one member of its `data` oneof, plus metadata.
Problem CheckPart(const Json& part, const std::string& at) {
  static const std::vector<std::string> kData = {"text", "inlineData", "fileData", "functionCall",
                                                 "functionResponse"};
  if (!part.is_object()) return GemBadValue(at, "Part", part);
  if (auto p = GemOnlyKeys(part, at,
                           {"text", "inlineData", "fileData", "functionCall", "functionResponse",
                            "thought", "thoughtSignature", "videoMetadata", "partMetadata"})) {
    return p;
  }
  std::string set;
  for (const std::string& k : kData) {
    if (!part.contains(k)) continue;
    if (!set.empty()) {
      return fmt::format(
          "Invalid value at '{}' (oneof), oneof field 'data' is already set. Cannot overwrite "
          "'{}' with '{}'",
          GemSnake(at), GemSnake(set), GemSnake(k));
    }
    set = k;
  }
  if (set.empty()) {
    return GemField(at + ".data", "required oneof field 'data' must have one initialized field");
  }
  if (set == "text" && !part["text"].is_string())
    return GemBadValue(at + ".text", "TYPE_STRING", part["text"]);
  if (set == "inlineData") return CheckInlineData(part["inlineData"], at + ".inlineData");
  if (set == "fileData" &&
      (!part["fileData"].is_object() || !GemNonEmptyString(part["fileData"], "fileUri"))) {
    return GemField(at + ".fileData.fileUri", "file_uri is required");
  }
  if (set == "functionCall") return CheckFunctionCall(part["functionCall"], at + ".functionCall");
  if (set == "functionResponse") {
    return CheckFunctionResponse(part["functionResponse"], at + ".functionResponse");
  }
  return std::nullopt;
}

Problem CheckParts(const Json& content, const std::string& at) {
  if (!content.contains("parts") || !content["parts"].is_array() || content["parts"].empty()) {
    return GemField(at + ".parts", "contents.parts must not be empty.");
  }
  for (size_t i = 0; i < content["parts"].size(); ++i) {
    if (auto p = CheckPart(content["parts"][i], fmt::format("{}.parts[{}]", at, i))) return p;
  }
  return std::nullopt;
}

// Roles: "user" or "model"; only the first content may leave it out (a
// single-turn request).
Problem CheckContent(const Json& c, const std::string& at, bool first) {
  if (!c.is_object()) return GemBadValue(at, "Content", c);
  if (auto p = GemOnlyKeys(c, at, {"role", "parts"})) return p;
  if (!c.contains("role")) {
    if (!first) return GemField(at + ".role", "Please use a valid role: user, model.");
  } else if (!c["role"].is_string() || (c["role"] != "user" && c["role"] != "model")) {
    return GemField(at + ".role", "Please use a valid role: user, model.");
  }
  return CheckParts(c, at);
}

size_t GemCount(const Json& content, const char* kind) {
  size_t n = 0;
  for (const Json& p : content["parts"]) n += p.contains(kind) ? 1 : 0;
  return n;
}

// The real API's turn rules for function calling: a turn of function
// responses follows a model turn of function calls and answers each of them
// (the translator must group one assistant turn's tool results in one turn).
Problem CheckFunctionTurns(const Json& contents) {
  for (size_t i = 0; i < contents.size(); ++i) {
    const size_t responses = GemCount(contents[i], "functionResponse");
    if (responses == 0) continue;
    const std::string at = fmt::format("contents[{}]", i);
    const size_t calls = i > 0 && contents[i - 1].value("role", "user") == "model"
                             ? GemCount(contents[i - 1], "functionCall")
                             : 0;
    if (calls == 0) {
      return GemField(at,
                      "Please ensure that function response turn comes immediately after a "
                      "function call turn.");
    }
    if (calls != responses) {
      return GemField(at, fmt::format("Please ensure that the number of function response parts "
                                      "({}) is equal to the number of function call parts of the "
                                      "function call turn ({}).",
                                      responses, calls));
    }
  }
  return std::nullopt;
}

Problem CheckDeclaration(const Json& d, const std::string& at) {
  if (!d.is_object()) return GemBadValue(at, "FunctionDeclaration", d);
  if (auto p = GemOnlyKeys(d, at,
                           {"name", "description", "parameters", "parametersJsonSchema", "response",
                            "responseJsonSchema", "behavior"})) {
    return p;
  }
  if (!d.contains("name") || !d["name"].is_string() ||
      !GemValidFunctionName(d["name"].get<std::string>())) {
    return GemField(at + ".name",
                    "Invalid function name. Must start with a letter or an underscore. Must be "
                    "alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes "
                    "(-), with a maximum length of 64.");
  }
  if (d.contains("parameters") && d.contains("parametersJsonSchema")) {
    return GemField(at + ".parameters",
                    "parameters and parameters_json_schema cannot both be set.");
  }
  for (const char* k : {"parameters", "parametersJsonSchema"}) {
    if (d.contains(k) && !d[k].is_object()) return GemBadValue(GemJoin(at, k), "Schema", d[k]);
  }
  return std::nullopt;
}

Problem CheckTools(const Json& tools) {
  if (!tools.is_array()) return GemBadValue("tools", "Tool list", tools);
  for (size_t i = 0; i < tools.size(); ++i) {
    const std::string at = fmt::format("tools[{}]", i);
    const Json& t = tools[i];
    if (!t.is_object()) return GemBadValue(at, "Tool", t);
    if (auto p = GemOnlyKeys(t, at,
                             {"functionDeclarations", "googleSearch", "googleSearchRetrieval",
                              "codeExecution", "urlContext"})) {
      return p;
    }
    if (!t.contains("functionDeclarations")) continue;
    const Json& decls = t["functionDeclarations"];
    if (!decls.is_array()) return GemBadValue(at + ".functionDeclarations", "list", decls);
    for (size_t j = 0; j < decls.size(); ++j) {
      if (auto p = CheckDeclaration(decls[j], fmt::format("{}.functionDeclarations[{}]", at, j)))
        return p;
    }
  }
  return std::nullopt;
}

Problem CheckGenerationConfig(const Json& g) {
  if (!g.is_object()) return GemBadValue("generationConfig", "GenerationConfig", g);
  return GemOnlyKeys(g, "generationConfig",
                     {"stopSequences",
                      "responseMimeType",
                      "responseSchema",
                      "responseJsonSchema",
                      "responseModalities",
                      "candidateCount",
                      "maxOutputTokens",
                      "temperature",
                      "topP",
                      "topK",
                      "seed",
                      "presencePenalty",
                      "frequencyPenalty",
                      "responseLogprobs",
                      "logprobs",
                      "enableEnhancedCivicAnswers",
                      "speechConfig",
                      "thinkingConfig",
                      "mediaResolution",
                      "imageConfig"});
}

Problem CheckRequest(const Json& body) {
  if (!body.is_object()) return GemBadValue("", "GenerateContentRequest", body);
  if (auto p = GemOnlyKeys(body, "",
                           {"model", "contents", "systemInstruction", "tools", "toolConfig",
                            "safetySettings", "generationConfig", "cachedContent"})) {
    return p;
  }
  if (!body.contains("contents") || !body["contents"].is_array() || body["contents"].empty()) {
    return GemField("contents", "contents is not specified");
  }
  for (size_t i = 0; i < body["contents"].size(); ++i) {
    if (auto p = CheckContent(body["contents"][i], fmt::format("contents[{}]", i), i == 0))
      return p;
  }
  if (auto p = CheckFunctionTurns(body["contents"])) return p;
  if (body.contains("systemInstruction")) {
    const Json& s = body["systemInstruction"];
    if (!s.is_object()) return GemBadValue("systemInstruction", "Content", s);
    if (auto p = GemOnlyKeys(s, "systemInstruction", {"role", "parts"})) return p;
    if (auto p = CheckParts(s, "systemInstruction")) return p;
  }
  if (body.contains("tools")) {
    if (auto p = CheckTools(body["tools"])) return p;
  }
  if (body.contains("generationConfig")) {
    if (auto p = CheckGenerationConfig(body["generationConfig"])) return p;
  }
  if (body.contains("toolConfig") && !body["toolConfig"].is_object()) {
    return GemBadValue("toolConfig", "ToolConfig", body["toolConfig"]);
  }
  if (body.contains("safetySettings") && !body["safetySettings"].is_array()) {
    return GemBadValue("safetySettings", "SafetySetting list", body["safetySettings"]);
  }
  return std::nullopt;
}

// --- The OpenAI shape the Script matches on. ---

std::string GemPartsText(const Json& parts) {
  std::string out;
  for (const Json& p : parts) {
    if (!p.contains("text") || p.value("thought", false)) continue;
    if (!out.empty()) out += "\n";
    out += p["text"].get<std::string>();
  }
  return out;
}

// A user turn: runs of text parts become user messages, each functionResponse
// a `tool` message (its response JSON as text), in their order.
void GemUserMessages(const Json& parts, Json* msgs) {
  std::string text;
  auto flush = [&] {
    if (!text.empty()) msgs->push_back({{"role", "user"}, {"content", text}});
    text.clear();
  };
  for (const Json& p : parts) {
    if (p.contains("functionResponse")) {
      flush();
      const Json& f = p["functionResponse"];
      msgs->push_back({{"role", "tool"},
                       {"tool_call_id", f.value("id", f.value("name", ""))},
                       {"name", f.value("name", "")},
                       {"content", f["response"].dump()}});
    } else if (p.contains("text")) {
      if (!text.empty()) text += "\n";
      text += p["text"].get<std::string>();
    }
  }
  flush();
}

// A model turn: its text the content, its functionCall parts the tool_calls
// (the call's id, else a stable "call_<n>" counted over the request).
Json GemAssistantMessage(const Json& parts, int* call_n) {
  Json calls = Json::array();
  for (const Json& p : parts) {
    if (!p.contains("functionCall")) continue;
    const Json& f = p["functionCall"];
    std::string id = f.value("id", fmt::format("call_{}", (*call_n)));
    ++*call_n;
    calls.push_back(
        {{"id", id},
         {"type", "function"},
         {"function",
          {{"name", f["name"]}, {"arguments", f.value("args", Json::object()).dump()}}}});
  }
  std::string text = GemPartsText(parts);
  Json msg = {{"role", "assistant"}, {"content", text.empty() ? Json(nullptr) : Json(text)}};
  if (!calls.empty()) msg["tool_calls"] = calls;
  return msg;
}

Json ToScriptRequest(const Json& body) {
  Json msgs = Json::array();
  if (body.contains("systemInstruction")) {
    msgs.push_back(
        {{"role", "system"}, {"content", GemPartsText(body["systemInstruction"]["parts"])}});
  }
  int call_n = 0;
  for (const Json& c : body["contents"]) {
    if (c.value("role", "user") == "model") {
      msgs.push_back(GemAssistantMessage(c["parts"], &call_n));
    } else {
      GemUserMessages(c["parts"], &msgs);
    }
  }
  Json tools = Json::array();
  for (const Json& t : body.value("tools", Json::array())) {
    for (const Json& d : t.value("functionDeclarations", Json::array())) {
      tools.push_back(
          {{"type", "function"},
           {"function", {{"name", d["name"]}, {"description", d.value("description", "")}}}});
    }
  }
  Json out = {{"messages", msgs}};
  if (!tools.empty()) out["tools"] = tools;
  return out;
}

// --- Cache. ---

// Prefix order: system, tools, contents; each part's JSON led by its role,
// so an edit anywhere keeps exactly the tokens before it.
std::string GemRender(const Json& body) {
  std::string out;
  if (body.contains("systemInstruction")) {
    for (const Json& p : body["systemInstruction"]["parts"]) out += "system\n" + p.dump() + "\n";
  }
  for (const Json& t : body.value("tools", Json::array())) out += "tools\n" + t.dump() + "\n";
  for (const Json& c : body["contents"]) {
    const std::string role = c.value("role", "user");
    for (const Json& p : c["parts"]) out += role + "\n" + p.dump() + "\n";
  }
  return out;
}

class ImplicitCache {
 public:
  explicit ImplicitCache(int64_t min_tokens) : min_tokens_(min_tokens) {}

  // The tokens of `prompt` read from the cache; remembers `prompt`.
  int64_t Process(const Tokens& prompt) {
    MutexLock lock(&mu_);
    size_t best = 0;
    for (const Tokens& t : seen_) best = std::max(best, CommonPrefix(t, prompt));
    int64_t read = static_cast<int64_t>(best) >= min_tokens_ ? static_cast<int64_t>(best) : 0;
    if (static_cast<int64_t>(prompt.size()) >= min_tokens_) {
      std::erase_if(seen_, [&](const Tokens& t) { return CommonPrefix(t, prompt) == t.size(); });
      seen_.push_back(prompt);
      if (seen_.size() > kGemRemembered) seen_.pop_front();
    }
    return read;
  }

 private:
  const int64_t min_tokens_;
  Mutex mu_;
  std::deque<Tokens> seen_ GUARDED_BY(mu_);
};

// --- Replies. ---

std::string GemStatusName(int code) {
  switch (code) {
    case 400:
      return "INVALID_ARGUMENT";
    case 401:
      return "UNAUTHENTICATED";
    case 403:
      return "PERMISSION_DENIED";
    case 404:
      return "NOT_FOUND";
    case 409:
      return "ABORTED";
    case 429:
      return "RESOURCE_EXHAUSTED";
    case 499:
      return "CANCELLED";
    case 500:
      return "INTERNAL";
    case 501:
      return "UNIMPLEMENTED";
    case 503:
      return "UNAVAILABLE";
    case 504:
      return "DEADLINE_EXCEEDED";
    default:
      return code >= 500 ? "INTERNAL" : "FAILED_PRECONDITION";
  }
}

// google.rpc.Status; a Retry-After also as RetryInfo, as the real 429 has it.
HttpAnswer GemError(int code, const std::string& message, int64_t retry_after_s = -1) {
  HttpAnswer a;
  a.status = code;
  Json err = {{"code", code}, {"message", message}, {"status", GemStatusName(code)}};
  if (retry_after_s >= 0) {
    a.headers.push_back({"Retry-After", std::to_string(retry_after_s)});
    err["details"] = Json::array({{{"@type", "type.googleapis.com/google.rpc.RetryInfo"},
                                   {"retryDelay", fmt::format("{}s", retry_after_s)}}});
  }
  a.body = Json{{"error", err}}.dump();
  return a;
}

Json GemCallPart(const ScriptToolCall& c) {
  Json args = Json::parse(c.arguments, nullptr, false);
  if (!args.is_object()) args = Json::object();
  return {{"functionCall", {{"id", c.id}, {"name", c.name}, {"args", args}}}};
}

// The reply's parts: whole (non-streamed) or cut into stream pieces.
Json GemParts(const ScriptReply& r, bool pieces) {
  Json parts = Json::array();
  const size_t n = pieces ? static_cast<size_t>(std::max(1, r.chunk_chars)) : std::string::npos;
  for (const std::string& s : SplitUtf8(r.reasoning, n))
    parts.push_back({{"text", s}, {"thought", true}});
  for (const std::string& s : SplitUtf8(r.text, n)) parts.push_back({{"text", s}});
  for (const ScriptToolCall& c : r.tool_calls) parts.push_back(GemCallPart(c));
  if (parts.empty()) parts.push_back({{"text", ""}});
  return parts;
}

Json GemUsage(int64_t prompt, int64_t cached, const ScriptReply& r) {
  std::string out_text = r.text;
  for (const ScriptToolCall& c : r.tool_calls) out_text += c.name + c.arguments;
  const int64_t candidates = static_cast<int64_t>(Tokenize(out_text).size());
  const int64_t thoughts = static_cast<int64_t>(Tokenize(r.reasoning).size());
  Json u = {{"promptTokenCount", prompt},
            {"candidatesTokenCount", candidates},
            {"totalTokenCount", prompt + candidates + thoughts},
            {"promptTokensDetails", Json::array({{{"modality", "TEXT"}, {"tokenCount", prompt}}})}};
  if (cached > 0) {
    u["cachedContentTokenCount"] = cached;
    u["cacheTokensDetails"] = Json::array({{{"modality", "TEXT"}, {"tokenCount", cached}}});
  }
  if (thoughts > 0) u["thoughtsTokenCount"] = thoughts;
  return u;
}

struct GemTarget {
  std::string model;
  bool stream = false;
};

// "/v1beta/models/{model}:{method}" (server.cc routes only these two).
GemTarget GemParsePath(const std::string& path) {
  GemTarget t;
  const std::string prefix = "/v1beta/models/";
  size_t colon = path.rfind(':');
  if (path.rfind(prefix, 0) == 0 && colon != std::string::npos && colon > prefix.size()) {
    t.model = path.substr(prefix.size(), colon - prefix.size());
    t.stream = path.substr(colon + 1) == "streamGenerateContent";
  }
  return t;
}

class GeminiApi final : public ProviderApi {
 public:
  GeminiApi(const ServerOptions& opts, Script* script)
      : opts_(opts), script_(script), cache_(opts.min_cache_tokens) {}

  HttpAnswer Handle(const ProviderRequest& req, Json* record) override {
    Json& rec = *record;
    rec["reply"] = -1;
    rec["cache"] = {{"prompt_tokens", 0}, {"cache_read", 0}, {"cache_write", 0}};
    HttpAnswer a = Answer(req, &rec);
    rec["status"] = a.status;
    return a;
  }

 private:
  HttpAnswer Answer(const ProviderRequest& req, Json* rec) {
    const GemTarget target = GemParsePath(req.path);
    Json body = Json::parse(req.body, nullptr, false);
    if (body.is_discarded()) {
      return GemError(400, "Invalid JSON payload received. Unexpected token.");
    }
    if (req.body.size() <= opts_.record_body_max) (*rec)["body"] = body;
    if (auto p = CheckRequest(body)) return GemError(400, *p);
    if (target.stream) {
      auto alt = req.query.find("alt");
      if (alt == req.query.end() || alt->second != "sse") {
        return GemError(400, GemField("alt", "this fake streams as SSE only: add alt=sse").value());
      }
    }
    if (body.contains("cachedContent")) {
      // Explicit caches are not modelled: none exists.
      return GemError(403, "CachedContent not found (or permission denied)");
    }
    ScriptReply reply = script_->Next(ToScriptRequest(body));
    (*rec)["reply"] = reply.index;
    if (reply.status != 200) {
      HttpAnswer a = GemError(reply.status, reply.error_message, reply.retry_after_s);
      a.delay_ms = reply.delay_ms;
      return a;
    }
    const Tokens prompt = Tokenize(GemRender(body));
    const int64_t cached = cache_.Process(prompt);
    const auto prompt_n = static_cast<int64_t>(prompt.size());
    (*rec)["cache"] = {{"prompt_tokens", prompt_n}, {"cache_read", cached}, {"cache_write", 0}};
    const Json usage = GemUsage(prompt_n, cached, reply);
    const std::string model = target.model.empty() ? opts_.model : target.model;
    const std::string id = fmt::format("fakegem-{}", req.seq);
    HttpAnswer a =
        target.stream ? Streamed(reply, usage, model, id) : Whole(reply, usage, model, id);
    a.cut_after = reply.cut_after;
    a.delay_ms = reply.delay_ms;
    a.token_delay_ms = reply.token_delay_ms;
    return a;
  }

  static std::string FinishReason(const ScriptReply& r) {
    return r.finish_reason == "length" ? "MAX_TOKENS" : "STOP";
  }

  static Json Response(Json candidate, const std::string& model, const std::string& id) {
    candidate["index"] = 0;
    return {{"candidates", Json::array({std::move(candidate)})},
            {"modelVersion", model},
            {"responseId", id}};
  }

  static HttpAnswer Whole(const ScriptReply& r, const Json& usage, const std::string& model,
                          const std::string& id) {
    Json out = Response({{"content", {{"role", "model"}, {"parts", GemParts(r, false)}}},
                         {"finishReason", FinishReason(r)}},
                        model, id);
    out["usageMetadata"] = usage;
    HttpAnswer a;
    a.body = out.dump();
    return a;
  }

  // One frame per part; the last carries finishReason and usageMetadata.
  static HttpAnswer Streamed(const ScriptReply& r, const Json& usage, const std::string& model,
                             const std::string& id) {
    HttpAnswer a;
    a.streamed = true;
    a.content_type = "text/event-stream";
    const Json parts = GemParts(r, true);
    for (size_t i = 0; i < parts.size(); ++i) {
      Json candidate = {{"content", {{"role", "model"}, {"parts", Json::array({parts[i]})}}}};
      const bool last = i + 1 == parts.size();
      if (last) candidate["finishReason"] = FinishReason(r);
      Json chunk = Response(std::move(candidate), model, id);
      if (last) chunk["usageMetadata"] = usage;
      a.frames.push_back("data: " + chunk.dump() + "\r\n\r\n");
    }
    return a;
  }

  const ServerOptions opts_;
  Script* script_;
  ImplicitCache cache_;
};

}  // namespace
}  // namespace gemini_fake

std::unique_ptr<ProviderApi> NewGeminiApi(const ServerOptions& opts, Script* script) {
  return std::make_unique<gemini_fake::GeminiApi>(opts, script);
}

}  // namespace maestro::fakellm
