// Token estimation for the live conversation (current.jsonl + tools).
//
// Where it sits: MessageStore estimates each message as it is appended and
// keeps the running total, so the agent loop can check the handoff and
// compression thresholds before every LLM call without reading the files.
// There is no tokenizer for every model a server may run, so the estimate is
// a heuristic that errs on the side of counting more:
//   - CJK characters (Han, kana, Hangul, CJK punctuation, fullwidth forms)
//     are about one token each; ASCII is about four characters per token;
//     other non-ASCII characters count as half a token each.
//   - every message pays a framing cost (role and chat-template markers), as
//     does every tool call; the tools array is counted from its JSON text.
// TokenCalibration then corrects the heuristic with the server's own count:
// after each call the ratio prompt_tokens / estimate of that prompt scales
// later estimates, so the number tracks the model's tokenizer instead of
// drifting (seed 002's origin lost this and compressed at the wrong time).
//
// Thread safety: pure functions; TokenCalibration is a plain value.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/json.h"

namespace maestro::context {

inline constexpr int64_t kMessageFramingTokens = 4;  // <|im_start|>role ... <|im_end|>
inline constexpr int64_t kToolCallFramingTokens = 3;
inline constexpr int64_t kReplyPrimingTokens = 3;  // the assistant turn the server opens

// Tokens of UTF-8 text (invalid bytes count like ASCII).
int64_t EstimateTextTokens(std::string_view utf8);

// Tokens of one OpenAI-format message: framing + role + content (string or
// array of text parts) + tool calls (name + arguments) + tool_call_id/name.
int64_t EstimateMessageTokens(const Json& message);

// Tokens of the request's `tools` array, from its JSON text.
int64_t EstimateToolsTokens(std::string_view tools_json);

// Scales raw estimates by what the server reported for the last call.
class TokenCalibration {
 public:
  // `estimated` was the raw estimate of the prompt the server reported
  // `prompt_tokens` for. Ignored when either is not positive. The factor is
  // clamped to [0.25, 4] so one odd report cannot wreck later decisions.
  void Observe(int64_t estimated, int64_t prompt_tokens);
  int64_t Apply(int64_t raw) const;
  double factor() const { return factor_; }
  void set_factor(double f) { factor_ = f; }

 private:
  double factor_ = 1.0;
};

}  // namespace maestro::context
