// The Anthropic Messages fake of maestro-fakellm: POST /v1/messages (issue 50).
//
// As real as the published API where maestro and the official SDK can tell:
//   - validation: 400 {"type":"error","error":{"type":"invalid_request_error",
//     "message":"<field path>: <why>"}} for what the real API rejects (required
//     fields, roles, block types, tool_result ids without their tool_use,
//     tool_use ids without their tool_result, cache_control shape, the
//     limit of 4 breakpoints and 1h-after-5m TTLs, unknown top-level fields),
//     a missing `anthropic-version` header, and "prompt is too long: N tokens
//     > M maximum" when ServerOptions::ctx_size is set and exceeded;
//   - the prompt cache after Anthropic's documented rules (CacheBook below);
//   - the reply streamed as the API's SSE events (message_start, ping,
//     content_block_start/delta/stop per block, message_delta, message_stop)
//     or as one message object;
//   - script faults: status != 200 answers the error shape of that status
//     (with retry-after / retry-after-ms when scripted); every answer has a
//     `request-id` header.
// In-stream error: a streamed script reply whose text is exactly
// "__stream_error__" sends message_start and then an `event: error` frame
// ({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})
// and ends, as the real API does when it overloads mid-stream.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/mutex.h"
#include "fakellm/prompt_cache.h"
#include "fakellm/provider_api.h"
#include "fakellm/reply_text.h"

namespace maestro::fakellm {
namespace anthropic_fake {

constexpr size_t kMaxBreakpoints = 4;        // the API's limit over tools, system and messages
constexpr size_t kLookbackBlocks = 20;       // a breakpoint finds hits up to 20 blocks before it
constexpr int64_t kTtl5mMs = 5 * 60 * 1000;  // "ephemeral" default
constexpr int64_t kTtl1hMs = 60 * 60 * 1000;
const char kStreamErrorText[] = "__stream_error__";

// ---- errors ---------------------------------------------------------------

std::string ErrorTypeFor(int status) {
  switch (status) {
    case 400:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 529:
      return "overloaded_error";
    default:
      return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

Json ErrorJson(const std::string& type, const std::string& message) {
  return {{"type", "error"}, {"error", {{"type", type}, {"message", message}}}};
}

// ---- validation -----------------------------------------------------------

// Each check returns the message of the first violation, or "" when valid.
// Messages start with the field path, as the real API's do ("messages.1.
// content.0.text: ..."), so a failing caller sees what to fix.

std::string CheckCacheControl(const Json& block, const std::string& path, size_t* breakpoints) {
  if (!block.is_object() || !block.contains("cache_control")) return "";
  const Json& cc = block["cache_control"];
  if (cc.is_null()) return "";
  if (!cc.is_object() || cc.value("type", "") != "ephemeral") {
    return path + ".cache_control.type: Input should be 'ephemeral'";
  }
  if (cc.contains("ttl") && !(cc["ttl"] == "5m" || cc["ttl"] == "1h")) {
    return path + ".cache_control.ttl: Input should be '5m' or '1h'";
  }
  ++*breakpoints;
  return "";
}

std::string CheckTextBlock(const Json& b, const std::string& path) {
  if (!b.contains("text") || !b["text"].is_string()) return path + ".text: Field required";
  if (b["text"].get<std::string>().empty()) {
    return path + ".text: text content blocks must be non-empty";
  }
  return "";
}

std::string CheckImageBlock(const Json& b, const std::string& path) {
  const Json src = b.value("source", Json());
  if (!src.is_object()) return path + ".source: Field required";
  std::string type = src.value("type", "");
  if (type == "base64") {
    if (!src.contains("media_type") || !src["media_type"].is_string()) {
      return path + ".source.media_type: Field required";
    }
    if (!src.contains("data") || !src["data"].is_string()) {
      return path + ".source.data: Field required";
    }
    return "";
  }
  if (type == "url") {
    return src.contains("url") && src["url"].is_string() ? ""
                                                         : path + ".source.url: Field required";
  }
  return path + ".source.type: Input should be 'base64' or 'url'";
}

std::string CheckToolResultContent(const Json& b, const std::string& path, size_t* breakpoints) {
  if (!b.contains("content") || b["content"].is_string()) return "";
  if (!b["content"].is_array()) return path + ".content: Input should be a valid list";
  for (size_t i = 0; i < b["content"].size(); ++i) {
    const Json& part = b["content"][i];
    std::string p = fmt::format("{}.content.{}", path, i);
    std::string type = part.is_object() ? part.value("type", "") : "";
    std::string err;
    if (type == "text") {
      err = CheckTextBlock(part, p);
    } else if (type == "image") {
      err = CheckImageBlock(part, p);
    } else {
      err = p + ".type: Input should be 'text' or 'image'";
    }
    if (err.empty()) err = CheckCacheControl(part, p, breakpoints);
    if (!err.empty()) return err;
  }
  return "";
}

// One content block of a message with `role`.
std::string CheckBlock(const Json& b, const std::string& role, const std::string& path,
                       size_t* breakpoints) {
  if (!b.is_object()) return path + ": Input should be a valid dictionary";
  std::string type = b.value("type", "");
  std::string err;
  if (type == "text") {
    err = CheckTextBlock(b, path);
  } else if (type == "image") {
    err = CheckImageBlock(b, path);
  } else if (type == "tool_use") {
    if (role != "assistant")
      return path + ": tool_use blocks are only allowed in assistant messages";
    if (!b.contains("id") || !b["id"].is_string()) return path + ".id: Field required";
    if (!b.contains("name") || !b["name"].is_string()) return path + ".name: Field required";
    if (!b.contains("input") || !b["input"].is_object()) {
      return path + ".input: Input should be a valid dictionary";
    }
  } else if (type == "tool_result") {
    if (role != "user") return path + ": tool_result blocks are only allowed in user messages";
    if (!b.contains("tool_use_id") || !b["tool_use_id"].is_string()) {
      return path + ".tool_use_id: Field required";
    }
    err = CheckToolResultContent(b, path, breakpoints);
  } else if (type == "thinking") {
    if (role != "assistant")
      return path + ": thinking blocks are only allowed in assistant messages";
    if (!b.contains("thinking") || !b["thinking"].is_string()) {
      return path + ".thinking: Field required";
    }
    if (!b.contains("signature") || !b["signature"].is_string()) {
      return path + ".signature: Field required";
    }
  } else {
    return path + ".type: Input should be 'text', 'image', 'tool_use', 'tool_result' or 'thinking'";
  }
  if (!err.empty()) return err;
  return CheckCacheControl(b, path, breakpoints);
}

// The ids of the blocks of `type` in a message's content (tool_use: "id";
// tool_result: "tool_use_id").
std::vector<std::string> BlockIds(const Json& msg, const std::string& type, const char* key) {
  std::vector<std::string> ids;
  const Json& c = msg["content"];
  if (!c.is_array()) return ids;
  for (const Json& b : c) {
    if (b.value("type", "") == type) ids.push_back(b.value(key, ""));
  }
  return ids;
}

// A tool_result must answer a tool_use of the immediately preceding
// assistant message, and a tool_use must be answered in the next message.
std::string CheckToolPairing(const Json& msgs) {
  for (size_t i = 0; i < msgs.size(); ++i) {
    std::vector<std::string> results = BlockIds(msgs[i], "tool_result", "tool_use_id");
    std::vector<std::string> uses;
    if (i > 0 && msgs[i - 1]["role"] == "assistant") uses = BlockIds(msgs[i - 1], "tool_use", "id");
    for (const std::string& id : results) {
      if (std::find(uses.begin(), uses.end(), id) == uses.end()) {
        return fmt::format(
            "messages.{}.content: unexpected `tool_use_id` found in `tool_result` blocks: {}. "
            "Each `tool_result` block must have a corresponding `tool_use` block in the "
            "previous message.",
            i, id);
      }
    }
    if (i > 0 && !uses.empty()) {
      for (const std::string& id : uses) {
        if (std::find(results.begin(), results.end(), id) == results.end()) {
          return fmt::format(
              "messages.{}: `tool_use` ids were found without `tool_result` blocks immediately "
              "after: {}. Each `tool_use` block must have a corresponding `tool_result` block in "
              "the next message.",
              i - 1, id);
        }
      }
    }
  }
  return "";
}

std::string CheckMessages(const Json& body, size_t* breakpoints) {
  if (!body.contains("messages")) return "messages: Field required";
  const Json& msgs = body["messages"];
  if (!msgs.is_array()) return "messages: Input should be a valid list";
  if (msgs.empty()) return "messages: at least one message is required";
  for (size_t i = 0; i < msgs.size(); ++i) {
    const Json& m = msgs[i];
    std::string path = fmt::format("messages.{}", i);
    if (!m.is_object()) return path + ": Input should be a valid dictionary";
    std::string role = m.value("role", "");
    if (role != "user" && role != "assistant") {
      return path + ".role: Input should be 'user' or 'assistant'";
    }
    if (i == 0 && role != "user")
      return "messages.0.role: first message must use the \"user\" role";
    if (!m.contains("content")) return path + ".content: Field required";
    const Json& c = m["content"];
    if (c.is_string()) {
      // A string is one text block; only the final assistant turn may be empty.
      if (c.get<std::string>().empty() && !(role == "assistant" && i + 1 == msgs.size())) {
        return path + ".content: text content blocks must be non-empty";
      }
      continue;
    }
    if (!c.is_array()) return path + ".content: Input should be a valid string or list";
    for (size_t j = 0; j < c.size(); ++j) {
      std::string err = CheckBlock(c[j], role, fmt::format("{}.content.{}", path, j), breakpoints);
      if (!err.empty()) return err;
    }
  }
  return CheckToolPairing(msgs);
}

std::string CheckSystem(const Json& body, size_t* breakpoints) {
  if (!body.contains("system") || body["system"].is_string()) return "";
  const Json& s = body["system"];
  if (!s.is_array()) return "system: Input should be a valid string or list";
  for (size_t i = 0; i < s.size(); ++i) {
    std::string path = fmt::format("system.{}", i);
    if (!s[i].is_object() || s[i].value("type", "") != "text") {
      return path + ".type: Input should be 'text'";
    }
    std::string err = CheckTextBlock(s[i], path);
    if (err.empty()) err = CheckCacheControl(s[i], path, breakpoints);
    if (!err.empty()) return err;
  }
  return "";
}

std::string CheckTools(const Json& body, size_t* breakpoints) {
  if (!body.contains("tools")) return "";
  const Json& tools = body["tools"];
  if (!tools.is_array()) return "tools: Input should be a valid list";
  std::set<std::string> names;
  for (size_t i = 0; i < tools.size(); ++i) {
    const Json& t = tools[i];
    std::string path = fmt::format("tools.{}", i);
    if (!t.is_object()) return path + ": Input should be a valid dictionary";
    if (!t.contains("name") || !t["name"].is_string() || t["name"].get<std::string>().empty()) {
      return path + ".name: Field required";
    }
    if (t.contains("description") && !t["description"].is_string()) {
      return path + ".description: Input should be a valid string";
    }
    if (!t.contains("input_schema") || !t["input_schema"].is_object() ||
        t["input_schema"].value("type", "") != "object") {
      return path + ".input_schema.type: Input should be 'object'";
    }
    if (!names.insert(t["name"].get<std::string>()).second) {
      return "tools: Tool names must be unique.";
    }
    std::string err = CheckCacheControl(t, path, breakpoints);
    if (!err.empty()) return err;
  }
  return "";
}

std::string CheckTopLevel(const Json& body) {
  static const std::set<std::string> kKnown = {
      "model",       "messages",       "max_tokens",  "system",      "tools",
      "tool_choice", "stream",         "temperature", "top_p",       "top_k",
      "metadata",    "stop_sequences", "thinking",    "service_tier"};
  for (auto it = body.begin(); it != body.end(); ++it) {
    if (!kKnown.count(it.key())) return it.key() + ": Extra inputs are not permitted";
  }
  if (!body.contains("model")) return "model: Field required";
  if (!body["model"].is_string()) return "model: Input should be a valid string";
  if (!body.contains("max_tokens")) return "max_tokens: Field required";
  if (!body["max_tokens"].is_number_integer()) {
    return "max_tokens: Input should be a valid integer";
  }
  if (body["max_tokens"].get<int64_t>() < 1) {
    return "max_tokens: Input should be greater than or equal to 1";
  }
  if (body.contains("stream") && !body["stream"].is_boolean()) {
    return "stream: Input should be a valid boolean";
  }
  return "";
}

// The whole request; counts the cache_control breakpoints into `breakpoints`.
std::string Validate(const Json& body, size_t* breakpoints) {
  if (!body.is_object()) return "request body: Input should be a valid JSON object";
  std::string err = CheckTopLevel(body);
  if (err.empty()) err = CheckTools(body, breakpoints);
  if (err.empty()) err = CheckSystem(body, breakpoints);
  if (err.empty()) err = CheckMessages(body, breakpoints);
  if (err.empty() && *breakpoints > kMaxBreakpoints) {
    err = fmt::format(
        "cache_control: A maximum of {} blocks with cache_control may be provided. "
        "Found {}.",
        kMaxBreakpoints, *breakpoints);
  }
  return err;
}

// ---- the Script's view (OpenAI shape) -------------------------------------

// The text of a content (string, or blocks whose text blocks are joined).
std::string TextOf(const Json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (!content.is_array()) return out;
  for (const Json& b : content) {
    if (b.value("type", "") != "text") continue;
    if (!out.empty()) out += "\n";
    out += b.value("text", "");
  }
  return out;
}

void AppendScriptMessage(const Json& m, Json* out) {
  const Json& c = m["content"];
  if (m["role"] == "assistant") {
    Json msg = {{"role", "assistant"}};
    std::string text = TextOf(c);
    msg["content"] = text.empty() ? Json(nullptr) : Json(text);
    Json calls = Json::array();
    if (c.is_array()) {
      for (const Json& b : c) {
        if (b.value("type", "") != "tool_use") continue;
        calls.push_back({{"id", b["id"]},
                         {"type", "function"},
                         {"function", {{"name", b["name"]}, {"arguments", b["input"].dump()}}}});
      }
    }
    if (!calls.empty()) msg["tool_calls"] = std::move(calls);
    out->push_back(std::move(msg));
    return;
  }
  // A user turn: its tool results become `tool` messages, its text a user
  // message after them (maestro puts a turn's results first).
  bool results = false;
  if (c.is_array()) {
    for (const Json& b : c) {
      if (b.value("type", "") != "tool_result") continue;
      results = true;
      out->push_back({{"role", "tool"},
                      {"tool_call_id", b["tool_use_id"]},
                      {"content", TextOf(b.value("content", Json("")))}});
    }
  }
  std::string text = TextOf(c);
  if (!results || !text.empty()) out->push_back({{"role", "user"}, {"content", text}});
}

// The request as Script::Next matches it: `messages` (system first) with
// string contents, and `tools` with function names.
Json ToScriptRequest(const Json& body) {
  Json msgs = Json::array();
  if (body.contains("system")) {
    msgs.push_back({{"role", "system"}, {"content", TextOf(body["system"])}});
  }
  for (const Json& m : body["messages"]) AppendScriptMessage(m, &msgs);
  Json req = {{"model", body["model"]}, {"messages", std::move(msgs)}};
  if (body.contains("tools")) {
    Json tools = Json::array();
    for (const Json& t : body["tools"]) {
      tools.push_back(
          {{"type", "function"},
           {"function", {{"name", t["name"]}, {"description", t.value("description", "")}}}});
    }
    req["tools"] = std::move(tools);
  }
  return req;
}

// ---- the prompt cache -----------------------------------------------------

// One block of the prompt in Anthropic's prefix order (tools, system,
// messages), rendered without its cache_control so marking a block does not
// change the prefix it ends.
struct PromptBlock {
  int64_t tokens = 0;
  uint64_t prefix_hash = 0;  // of every block up to and including this one
  int64_t ttl_ms = 0;        // > 0: a breakpoint (cache_control) with this TTL
};

uint64_t Fnv1a(uint64_t h, const std::string& s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

// Removes `block`'s cache_control; the TTL it asked for, 0 when none.
int64_t TakeCacheControl(Json* block) {
  if (!block->is_object() || !block->contains("cache_control")) return 0;
  const Json cc = (*block)["cache_control"];
  block->erase("cache_control");
  if (!cc.is_object()) return 0;
  return cc.value("ttl", "5m") == "1h" ? kTtl1hMs : kTtl5mMs;
}

void AddBlock(const std::string& where, const Json& block, std::vector<PromptBlock>* out) {
  Json plain = block;
  int64_t ttl = TakeCacheControl(&plain);
  // A breakpoint inside a tool_result's content ends the prefix at that
  // tool_result: it is the block of the message the prefix order sees.
  if (plain.is_object() && plain.contains("content") && plain["content"].is_array()) {
    for (Json& part : plain["content"]) ttl = std::max(ttl, TakeCacheControl(&part));
  }
  std::string text = where + ":" + plain.dump();
  PromptBlock b;
  b.tokens = static_cast<int64_t>(Tokenize(text).size());
  b.prefix_hash =
      Fnv1a(out->empty() ? 14695981039346656037ULL : out->back().prefix_hash, text + "\x1e");
  b.ttl_ms = ttl;
  out->push_back(b);
}

std::vector<PromptBlock> RenderBlocks(const Json& body) {
  std::vector<PromptBlock> out;
  if (body.contains("tools")) {
    for (const Json& t : body["tools"]) AddBlock("tool", t, &out);
  }
  if (body.contains("system")) {
    const Json& s = body["system"];
    if (s.is_string()) {
      AddBlock("system", Json{{"type", "text"}, {"text", s}}, &out);
    } else {
      for (const Json& b : s) AddBlock("system", b, &out);
    }
  }
  for (const Json& m : body["messages"]) {
    std::string role = m["role"].get<std::string>();
    const Json& c = m["content"];
    if (c.is_string()) {
      AddBlock(role, Json{{"type", "text"}, {"text", c}}, &out);
    } else {
      for (const Json& b : c) AddBlock(role, b, &out);
    }
  }
  return out;
}

// The API processes breakpoints in prefix order and rejects a 1-hour entry
// after a 5-minute one (a longer-lived prefix cannot extend a shorter one).
std::string CheckTtlOrder(const std::vector<PromptBlock>& blocks) {
  bool seen_5m = false;
  for (const PromptBlock& b : blocks) {
    if (b.ttl_ms == kTtl5mMs) seen_5m = true;
    if (b.ttl_ms == kTtl1hMs && seen_5m) {
      return "cache_control.ttl: a ttl='1h' cache_control block must not come after a "
             "ttl='5m' cache_control block. Note that blocks are processed in the following "
             "order: `tools`, `system`, `messages`.";
    }
  }
  return "";
}

struct CacheUsage {
  int64_t prompt_tokens = 0;  // the whole prompt
  int64_t cache_read = 0;
  int64_t cache_write = 0;
  int64_t input_tokens = 0;  // prompt_tokens - cache_read - cache_write
  int breakpoints = 0;
};

// Anthropic's explicit prompt cache: entries are prefixes ending at a
// breakpoint of some earlier request. A request reads, per breakpoint, the
// longest live entry ending at that breakpoint or up to 20 blocks before it
// (the best over its breakpoints), and writes every breakpoint prefix longer
// than what it read; a read refreshes the entry's TTL. Prefixes shorter than
// min_tokens are neither written nor read.
class CacheBook {
 public:
  explicit CacheBook(int64_t min_tokens) : min_tokens_(min_tokens) {}

  CacheUsage Account(const std::vector<PromptBlock>& blocks, int64_t now_ms) {
    CacheUsage u;
    std::vector<int64_t> upto(blocks.size());  // tokens up to and including block i
    for (size_t i = 0; i < blocks.size(); ++i) {
      u.prompt_tokens += blocks[i].tokens;
      upto[i] = u.prompt_tokens;
    }
    MutexLock lock(&mu_);
    size_t last_bp = blocks.size();
    for (size_t b = 0; b < blocks.size(); ++b) {
      if (blocks[b].ttl_ms <= 0) continue;
      ++u.breakpoints;
      last_bp = b;
      u.cache_read = std::max(u.cache_read, ReadAt(blocks, upto, b, now_ms));
    }
    for (size_t b = 0; b < blocks.size(); ++b) {
      if (blocks[b].ttl_ms <= 0 || upto[b] <= u.cache_read || upto[b] < min_tokens_) continue;
      entries_[blocks[b].prefix_hash] = Entry{now_ms + blocks[b].ttl_ms, blocks[b].ttl_ms};
    }
    if (last_bp < blocks.size() && upto[last_bp] > u.cache_read && upto[last_bp] >= min_tokens_) {
      u.cache_write = upto[last_bp] - u.cache_read;
    }
    u.input_tokens = u.prompt_tokens - u.cache_read - u.cache_write;
    return u;
  }

 private:
  struct Entry {
    int64_t expires_ms = 0;
    int64_t ttl_ms = 0;
  };

  // The longest live entry at breakpoint `b` or up to 20 blocks before it
  // (refreshed), in tokens; 0 when none.
  int64_t ReadAt(const std::vector<PromptBlock>& blocks, const std::vector<int64_t>& upto, size_t b,
                 int64_t now_ms) REQUIRES(mu_) {
    size_t first = b >= kLookbackBlocks ? b - kLookbackBlocks : 0;
    for (size_t i = b + 1; i-- > first;) {
      if (upto[i] < min_tokens_) return 0;  // shorter prefixes are shorter still
      auto it = entries_.find(blocks[i].prefix_hash);
      if (it == entries_.end()) continue;
      if (it->second.expires_ms <= now_ms) {
        entries_.erase(it);
        continue;
      }
      it->second.expires_ms = now_ms + it->second.ttl_ms;
      return upto[i];
    }
    return 0;
  }

  const int64_t min_tokens_;
  Mutex mu_;
  std::unordered_map<uint64_t, Entry> entries_ GUARDED_BY(mu_);
};

// ---- the reply ------------------------------------------------------------

// The script's id when it is already Anthropic-shaped, else prefixed so.
std::string ToolUseId(const std::string& script_id) {
  return script_id.rfind("toolu_", 0) == 0 ? script_id : "toolu_" + script_id;
}

std::string StopReason(const ScriptReply& r) {
  if (r.finish_reason == "length") return "max_tokens";
  if (!r.tool_calls.empty() || r.finish_reason == "tool_calls") return "tool_use";
  return "end_turn";
}

// A signature stands for the real API's encrypted thinking digest: opaque,
// but the SDK and maestro must carry it back verbatim.
std::string Signature(const std::string& thinking) {
  return fmt::format("fakesig_{:016x}", Fnv1a(14695981039346656037ULL, thinking));
}

// A tool call's input object; arguments that are not a JSON object (a script
// testing a client's handling of bad JSON) stream verbatim but read as {}.
Json ToolInput(const std::string& arguments) {
  Json j = Json::parse(arguments, nullptr, false);
  return j.is_object() ? j : Json::object();
}

int64_t OutputTokens(const ScriptReply& r) {
  std::string out = r.reasoning + r.text;
  for (const ScriptToolCall& c : r.tool_calls) out += c.arguments;
  return std::max<int64_t>(1, static_cast<int64_t>(Tokenize(out).size()));
}

Json UsageJson(const CacheUsage& u, int64_t output_tokens) {
  return {{"input_tokens", u.input_tokens},
          {"cache_creation_input_tokens", u.cache_write},
          {"cache_read_input_tokens", u.cache_read},
          {"output_tokens", output_tokens}};
}

Json ContentBlocks(const ScriptReply& r) {
  Json blocks = Json::array();
  if (!r.reasoning.empty()) {
    blocks.push_back(
        {{"type", "thinking"}, {"thinking", r.reasoning}, {"signature", Signature(r.reasoning)}});
  }
  if (!r.text.empty() || r.tool_calls.empty()) {
    blocks.push_back({{"type", "text"}, {"text", r.text}});
  }
  for (const ScriptToolCall& c : r.tool_calls) {
    blocks.push_back({{"type", "tool_use"},
                      {"id", ToolUseId(c.id)},
                      {"name", c.name},
                      {"input", ToolInput(c.arguments)}});
  }
  return blocks;
}

std::string Frame(const std::string& type, Json data) {
  data["type"] = type;
  return "event: " + type + "\ndata: " + data.dump() + "\n\n";
}

// The frames of one content block: start, deltas, stop.
void BlockFrames(int index, Json start, const std::string& delta_type, const char* delta_key,
                 const std::vector<std::string>& pieces, std::vector<std::string>* out) {
  out->push_back(Frame("content_block_start", {{"index", index}, {"content_block", start}}));
  for (const std::string& p : pieces) {
    out->push_back(Frame("content_block_delta",
                         {{"index", index}, {"delta", {{"type", delta_type}, {delta_key, p}}}}));
  }
}

std::vector<std::string> StreamFrames(const ScriptReply& r, Json message, const Json& usage) {
  std::vector<std::string> f;
  size_t n = static_cast<size_t>(std::max(1, r.chunk_chars));
  message["content"] = Json::array();
  message["stop_reason"] = nullptr;
  message["stop_sequence"] = nullptr;
  Json start_usage = usage;
  start_usage["output_tokens"] = 1;
  message["usage"] = start_usage;
  f.push_back(Frame("message_start", {{"message", message}}));
  if (r.text == kStreamErrorText) {
    f.push_back(Frame("error", ErrorJson("overloaded_error", "Overloaded")));
    return f;
  }
  f.push_back(Frame("ping", Json::object()));
  int index = 0;
  auto stop = [&f](int i) { f.push_back(Frame("content_block_stop", {{"index", i}})); };
  if (!r.reasoning.empty()) {
    BlockFrames(index, {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}},
                "thinking_delta", "thinking", SplitUtf8(r.reasoning, n), &f);
    f.push_back(
        Frame("content_block_delta",
              {{"index", index},
               {"delta", {{"type", "signature_delta"}, {"signature", Signature(r.reasoning)}}}}));
    stop(index++);
  }
  if (!r.text.empty() || r.tool_calls.empty()) {
    BlockFrames(index, {{"type", "text"}, {"text", ""}}, "text_delta", "text", SplitUtf8(r.text, n),
                &f);
    stop(index++);
  }
  for (const ScriptToolCall& c : r.tool_calls) {
    BlockFrames(index,
                {{"type", "tool_use"},
                 {"id", ToolUseId(c.id)},
                 {"name", c.name},
                 {"input", Json::object()}},
                "input_json_delta", "partial_json", SplitUtf8(c.arguments, n), &f);
    stop(index++);
  }
  f.push_back(Frame("message_delta",
                    {{"delta", {{"stop_reason", StopReason(r)}, {"stop_sequence", nullptr}}},
                     {"usage", {{"output_tokens", usage["output_tokens"]}}}}));
  f.push_back(Frame("message_stop", Json::object()));
  return f;
}

// ---- the API --------------------------------------------------------------

class AnthropicApi final : public ProviderApi {
 public:
  AnthropicApi(const ServerOptions& opts, Script* script)
      : opts_(opts), script_(script), cache_(opts.min_cache_tokens) {}

  HttpAnswer Handle(const ProviderRequest& req, Json* record) override {
    HttpAnswer a;
    a.headers.emplace_back("request-id", fmt::format("req_fake_{}", req.seq));
    Json body = Json::parse(req.body, nullptr, false);
    if (req.body.size() <= opts_.record_body_max && !body.is_discarded()) (*record)["body"] = body;
    if (!req.headers.count("anthropic-version")) {
      return Fail(400, "anthropic-version: header is required", &a, record);
    }
    size_t breakpoints = 0;
    std::string err = body.is_discarded()
                          ? "request body: There was an error parsing the body as JSON"
                          : Validate(body, &breakpoints);
    std::vector<PromptBlock> blocks;
    if (err.empty()) {
      blocks = RenderBlocks(body);
      err = CheckTtlOrder(blocks);
    }
    if (err.empty()) err = CheckContext(blocks);
    if (!err.empty()) return Fail(400, err, &a, record);

    ScriptReply reply = script_->Next(ToScriptRequest(body));
    (*record)["reply"] = reply.index;
    a.delay_ms = reply.delay_ms;
    if (reply.status != 200) {
      if (reply.retry_after_s >= 0) {
        a.headers.emplace_back("retry-after", std::to_string(reply.retry_after_s));
      }
      if (reply.retry_after_ms >= 0) {
        a.headers.emplace_back("retry-after-ms", std::to_string(reply.retry_after_ms));
      }
      return Fail(reply.status, reply.error_message, &a, record);
    }
    CacheUsage u = cache_.Account(blocks, opts_.env->MonotonicMs());
    (*record)["status"] = 200;
    (*record)["cache"] = {{"prompt_tokens", u.prompt_tokens},
                          {"cache_read", u.cache_read},
                          {"cache_write", u.cache_write},
                          {"breakpoints", u.breakpoints}};
    Json usage = UsageJson(u, OutputTokens(reply));
    Json message = {{"id", fmt::format("msg_fake_{}", req.seq)},
                    {"type", "message"},
                    {"role", "assistant"},
                    {"model", body["model"]}};
    if (body.value("stream", false)) {
      a.streamed = true;
      a.content_type = "text/event-stream";
      a.frames = StreamFrames(reply, std::move(message), usage);
      a.cut_after = reply.cut_after;
      a.token_delay_ms = reply.token_delay_ms;
      return a;
    }
    message["content"] = ContentBlocks(reply);
    message["stop_reason"] = StopReason(reply);
    message["stop_sequence"] = nullptr;
    message["usage"] = usage;
    a.body = message.dump();
    return a;
  }

 private:
  // ServerOptions::ctx_size > 0 is the model's context: a longer prompt gets
  // the API's context-length error (checked before the script is asked, as
  // the real API rejects it before generating).
  std::string CheckContext(const std::vector<PromptBlock>& blocks) const {
    if (opts_.ctx_size <= 0) return "";
    int64_t tokens = 0;
    for (const PromptBlock& b : blocks) tokens += b.tokens;
    if (tokens <= opts_.ctx_size) return "";
    return fmt::format("prompt is too long: {} tokens > {} maximum", tokens, opts_.ctx_size);
  }

  static HttpAnswer Fail(int status, const std::string& message, HttpAnswer* a, Json* record) {
    a->status = status;
    a->body = ErrorJson(ErrorTypeFor(status), message).dump();
    (*record)["status"] = status;
    (*record)["error"] = message;
    return *a;
  }

  const ServerOptions opts_;
  Script* script_;
  CacheBook cache_;
};

}  // namespace anthropic_fake

std::unique_ptr<ProviderApi> NewAnthropicApi(const ServerOptions& opts, Script* script) {
  return std::make_unique<anthropic_fake::AnthropicApi>(opts, script);
}

}  // namespace maestro::fakellm
