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
// Thread safety: one loop per job, on the job's worker thread (a delegate's
// sub-agent runs inside its parent's call). The deps are borrowed for the
// duration of RunMovement.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "context/compressor.h"
#include "context/task_context.h"
#include "core/cancel.h"
#include "core/env.h"
#include "core/json.h"
#include "engine/loop/auto_prompter.h"
#include "engine/loop/budget_step.h"
#include "engine/loop/movement_result.h"
#include "engine/loop/prompt_guard.h"
#include "engine/loop/watchdog.h"
#include "engine/piece/piece.h"
#include "engine/piece/piece_tools.h"
#include "engine/prompt/prompt_builder.h"
#include "llm/llm_client.h"
#include "sandbox/package_installer.h"
#include "store/store.h"
#include "telemetry/tracer.h"
#include "tools/dispatcher.h"

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

class HandoffStep;

// What one movement needs comes in three parts, by who shares it: the
// process's services and the job's scope are shared by the job's own loop
// and every delegate sub-agent it starts (delegate.h); each of those loops
// has its own LoopState. Pointers are borrowed, non-null unless noted.

// What the process provides, the same for every loop of the job.
struct LoopServices {
  llm::LlmClient* llm = nullptr;
  Store* store = nullptr;
  // Runs the regular calls (it holds the process's Env and tracer for them).
  const tools::Dispatcher* dispatcher = nullptr;
  context::ContextCompressor* compressor = nullptr;  // may be null: no compression
  // Runs approved package requests on re-entry; null: none configured.
  const tools::PackageInstaller* packages = nullptr;
  telemetry::Tracer* tracer = &telemetry::NoopTracer();  // spans (engine/loop/trace_spans.h)
  Env* env = Env::Default();  // files the loop writes (tools.json, prompt copies)
  DeltaFn on_delta;           // may be empty; called through EmitDelta
};

// What this job is: filled once where the job starts and never changed
// while it runs. Its tools::ToolScope part (task/job ids, workspace, policy,
// cancel, ledger, packages dir) is what every dispatch refers to, so a
// sub-agent's calls run under the same ids, cancel token and ledger.
struct JobScope : tools::ToolScope {
  LoopLimits limits;
  const BudgetContext* budget = nullptr;  // may be null: no budget check (budget_step.h)
  // The job's policy snapshot (auto_prompter.h); null: no Auto Prompter, and
  // the tool path is the one without it.
  const AutoPrompter* auto_prompter = nullptr;
};

// One loop's own: the conversation it runs, with its piece and tools, and
// what changes while it runs. A delegate sub-agent gets a fresh one (its own
// conversation, piece and tools file, no handoff, a fresh guard, a deeper
// depth, a longer call-key prefix).
struct LoopState {
  context::TaskContext* ctx = nullptr;  // the conversation + statistics
  const Piece* piece = nullptr;
  const PieceTools* piece_tools = nullptr;
  std::string tools_path = {};     // the loop's tools file: piece_tools->bytes
  HandoffStep* handoff = nullptr;  // may be null: no handoff, overflow aborts
  PromptGuardState guard = {};     // the loop's prompt guard state
  // The span new spans (engine/loop/trace_spans.h) and tool calls go under: the
  // job's span, inside RunMovement the movement's.
  telemetry::SpanContext trace_parent = {};
  int delegate_depth = 0;  // 0 = the job's own loop; n = a delegate sub-agent n levels down
  std::string delegate_call_id = {};  // the delegate call that started this loop; "" at depth 0
  // Prepended to the loop's call ids in the ledger (tools::DispatchContext).
  std::string call_key_prefix = {};
};

struct AgentLoopDeps {
  const LoopServices& services;
  const JobScope& scope;
  LoopState loop;

  // The context of this loop's regular calls: it refers to the job's scope.
  tools::DispatchContext Dispatch() const {
    return {scope, loop.call_key_prefix, loop.trace_parent};
  }
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
