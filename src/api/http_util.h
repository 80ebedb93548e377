// Helpers shared by the route files: JSON replies, the one place where a
// Status becomes an HTTP status and an error body, and typed reads of
// request fields that fail with a 400 naming the field.
#pragma once

#include <string>

#include <httplib.h>

#include "core/json.h"
#include "core/status.h"

namespace maestro::api {

void Reply(httplib::Response& res, int code, const Json& body);
// Maps `st` to its HTTP status and {"error":{code,message,field?}}. Internal
// errors are logged and answered with a generic message (no detail leaks).
void ReplyError(httplib::Response& res, const Status& st);

// The body as a JSON object, or a 400 naming "body".
Result<Json> ParseObject(const std::string& body);
// Optional string field: absent/null keeps *out; another type is a 400.
Status OptionalString(const Json& body, const char* field, std::string* out);
// Required non-blank string field.
Status RequiredString(const Json& body, const char* field, std::string* out);

}  // namespace maestro::api
