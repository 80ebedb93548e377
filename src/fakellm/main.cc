// maestro-fakellm: a scripted OpenAI-compatible LLM server with a
// llama-server-like prompt cache, for tests and demos. Wiring only; see
// server.h, script.h and prompt_cache.h.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <thread>

#include "fakellm/server.h"

int main(int argc, char** argv) {
  using namespace maestro::fakellm;
  ServerOptions opts;
  std::string script_path;
  std::string log_level = "warn";
  CLI::App app{
      "maestro-fakellm: scripted OpenAI-compatible chat-completions server with a "
      "llama-server-like prompt cache.\nPrints 'listening HOST:PORT' as its first stdout line."};
  app.add_option("--host", opts.host, "address to bind")->capture_default_str();
  app.add_option("--port", opts.port, "port; 0 = any free port")->capture_default_str();
  app.add_option("--script", script_path, "reply script (JSON or YAML), see below");
  app.add_option("--model", opts.model, "model id reported")->capture_default_str();
  app.add_option("--slots", opts.slots, "prompt-cache slots (llama-server --parallel)")
      ->capture_default_str();
  app.add_option("--slot-prompt-similarity", opts.slot_similarity,
                 "min common-prefix share of a slot to reuse it; else LRU slot")
      ->capture_default_str();
  app.add_option("--ctx-size", opts.ctx_size,
                 "context tokens; longer prompts get exceed_context_size_error (0 = unlimited)")
      ->capture_default_str();
  app.add_option("--min-cache-tokens", opts.min_cache_tokens,
                 "anthropic and gemini routes: the fewest prompt tokens a cache entry holds")
      ->capture_default_str();
  app.add_option("--record", opts.record_path,
                 "append every request (body + cache figures) as JSONL");
  app.add_option("--log-level", log_level, "trace|debug|info|warn|error")->capture_default_str();
  app.footer(
      std::string(kScriptHelp) +
      "\nCACHE FIGURES\n  The last stream chunk carries timings.cache_n/prompt_n; the usage chunk\n"
      "  carries usage.prompt_tokens_details.cached_tokens. GET /v1/_requests lists\n"
      "  every request with its body and figures (DELETE clears it).\n");
  CLI11_PARSE(app, argc, argv);
  spdlog::set_level(spdlog::level::from_str(log_level));

  Script script;
  if (!script_path.empty()) {
    auto loaded = Script::Load(script_path);
    if (!loaded.ok()) {
      std::cerr << "maestro-fakellm: " << loaded.status().ToString() << "\n";
      return 2;
    }
    script = std::move(loaded).value();
  } else {
    script = std::move(Script::FromJson(maestro::Json::object()).value());
  }

  // Block the stop signals in every thread; one thread waits for them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  FakeLlmServer server(opts, std::move(script));
  auto port = server.Bind();
  if (!port.ok()) {
    std::cerr << "maestro-fakellm: " << port.status().ToString() << "\n";
    return 1;
  }
  std::cout << "listening " << opts.host << ":" << *port << std::endl;
  std::thread([&server, set] {
    int sig = 0;
    sigwait(&set, &sig);
    server.Stop();
  }).detach();
  server.Run();
  return 0;
}
