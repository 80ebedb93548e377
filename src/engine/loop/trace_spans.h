// The engine's spans (docs/ARCHITECTURE.md "Telemetry"): where a job's trace
// starts and what each span says. PieceExecutor opens the job span, the agent
// loop a span per movement run and per LLM call; tool spans are the
// Dispatcher's (regular and MCP tools) and HandleToolCalls' (control tools).
//
//   invoke_agent {piece}        one run of a job (root; the task's trace id)
//     {movement}                one RunMovement
//       chat {model}            one LlmClient::Chat
//       execute_tool {tool}     one tool call
//
// Every job of a task is in the trace TraceIdForTask(task id). Each run's
// job span is a root of it (a job is re-run after a park, a retry or a
// crash, possibly by another process, so no span stays open across runs);
// its id is derived from (job id, fencing token), so a resumed run links to
// the span of the run before it without storing anything.
//
// With the no-op tracer every function here returns an empty Span and
// builds nothing.
#pragma once

#include <string>

#include "engine/loop/movement_runner.h"
#include "llm/llm_client.h"
#include "store/store.h"
#include "telemetry/tracer.h"

namespace maestro::engine {

telemetry::Span StartJobSpan(telemetry::Tracer& tracer, const Task& task, const Job& job,
                             const std::string& piece);
// The park / resume events and the end status of a job span.
void RecordJobEnd(telemetry::Span& span, const PieceRunResult& r);
void RecordJobResume(telemetry::Span& span, const std::string& movement);

telemetry::Span StartMovementSpan(AgentLoopDeps& d, const std::string& movement);
void RecordMovementEnd(telemetry::Span& span, const MovementResult& r);

telemetry::Span StartChatSpan(AgentLoopDeps& d, const llm::ChatRequest& req);
void RecordChatEnd(AgentLoopDeps& d, telemetry::Span& span, const llm::LlmCallResult& call);

}  // namespace maestro::engine
