#include "api/http_util.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <strings.h>

#include <algorithm>

#include "api/api_server.h"
#include "core/utf8.h"

namespace maestro::api {

std::string HttpRequest::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (k.size() == name.size() && strncasecmp(k.data(), name.data(), k.size()) == 0) return v;
  }
  return "";
}

std::string HttpRequest::Query(std::string_view name) const {
  for (const auto& [k, v] : query) {
    if (k == name) return v;
  }
  return "";
}

std::string SseFrame(std::string_view id, std::string_view event, std::string_view data) {
  std::string out;
  out.reserve(data.size() + event.size() + id.size() + 24);
  if (!id.empty()) out.append("id: ").append(id).append("\n");
  if (!event.empty()) out.append("event: ").append(event).append("\n");
  // Each line of the payload is its own data: line (the client joins them
  // with "\n"); compact JSON has none, so this is one line in practice.
  size_t start = 0;
  while (true) {
    size_t nl = data.find('\n', start);
    out.append("data: ").append(data.substr(start, nl - start)).append("\n");
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  out.append("\n");
  return out;
}

HttpResponse Reply(int code, const Json& body) {
  HttpResponse res;
  res.status = code;
  res.body = DumpJson(body);
  return res;
}

namespace {

// The deepest [ / { nesting of `text`, counting only outside strings; stops
// counting past `limit` (a hostile body may nest a million levels).
int NestingDepth(const std::string& text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

Result<Json> ParseObject(const std::string& body) {
  if (!IsValidUtf8(body)) return InvalidArgument("body is not valid UTF-8", "body");
  if (NestingDepth(body, kMaxBodyDepth) > kMaxBodyDepth) {
    return InvalidArgument("body nests deeper than " + std::to_string(kMaxBodyDepth) + " levels",
                           "body");
  }
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

Status OptionalInt(const Json& body, const char* field, int64_t min, int64_t max, int* out) {
  if (!body.contains(field) || body[field].is_null()) return Status::Ok();
  const Json& v = body[field];
  if (!v.is_number_integer())
    return InvalidArgument(std::string(field) + " must be an integer", field);
  // A non-negative JSON integer is parsed unsigned: both bounds apply to it too.
  const bool fits = v.is_number_unsigned()
                        ? v.get<uint64_t>() <= static_cast<uint64_t>(max) &&
                              (min <= 0 || v.get<uint64_t>() >= static_cast<uint64_t>(min))
                        : v.get<int64_t>() >= min && v.get<int64_t>() <= max;
  if (!fits) {
    return InvalidArgument(fmt::format("{} must be between {} and {}", field, min, max), field);
  }
  *out = static_cast<int>(v.get<int64_t>());
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

namespace maestro::api {

Result<std::optional<JobStatus>> ParseStatusFilter(std::string_view status) {
  if (status.empty()) return std::optional<JobStatus>();
  if (auto s = ParseJobStatus(status)) return std::optional<JobStatus>(*s);
  return InvalidArgument(
      fmt::format("status must be one of {}", fmt::join(AllNames<JobStatus>(), ", ")), "status");
}

Result<RequestKind> ParseKindField(std::string_view kind) {
  if (auto k = ParseRequestKind(kind)) return *k;
  return InvalidArgument("kind must be tool, package or spawn", "kind");
}

Status OnlyFields(const Json& body, const std::vector<std::string>& known) {
  for (const auto& [key, _] : body.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string name = SafeEcho(key);
      return InvalidArgument(
          fmt::format("unknown field '{}'; known: {}", name, fmt::join(known, ", ")), name);
    }
  }
  return Status::Ok();
}

std::string SafeEcho(std::string_view text, size_t max_bytes) {
  const std::string valid = ValidUtf8(text);
  std::string clean;
  for (size_t i = 0; i < valid.size(); ++i) {
    const auto u = static_cast<unsigned char>(valid[i]);
    if (u < 0x20 || u == 0x7F) continue;
    // C1 controls U+0080..U+009F are 0xC2 0x80..0x9F.
    if (u == 0xC2 && i + 1 < valid.size() && static_cast<unsigned char>(valid[i + 1]) <= 0x9F) {
      ++i;
      continue;
    }
    clean += valid[i];
  }
  if (clean.size() <= max_bytes) return clean;
  return std::string(Utf8Prefix(clean, max_bytes)) + "…";
}

}  // namespace maestro::api
