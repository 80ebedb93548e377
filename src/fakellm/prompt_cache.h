// The prompt-cache model of maestro-fakellm, after llama.cpp's llama-server.
//
// A request is rendered to one prompt string in the Qwen3 chat-template
// order: the system turn holds the system text and then the tools block
// ("# Tools ... <tools>{tool json per line}</tools> ..."), then every message
// as <|im_start|>role ... <|im_end|>, then the generation prompt. So a change
// to any tool keeps only the system-text prefix, and a changed system text
// keeps nothing.
//
// Tokenize() is a documented approximation of a BPE tokenizer: special tokens
// (<|im_start|>, <|im_end|>) are one token; letter runs are cut every 4 bytes;
// digit runs every 3; a run of identical whitespace is one token; any other
// byte is one token. It is deterministic and prefix-stable (an edit at byte k
// changes only tokens from the one containing k), which is all cache
// accounting needs. Tokens are 64-bit hashes of their text.
//
// PromptCache keeps N slots like llama-server: a request goes to the slot
// whose cached tokens share the longest common prefix with it, if that
// prefix is more than `similarity` of the slot's tokens
// (--slot-prompt-similarity); otherwise to the least recently used slot.
// It then reuses the common prefix minus one token (the last one is
// re-evaluated to get logits) and the slot keeps the new prompt plus the
// generated tokens.
//
// Thread safety: RenderPrompt/Tokenize are pure; PromptCache is internally
// synchronised.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/mutex.h"

namespace maestro::fakellm {

using Tokens = std::vector<uint64_t>;

// The Qwen3 prompt for an OpenAI chat-completions request body
// (`messages`, optional `tools`), ending with the generation prompt.
std::string RenderPrompt(const Json& request);

// How an assistant turn is rendered (used for generated text too, so the
// next request's history matches what the slot holds).
std::string RenderAssistantBody(const std::string& content, const Json& tool_calls);

Tokens Tokenize(std::string_view text);

struct CacheFigures {
  int slot = -1;
  int64_t prompt_tokens = 0;  // whole prompt
  int64_t cache_n = 0;        // reused from the slot
  int64_t prompt_n = 0;       // evaluated = prompt_tokens - cache_n
  double similarity = 0;      // of the chosen slot; 0 when picked by LRU
};

class PromptCache {
 public:
  PromptCache(int slots, double similarity_threshold);

  // Picks a slot for `prompt`, computes the reuse, and stores
  // prompt + generated in that slot.
  CacheFigures Process(const Tokens& prompt, const Tokens& generated);

 private:
  struct Slot {
    Tokens tokens;
    int64_t last_used = -1;
  };
  Mutex mu_;
  std::vector<Slot> slots_ GUARDED_BY(mu_);
  double threshold_;
  int64_t tick_ GUARDED_BY(mu_) = 0;
};

size_t CommonPrefix(const Tokens& a, const Tokens& b);

}  // namespace maestro::fakellm
