// LlmClient: one chat call against an LLM server.
//
// The agent loop (src/engine) calls Chat() once per iteration. LlmClient is
// the interface the engine depends on, so tests inject a fake; HttpLlmClient is
// the implementation, for every provider a profile names (wire.h: OpenAI
// chat completions — llama-server, vLLM, Ollama, OpenAI —, Anthropic
// Messages, Gemini generateContent):
//
//   ChatRequest (file paths) -> the WireFormat's LlmBody (streamed upload)
//     -> POST the WireFormat's URL, streamed
//        (core's HttpClient::Exchange: the one libcurl transfer of the tree)
//     -> SseParser -> the WireFormat's ReplyReader -> LlmEvent deltas + ChatResponse
//
// The transfer is core's; what is the LLM's stays here: the classification
// and retries below, with the provider's shapes from its WireFormat. The
// profile's URL is the operator's configuration, so the call passes no egress
// policy (as OTLP's); the environment's proxy is honoured, and the client
// keeps its kept-alive connection between calls (an agent loop pays one TCP
// connect per job, not one per request).
//
// Failures are classified: retryable (429 honouring Retry-After, 5xx,
// connection errors, a stalled stream, a stream cut before finish_reason) are
// retried with exponential backoff and jitter up to ModelProfile::max_attempts,
// each retry reported as an LlmEvent::kRetry (the partial answer is
// discarded); terminal (400/401/403/404...) and context-length-exceeded
// (typed, for the prompt guard) are returned at once. A CancelToken aborts an
// in-flight transfer or a backoff sleep within ~50 ms.
//
// Every successful call logs `prompt_cache reused=N prompt=M pct=P` and
// returns the figures in ChatResponse::usage.
//
// Thread safety: HttpLlmClient is immutable after construction; Chat() may run
// concurrently from many threads (HttpClient gives each call its own curl
// handles, from its kept ones when one is free).
#pragma once

#include <map>
#include <memory>

#include "core/cancel.h"
#include "core/config.h"
#include "core/http_client.h"
#include "llm/llm_types.h"
#include "llm/wire.h"

namespace maestro::llm {

class LlmClient {
 public:
  virtual ~LlmClient() = default;
  // Runs one call (with retries). `on_event` may be null; it is called on
  // the calling thread. `cancel` may be null.
  virtual LlmCallResult Chat(const ChatRequest& request, const LlmEventFn& on_event,
                             CancelToken* cancel) = 0;
  virtual const ModelProfile& profile() const = 0;
};

// Every configured profile by name: "default" (the `llm:` section and the
// MAESTRO_LLM_* variables) plus each of `llm_profiles`, each named by its key.
// The config holds them as ModelProfiles already: nothing is translated.
std::map<std::string, ModelProfile> ProfilesFromConfig(const Config& cfg);

class HttpLlmClient final : public LlmClient {
 public:
  explicit HttpLlmClient(ModelProfile profile);
  LlmCallResult Chat(const ChatRequest& request, const LlmEventFn& on_event,
                     CancelToken* cancel) override;
  const ModelProfile& profile() const override { return profile_; }

 private:
  ModelProfile profile_;
  std::unique_ptr<WireFormat> wire_;  // the profile's provider
  HttpClient http_;                   // the profile's timeouts; keeps its connection
};

// Exposed for tests: is this error body a "prompt does not fit" error?
// Recognises OpenAI (context_length_exceeded), vLLM ("maximum context
// length"), llama.cpp (exceed_context_size_error, "context size"), Anthropic
// ("prompt is too long"), Gemini ("exceeds the maximum number of tokens").
bool IsContextLengthError(int http_status, std::string_view body);

// Exposed for tests: the delay before retry number `retry` (1-based).
int64_t BackoffDelayMs(const ModelProfile& p, int retry, double unit_random);

}  // namespace maestro::llm
