// UTF-8 hygiene for untrusted text (DESIGN.md §5: what a model or a
// workspace produces is data and can never crash the server).
//
// Where it sits: tool results (the Dispatcher), excerpts cut to a length
// (the job stream's tool cards), and every JSON the server writes
// (DumpJson in core/json.h) go through these, so an invalid or cut byte
// sequence becomes U+FFFD instead of nlohmann::json's type_error 316.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace maestro {

// `text` with every byte that is not part of a well-formed UTF-8 sequence
// (stray continuation bytes, truncated or overlong sequences, surrogates,
// code points above U+10FFFF) replaced by U+FFFD. NUL stays (JSON escapes it).
std::string ValidUtf8(std::string_view text);

// Whether `text` is well-formed UTF-8 (what ValidUtf8 leaves unchanged).
bool IsValidUtf8(std::string_view text);

// The longest prefix of at most `max_bytes` bytes that does not end inside a
// UTF-8 sequence.
std::string_view Utf8Prefix(std::string_view text, size_t max_bytes);

}  // namespace maestro
