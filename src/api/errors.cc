#include "api/errors.h"

#include <spdlog/spdlog.h>

#include "core/json.h"

namespace maestro::api {

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kConflict:
    case StatusCode::kLeaseLost:
      return 409;
    case StatusCode::kResourceExhausted:
      return 413;
    case StatusCode::kUnimplemented:
      return 501;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kDeadlineExceeded:
      return 504;
    case StatusCode::kCancelled:
      return 409;
    case StatusCode::kInternal:
      return 500;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kPermissionDenied:
      return 403;
  }
  return 500;
}

std::string ErrorBody(const Status& st) {
  Json err = {{"code", std::string(StatusCodeName(st.code()))}};
  // Internal errors may carry SQL or paths; the client gets a generic text.
  err["message"] = st.code() == StatusCode::kInternal ? "internal error" : st.message();
  if (!st.field().empty()) err["field"] = st.field();
  return DumpJson(Json{{"error", err}});
}

HttpResponse ReplyError(const Status& st) { return ReplyError(HttpStatusFor(st.code()), st); }

HttpResponse ReplyError(int http_status, const Status& st) {
  if (st.code() == StatusCode::kInternal) spdlog::error("api: {}", st.ToString());
  HttpResponse res;
  res.status = http_status;
  res.body = ErrorBody(st);
  return res;
}

HttpResponse ReplyUnauthenticated(bool challenge, const std::string& message) {
  HttpResponse res;
  res.status = 401;
  res.body = DumpJson(Json{{"error", {{"code", "UNAUTHENTICATED"}, {"message", message}}}});
  if (challenge) res.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"maestro\"");
  return res;
}

HttpResponse ReplyTooMany(const Status& st, int64_t retry_after_s) {
  HttpResponse res = ReplyError(429, st);
  if (retry_after_s > 0) res.headers.emplace_back("Retry-After", std::to_string(retry_after_s));
  return res;
}

}  // namespace maestro::api
