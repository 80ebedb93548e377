// FakeLlmServer: the HTTP side of maestro-fakellm, an OpenAI-compatible
// server that answers from a Script and accounts the prompt cache like
// llama-server (see prompt_cache.h). Used by integration tests, benchmarks
// and demos in place of a real model.
//
// Routes: POST /v1/chat/completions (streamed SSE or plain JSON),
// POST /v1/messages (Anthropic) and POST /v1beta/models/{model}:generateContent
// | :streamGenerateContent (Gemini) (provider_api.h), GET /v1/models, GET /health, GET
// /v1/_requests (every request received: its body and the computed cache figures), DELETE
// /v1/_requests. cpp-httplib is confined to server.cc.
//
// Thread safety: Start/Stop from one thread; requests are served on the
// server's worker threads; all shared state is synchronised.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/json.h"
#include "core/status.h"
#include "fakellm/prompt_cache.h"
#include "fakellm/script.h"

namespace maestro::fakellm {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0 = any free port
  std::string model = "fake-model";
  int slots = 4;                 // --parallel in llama-server
  double slot_similarity = 0.5;  // --slot-prompt-similarity
  int64_t ctx_size = 0;          // > 0: longer prompts get llama.cpp's context error
  // The fewest prompt tokens a cache entry holds (Anthropic: 1024 for most
  // models; Gemini's implicit cache likewise): shorter prefixes are neither
  // written nor read. Applies to the anthropic and gemini routes.
  int64_t min_cache_tokens = 1024;
  std::string record_path;                   // append every request as a JSON line
  size_t record_body_max = 4 * 1024 * 1024;  // larger bodies are recorded without the body
  Env* env = Env::Default();                 // writes the record file
};

class FakeLlmServer {
 public:
  FakeLlmServer(ServerOptions opts, Script script);
  ~FakeLlmServer();

  // Binds; returns the bound port.
  Result<int> Bind();
  // Serves until Stop(). REQUIRES: Bind() succeeded.
  void Run();
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace maestro::fakellm
