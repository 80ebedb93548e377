// Value types of the LLM client: what a chat-completion call takes and gives.
//
// The engine builds a ChatRequest that points at files (the piece's tools
// JSON and the conversation's current.jsonl) rather than holding messages;
// the client streams them to the server and returns a ChatResponse with the
// assembled answer and a LlmUsage record (cache figures included) that later
// becomes `cachedPromptTokens` on the LLM event. LlmEvent is what the client
// reports while a call runs (deltas for the UI stream, retries).
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/model_profile.h"
#include "core/status.h"

namespace maestro::llm {

// The profile a client is built from: core's ModelProfile, the type of the
// config's `llm:` and `llm_profiles.<name>:` (core/model_profile.h).
using maestro::ModelProfile;

// What to send. Files are read while the request streams; nothing here is
// proportional to the conversation size.
struct ChatRequest {
  std::string messages_path;  // current.jsonl: one OpenAI message object per line
  // When the writer knows it (context::MessageStore::current_known_bytes):
  // the first `messages_known_bytes` of messages_path are whole non-empty
  // lines without '\r', so the body's size needs no scan of the file. 0 =
  // measure by reading it.
  uint64_t messages_known_bytes = 0;
  std::string tools_path;  // JSON array of tool definitions; empty = no tools
  // The same array in memory, read instead of tools_path when not empty; it
  // must outlive the call (the engine's PieceTools::bytes, constant per job).
  std::string_view tools_json;
  Json params = Json::object();   // extra top-level fields: temperature, max_tokens, ...
  std::string request_json_path;  // if set, the body is also written here (seed 002)
  std::optional<bool> stream;     // overrides ModelProfile::stream
};

struct ToolCall {
  int index = 0;
  std::string id;
  std::string name;
  std::string arguments;  // JSON text as the model produced it (may be invalid)
};

struct LlmUsage {
  int64_t prompt_tokens = 0;  // whole prompt, cached part included
  int64_t cached_tokens = 0;  // served from the server's prompt cache
  // Of prompt_tokens, written to the cache by this call (Anthropic's
  // cache_creation_input_tokens; priced as LlmPrice::cache_write). 0 for
  // servers that cache implicitly.
  int64_t cache_write_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t ttft_ms = -1;   // start of the successful attempt to its first delta; -1 = none
  int64_t total_ms = 0;   // the whole Chat() call, retries and backoff included
  bool reported = false;  // the server sent usage or timings
  double CachedPct() const {
    return prompt_tokens > 0
               ? 100.0 * static_cast<double>(cached_tokens) / static_cast<double>(prompt_tokens)
               : 0.0;
  }
};

struct ChatResponse {
  std::string id;
  std::string model;
  std::string content;
  std::string reasoning;             // reasoning_content (Qwen3, DeepSeek, vLLM "reasoning")
  std::vector<ToolCall> tool_calls;  // ordered by index
  std::string finish_reason;         // "stop", "tool_calls", "length", ...
  LlmUsage usage;
};

// What the client reports while a call is in flight.
struct LlmEvent {
  enum class Kind {
    kText,       // `text` is a content delta
    kReasoning,  // `text` is a reasoning_content delta
    kToolCall,   // a tool-call fragment: `index`, maybe `tool_id`/`tool_name`, `text` = args
    kRetry,      // the attempt failed; deltas so far are void. `attempt`, `delay_ms`, `error`
  };
  Kind kind = Kind::kText;
  std::string text;
  int index = 0;
  std::string tool_id;
  std::string tool_name;
  int attempt = 0;
  int64_t delay_ms = 0;
  std::string error;
};
using LlmEventFn = std::function<void(const LlmEvent&)>;

enum class LlmErrorKind {
  kNone,
  kRetryable,              // 429, 5xx, connection error, stream cut (after retries ran out)
  kTerminal,               // 400/401/403/404 and other client errors
  kContextLengthExceeded,  // the prompt does not fit: the prompt guard must shrink it
  kCancelled,              // the CancelToken fired
};
std::string_view LlmErrorKindName(LlmErrorKind k);

// The outcome of LlmClient::Chat. `status` is OK exactly when error_kind is
// kNone. Status codes: kUnavailable (retryable kinds), kInvalidArgument
// (terminal), kResourceExhausted (context length), kCancelled.
struct [[nodiscard]] LlmCallResult {
  Status status;
  LlmErrorKind error_kind = LlmErrorKind::kNone;
  int http_status = 0;  // of the last attempt; 0 = no HTTP response
  int attempts = 0;
  ChatResponse response;  // valid when ok()
  bool ok() const { return status.ok(); }
};

}  // namespace maestro::llm
