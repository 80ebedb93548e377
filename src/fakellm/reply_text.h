// Internal to src/fakellm: cutting a scripted reply's text into the pieces a
// streamed reply sends, shared by the OpenAI (server.cc), Anthropic and
// Gemini fakes so every provider streams the same fragments.
//
// Thread safety: a pure function.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace maestro::fakellm {

// `s` in pieces of at most `n` bytes, except that a piece never ends inside a
// UTF-8 multi-byte sequence (it runs on to the sequence's end). "" gives no
// piece; n = std::string::npos gives `s` whole.
std::vector<std::string> SplitUtf8(const std::string& s, size_t n);

}  // namespace maestro::fakellm
