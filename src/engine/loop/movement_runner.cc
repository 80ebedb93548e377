#include "engine/loop/movement_runner.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <optional>

#include "context/token_estimate.h"
#include "core/crash_point.h"
#include "core/utf8.h"
#include "engine/loop/budget_step.h"
#include "engine/loop/comment_delivery.h"
#include "engine/loop/movement_calls.h"
#include "engine/loop/trace_spans.h"
#include "engine/prompt/attachment_context.h"
#include "engine/prompt/prompt_builder.h"
#include "engine/prompt/role_alternation.h"

namespace maestro::engine {
namespace {

// The request file sent while current.jsonl has adjacent user messages.
constexpr char kAlternatingFile[] = "alternating.jsonl";

MovementResult Abort(const std::string& movement, const char* reason, std::string details,
                     bool cancelled = false) {
  MovementResult r = AbortedMovement(movement, reason, std::move(details));
  r.cancelled = cancelled;
  return r;
}

bool Stopped(const AgentLoopDeps& d) {
  return (d.scope.cancel && d.scope.cancel->IsCancelled()) ||
         std::chrono::steady_clock::now() >= d.scope.limits.deadline;
}

MovementResult StopResult(const AgentLoopDeps& d, const std::string& movement) {
  if (d.scope.cancel && d.scope.cancel->IsCancelled())
    return Abort(movement, "cancelled", "cancelled", true);
  return Abort(movement, "deadline", "the job's deadline passed");
}

// Comments posted while the job runs become user messages here, at the
// iteration boundary (never inside an LLM call), tagged with their id, then
// are acknowledged (comment_delivery.h: a crash in between is settled at the
// next start, so each is delivered once).
Status DeliverInterjections(AgentLoopDeps& d) {
  auto pending = d.services.store->ListUndeliveredComments(d.scope.job_id);
  if (!pending.ok()) return pending.status();
  if (pending->empty()) return Status::Ok();
  // Comments posted together are one user message (roles alternate: seed
  // 000 §3.4), each in the text it would have had alone.
  std::string text;
  for (const Comment& c : *pending) {
    if (!text.empty()) text += "\n\n";
    text += "Message from the user while you work:\n" + DeliveredCommentText(c);
  }
  MAESTRO_RETURN_IF_ERROR(AppendMessage(d, UserMessage(text)));
  for (const Comment& c : *pending) {
    EmitDelta(d, {{"type", "interjection"}, {"comment_id", c.id}, {"text", c.body}});
  }
  CrashPoint("interjection.appended");
  return AckDelivered(*d.services.store, *pending);
}

// Files attached while the job runs (with a comment, or ones the seed of a
// handoff continuation did not list) follow the interjections, in one user
// message (engine/prompt/attachment_context.h).
Status DeliverAttachments(AgentLoopDeps& d) {
  MAESTRO_ASSIGN_OR_RETURN(
      TakenAttachments taken,
      TakeAttachments(*d.services.store, *d.services.env, d.scope.task_id, d.scope.workspace_root,
                      d.services.llm->profile().vision));
  if (taken.rows.empty()) return Status::Ok();
  MAESTRO_RETURN_IF_ERROR(AppendMessage(d, AttachmentsArrivedMessage(taken.files)));
  return AckAttachments(*d.services.store, taken.rows);
}

// Roles alternate in every request (role_alternation.h): while the live
// conversation holds two user messages in a row, the request is an
// alternating copy of what the guard chose to send.
Status SendAlternating(AgentLoopDeps& d, llm::ChatRequest& req) {
  if (!d.loop.ctx->messages().has_adjacent_user_messages()) return Status::Ok();
  std::string out = d.loop.ctx->dir() + "/" + kAlternatingFile;
  MAESTRO_ASSIGN_OR_RETURN(uint64_t bytes,
                           WriteAlternatingCopy(d.loop.ctx->env(), req.messages_path, out));
  req.messages_path = std::move(out);
  // Vouched for only when the source was (its lines copied byte for byte).
  req.messages_known_bytes = req.messages_known_bytes > 0 ? bytes : 0;
  return Status::Ok();
}

int64_t ToolsTokens(const AgentLoopDeps& d) {
  return context::EstimateToolsTokens(d.loop.piece_tools->bytes);
}

void EmitLlmEvent(AgentLoopDeps& d, const llm::LlmEvent& e) {
  switch (e.kind) {
    case llm::LlmEvent::Kind::kText:
      EmitDelta(d, {{"type", "text"}, {"text", e.text}});
      break;
    case llm::LlmEvent::Kind::kReasoning:
      EmitDelta(d, {{"type", "reasoning"}, {"text", e.text}});
      break;
    case llm::LlmEvent::Kind::kToolCall:
      EmitDelta(d, {{"type", "tool_call"},
                    {"index", e.index},
                    {"id", e.tool_id},
                    {"name", e.tool_name},
                    {"arguments", e.text}});
      break;
    case llm::LlmEvent::Kind::kRetry:
      EmitDelta(d, {{"type", "llm_retry"},
                    {"attempt", e.attempt},
                    {"delay_ms", e.delay_ms},
                    {"error", e.error}});
      break;
  }
}

void RecordUsage(AgentLoopDeps& d, const std::string& movement, int iteration,
                 const llm::LlmUsage& u) {
  if (u.reported) {
    d.loop.ctx->messages().ObserveUsage(ObservedPromptTokens(d, u.prompt_tokens), ToolsTokens(d));
  }
  Event ev;
  ev.task_id = d.scope.task_id;
  ev.job_id = d.scope.job_id;
  ev.type = "llm.call";
  ev.payload = {{"movement", movement},
                {"iteration", iteration},
                {"promptTokens", u.prompt_tokens},
                {"cachedPromptTokens", u.cached_tokens},
                {"cacheWritePromptTokens", u.cache_write_tokens},
                {"completionTokens", u.completion_tokens},
                {"ttftMs", u.ttft_ms},
                {"totalMs", u.total_ms}};
  if (Status st = d.loop.ctx->RecordLlmCall(u.prompt_tokens, u.completion_tokens, &ev); !st.ok()) {
    spdlog::warn("job {}: llm.call event and task statistics: {}", d.scope.job_id, st.ToString());
  }
}

Json AssistantMessage(llm::ChatResponse& resp, const std::string& movement, int iteration) {
  Json msg = {{"role", "assistant"}};
  msg["content"] =
      resp.content.empty() && !resp.tool_calls.empty() ? Json(nullptr) : Json(resp.content);
  if (resp.tool_calls.empty()) return msg;
  Json calls = Json::array();
  for (size_t i = 0; i < resp.tool_calls.size(); ++i) {
    llm::ToolCall& c = resp.tool_calls[i];
    // Servers that omit ids still need unique ones for the results.
    if (c.id.empty()) c.id = fmt::format("call_{}_{}_{}", movement, iteration, i);
    calls.push_back({{"id", c.id},
                     {"type", "function"},
                     {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
  }
  msg["tool_calls"] = std::move(calls);
  return msg;
}

// The task's tool ledger (tools.jsonl, seed 002) and its tool_call_count:
// the facts an engine-written handoff is built from. Best effort. When the
// Dispatcher keeps the ToolLedger (every job run by PieceExecutor) it has
// already recorded regular calls in tools.jsonl; one writer per file, so only
// the statistic is counted here.
void RecordToolCall(AgentLoopDeps& d, const llm::ToolCall& call, const std::string& content,
                    bool is_error, bool counted) {
  if (d.scope.ledger != nullptr) {
    if (counted) return;  // counted with its tool.call event (movement_calls.cc)
    TaskStatsDelta stats;
    stats.tool_calls = 1;
    if (Status st = d.services.store->AddTaskStats(d.scope.task_id, stats); !st.ok()) {
      spdlog::warn("job {}: task statistics: {}", d.scope.job_id, st.ToString());
    }
    return;
  }
  context::ToolCallRecord rec;
  rec.job_id = d.scope.job_id;
  rec.call_id = call.id;
  rec.tool = call.name;
  Json args = Json::parse(call.arguments, nullptr, /*allow_exceptions=*/false);
  if (args.is_object()) rec.args = std::move(args);
  rec.status = is_error ? "error" : "success";
  (is_error ? rec.error : rec.result) = std::string(Utf8Prefix(content, 2000));
  if (auto r = d.loop.ctx->RecordToolCall(std::move(rec)); !r.ok()) {
    spdlog::warn("job {}: tool ledger: {}", d.scope.job_id, r.status().ToString());
  }
}

// Appends the results of `calls` as tool messages, in call order.
Status AppendResults(AgentLoopDeps& d, const std::vector<llm::ToolCall>& calls,
                     const CallResults& results) {
  for (size_t i = 0; i < calls.size(); ++i) {
    Json msg = {{"role", "tool"}, {"tool_call_id", calls[i].id}, {"content", results.contents[i]}};
    MAESTRO_RETURN_IF_ERROR(AppendMessage(d, msg, calls[i].name));
    RecordToolCall(d, calls[i], results.contents[i], results.is_error[i],
                   i < results.counted.size() && results.counted[i]);
    EmitDelta(d, {{"type", "tool_result"},
                  {"id", calls[i].id},
                  {"name", calls[i].name},
                  {"is_error", static_cast<bool>(results.is_error[i])},
                  {"content", std::string(Utf8Prefix(results.contents[i], 2000))}});
  }
  return Status::Ok();
}

// Guard state carried across iterations of one movement (the deps'
// LoopState outlives the movement).
struct MovementGuards {
  int text_only = 0;
  std::string last_signature;
  int same_signature = 0;
  bool compressed_for_overflow = false;
};

int64_t SteadyNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::vector<WatchdogError> WatchdogErrors(const std::vector<llm::ToolCall>& calls,
                                          const CallResults& results) {
  std::vector<WatchdogError> errors;
  for (size_t i = 0; i < calls.size() && i < results.is_error.size(); ++i) {
    if (results.is_error[i]) errors.push_back({calls[i].name, results.contents[i]});
  }
  return errors;
}

// The watchdog's verdict at the iteration boundary: a warning is appended as
// a user message (never inserted: the cached prefix stays); an abort ends
// the movement.
std::optional<MovementResult> WatchdogStep(AgentLoopDeps& d, const std::string& movement,
                                           Watchdog& wd) {
  WatchdogVerdict v = wd.Check(SteadyNowMs());
  if (v.kind == WatchdogVerdict::Kind::kOk) return std::nullopt;
  EmitDelta(d, {{"type", "watchdog"},
                {"rule", v.rule},
                {"abort", v.kind == WatchdogVerdict::Kind::kAbort},
                {"message", v.message}});
  if (v.kind == WatchdogVerdict::Kind::kAbort) return Abort(movement, kAbortWatchdog, v.message);
  spdlog::info("job {}: watchdog warning ({}) in movement {}", d.scope.job_id, v.rule, movement);
  if (Status s = AppendMessage(d, UserMessage(v.message)); !s.ok()) {
    return Abort(movement, kAbortLlmError, s.ToString());
  }
  return std::nullopt;
}

// A failed LLM call ends the movement, except a context-length error, which
// goes through the prompt guard once (hand off, or compress and retry:
// nullopt).
std::optional<MovementResult> OnLlmFailure(AgentLoopDeps& d, const std::string& movement,
                                           const llm::LlmCallResult& call, MovementGuards& st) {
  if (call.error_kind == llm::LlmErrorKind::kCancelled || Stopped(d)) {
    return StopResult(d, movement);
  }
  if (call.error_kind != llm::LlmErrorKind::kContextLengthExceeded) {
    return Abort(movement, kAbortLlmError, call.status.ToString());
  }
  if (!st.compressed_for_overflow) {
    st.compressed_for_overflow = true;
    GuardOutcome g = GuardPrompt(d, movement, /*server_overflow=*/true);
    if (g.end) return g.end;  // handed off, or nothing could be done
    return std::nullopt;
  }
  return Abort(movement, kAbortContextOverflow, call.status.ToString());
}

}  // namespace

void EmitDelta(const AgentLoopDeps& d, const Json& delta) {
  if (!d.services.on_delta) return;
  // A sub-agent's own deltas carry its tag; ones already tagged come from a
  // deeper sub-agent and keep theirs.
  if (d.loop.delegate_depth == 0 || delta.contains("delegate")) {
    return d.services.on_delta(d.scope.job_id, delta);
  }
  Json tagged = delta;
  tagged["delegate"] = {{"call_id", d.loop.delegate_call_id}, {"depth", d.loop.delegate_depth}};
  d.services.on_delta(d.scope.job_id, tagged);
}

std::string TextOnlyWarning(int count, int limit) {
  return fmt::format(
      "Your last reply had no tool call ({} of {} allowed in a row). Work only through tool calls: "
      "use the tools, `transition` to move on, or `complete` to finish (status success, "
      "needs_user_input or error).",
      count, limit);
}

Status AppendMessage(AgentLoopDeps& d, const Json& message, const std::string& tool_name) {
  auto seq = d.loop.ctx->messages().AddMessage(message, d.scope.job_id, tool_name);
  return seq.ok() ? Status::Ok() : seq.status();
}

Status AppendMovementGuidance(AgentLoopDeps& d, const std::string& movement,
                              const MovementFeedback& feedback) {
  auto seq = d.loop.ctx->messages().AddMessage(
      TransitionGuidanceMessage(*d.loop.piece, movement, feedback), d.scope.job_id, {}, movement);
  if (!seq.ok()) return seq.status();
  CrashPoint("movement.entered");
  return Status::Ok();
}

namespace {
MovementResult RunMovementLoop(AgentLoopDeps& d, const std::string& movement) {
  const Movement* mv = d.loop.piece->FindMovement(movement);
  int max_iterations =
      mv && mv->max_iterations > 0 ? mv->max_iterations : d.scope.limits.max_iterations;
  EmitDelta(d, {{"type", "movement"}, {"movement", movement}});
  MovementGuards st;
  Watchdog wd(d.scope.limits.watchdog, SteadyNowMs());
  for (int iteration = 1; iteration <= max_iterations; ++iteration) {
    if (Stopped(d)) return StopResult(d, movement);
    // Interjections are for the job's own agent, never a delegate sub-agent.
    if (Status s = d.loop.delegate_depth ? Status::Ok() : DeliverInterjections(d); !s.ok()) {
      return Abort(movement, kAbortLlmError, "interjections: " + s.ToString());
    }
    if (Status s = d.loop.delegate_depth ? Status::Ok() : DeliverAttachments(d); !s.ok()) {
      return Abort(movement, kAbortLlmError, "attachments: " + s.ToString());
    }
    if (auto end = WatchdogStep(d, movement, wd)) return *end;
    GuardOutcome guard = GuardPrompt(d, movement, /*server_overflow=*/false);
    if (guard.end) return *guard.end;
    if (auto parked = BudgetStep(d, movement, guard.estimate)) return *parked;
    llm::ChatRequest req;
    req.messages_path = guard.messages_path;
    req.messages_known_bytes = guard.messages_known_bytes;
    if (Status s = SendAlternating(d, req); !s.ok()) {
      return Abort(movement, kAbortLlmError, "alternating copy: " + s.ToString());
    }
    req.tools_path = d.loop.tools_path;
    if (d.loop.piece_tools)
      req.tools_json = d.loop.piece_tools->bytes;  // tools.json's bytes, no file read
    // Seed 002's transient request.json, when configured (context_config.h).
    if (d.loop.ctx->config().request_json && d.loop.delegate_depth == 0) {
      req.request_json_path = d.loop.ctx->request_json_path();
    }
    telemetry::Span chat = StartChatSpan(d, req);
    llm::LlmCallResult call = d.services.llm->Chat(
        req, [&](const llm::LlmEvent& e) { EmitLlmEvent(d, e); }, d.scope.cancel);
    RecordChatEnd(d, chat, call);
    chat.End();
    if (!call.ok()) {
      std::optional<MovementResult> failed = OnLlmFailure(d, movement, call, st);
      if (failed) return *failed;
      --iteration;  // the same iteration again, on the compressed prompt
      continue;
    }
    RecordUsage(d, movement, iteration, call.response.usage);
    llm::ChatResponse& resp = call.response;
    if (Status s = AppendMessage(d, AssistantMessage(resp, movement, iteration)); !s.ok()) {
      return Abort(movement, kAbortLlmError, s.ToString());
    }
    if (resp.tool_calls.empty()) {
      if (++st.text_only >= d.scope.limits.text_only_limit) {
        return Abort(movement, kAbortTextOnlyLimit,
                     fmt::format("{} replies in a row without a tool call", st.text_only));
      }
      wd.RecordNoCalls();
      (void)AppendMessage(
          d, UserMessage(TextOnlyWarning(st.text_only, d.scope.limits.text_only_limit)));
      continue;
    }
    st.text_only = 0;
    std::string sig = CallBatchSignature(resp.tool_calls);
    st.same_signature = sig == st.last_signature ? st.same_signature + 1 : 1;
    st.last_signature = std::move(sig);
    if (st.same_signature >= d.scope.limits.identical_call_limit) {
      return Abort(
          movement, kAbortToolLoop,
          fmt::format("the same tool calls were made {} times in a row", st.same_signature));
    }
    CallResults results = HandleToolCalls(d, movement, resp.tool_calls);
    CrashPoint("tool.finished");
    if (Status s = AppendResults(d, resp.tool_calls, results); !s.ok()) {
      return Abort(movement, kAbortLlmError, s.ToString());
    }
    if (!results.instructions.empty()) {
      std::string text;
      for (const std::string& i : results.instructions) text += (text.empty() ? "" : "\n") + i;
      if (Status s = AppendMessage(d, UserMessage(text)); !s.ok()) {
        return Abort(movement, kAbortLlmError, s.ToString());
      }
    }
    wd.Record(st.last_signature, WatchdogErrors(resp.tool_calls, results));
    if (results.settled) return *results.settled;
  }
  return Abort(movement, kAbortMaxIterations,
               fmt::format("movement '{}' used its {} iterations", movement, max_iterations));
}
}  // namespace

// The loop inside a `{movement}` span: chat and tool spans go under it.
MovementResult RunMovement(AgentLoopDeps& d, const std::string& movement) {
  telemetry::Span span = StartMovementSpan(d, movement);
  const telemetry::SpanContext outer = d.loop.trace_parent;
  d.loop.trace_parent = span.context();
  MovementResult r = RunMovementLoop(d, movement);
  d.loop.trace_parent = outer;
  RecordMovementEnd(span, r);
  return r;
}

}  // namespace maestro::engine
