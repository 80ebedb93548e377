// The HTTP edge's error table: the one place where a Status becomes an HTTP
// status and an error body, and where the refusals that are not a Status of
// a handler — 401 (no or wrong bearer token) and 429 (a quota or the stream
// limit, with Retry-After) — get theirs. Every error body has one shape:
//   {"error":{"code":"NOT_FOUND","message":"...","field":"..."}}
// (`field` when the Status names one; an internal error's message is generic,
// its detail only logged).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "api/http.h"
#include "core/status.h"

namespace maestro::api {

// HTTP status for a Status code: 400, 404, 409, 413, 500, 501, 503, 504.
int HttpStatusFor(StatusCode code);
// The error body of `st` (see above).
std::string ErrorBody(const Status& st);

// `st` under its HTTP status, or under an explicit one (431, 429, 503...).
// Internal errors are logged.
HttpResponse ReplyError(const Status& st);
HttpResponse ReplyError(int http_status, const Status& st);

// 401 UNAUTHENTICATED "missing or wrong bearer token" (or `message`: "this
// token has expired", ...); `challenge` adds
// WWW-Authenticate: Bearer (the MCP and A2A endpoints: their clients read
// the scheme from it).
HttpResponse ReplyUnauthenticated(bool challenge,
                                  const std::string& message = "missing or wrong bearer token");
// 429 with `st`'s body (RESOURCE_EXHAUSTED, its message and field) and, when
// `retry_after_s` > 0, Retry-After in seconds.
HttpResponse ReplyTooMany(const Status& st, int64_t retry_after_s = 0);

}  // namespace maestro::api
