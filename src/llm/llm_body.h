// LlmBody: the request body of one LLM call (wire.h), produced while it
// uploads. RequestBody (OpenAI) and TranslatedBody (Anthropic, Gemini)
// implement it.
//
// Thread safety: none; one attempt's.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/status.h"

namespace maestro::llm {

// The body a transfer uploads: sized up front (Content-Length), read in
// pieces, rewound when libcurl resends on a fresh connection.
class LlmBody {
 public:
  virtual ~LlmBody() = default;
  virtual uint64_t size() const = 0;
  // Up to `n` next bytes; 0 at the end, or with error() set on a failure.
  virtual size_t Read(char* buf, size_t n) = 0;
  virtual const Status& error() const = 0;
  virtual Status Rewind() = 0;
};

}  // namespace maestro::llm
