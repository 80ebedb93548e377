#include "llm/openai_message.h"

#include "core/strings.h"

namespace maestro::llm {

std::string ContentText(const Json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (!content.is_array()) return out;
  for (const Json& part : content) {
    if (!part.is_object()) continue;
    auto type = part.find("type");
    auto text = part.find("text");
    if (type == part.end() || *type != "text") continue;
    if (!out.empty()) out += '\n';
    if (text != part.end() && text->is_string()) out += text->get_ref<const std::string&>();
  }
  return out;
}

Json ArgumentsObject(const std::string& arguments) {
  if (Trim(arguments).empty()) return Json::object();
  Json j = Json::parse(arguments, nullptr, false);
  if (!j.is_discarded() && j.is_object()) return j;
  return {{"_raw_arguments", arguments}};
}

}  // namespace maestro::llm
