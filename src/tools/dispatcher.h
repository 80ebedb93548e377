// Dispatcher: runs one assistant message's batch of regular tool calls
// (seed 000 §3 dispatchRegularToolCalls / executeRegularToolCall).
//
// Where it sits: the agent loop classifies the calls of an assistant message
// (control tools — complete, transition, park tools — are handled by the
// engine), then hands the regular ones here and appends the results to the
// conversation in the order the model made the calls.
//
// Per call: look the tool up → validate the arguments against its schema →
// authorize (policy ∪ grants) → ledger `started` → run with the tool's
// timeout as deadline and the job's cancel token → cap the output → ledger
// `finished`/`error`. Every failure on the way is an "Error: ..." result;
// nothing throws out of Run(). A call refused before it runs (unknown tool,
// bad arguments, no permission) is still recorded, as a lone `error` record.
//
// Parallelism: consecutive read-only calls run in parallel (up to
// max_parallel threads); a side-effecting call runs alone, after everything
// before it and before everything after it, so a read that follows a write
// in the batch sees the write. Results always come back in call order.
//
// Timeouts: RunCommand enforces its deadline by killing its process group;
// in-process tools (file tools, searches) check ctx.Expired() cooperatively.
//
// Thread safety: Run() may be called concurrently (one call per job).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "context/ledger.h"
#include "core/cancel.h"
#include "core/env.h"
#include "telemetry/tracer.h"
#include "tools/policy.h"
#include "tools/registry.h"

namespace maestro::tools {

// What one job is, as its tool calls see it. Filled once where the job
// starts (the engine's JobScope extends it) and shared, by reference, by the
// job's loop, every delegate sub-agent and every dispatch; nothing in it
// changes while the job runs.
struct ToolScope {
  std::string task_id;
  std::string job_id;
  std::string workspace_root;  // canonical
  ToolPolicy policy;
  CancelToken* cancel = nullptr;  // the job's token; may be null
  ToolLedger* ledger = nullptr;   // may be null (no record kept)
  std::string packages_dir;       // see ToolContext::packages_dir; "" = none
};

// One batch's context: the job's scope (referred to, never copied) and what
// the calling loop adds.
struct DispatchContext {
  // A scope alone: the job's own calls, no key prefix, no span.
  DispatchContext(const ToolScope& job, std::string key_prefix = {},
                  telemetry::SpanContext parent = {})
      : scope(&job), call_key_prefix(std::move(key_prefix)), trace_parent(parent) {}

  const ToolScope* scope;  // borrowed, non-null
  // Prepended to each call id in the IdempotencyKey: a delegate's sub-agent
  // shares the job's ledger, and its model's call ids ("call_1") would
  // otherwise collide with the parent's (e.g. "delegate:call_7/").
  std::string call_key_prefix;
  // Each call is an `execute_tool` span under `trace_parent` (the movement's
  // span); no tracer (DispatchServices) or an invalid parent: no span.
  telemetry::SpanContext trace_parent;
};

// What the process provides to every call: the same for all jobs.
struct DispatchServices {
  Env* env = Env::Default();            // handed to every tool (ToolContext::env)
  telemetry::Tracer* tracer = nullptr;  // null: no spans
};

class Dispatcher {
 public:
  Dispatcher(const ToolRegistry* registry, ToolAuthorizer authorizer,
             DispatchServices services = {}, size_t max_parallel = 4)
      : registry_(registry),
        authorizer_(authorizer),
        services_(services),
        max_parallel_(max_parallel ? max_parallel : 1) {}

  // One result per call, in call order; result[i].call_id == calls[i].id.
  std::vector<ToolResult> Run(const std::vector<ToolCall>& calls, const DispatchContext& ctx) const;

  // A single call through the whole pipeline.
  ToolResult RunOne(const ToolCall& call, const DispatchContext& ctx) const;

 private:
  ToolResult RunTraced(const ToolCall& call, const DispatchContext& ctx,
                       const std::string& traceparent) const;
  std::optional<ToolResult> Admit(const ToolCall& call, const DispatchContext& ctx,
                                  Permission* perm) const;
  bool IsReadOnly(const ToolCall& call) const;
  void RunParallel(const std::vector<ToolCall>& calls, size_t begin, size_t end,
                   const DispatchContext& ctx, std::vector<ToolResult>& out) const;

  const ToolRegistry* registry_;
  ToolAuthorizer authorizer_;
  DispatchServices services_;
  size_t max_parallel_;
};

}  // namespace maestro::tools
