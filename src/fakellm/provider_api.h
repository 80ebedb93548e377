// The Anthropic Messages and Gemini generateContent fakes of maestro-fakellm
// (issue 50), beside its OpenAI chat-completions route.
//
// A ProviderApi reads one request of its provider's wire format, validates
// it as the real API would (a 400 in the provider's error shape, naming the
// field), turns it into the OpenAI shape the Script matches on
// (ToScriptRequest: `messages` with string contents, `tools` with
// function names), asks the Script for the reply, accounts the prompt cache
// by its provider's rules and answers in the provider's shape — streamed SSE
// frames or one JSON body. It does no I/O: server.cc (the one user of
// cpp-httplib) sends the HttpAnswer, honouring the reply's pacing and faults.
//
// Cache models:
//   anthropic  explicit breakpoints (anthropic_api.cc): a request reads the
//              longest prefix ending at a block boundary at or up to 20
//              blocks before one of its `cache_control` breakpoints that a
//              previous request wrote (within its TTL), and writes the prefix
//              up to each breakpoint. usage.input_tokens excludes both.
//   gemini     implicit (gemini_api.cc): the rendered request prefix shared
//              with a previous request, as llama-server's slots (PromptCache).
//
// Thread safety: Handle() is called concurrently from the server's threads;
// implementations synchronise their state.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/json.h"
#include "fakellm/script.h"
#include "fakellm/server.h"

namespace maestro::fakellm {

struct ProviderRequest {
  std::string path;                            // "/v1/messages", "/v1beta/models/m:generateContent"
  std::map<std::string, std::string> headers;  // names lower-cased
  std::map<std::string, std::string> query;    // e.g. alt=sse
  std::string body;
  int64_t seq = 0;  // the server's request number
};

struct HttpAnswer {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string content_type = "application/json";
  std::string body;  // when not streamed
  bool streamed = false;
  std::vector<std::string> frames;  // streamed: whole SSE frames, "event: x\ndata: {...}\n\n"
  // The script reply's pacing and faults (script.h).
  int cut_after = -1;  // close after this many frames, without the terminating chunk
  int64_t delay_ms = 0;
  int64_t token_delay_ms = 0;
};

class ProviderApi {
 public:
  virtual ~ProviderApi() = default;
  // Answers one request; fills `record` (GET /v1/_requests) with at least
  // "status", "body" (the parsed request, unless too big), "reply" (the
  // script index) and "cache" ({prompt_tokens, cache_read, cache_write}).
  virtual HttpAnswer Handle(const ProviderRequest& req, Json* record) = 0;
};

std::unique_ptr<ProviderApi> NewAnthropicApi(const ServerOptions& opts, Script* script);
std::unique_ptr<ProviderApi> NewGeminiApi(const ServerOptions& opts, Script* script);

}  // namespace maestro::fakellm
