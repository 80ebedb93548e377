// The Gemini API (generateContent) as a WireFormat (issue 50; wire.h).
//
// Request: POST {base_url}/models/{model}:generateContent, or
// :streamGenerateContent?alt=sse when streaming, with `x-goog-api-key`. The
// engine's OpenAI-shaped conversation becomes Gemini's: the system message
// `systemInstruction`, user turns role "user", assistant turns role "model"
// with text and `functionCall` parts (arguments parsed into `args`, the
// call's id as `id`), tool results `functionResponse` parts (name looked up
// from the calls of the assistant turn before them, `response:
// {result: ...}`) in one user turn, image parts `inlineData`; the tools
// array one `functionDeclarations` tool (parameters as given); params
// max_tokens / temperature / top_p / stop into `generationConfig`,
// tool_choice into `toolConfig.functionCallingConfig` (AUTO / ANY with
// allowedFunctionNames).
//
// Caching: Gemini's implicit cache reuses a repeated request prefix with no
// markers, which maestro's byte-stable prefix (system, tools, replayed turns)
// gives; usageMetadata.cachedContentTokenCount is the cache read.
//
// Reply: SSE `data:` events each a GenerateContentResponse (candidates[0]
// .content.parts: text, thought text, functionCall; finishReason;
// usageMetadata: promptTokenCount, cachedContentTokenCount,
// candidatesTokenCount, thoughtsTokenCount), or one such JSON object.
// finishReason STOP -> "stop" ("tool_calls" when the turn has calls),
// MAX_TOKENS -> "length"; SAFETY and the like -> "stop" with the reason
// kept. An error object in the stream is a retryable stream error when its
// status is RESOURCE_EXHAUSTED / UNAVAILABLE / INTERNAL.
//
// Errors: 429 RESOURCE_EXHAUSTED, 500, 503 UNAVAILABLE, 504 retryable;
// "exceeds the maximum number of tokens" is the context-length error.
//
// Thread safety: see wire.h.
#pragma once

#include <memory>

#include "llm/translated_body.h"
#include "llm/wire.h"

namespace maestro::llm {

std::unique_ptr<WireFormat> NewGeminiWire();

// Exposed for tests.
std::unique_ptr<MessageTranslator> NewGeminiTranslator(const ModelProfile& p,
                                                       const RequestBodySpec& spec, Json tools);
std::unique_ptr<ReplyReader> NewGeminiReader(LlmEventFn on_delta);

}  // namespace maestro::llm
