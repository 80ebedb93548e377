#include "context/token_estimate.h"

#include <algorithm>
#include <cmath>

namespace maestro::context {
namespace {

bool IsCjk(uint32_t cp) {
  return (cp >= 0x1100 && cp <= 0x11FF) ||  // Hangul Jamo
         (cp >= 0x2E80 && cp <= 0x9FFF) ||  // CJK radicals, punctuation, kana, Han
         (cp >= 0xA960 && cp <= 0xA97F) ||  // Hangul Jamo Extended-A
         (cp >= 0xAC00 && cp <= 0xD7FF) ||  // Hangul syllables
         (cp >= 0xF900 && cp <= 0xFAFF) ||  // CJK compatibility ideographs
         (cp >= 0xFE30 && cp <= 0xFE4F) ||  // CJK compatibility forms
         (cp >= 0xFF00 && cp <= 0xFFEF) ||  // halfwidth and fullwidth forms
         (cp >= 0x20000 && cp <= 0x3FFFF);  // Han extensions B..H
}

// What an image content part costs a vision model: servers tile or resize
// images to a few hundred to ~1,500 tokens, never the length of its
// base64 data: URL.
constexpr int64_t kImagePartTokens = 1024;

int64_t TextOf(const Json& v) {
  if (v.is_string()) return EstimateTextTokens(v.get_ref<const std::string&>());
  if (v.is_array()) {  // content parts: [{"type":"text","text":...}, ...]
    int64_t t = 0;
    for (const auto& part : v) {
      if (part.is_object() && part.value("type", "") == "image_url") {
        t += kImagePartTokens;
      } else if (part.is_object() && part.contains("text") && part["text"].is_string()) {
        t += EstimateTextTokens(part["text"].get_ref<const std::string&>());
      } else {
        t += EstimateTextTokens(DumpJson(part));
      }
    }
    return t;
  }
  if (v.is_null()) return 0;
  return EstimateTextTokens(DumpJson(v));
}

}  // namespace

int64_t EstimateTextTokens(std::string_view s) {
  int64_t ascii = 0, cjk = 0, other = 0;
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++ascii;
      ++i;
      continue;
    }
    int len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    if (len == 1 || i + static_cast<size_t>(len) > s.size()) {  // stray byte
      ++ascii;
      ++i;
      continue;
    }
    uint32_t cp = c & (0x3F >> (len - 1));
    for (int k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    if (IsCjk(cp)) {
      ++cjk;
    } else {
      ++other;
    }
    i += static_cast<size_t>(len);
  }
  return cjk + (ascii + 3) / 4 + (other + 1) / 2;
}

int64_t EstimateMessageTokens(const Json& m) {
  if (!m.is_object()) return kMessageFramingTokens + EstimateTextTokens(DumpJson(m));
  int64_t t = kMessageFramingTokens;
  if (auto it = m.find("role"); it != m.end()) t += TextOf(*it);
  if (auto it = m.find("content"); it != m.end()) t += TextOf(*it);
  if (auto it = m.find("reasoning_content"); it != m.end()) t += TextOf(*it);
  if (auto it = m.find("name"); it != m.end()) t += TextOf(*it);
  if (auto it = m.find("tool_call_id"); it != m.end()) t += TextOf(*it);
  if (auto it = m.find("tool_calls"); it != m.end() && it->is_array()) {
    for (const auto& call : *it) {
      t += kToolCallFramingTokens;
      if (!call.is_object()) continue;
      if (auto f = call.find("function"); f != call.end() && f->is_object()) {
        if (auto n = f->find("name"); n != f->end()) t += TextOf(*n);
        if (auto a = f->find("arguments"); a != f->end()) t += TextOf(*a);
      }
      if (auto id = call.find("id"); id != call.end()) t += TextOf(*id);
    }
  }
  return t;
}

int64_t EstimateToolsTokens(std::string_view tools_json) {
  if (tools_json.empty()) return 0;
  // Chat templates render the tool schemas roughly as their JSON text plus a
  // fixed preamble explaining how to call them.
  return 10 + EstimateTextTokens(tools_json);
}

void TokenCalibration::Observe(int64_t estimated, int64_t prompt_tokens) {
  if (estimated <= 0 || prompt_tokens <= 0) return;
  double f = static_cast<double>(prompt_tokens) / static_cast<double>(estimated);
  factor_ = std::clamp(f, 0.25, 4.0);
}

int64_t TokenCalibration::Apply(int64_t raw) const {
  return static_cast<int64_t>(std::ceil(static_cast<double>(raw) * factor_));
}

}  // namespace maestro::context
