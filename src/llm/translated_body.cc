#include "llm/translated_body.h"

// Placeholder until TranslatedBody lands (issue 50).
namespace maestro::llm {
MessageRole RoleOf(const Json& message) {
  std::string r = message.is_object() ? message.value("role", "") : "";
  return r == "system"      ? MessageRole::kSystem
         : r == "user"      ? MessageRole::kUser
         : r == "assistant" ? MessageRole::kAssistant
         : r == "tool"      ? MessageRole::kTool
                            : MessageRole::kOther;
}
std::vector<size_t> MessageTranslator::Marks(const std::vector<MessageRole>&) const { return {}; }
Result<std::unique_ptr<TranslatedBody>> TranslatedBody::Open(const RequestBodySpec&,
                                                             std::unique_ptr<MessageTranslator>) {
  return Unimplemented("TranslatedBody");
}
TranslatedBody::~TranslatedBody() = default;
size_t TranslatedBody::Read(char*, size_t) { return 0; }
Status TranslatedBody::Rewind() { return Status::Ok(); }
Result<Json> ReadToolsArray(const RequestBodySpec&) { return Json::array(); }
}  // namespace maestro::llm
