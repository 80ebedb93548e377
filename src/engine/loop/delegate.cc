#include "engine/loop/delegate.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>

#include "core/output_cap.h"
#include "engine/piece/sentinel.h"
#include "engine/prompt/prompt_builder.h"
#include "tools/park_tools.h"
#include "tools/tool_names.h"
#include "workspace/workspace_path.h"

namespace maestro::engine {
namespace {

constexpr size_t kAnswerCapBytes = 32 * 1024;

constexpr const char* kDelegateGuidance =
    "You are a sub-agent: another agent handed you the self-contained sub-problem in the task "
    "below. You have your own fresh conversation; the other agent does not see it and gets only "
    "your final answer. Work through tool calls. When done, call `complete` with status success "
    "and your whole answer in `result` (it is all the other agent receives). If it cannot be "
    "done, call `complete` with status error and say why. You cannot ask the user, request "
    "tools or packages, or start tasks.";

// A sub-agent keeps the parent's working tools; control and park tools stay
// with the job's own agent (a sub-agent must never park the job).
bool IsChildTool(const std::string& name) {
  if (name == tools::kComplete || name == tools::kTransition) return false;
  return name == tools::kDelegate || tools::FindControlTool(name) == nullptr;
}

std::string NameOf(const Json& def) {
  const Json& fn = def.value("function", Json::object());
  return fn.value("name", "");
}

// Directory-safe and unique per call: `<job>-<key prefix><call id>`.
std::string DelegateDirName(const AgentLoopDeps& d, const std::string& call_id) {
  std::string name = d.scope.job_id + "-" + d.loop.call_key_prefix + call_id;
  for (char& c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.';
    if (!ok) c = '_';
  }
  return name;
}

std::string Answer(const MovementResult& r) {
  const std::string next = r.next.value_or("");
  if (next == SentinelName(Sentinel::kComplete)) {
    return r.result.empty() ? "(the sub-agent finished without an answer)" : r.result;
  }
  if (next == SentinelName(Sentinel::kAsk)) {
    return "Error: the sub-agent could not finish without the user's input. Its question: " +
           (r.question.empty() ? r.result : r.question);
  }
  if (r.cancelled) return "Error: the sub-agent was cancelled.";
  if (next == SentinelName(Sentinel::kAbort)) {
    return fmt::format("Error: the sub-agent stopped ({}): {}", r.abort_reason, r.result);
  }
  return "Error: the sub-agent ended without an answer (" + next + ").";
}

// Everything the sub-agent's loop needs besides the parent's deps.
struct ChildRun {
  std::unique_ptr<context::TaskContext> ctx;
  Piece piece;
  PieceTools tools;
};

Result<ChildRun> PrepareChild(const AgentLoopDeps& d, const Movement* mv,
                              const tools::ToolCall& call, int depth) {
  ChildRun c;
  MAESTRO_ASSIGN_OR_RETURN(c.ctx, d.loop.ctx->OpenDelegate(DelegateDirName(d, call.id)));
  c.piece = DelegatePiece(*d.loop.piece, mv);
  MAESTRO_ASSIGN_OR_RETURN(
      c.tools, BuildPieceTools(c.piece, DelegateToolDefs(*d.loop.piece_tools, depth,
                                                         d.scope.limits.max_delegate_depth)));
  MAESTRO_RETURN_IF_ERROR(
      WriteStringToFile(*d.services.env, c.ctx->dir() + "/tools.json", c.tools.bytes));
  StaticPreamble pre;
  pre.working_directory = tools::kWorkspaceMount;
  Json system = BuildSystemMessage(pre, c.tools, c.piece, kDelegateMovement);
  std::string task = "# Task\n" + call.arguments.value("task", "");
  std::string context = call.arguments.value("context", "");
  if (!context.empty()) task += "\n\n## Context from the delegating agent\n" + context;
  MAESTRO_RETURN_IF_ERROR(
      c.ctx->messages().SeedThread(d.scope.job_id, {system, UserMessage(task)}, "").status());
  return c;
}

}  // namespace

bool DelegateOffered(int depth, int max_depth) { return depth < max_depth; }

std::vector<Json> DelegateToolDefs(const PieceTools& parent_tools, int child_depth, int max_depth) {
  std::vector<Json> defs;
  for (const Json& def : parent_tools.tools) {
    std::string name = NameOf(def);
    if (!IsChildTool(name)) continue;
    if (name == tools::kDelegate && !DelegateOffered(child_depth, max_depth)) continue;
    defs.push_back(def);
  }
  return defs;
}

Piece DelegatePiece(const Piece& parent, const Movement* parent_movement) {
  Piece p;
  p.name = parent.name + "/delegate";
  p.description = "A delegated sub-problem.";
  p.initial_movement = kDelegateMovement;
  p.max_movements = 1;
  p.source = parent.source;
  Movement m;
  m.name = kDelegateMovement;
  m.description = "Solve the delegated sub-problem and answer with complete.";
  m.guidance = kDelegateGuidance;
  if (parent_movement) {
    m.allowed_tools = parent_movement->allowed_tools;
    m.edit = parent_movement->edit;
    m.max_iterations = parent_movement->max_iterations;
  }
  p.movements.push_back(std::move(m));
  return p;
}

std::string RunDelegate(AgentLoopDeps& d, const std::string& movement,
                        const tools::ToolCall& call) {
  const int max_depth = d.scope.limits.max_delegate_depth;
  const Movement* mv = d.loop.piece->FindMovement(movement);
  const auto& offered = d.loop.piece_tools->names;
  if (!DelegateOffered(d.loop.delegate_depth, max_depth) ||
      std::find(offered.begin(), offered.end(), tools::kDelegate) == offered.end()) {
    return fmt::format(
        "Error: delegate is not available here (sub-agent depth {}, limit {}); do the work "
        "yourself.",
        d.loop.delegate_depth, max_depth);
  }
  if (mv && !ToolAllowedInMovement(*mv, tools::kDelegate)) {
    return fmt::format("Error: delegate is not allowed in movement '{}'.", movement);
  }
  if (call.arguments.value("task", "").empty()) {
    return "Error: invalid arguments for delegate: field 'task' must be a non-empty string";
  }
  const int depth = d.loop.delegate_depth + 1;
  auto child = PrepareChild(d, mv, call, depth);
  if (!child.ok()) return "Error: could not start the sub-agent: " + child.status().message();
  // The sub-agent shares the process's services and the job's scope (ids,
  // cancel token, ledger, policy, limits, budget) and runs its own loop: its
  // own conversation, piece and tools file; no handoff of the job from in
  // here (an overflow ends the sub-agent with an Error result); a fresh
  // prompt-guard state for its own messages; its deltas tagged with the call
  // (EmitDelta); and its call ids keyed under this call in the shared ledger.
  LoopState loop;
  loop.ctx = child->ctx.get();
  loop.piece = &child->piece;
  loop.piece_tools = &child->tools;
  loop.tools_path = child->ctx->dir() + "/tools.json";
  loop.trace_parent = d.loop.trace_parent;
  loop.delegate_depth = depth;
  loop.delegate_call_id = call.id;
  loop.call_key_prefix = d.loop.call_key_prefix + "delegate:" + call.id + "/";
  AgentLoopDeps c{d.services, d.scope, std::move(loop)};
  EmitDelta(d,
            {{"type", "delegate"}, {"phase", "started"}, {"call_id", call.id}, {"depth", depth}});
  MovementResult r = RunMovement(c, kDelegateMovement);
  // Capped like any tool output: the answer lands in the parent's context.
  std::string answer = CapOutput(Answer(r), kAnswerCapBytes);
  spdlog::info("job {}: delegate {} (depth {}) ended {} {}", d.scope.job_id, call.id, depth,
               r.next.value_or("?"), r.abort_reason);
  EmitDelta(d, {{"type", "delegate"},
                {"phase", "finished"},
                {"call_id", call.id},
                {"depth", depth},
                {"is_error", answer.rfind("Error", 0) == 0}});
  return answer;
}

}  // namespace maestro::engine
