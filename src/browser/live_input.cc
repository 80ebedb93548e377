#include "browser/live_input.h"

#include <fmt/format.h>

#include <cmath>

#include "core/utf8.h"

namespace maestro::browser {

Json LiveInput::ToJson() const {
  if (type == "click") return {{"type", type}, {"x", x}, {"y", y}};
  if (type == "text") return {{"type", type}, {"text", text}};
  return {{"type", type}, {"key", key}};
}

namespace {

Status StringField(const Json& body, const char* name, std::string* out) {
  const Json& v = body.value(name, Json());
  if (!v.is_string()) return InvalidArgument(fmt::format("{} must be a string", name), name);
  *out = v.get<std::string>();
  return Status::Ok();
}

Result<int> Pixel(const Json& body, const char* name) {
  const Json& v = body.value(name, Json());
  if (!v.is_number()) {
    return InvalidArgument("x and y must be numbers (viewport pixels)", name);
  }
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < 0 || d > 100'000) {
    return InvalidArgument(fmt::format("{} must be a viewport pixel", name), name);
  }
  return static_cast<int>(d);
}

}  // namespace

Result<LiveInput> ParseLiveInput(const Json& body) {
  if (!body.is_object()) return InvalidArgument("expected a JSON object", "type");
  LiveInput in;
  MAESTRO_RETURN_IF_ERROR(StringField(body, "type", &in.type));
  if (in.type == "click") {
    MAESTRO_ASSIGN_OR_RETURN(in.x, Pixel(body, "x"));
    MAESTRO_ASSIGN_OR_RETURN(in.y, Pixel(body, "y"));
  } else if (in.type == "text") {
    MAESTRO_RETURN_IF_ERROR(StringField(body, "text", &in.text));
    if (in.text.size() > kMaxLiveTextBytes) {
      return InvalidArgument(fmt::format("text must be at most {} bytes", kMaxLiveTextBytes),
                             "text");
    }
    in.text = ValidUtf8(in.text);
  } else if (in.type == "key") {
    MAESTRO_RETURN_IF_ERROR(StringField(body, "key", &in.key));
    if (in.key != "Enter" && in.key != "Tab" && in.key != "Backspace") {
      return InvalidArgument("key must be Enter, Tab or Backspace", "key");
    }
  } else {
    return InvalidArgument("type must be click, text or key", "type");
  }
  return in;
}

Status ApplyLiveInput(BrowserSession& session, const LiveInput& in) {
  if (in.type == "click") return session.InputClick(in.x, in.y);
  if (in.type == "text") return session.InputText(in.text);
  if (in.type == "key") return session.InputKey(in.key);
  return InvalidArgument("type must be click, text or key", "type");
}

}  // namespace maestro::browser
