#include "api/http_util.h"

#include <spdlog/spdlog.h>

#include "api/api_server.h"

namespace maestro::api {

void Reply(httplib::Response& res, int code, const Json& body) {
  res.status = code;
  res.set_content(DumpJson(body), "application/json");
}

void ReplyError(httplib::Response& res, const Status& st) {
  if (st.code() == StatusCode::kInternal) spdlog::error("api: {}", st.ToString());
  res.status = HttpStatusFor(st.code());
  res.set_content(ErrorBody(st), "application/json");
}

Result<Json> ParseObject(const std::string& body) {
  auto j = ParseJson(body);
  if (!j.ok()) return InvalidArgument(j.status().message(), "body");
  if (!j->is_object()) return InvalidArgument("body must be a JSON object", "body");
  return j;
}

Status OptionalString(const Json& body, const char* field, std::string* out) {
  if (!body.contains(field) || body[field].is_null()) return Status::Ok();
  if (!body[field].is_string()) {
    return InvalidArgument(std::string(field) + " must be a string", field);
  }
  *out = body[field].get<std::string>();
  return Status::Ok();
}

Status RequiredString(const Json& body, const char* field, std::string* out) {
  if (!body.contains(field) || body[field].is_null()) {
    return InvalidArgument(std::string(field) + " is required", field);
  }
  MAESTRO_RETURN_IF_ERROR(OptionalString(body, field, out));
  if (out->find_first_not_of(" \t\r\n") == std::string::npos) {
    return InvalidArgument(std::string(field) + " must not be empty", field);
  }
  return Status::Ok();
}

}  // namespace maestro::api
