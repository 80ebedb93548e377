#include "telemetry/genai.h"

namespace maestro::telemetry::genai {

Span StartToolSpan(Tracer& tracer, const SpanContext& parent, const std::string& tool,
                   const std::string& call_id) {
  if (!tracer.enabled() || !parent.valid()) return Span(parent);
  SpanStart s;
  s.name = "execute_tool " + tool;
  s.parent = parent;
  s.attributes = {{kOperation, std::string("execute_tool")},
                  {kToolName, tool},
                  {kToolCallId, call_id},
                  {kToolType, std::string(tool.rfind("mcp__", 0) == 0 ? "extension" : "function")}};
  return tracer.Start(std::move(s));
}

void EndToolSpan(Tracer& tracer, Span& span, bool is_error, const std::string& arguments,
                 const std::string& result) {
  if (!span.recording()) return;
  if (tracer.capture_content()) {
    span.SetAttribute(kToolArguments, CapContent(arguments));
    span.SetAttribute(kToolResult, CapContent(result));
  }
  if (is_error) {
    // The message is the tool's own text: content, so only with capture on.
    span.SetError("tool_error", tracer.capture_content() ? CapContent(result, 512) : "");
  }
  span.End();
}

}  // namespace maestro::telemetry::genai
