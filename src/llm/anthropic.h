// The Anthropic Messages API as a WireFormat (issue 50; wire.h).
//
// Request: POST {base_url}/messages with `x-api-key` and
// `anthropic-version: 2023-06-01`. The engine's OpenAI-shaped conversation
// becomes Anthropic's: the system message the top-level `system` (a text
// block), assistant tool_calls `tool_use` blocks (arguments parsed into
// `input`), consecutive `tool` messages one user message of `tool_result`
// blocks, image parts `image` blocks; the tools array `tools` with
// `input_schema`; params max_tokens (the profile's max_output_tokens when
// absent: the API requires it), temperature, top_p, stop (stop_sequences),
// tool_choice (auto / any / tool).
//
// Cache breakpoints (`cache_control: {type: ephemeral[, ttl: 1h]}`), at most
// four, on maestro's stable prefix: the last tool definition, the system
// text, the message before the newest assistant turn (where the previous
// request's prefix ended, so it is read even when a turn adds more than the
// API's 20-block lookback) and the newest message (written for the next
// request). The profile's cache_ttl "1h" asks for the one-hour cache.
//
// Reply: the SSE events message_start (usage: input_tokens,
// cache_creation_input_tokens, cache_read_input_tokens), content_block_start
// / content_block_delta (text_delta, input_json_delta, thinking_delta) /
// content_block_stop, message_delta (stop_reason, output_tokens),
// message_stop, ping, error (overloaded_error and api_error are retryable);
// or one JSON message. stop_reason end_turn / stop_sequence -> "stop",
// tool_use -> "tool_calls", max_tokens -> "length".
//
// Errors: 429 (retry-after honoured by the client), 529 overloaded and 5xx
// retryable; "prompt is too long" is the context-length error.
//
// Thread safety: see wire.h.
#pragma once

#include <memory>

#include "llm/translated_body.h"
#include "llm/wire.h"

namespace maestro::llm {

std::unique_ptr<WireFormat> NewAnthropicWire();

// Exposed for tests.
std::unique_ptr<MessageTranslator> NewAnthropicTranslator(const ModelProfile& p,
                                                          const RequestBodySpec& spec, Json tools);
std::unique_ptr<ReplyReader> NewAnthropicReader(LlmEventFn on_delta);

}  // namespace maestro::llm
