// The GenAI semantic-convention vocabulary maestro's spans use
// (opentelemetry.io/docs/specs/semconv/gen-ai/): span names, attribute keys,
// and the tool span both the Dispatcher (regular tools, MCP tools) and the
// engine (control tools) record.
#pragma once

#include <string>

#include "telemetry/tracer.h"

namespace maestro::telemetry::genai {

inline constexpr const char* kOperation = "gen_ai.operation.name";
inline constexpr const char* kProvider = "gen_ai.provider.name";
inline constexpr const char* kRequestModel = "gen_ai.request.model";
inline constexpr const char* kResponseModel = "gen_ai.response.model";
inline constexpr const char* kResponseId = "gen_ai.response.id";
inline constexpr const char* kInputTokens = "gen_ai.usage.input_tokens";
inline constexpr const char* kOutputTokens = "gen_ai.usage.output_tokens";
inline constexpr const char* kCacheReadTokens = "gen_ai.usage.cache_read.input_tokens";
inline constexpr const char* kCacheCreationTokens = "gen_ai.usage.cache_creation.input_tokens";
inline constexpr const char* kConversationId = "gen_ai.conversation.id";
inline constexpr const char* kFinishReasons = "gen_ai.response.finish_reasons";
inline constexpr const char* kAgentName = "gen_ai.agent.name";
inline constexpr const char* kToolName = "gen_ai.tool.name";
inline constexpr const char* kToolCallId = "gen_ai.tool.call.id";
inline constexpr const char* kToolType = "gen_ai.tool.type";
inline constexpr const char* kToolArguments = "gen_ai.tool.call.arguments";
inline constexpr const char* kToolResult = "gen_ai.tool.call.result";
inline constexpr const char* kInputMessages = "gen_ai.input.messages";
inline constexpr const char* kOutputMessages = "gen_ai.output.messages";

// What one tool call's span says. `type` is "function" for maestro's own
// tools, "extension" for an MCP server's ("mcp__<server>__<tool>").
Span StartToolSpan(Tracer& tracer, const SpanContext& parent, const std::string& tool,
                   const std::string& call_id);
// Status and, with capture_content, the (capped) arguments and result.
void EndToolSpan(Tracer& tracer, Span& span, bool is_error, const std::string& arguments,
                 const std::string& result);

}  // namespace maestro::telemetry::genai
