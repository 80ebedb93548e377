#include "llm/wire.h"

#include "llm/anthropic.h"
#include "llm/gemini.h"
#include "llm/llm_client.h"

namespace maestro::llm {

std::unique_ptr<WireFormat> NewOpenAiWire();  // openai_wire.cc

LlmErrorKind WireFormat::ClassifyHttpError(int http, std::string_view body) const {
  if (IsContextLengthError(http, body)) return LlmErrorKind::kContextLengthExceeded;
  // 529 is Anthropic's "overloaded"; every 5xx is worth another attempt.
  if (http == 429 || http == 408 || http >= 500) return LlmErrorKind::kRetryable;
  return LlmErrorKind::kTerminal;
}

std::string_view ProviderName(const ModelProfile& p) {
  if (p.provider == "anthropic") return "anthropic";
  if (p.provider == "gemini") return "gcp.gemini";
  return "openai";
}

std::unique_ptr<WireFormat> WireFormatFor(const ModelProfile& p) {
  if (p.provider == "anthropic") return NewAnthropicWire();
  if (p.provider == "gemini") return NewGeminiWire();
  return NewOpenAiWire();
}

}  // namespace maestro::llm
