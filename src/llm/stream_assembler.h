// StreamAssembler: turns chat-completion chunks into one ChatResponse.
//
// Sits between SseParser (which yields each `data:` payload) and the client.
// Each payload is one OpenAI `chat.completion.chunk` JSON object (or
// `[DONE]`). It appends content and reasoning deltas, assembles tool calls by
// `index` from their id/name/argument fragments, keeps `finish_reason`, and
// reads usage (`prompt_tokens`, `completion_tokens`,
// `prompt_tokens_details.cached_tokens`) and llama.cpp `timings`
// (`cache_n`, `prompt_n`) wherever they arrive — including a last chunk with
// empty `choices`. Every delta is also forwarded to an LlmEventFn as it
// arrives, for the UI stream. ApplyCompletion() does the same for a
// non-streamed `chat.completion` object.
//
// Thread safety: none; one assembler per attempt.
#pragma once

#include <map>
#include <string_view>

#include "core/json.h"
#include "core/status.h"
#include "llm/llm_types.h"

namespace maestro::llm {

class StreamAssembler {
 public:
  explicit StreamAssembler(LlmEventFn on_event = nullptr) : on_event_(std::move(on_event)) {}

  // Consumes one SSE data payload. A malformed chunk is an error; a chunk
  // carrying {"error": ...} is reported as kUnavailable with its message.
  Status OnData(std::string_view data);

  // Consumes a whole non-streamed response object.
  Status ApplyCompletion(const Json& completion);

  bool done() const { return done_; }  // `[DONE]` seen
  bool has_finish() const { return !finish_reason_.empty(); }
  bool any_delta() const { return any_delta_; }

  // The assembled answer. Usage prefers `usage`; llama.cpp `timings` fill
  // in (or correct) the cached and prompt counts.
  ChatResponse Take();

 private:
  void ApplyChoice(const Json& choice, bool streamed);
  void ApplyToolCallDelta(const Json& tc, int fallback_index);
  void ApplyUsage(const Json& usage);
  void ApplyTimings(const Json& timings);
  void Emit(LlmEvent ev);

  LlmEventFn on_event_;
  ChatResponse resp_;
  std::map<int, ToolCall> tools_;
  std::string finish_reason_;
  bool done_ = false;
  bool any_delta_ = false;
  bool has_timings_ = false;
  int64_t timings_cache_n_ = 0;
  int64_t timings_prompt_n_ = 0;
  bool has_cached_detail_ = false;
};

}  // namespace maestro::llm
