#include "llm/anthropic.h"

// Placeholder until the Anthropic adapter lands (issue 50).
namespace maestro::llm {
std::unique_ptr<WireFormat> NewAnthropicWire() { return nullptr; }
std::unique_ptr<MessageTranslator> NewAnthropicTranslator(const ModelProfile&,
                                                          const RequestBodySpec&, Json) {
  return nullptr;
}
std::unique_ptr<ReplyReader> NewAnthropicReader(LlmEventFn) { return nullptr; }
}  // namespace maestro::llm
