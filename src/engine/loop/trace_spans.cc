#include "engine/loop/trace_spans.h"

#include <fstream>
#include <iterator>

#include "telemetry/genai.h"

namespace maestro::engine {
namespace gen = telemetry::genai;
namespace {

// The span of one run of `job` (its claim's fencing token counts the runs).
telemetry::SpanId RunSpanId(const std::string& job_id, int64_t fencing_token) {
  return telemetry::SpanIdFor(job_id + ":" + std::to_string(fencing_token));
}

std::string ReadCapped(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::string text;
  char buf[8192];
  while (f && text.size() < 64 * 1024) {
    f.read(buf, sizeof buf);
    text.append(buf, static_cast<size_t>(f.gcount()));
  }
  return text;
}

// current.jsonl (one message per line) as the JSON array
// gen_ai.input.messages holds, capped.
std::string MessagesArray(const std::string& path) {
  std::string lines = ReadCapped(path), out = "[";
  size_t start = 0;
  while (start < lines.size()) {
    size_t end = lines.find('\n', start);
    if (end == std::string::npos) end = lines.size();
    Json m = Json::parse(lines.substr(start, end - start), nullptr, false);
    if (!m.is_discarded()) out += (out.size() > 1 ? "," : "") + m.dump();
    start = end + 1;
  }
  return telemetry::CapContent(out + "]");
}

}  // namespace

telemetry::Span StartJobSpan(telemetry::Tracer& tracer, const Task& task, const Job& job,
                             const std::string& piece) {
  if (!tracer.enabled()) return {};
  telemetry::SpanStart s;
  s.name = "invoke_agent " + piece;
  s.trace_id = telemetry::TraceIdForTask(task.id);
  s.span_id = RunSpanId(job.id, job.fencing_token);
  s.attributes = {{gen::kOperation, std::string("invoke_agent")},
                  {gen::kAgentName, piece},
                  {gen::kConversationId, task.id},
                  {"maestro.task.id", task.id},
                  {"maestro.job.id", job.id},
                  {"maestro.job.attempt", static_cast<int64_t>(job.attempt)}};
  if (!job.profile.empty()) s.attributes.emplace_back("maestro.profile", job.profile);
  const telemetry::TraceId trace = *s.trace_id;
  if (job.fencing_token > 1) {  // the run before this one, of the same job
    s.links.push_back({{trace, RunSpanId(job.id, job.fencing_token - 1), true},
                       {{"maestro.link", std::string("previous_run")}}});
  }
  return tracer.Start(std::move(s));
}

void RecordJobResume(telemetry::Span& span, const std::string& movement) {
  span.AddEvent("resume", {{"maestro.movement", movement}});
}

void RecordJobEnd(telemetry::Span& span, const PieceRunResult& r) {
  if (!span.recording()) return;
  span.SetAttribute("maestro.job.outcome", std::string(PieceRunStatusName(r.status)));
  span.SetAttribute("maestro.movement", r.last_movement);
  switch (r.status) {
    case PieceRunStatus::kWaitingHuman:
    case PieceRunStatus::kWaitingSubtasks:
      span.AddEvent("park", {{"maestro.wait_reason",
                              r.wait_reason.empty() && r.status == PieceRunStatus::kWaitingSubtasks
                                  ? std::string("subtasks")
                                  : r.wait_reason},
                             {"maestro.resume_movement", r.resume_movement}});
      span.SetOk();
      break;
    case PieceRunStatus::kCompleted:
      span.SetOk();
      break;
    case PieceRunStatus::kAborted:
    case PieceRunStatus::kError:
    case PieceRunStatus::kCancelled:
      span.SetError(std::string(PieceRunStatusName(r.status)), r.reason);
      break;
  }
}

telemetry::Span StartMovementSpan(AgentLoopDeps& d, const std::string& movement) {
  if (!d.services.tracer->enabled() || !d.loop.trace_parent.valid())
    return telemetry::Span(d.loop.trace_parent);
  telemetry::SpanStart s;
  s.name = movement;
  s.parent = d.loop.trace_parent;
  s.attributes = {{"maestro.movement", movement},
                  {gen::kAgentName, d.loop.piece->name},
                  {gen::kConversationId, d.scope.task_id}};
  if (d.loop.delegate_depth > 0) {
    s.attributes.emplace_back("maestro.delegate_depth",
                              static_cast<int64_t>(d.loop.delegate_depth));
  }
  return d.services.tracer->Start(std::move(s));
}

void RecordMovementEnd(telemetry::Span& span, const MovementResult& r) {
  if (!span.recording()) return;
  if (r.next) span.SetAttribute("maestro.movement.next", *r.next);
  if (!r.abort_reason.empty()) {
    span.SetError(r.abort_reason, r.abort_reason);
  } else {
    span.SetOk();
  }
}

telemetry::Span StartChatSpan(AgentLoopDeps& d, const llm::ChatRequest& req) {
  if (!d.services.tracer->enabled() || !d.loop.trace_parent.valid())
    return telemetry::Span(d.loop.trace_parent);
  const llm::ModelProfile& p = d.services.llm->profile();
  telemetry::SpanStart s;
  s.name = "chat " + p.model;
  s.kind = telemetry::SpanKind::kClient;
  s.parent = d.loop.trace_parent;
  // The profile's wire format names the provider (llm/wire.h).
  s.attributes = {{gen::kOperation, std::string("chat")},
                  {gen::kProvider, std::string(llm::ProviderName(p))},
                  {gen::kRequestModel, p.model},
                  {gen::kConversationId, d.scope.task_id},
                  {"maestro.profile", p.name}};
  if (d.services.tracer->capture_content()) {
    s.attributes.emplace_back(gen::kInputMessages, MessagesArray(req.messages_path));
  }
  return d.services.tracer->Start(std::move(s));
}

void RecordChatEnd(AgentLoopDeps& d, telemetry::Span& span, const llm::LlmCallResult& call) {
  if (!span.recording()) return;
  if (!call.ok()) {
    span.SetError(std::string(llm::LlmErrorKindName(call.error_kind)), call.status.ToString());
    return;
  }
  const llm::ChatResponse& r = call.response;
  span.SetAttribute(gen::kInputTokens, r.usage.prompt_tokens);
  span.SetAttribute(gen::kOutputTokens, r.usage.completion_tokens);
  span.SetAttribute(gen::kCacheReadTokens, r.usage.cached_tokens);
  if (r.usage.cache_write_tokens > 0) {
    span.SetAttribute(gen::kCacheCreationTokens, r.usage.cache_write_tokens);
  }
  if (!r.model.empty()) span.SetAttribute(gen::kResponseModel, r.model);
  if (!r.id.empty()) span.SetAttribute(gen::kResponseId, r.id);
  if (!r.finish_reason.empty()) {
    span.SetAttribute(gen::kFinishReasons, std::vector<std::string>{r.finish_reason});
  }
  if (d.services.tracer->capture_content()) {
    Json msg = {{"role", "assistant"}, {"content", r.content}};
    Json calls = Json::array();
    for (const auto& c : r.tool_calls) {
      calls.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
    }
    if (!calls.empty()) msg["tool_calls"] = std::move(calls);
    span.SetAttribute(gen::kOutputMessages, telemetry::CapContent(Json::array({msg}).dump()));
  }
  span.SetOk();
}

}  // namespace maestro::engine
