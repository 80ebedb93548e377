#include "tools/dispatcher.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

#include "core/output_cap.h"
#include "core/utf8.h"
#include "telemetry/genai.h"
#include "tools/schema.h"

namespace maestro::tools {

namespace {

ToolResult WithId(ToolResult r, const std::string& id) {
  r.call_id = id;
  return r;
}

}  // namespace

bool Dispatcher::IsReadOnly(const ToolCall& call) const {
  const ToolSpec* spec = registry_->Find(call.name);
  return spec == nullptr || spec->read_only;  // an unknown tool only yields an error
}

// Everything that may refuse a call before it runs: lookup, schema,
// permission, cancel. Returns the refusal, or nullopt and sets *perm.
std::optional<ToolResult> Dispatcher::Admit(const ToolCall& call, const DispatchContext& ctx,
                                            Permission* perm) const {
  const ToolSpec* spec = registry_->Find(call.name);
  if (spec == nullptr) {
    std::string near = NearestWord(call.name, registry_->Names());
    return ToolResult::Error(fmt::format("unknown tool '{}'{}", call.name,
                                         near.empty() ? "" : "; did you mean '" + near + "'?"));
  }
  if (registry_->Handler(call.name) == nullptr) {
    return ToolResult::Error(call.name + " is a control tool; the engine handles it");
  }
  if (Status v = ValidateArgs(spec->parameters, call.arguments); !v.ok()) {
    return ToolResult::Error(fmt::format("invalid arguments for {}: {}", call.name, v.message()));
  }
  auto p = authorizer_.Authorize(ctx.scope->policy, ctx.scope->task_id, *spec, call.arguments);
  if (!p.ok()) return ToolResult::Error("permission check failed: " + p.status().message());
  if (!p->allowed) return ToolResult{call.id, p->denial, true, 0};
  if (ctx.scope->cancel && ctx.scope->cancel->IsCancelled()) {
    return ToolResult::Error("cancelled before it ran");
  }
  *perm = std::move(p).value();
  return std::nullopt;
}

ToolResult Dispatcher::RunOne(const ToolCall& call, const DispatchContext& ctx) const {
  if (services_.tracer == nullptr) return RunTraced(call, ctx, "");
  telemetry::Span span =
      telemetry::genai::StartToolSpan(*services_.tracer, ctx.trace_parent, call.name, call.id);
  ToolResult r = RunTraced(call, ctx, span.recording() ? span.context().Traceparent() : "");
  const bool content = services_.tracer->capture_content();
  telemetry::genai::EndToolSpan(*services_.tracer, span, r.is_error,
                                content ? call.arguments.dump() : "", content ? r.content : "");
  return r;
}

ToolResult Dispatcher::RunTraced(const ToolCall& call, const DispatchContext& ctx,
                                 const std::string& traceparent) const {
  const ToolScope& job = *ctx.scope;
  const IdempotencyKey key{job.task_id, job.job_id, ctx.call_key_prefix + call.id};
  Permission perm;
  if (auto refused = Admit(call, ctx, &perm)) {
    refused->call_id = call.id;
    // Audit only: a refused call never ran, so it is recorded closed
    // (`error` without `started`) and recovery never looks at it.
    if (job.ledger) job.ledger->Finished(key, call.name, true, 0, *refused).IgnoreError();
    return *refused;
  }
  const ToolSpec& spec = *registry_->Find(call.name);
  ToolContext tctx;
  tctx.workspace_root = job.workspace_root;
  tctx.network_allowed = perm.network;
  tctx.key = key;
  tctx.cancel = job.cancel;
  tctx.packages_dir = job.packages_dir;
  tctx.traceparent = traceparent;
  tctx.env = services_.env;
  const auto start = std::chrono::steady_clock::now();
  tctx.deadline = start + spec.timeout;
  if (job.ledger) {
    // No record, no side effect: a call we could not log is not run.
    if (Status s = job.ledger->Started(key, spec.name, call.arguments, spec.read_only); !s.ok()) {
      return WithId(ToolResult::Error("cannot record the call: " + s.message()), call.id);
    }
  }
  ToolResult r;
  try {
    r = (*registry_->Handler(call.name))(call.arguments, tctx);
  } catch (const std::exception& e) {
    r = ToolResult::Error(std::string("internal error: ") + e.what());
  }
  // Tool output is data: cut to the cap, then made valid UTF-8 before it
  // reaches the ledger, the conversation or the job stream.
  r.content = ValidUtf8(CapOutput(r.content, spec.output_cap_bytes));
  r.call_id = call.id;
  const int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::steady_clock::now() - start)
                         .count();
  r.duration_ms = ms;
  if (job.ledger) job.ledger->Finished(key, spec.name, spec.read_only, ms, r).IgnoreError();
  return r;
}

void Dispatcher::RunParallel(const std::vector<ToolCall>& calls, size_t begin, size_t end,
                             const DispatchContext& ctx, std::vector<ToolResult>& out) const {
  std::atomic<size_t> next{begin};
  auto worker = [&] {
    for (size_t i = next++; i < end; i = next++) out[i] = RunOne(calls[i], ctx);
  };
  const size_t n = std::min(max_parallel_, end - begin);
  std::vector<std::thread> threads;
  for (size_t t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();  // the calling thread takes a share too
  for (auto& t : threads) t.join();
}

std::vector<ToolResult> Dispatcher::Run(const std::vector<ToolCall>& calls,
                                        const DispatchContext& ctx) const {
  std::vector<ToolResult> out(calls.size());
  size_t i = 0;
  while (i < calls.size()) {
    if (!IsReadOnly(calls[i])) {
      out[i] = RunOne(calls[i], ctx);
      ++i;
      continue;
    }
    size_t j = i;
    while (j < calls.size() && IsReadOnly(calls[j])) ++j;
    if (j - i == 1)
      out[i] = RunOne(calls[i], ctx);
    else
      RunParallel(calls, i, j, ctx, out);
    i = j;
  }
  return out;
}

}  // namespace maestro::tools
