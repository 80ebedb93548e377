// Helpers shared by the route files and the server: JSON replies (errors:
// api/errors.h, included here) and typed reads of request fields that fail
// with a 400 naming the field.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/errors.h"
#include "api/http.h"
#include "core/json.h"
#include "core/status.h"
#include "store/types.h"

namespace maestro::api {

HttpResponse Reply(int code, const Json& body);

// The body as a JSON object, or a 400 naming "body": not JSON, invalid
// UTF-8, a number out of range, nested deeper than kMaxBodyDepth, or not an
// object. The message never carries the parser's own text.
inline constexpr int kMaxBodyDepth = 32;
Result<Json> ParseObject(const std::string& body);
// Optional string field: absent/null keeps *out; another type is a 400.
Status OptionalString(const Json& body, const char* field, std::string* out);
// Optional integer field within [min, max]: absent/null keeps *out; another
// type or a value out of range is a 400 naming the field.
Status OptionalInt(const Json& body, const char* field, int64_t min, int64_t max, int* out);
// Required non-blank string field.
Status RequiredString(const Json& body, const char* field, std::string* out);
// A task list's `status` filter ("" = none), or a 400 naming "status" when
// it is no job status.
Result<std::optional<JobStatus>> ParseStatusFilter(std::string_view status);
// A request kind (tool | package | spawn), or a 400 naming "kind".
Result<RequestKind> ParseKindField(std::string_view kind);
// Fields of `body` not in `known`: kInvalidArgument naming the first one
// ("unknown field 'x'; known: a, b"), field = its name.
Status OnlyFields(const Json& body, const std::vector<std::string>& known);

// Client text safe to echo in an error message: control characters
// removed, invalid UTF-8 replaced, at most `max_bytes` (cut at a character
// boundary, "…" appended).
std::string SafeEcho(std::string_view text, size_t max_bytes = 64);

}  // namespace maestro::api
