// The agent loop of one movement (seed 000 §3): iterate LLM call -> tool
// calls until a control call, a park, or a guard ends the movement with a
// MovementResult.
//
// One iteration:
//   cancel / deadline check            -> ABORT (cancelled)
//   deliver pending interjections      (store -> user messages, then ack)
//   watchdog                           no progress (watchdog.h) -> a warning
//                                      user message, then ABORT watchdog
//   prompt guard                       prompt_guard.h: estimate, dedup what
//                                      is sent, seed 004 handoff request,
//                                      compress; still too big -> hand off
//                                      (handoff/trigger.h), else ABORT
//                                      context_overflow
//   budget                             budget_step.h: the call would pass the
//                                      task's budget -> park WAITING_HUMAN_BUDGET
//                                      (budget_exceeded), no call made
//   LLM call                           current.jsonl + the job's tools file,
//                                      deltas -> on_delta; usage -> llm.call
//                                      event + task statistics
//   text-only reply                    warning user message; over the limit
//                                      -> ABORT text_only_limit
//   loop guard                         the same batch of calls N times in a
//                                      row -> ABORT tool_loop
//   calls                              regular ones through the Auto
//                                      Prompter (policy_step.h: deny /
//                                      approve_once / instruct) and the
//                                      Dispatcher, control ones here; every
//                                      result is a tool message appended in
//                                      call order, then any policy
//                                      instruction as one user message
//   transition                         validated against the movement's
//                                      rules; invalid -> Error result, go on
//   complete                           MovementResultFromComplete
//   park tools                         CheckReentry: decided -> answer the
//                                      call; else CreateRequest + park sentinel
//   max_iterations                     -> ABORT
// Messages only ever get appended (the prompt-cache prefix stays intact).
//
// Thread safety: one loop per job, on the job's worker thread. The deps are
// borrowed for the duration of RunMovement.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "context/compressor.h"
#include "context/task_context.h"
#include "core/cancel.h"
#include "core/env.h"
#include "core/json.h"
#include "engine/auto_prompter.h"
#include "engine/budget_step.h"
#include "engine/movement_result.h"
#include "engine/piece.h"
#include "engine/piece_tools.h"
#include "engine/prompt/prompt_builder.h"
#include "engine/prompt_guard.h"
#include "engine/watchdog.h"
#include "llm/llm_client.h"
#include "store/store.h"
#include "telemetry/tracer.h"
#include "tools/dispatcher.h"
#include "tools/package_installer.h"

namespace maestro::engine {

// Live progress of a job: {type: text|reasoning|tool_call|tool_result|
// llm_retry|movement|interjection, ...}. Called on the job's thread.
using DeltaFn = std::function<void(const std::string& job_id, const Json& delta)>;

struct LoopLimits {
  int max_iterations = 60;       // per movement entry (Movement::max_iterations overrides)
  int text_only_limit = 3;       // text-only replies in a row before ABORT
  int identical_call_limit = 3;  // the same call batch this many times in a row -> ABORT
  int max_delegate_depth = 2;    // delegate nesting; a loop at this depth is not offered delegate
  WatchdogLimits watchdog;       // no-progress rules, per movement entry
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

// Everything one movement needs. Pointers are borrowed, non-null unless noted.
class HandoffStep;

struct AgentLoopDeps {
  llm::LlmClient* llm = nullptr;
  context::TaskContext* ctx = nullptr;               // the conversation + statistics
  context::ContextCompressor* compressor = nullptr;  // may be null: no compression
  Store* store = nullptr;
  const tools::Dispatcher* dispatcher = nullptr;
  tools::DispatchContext dispatch;  // task/job ids, workspace, policy, cancel, ledger
  const Piece* piece = nullptr;
  const PieceTools* piece_tools = nullptr;
  std::string tools_path;         // the job's tools file: tools->bytes
  CancelToken* cancel = nullptr;  // may be null
  // Runs approved package requests on re-entry; null: none configured.
  const tools::PackageInstaller* packages = nullptr;
  DeltaFn on_delta;  // may be empty
  LoopLimits limits;
  std::string task_id;
  std::string job_id;
  int delegate_depth = 0;          // 0 = the job's own loop; n = a delegate sub-agent n levels down
  HandoffStep* handoff = nullptr;  // may be null: no handoff, overflow aborts
  PromptGuardState guard;          // job-wide prompt guard state
  // Spans (engine/trace_spans.h): the tracer, and the span new ones go under
  // — the job's span, inside RunMovement the movement's.
  telemetry::Tracer* tracer = &telemetry::NoopTracer();
  telemetry::SpanContext trace_parent;
  const BudgetContext* budget = nullptr;  // may be null: no budget check (budget_step.h)
  // The job's policy snapshot (auto_prompter.h); null: no Auto Prompter, and
  // the tool path is the one without it.
  const AutoPrompter* auto_prompter = nullptr;
  Env* env = Env::Default();  // files the loop writes (tools.json, prompt copies)
};

// Runs `movement` until it ends. The movement's guidance is already in the
// conversation (system/final user message or a transition message).
MovementResult RunMovement(AgentLoopDeps& deps, const std::string& movement);

// Sends one live delta (text, tool call, movement, ...) to the job's watchers.
void EmitDelta(const AgentLoopDeps& deps, const Json& delta);

// Appends one message to the conversation (and thus current.jsonl).
Status AppendMessage(AgentLoopDeps& deps, const Json& message, const std::string& tool_name = {});
// Appends the guidance of `movement` (with the feedback of the movement
// before) and records, in the same archive line, that the conversation is
// now in it (a recovered job resumes there).
Status AppendMovementGuidance(AgentLoopDeps& deps, const std::string& movement,
                              const MovementFeedback& feedback = {});

// The user message the loop appends after a text-only reply.
std::string TextOnlyWarning(int count, int limit);

}  // namespace maestro::engine
