// A strict multipart/form-data parser (RFC 7578 on RFC 2046's framing) for
// the upload routes: POST /api/local/tasks and /tasks/:id/comments take a
// `json` part and file parts (api/attachments.h).
//
// Why our own: no maintained C++ parser fits. Boost.Beast (our HTTP
// library) has no multipart support; GMime and mimetic are mail libraries
// (RFC 5322 messages, transfer encodings, charsets) with an API and
// dependencies far beyond one form body held in memory; the body is already
// complete and size-limited when a route sees it. So this is a small
// one-pass parser over a string_view.
//
// Strict on purpose — a body this parser accepts has one meaning:
//   - the body starts with the first delimiter (no preamble) and ends with
//     the close delimiter (anything after it, the epilogue, is ignored);
//   - every part has a Content-Disposition `form-data` with a `name`;
//   - header lines end in CRLF, have a name and a colon; no folding;
//   - Content-Transfer-Encoding other than 7bit/8bit/binary is refused
//     (RFC 7578 §4.7 deprecates it);
//   - at most `max_parts` parts and 8 KiB of headers per part.
// Errors are kInvalidArgument with field "body" and a message saying what
// is wrong; they never echo the client's bytes beyond a short safe prefix.
//
// Thread safety: pure functions; the parts view into the caller's body.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace maestro::api {

struct MultipartPart {
  std::string name;                     // Content-Disposition name
  std::optional<std::string> filename;  // its filename parameter: a file part
  std::string content_type;             // "" when the part has none
  std::string_view body;                // into the parsed body
};

// Whether `content_type` is multipart/form-data (any parameters).
bool IsMultipartFormData(std::string_view content_type);

// The boundary parameter of a multipart/form-data Content-Type (1..70
// characters, RFC 2046 §5.1.1), or kInvalidArgument naming "Content-Type".
Result<std::string> MultipartBoundary(std::string_view content_type);

// The parts of `body`, in order. REQUIRES: `body` outlives the result.
Result<std::vector<MultipartPart>> ParseMultipart(std::string_view content_type,
                                                  std::string_view body, size_t max_parts);

}  // namespace maestro::api
