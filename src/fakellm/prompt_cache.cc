#include "fakellm/prompt_cache.h"

#include <algorithm>
#include <cctype>

namespace maestro::fakellm {
namespace {

const char kToolsHeader[] =
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>";
const char kToolsFooter[] =
    "\n</tools>\n\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": "
    "<function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n";

std::string ContentText(const Json& msg) {
  auto it = msg.find("content");
  if (it == msg.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  std::string out;
  if (it->is_array()) {  // [{"type":"text","text":...}, ...]
    for (const Json& part : *it) {
      if (part.is_object() && part.contains("text") && part["text"].is_string()) {
        out += part["text"].get<std::string>();
      }
    }
    return out;
  }
  return it->dump();
}

std::string Role(const Json& msg) {
  return msg.contains("role") && msg["role"].is_string() ? msg["role"].get<std::string>() : "";
}

uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

bool IsLetter(unsigned char c) { return std::isalpha(c) || c >= 0x80 || c == '_'; }

}  // namespace

std::string RenderAssistantBody(const std::string& content, const Json& tool_calls) {
  std::string out = content;
  if (tool_calls.is_array()) {
    for (size_t i = 0; i < tool_calls.size(); ++i) {
      const Json& tc = tool_calls[i];
      const Json& fn = tc.contains("function") ? tc["function"] : tc;
      std::string name = fn.value("name", "");
      std::string args;
      if (fn.contains("arguments")) {
        args = fn["arguments"].is_string() ? fn["arguments"].get<std::string>()
                                           : fn["arguments"].dump();
      }
      if (i > 0 || !out.empty()) out += "\n";
      out += "<tool_call>\n{\"name\": \"" + name + "\", \"arguments\": " + args + "}\n</tool_call>";
    }
  }
  return out;
}

std::string RenderPrompt(const Json& request) {
  static const Json kEmpty = Json::array();
  const Json& messages =
      request.contains("messages") && request["messages"].is_array() ? request["messages"] : kEmpty;
  const Json& tools =
      request.contains("tools") && request["tools"].is_array() ? request["tools"] : kEmpty;
  std::string out;
  size_t first = 0;
  bool has_system = !messages.empty() && Role(messages[0]) == "system";
  if (!tools.empty()) {
    out += "<|im_start|>system\n";
    if (has_system) out += ContentText(messages[0]) + "\n\n";
    out += kToolsHeader;
    // Two appends, not `"\n" + t.dump()`: GCC 12 at -O3 reports a false -Wrestrict in
    // libstdc++'s operator+(const char*, string&&).
    for (const Json& t : tools) {
      out += '\n';
      out += t.dump();
    }
    out += kToolsFooter;
    if (has_system) first = 1;
  } else if (has_system) {
    out += "<|im_start|>system\n" + ContentText(messages[0]) + "<|im_end|>\n";
    first = 1;
  }
  for (size_t i = first; i < messages.size(); ++i) {
    const Json& m = messages[i];
    std::string role = Role(m);
    if (role == "tool") {
      // Consecutive tool results share one user turn.
      if (i == first || Role(messages[i - 1]) != "tool") out += "<|im_start|>user";
      out += "\n<tool_response>\n" + ContentText(m) + "\n</tool_response>";
      if (i + 1 == messages.size() || Role(messages[i + 1]) != "tool") out += "<|im_end|>\n";
    } else if (role == "assistant") {
      out += "<|im_start|>assistant\n" +
             RenderAssistantBody(ContentText(m), m.value("tool_calls", Json::array())) +
             "<|im_end|>\n";
    } else {
      out += "<|im_start|>" + role + "\n" + ContentText(m) + "<|im_end|>\n";
    }
  }
  out += "<|im_start|>assistant\n";
  return out;
}

Tokens Tokenize(std::string_view s) {
  Tokens out;
  out.reserve(s.size() / 3 + 1);
  size_t i = 0;
  while (i < s.size()) {
    size_t len = 1;
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '<' && (s.compare(i, 12, "<|im_start|>") == 0)) {
      len = 12;
    } else if (c == '<' && s.compare(i, 10, "<|im_end|>") == 0) {
      len = 10;
    } else if (IsLetter(c)) {
      while (len < 4 && i + len < s.size() && IsLetter(static_cast<unsigned char>(s[i + len])))
        ++len;
    } else if (std::isdigit(c)) {
      while (len < 3 && i + len < s.size() && std::isdigit(static_cast<unsigned char>(s[i + len])))
        ++len;
    } else if (c == ' ' || c == '\n' || c == '\t') {
      while (i + len < s.size() && s[i + len] == s[i] && len < 16) ++len;
    }
    out.push_back(Fnv1a(s.substr(i, len)));
    i += len;
  }
  return out;
}

size_t CommonPrefix(const Tokens& a, const Tokens& b) {
  size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

PromptCache::PromptCache(int slots, double similarity_threshold)
    : slots_(static_cast<size_t>(std::max(1, slots))), threshold_(similarity_threshold) {}

CacheFigures PromptCache::Process(const Tokens& prompt, const Tokens& generated) {
  MutexLock lock(&mu_);
  CacheFigures f;
  f.prompt_tokens = static_cast<int64_t>(prompt.size());
  // 1. The slot with the longest common prefix above the similarity threshold.
  size_t best_lcp = 0;
  for (size_t i = 0; i < slots_.size(); ++i) {
    const Slot& s = slots_[i];
    if (s.tokens.empty() || threshold_ <= 0) continue;
    size_t lcp = CommonPrefix(s.tokens, prompt);
    double sim = static_cast<double>(lcp) / static_cast<double>(s.tokens.size());
    if (lcp > best_lcp && sim > threshold_) {
      best_lcp = lcp;
      f.slot = static_cast<int>(i);
      f.similarity = sim;
    }
  }
  // 2. Otherwise the least recently used slot (never-used slots first).
  if (f.slot < 0) {
    int64_t oldest = INT64_MAX;
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].last_used < oldest) {
        oldest = slots_[i].last_used;
        f.slot = static_cast<int>(i);
      }
    }
  }
  Slot& slot = slots_[static_cast<size_t>(f.slot)];
  size_t lcp = CommonPrefix(slot.tokens, prompt);
  f.cache_n = lcp > 0 ? static_cast<int64_t>(lcp) - 1 : 0;
  f.prompt_n = f.prompt_tokens - f.cache_n;
  slot.tokens = prompt;
  slot.tokens.insert(slot.tokens.end(), generated.begin(), generated.end());
  slot.last_used = tick_++;
  return f;
}

}  // namespace maestro::fakellm
