#include "llm/gemini.h"

// Placeholder until the Gemini adapter lands (issue 50).
namespace maestro::llm {
std::unique_ptr<WireFormat> NewGeminiWire() { return nullptr; }
std::unique_ptr<MessageTranslator> NewGeminiTranslator(const ModelProfile&, const RequestBodySpec&,
                                                       Json) {
  return nullptr;
}
std::unique_ptr<ReplyReader> NewGeminiReader(LlmEventFn) { return nullptr; }
}  // namespace maestro::llm
