// WireFormat: one LLM provider's request and reply shapes behind the one
// LlmClient (issue 50). The engine speaks OpenAI chat completions internally
// — current.jsonl holds one OpenAI message per line, the tools file an
// OpenAI tools array — and a profile's `provider` chooses how that is put on
// the wire:
//
//   openai     POST {base_url}/chat/completions          RequestBody + StreamAssembler
//   anthropic  POST {base_url}/messages                  AnthropicTranslator + AnthropicReader
//   gemini     POST {base_url}/models/{model}:generateContent
//              (streamed: :streamGenerateContent?alt=sse) GeminiTranslator + GeminiReader
//
// The transfer, its retries and the classification are the client's
// (llm_client.cc); a WireFormat only says where to send, which headers, how
// the body is produced (an LlmBody: sized up front, streamed from the
// conversation file, never the whole conversation in memory) and how the
// reply is read (a ReplyReader: SSE events or one JSON object into a
// ChatResponse, deltas forwarded as they arrive).
//
// Thread safety: a WireFormat is immutable and shared by concurrent calls;
// LlmBody and ReplyReader belong to one attempt.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/http_client.h"
#include "core/json.h"
#include "core/model_profile.h"
#include "core/sse_parser.h"
#include "core/status.h"
#include "llm/llm_body.h"
#include "llm/llm_types.h"
#include "llm/request_body.h"

namespace maestro::llm {

// Reads one reply. Errors from OnEvent/OnJson are retryable stream errors
// (kUnavailable: a malformed event, a provider's in-stream `error` event).
class ReplyReader {
 public:
  virtual ~ReplyReader() = default;
  // One SSE event of a streamed reply (`event:` name and `data:`).
  virtual Status OnEvent(const SseEvent& ev) = 0;
  // A whole non-streamed reply body.
  virtual Status OnJson(const Json& body) = 0;
  // The reply said it is whole (OpenAI finish_reason, Anthropic
  // message_stop or a stop_reason, Gemini finishReason): a stream cut after
  // this lost nothing but usage.
  virtual bool complete() const = 0;
  // The assembled answer in the engine's terms: finish_reason "stop",
  // "tool_calls" or "length"; usage with prompt_tokens = the whole prompt
  // (cache reads and writes included), cached_tokens = read from the cache,
  // cache_write_tokens = written to it.
  virtual ChatResponse Take() = 0;
};

class WireFormat {
 public:
  virtual ~WireFormat() = default;
  // gen_ai.provider.name (OpenTelemetry semantic conventions):
  // "openai", "anthropic", "gcp.gemini".
  virtual std::string_view provider_name() const = 0;
  // The endpoint of one call.
  virtual std::string Url(const ModelProfile& p, bool stream) const = 0;
  // Authentication and version headers (Content-Type and Accept are the
  // client's). The profile's extra `headers:` are added by the client.
  virtual void AddHeaders(const ModelProfile& p, HttpHeaders* out) const = 0;
  virtual Result<std::unique_ptr<LlmBody>> OpenBody(const ModelProfile& p,
                                                    const RequestBodySpec& spec) const = 0;
  virtual std::unique_ptr<ReplyReader> NewReader(LlmEventFn on_delta) const = 0;
  // A non-2xx reply: retryable (rate limits, overload, 5xx), the prompt too
  // long (kContextLengthExceeded) or terminal. `body` is capped text.
  virtual LlmErrorKind ClassifyHttpError(int http_status, std::string_view body) const;
};

// gen_ai.provider.name of a profile's provider, without building its wire.
std::string_view ProviderName(const ModelProfile& p);

// The profile's provider ("openai" when empty). REQUIRES: the provider is
// one the config accepts (core/config_keys.cc checks it).
std::unique_ptr<WireFormat> WireFormatFor(const ModelProfile& p);

}  // namespace maestro::llm
