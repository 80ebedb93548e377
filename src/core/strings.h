// Small string helpers every module needs, written once (issue 46: eight
// Trims had grown in eight files, each with its own idea of a space).
//
// Where it sits: core, below every module; header values (HTTP, multipart,
// SSE), config and cron fields, titles and summaries trim through these.
//
// Thread safety: pure functions (inline: core's library needs no new source).
#pragma once

#include <string_view>

namespace maestro {

// ASCII whitespace as the C locale's isspace knows it.
inline constexpr std::string_view kAsciiSpace = " \t\r\n\v\f";
// HTTP's optional whitespace (RFC 9110 §5.6.3: SP and HTAB), plus the CR/LF a
// header line may still end with when the caller did not strip it.
inline constexpr std::string_view kHttpSpace = " \t\r\n";

// `s` without trailing bytes from `chars`.
inline std::string_view TrimRight(std::string_view s, std::string_view chars = kAsciiSpace) {
  size_t b = s.find_last_not_of(chars);
  return b == std::string_view::npos ? std::string_view() : s.substr(0, b + 1);
}

// `s` without leading and trailing bytes from `chars`.
inline std::string_view Trim(std::string_view s, std::string_view chars = kAsciiSpace) {
  size_t a = s.find_first_not_of(chars);
  return a == std::string_view::npos ? std::string_view() : TrimRight(s.substr(a), chars);
}

}  // namespace maestro
