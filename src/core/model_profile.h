// ModelProfile: one OpenAI-compatible server and model the engine may talk to
// (seed 000 "model profile"), and what its tokens cost.
//
// Where it sits: the one profile type. The config's `llm:` section is the
// "default" profile and each `llm_profiles.<name>:` another (Config::llm,
// Config::llm_profiles; their keys are rows of core/config_keys.cc); the LLM
// client is built from one (llm::HttpLlmClient; llm::ModelProfile is this
// type), the API validates a task's `profile`/`model` against them, and the
// usage and budget views price a job by its profile's `price`.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace maestro {

// What a profile's tokens cost, in USD per million tokens (`price:` of
// `llm:` or of an `llm_profiles:` entry). Only the API's usage view and the
// budgets read it (api/usage_view.h, store/budget.h); no price: a task's
// cost is unknown (null).
struct LlmPrice {
  double input = 0;         // prompt tokens not served from the cache
  double cached_input = 0;  // prompt tokens served from the cache (default: input)
  double output = 0;        // completion tokens
  // Prompt tokens written to the cache (Anthropic's cache_creation_input_tokens:
  // 1.25x input for the 5-minute cache, 2x for the 1-hour one). Default: input.
  double cache_write = 0;
};

struct ModelProfile {
  // "default" for `llm:`; an `llm_profiles:` entry's name otherwise (set by
  // the config reader and by llm::ProfilesFromConfig).
  std::string name = "default";
  // The wire format (issue 50, llm/wire.h): "openai" (chat completions:
  // llama-server, vLLM, Ollama, OpenAI), "anthropic" (Messages API, explicit
  // cache breakpoints) or "gemini" (generateContent, implicit caching).
  std::string provider = "openai";
  // openai: ".../v1", POST {base_url}/chat/completions; anthropic:
  // "https://api.anthropic.com/v1", POST {base_url}/messages; gemini:
  // "https://generativelanguage.googleapis.com/v1beta", POST
  // {base_url}/models/{model}:generateContent.
  std::string base_url;
  // Sent when non-empty: "Authorization: Bearer ..." (openai), "x-api-key"
  // (anthropic), "x-goog-api-key" (gemini).
  std::string api_key;
  std::string api_key_env;  // if api_key is empty, read from this variable at client creation
  std::string model;
  int64_t context_length = 32'768;
  std::map<std::string, std::string> extra_headers;  // `headers:` in the file
  bool stream = true;   // false: plain JSON response, for servers that cannot stream
  bool vision = false;  // takes image content parts (attached images)
  // anthropic: the cache breakpoints' TTL, "5m" (the API's default) or "1h".
  std::string cache_ttl = "5m";
  // anthropic (required by the API) and gemini: the answer's token limit
  // when a request names none.
  int64_t max_output_tokens = 8192;

  int64_t connect_timeout_ms = 10'000;
  int64_t idle_timeout_ms = 300'000;  // no byte for this long: stalled, retryable
  int64_t total_timeout_ms = 0;       // whole attempt; 0 = unlimited

  int max_attempts = 4;  // per call, retries included; 1 = no retry
  // The backoff between attempts and the cap on a server's Retry-After: not
  // read from the file (fixed here; tests shorten them).
  int64_t backoff_base_ms = 500;
  int64_t backoff_max_ms = 30'000;
  double backoff_jitter = 0.2;           // +/- fraction of each delay
  int64_t max_retry_after_ms = 120'000;  // cap for a server's Retry-After

  std::optional<LlmPrice> price;  // unset: the cost of its calls is unknown
};

}  // namespace maestro
