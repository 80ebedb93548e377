#include "engine/loop/movement_calls.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>

#include "core/crash_point.h"
#include "core/utf8.h"
#include "engine/handoff/trigger.h"
#include "engine/loop/delegate.h"
#include "engine/loop/policy_step.h"
#include "engine/loop/subtasks.h"
#include "engine/piece/piece_tools.h"
#include "engine/piece/sentinel.h"
#include "telemetry/genai.h"
#include "tools/park_tools.h"
#include "tools/reentry.h"
#include "tools/tool_names.h"

namespace maestro::engine {
namespace {

constexpr const char* kAlreadySettled =
    "Error: not run: an earlier call in this message already ended the movement.";

struct Parsed {
  tools::ToolCall call;
  std::string error;  // non-empty: the arguments are not a JSON object
};

Parsed ParseCall(const llm::ToolCall& c) {
  Parsed p;
  p.call.id = c.id;
  p.call.name = c.name;
  if (c.arguments.empty()) return p;  // {} is a valid argument object
  Json args = Json::parse(c.arguments, nullptr, /*allow_exceptions=*/false);
  if (args.is_discarded() || !args.is_object()) {
    p.error = fmt::format("Error: the arguments of {} are not a JSON object: {}", c.name,
                          ValidUtf8(Utf8Prefix(c.arguments, 200)));
  } else {
    p.call.arguments = std::move(args);
  }
  return p;
}

MovementResult Settle(const std::string& movement, std::string next) {
  MovementResult r;
  r.movement = movement;
  r.next = std::move(next);
  return r;
}

std::string HandleTransition(AgentLoopDeps& d, const std::string& movement,
                             const tools::ToolCall& call, std::optional<MovementResult>& settled) {
  const Json& next = call.arguments.value("next", Json());
  std::string target = next.is_string() ? next.get<std::string>() : "";
  std::string err = TransitionError(*d.loop.piece, movement, target);
  if (!err.empty()) return err;
  settled = Settle(movement, target);
  const Json& reason = call.arguments.value("reason", Json());
  if (reason.is_string()) settled->feedback = reason.get<std::string>();
  return fmt::format("Moving to movement '{}'.", target);
}

std::string HandleComplete(const std::string& movement, const tools::ToolCall& call,
                           std::optional<MovementResult>& settled) {
  auto r = MovementResultFromComplete(movement, call.arguments);
  if (!r.ok()) return "Error: " + r.status().message();
  std::string status = call.arguments.value("status", "");
  settled = std::move(r).value();
  return fmt::format("Movement finished with status {}.", status);
}

// A RequestTool for a tool the movement cannot use: an approval would not
// make it callable here, so no card is shown to the person at all (the agent
// would only loop on the grant). Empty when the request may go ahead.
std::string UngrantableHere(const AgentLoopDeps& d, const std::string& movement,
                            const tools::ToolCall& call) {
  if (call.name != tools::kRequestTool) return "";
  const Movement* mv = d.loop.piece->FindMovement(movement);
  const Json& tool = call.arguments.value("tool", Json());
  if (!mv || !tool.is_string() || ToolAllowedInMovement(*mv, tool.get<std::string>())) return "";
  return fmt::format(
      "Error: {} cannot be used in movement '{}' even with approval, so no request was made. "
      "Work with the tools this movement allows, or transition to a movement that allows it.",
      ValidUtf8(Utf8Prefix(tool.get<std::string>(), 80)), movement);
}

// RequestTool / RequestPackage / SpinOffTask to another space.
std::string HandleRequestPark(AgentLoopDeps& d, const std::string& movement,
                              const tools::ToolCall& call, const tools::ControlToolInfo& info,
                              std::optional<MovementResult>& settled) {
  auto re = tools::CheckReentry(*d.services.store, d.scope.task_id, d.scope.job_id, call);
  if (!re.ok()) return "Error: " + re.status().message();
  MovementResult park = Settle(movement, std::string(info.sentinel));
  park.wait_reason = std::string(info.wait_reason);
  switch (re->state) {
    case tools::ReentryState::kApproved:
      if (re->request &&
          re->request->kind == RequestKind::kSpawn) {  // the approval starts the child once
        auto child = EnsureSpawnedTask(*d.services.store, d.scope.budget, d.scope.job_id,
                                       *re->request, d.loop.piece->name);
        if (!child.ok()) {
          return "Error: could not start the approved task: " + child.status().message();
        }
        return re->result.content + " It is " + *child + "; call WaitSubTask to wait for it.";
      }
      if (re->request && re->request->kind == RequestKind::kPackage && d.services.packages) {
        // The install runs here, on the job's worker (see package_installer.h).
        return d.services.packages->ResolveApproved(*d.services.store, *re->request, d.scope.cancel)
            .content;
      }
      return re->result.content;
    case tools::ReentryState::kDenied:
      return re->result.content;  // decided: answer the call, no park
    case tools::ReentryState::kPending:
      settled = park;
      return fmt::format("Request {} is still waiting for a decision; the task waits.",
                         re->request ? re->request->id : "");
    case tools::ReentryState::kNew:
      break;
  }
  if (std::string refused = UngrantableHere(d, movement, call); !refused.empty()) return refused;
  auto key = tools::RequestKeyFor(call);
  if (!key.ok()) return "Error: " + key.status().message();
  auto created = d.services.store->CreateRequest(
      tools::NewRequestFor(*key, d.scope.task_id, d.scope.job_id, call));
  if (!created.ok()) return "Error: could not create the request: " + created.status().message();
  settled = park;
  return fmt::format("Request {} created; the task waits for the user's decision.", created->id);
}

// SpinOffTask without a space: a subtask of this job, created at once.
std::string HandleSpinOffLocal(AgentLoopDeps& d, const tools::ToolCall& call) {
  auto created = SpinOffLocal(*d.services.store, d.scope.budget, d.scope.task_id, d.scope.job_id,
                              d.loop.piece->name, call.id, call.arguments);
  if (!created.ok()) return "Error: could not create the subtask: " + created.status().message();
  CrashPoint("spawn.committed");
  return *created;
}

// Parks only while a child is open: re-issued after the resume (every child
// ended) it answers with the children's results instead of parking again.
std::string HandleWaitSubTask(AgentLoopDeps& d, const std::string& movement,
                              std::optional<MovementResult>& settled) {
  auto kids = SummarizeSubtasks(*d.services.store, d.scope.job_id);
  if (!kids.ok()) return "Error: " + kids.status().message();
  if (kids->total == 0) {
    return "Error: this job has no subtasks to wait for; start them with SpinOffTask first.";
  }
  if (kids->pending == 0) return "All subtasks have finished:\n" + kids->text;
  settled = Settle(movement, std::string(kWaitSubtasksName));
  settled->resume_movement = movement;
  return fmt::format("Waiting for {} of {} subtasks; the job resumes in this movement.",
                     kids->pending, kids->total);
}

// RequestCaptchaHelp: the job waits on a CAPTCHA screen of its space (seed
// 001: jobs.captcha_space_id — a task without a space waits in "personal");
// POST /captcha-pool/resolve requeues every job waiting on that screen. The
// re-issued call after the resume finds its screen solved (captcha_space_id
// cleared, captcha_screen kept) and answers instead of parking again.
std::string HandleCaptchaHelp(AgentLoopDeps& d, const std::string& movement,
                              const tools::ToolCall& call, std::optional<MovementResult>& settled) {
  const Json& sv = call.arguments.value("screen", Json());
  std::string screen = sv.is_string() ? ValidUtf8(Utf8Prefix(sv.get<std::string>(), 500)) : "";
  if (screen.empty()) return "Error: RequestCaptchaHelp needs `screen` (the CAPTCHA page's URL).";
  auto job = d.services.store->GetJob(d.scope.job_id);
  if (!job.ok()) return "Error: " + job.status().message();
  if (job->captcha_space_id.empty() && job->captcha_screen == screen) {
    (void)d.services.store->SetCaptchaWait(d.scope.job_id, "", "");
    return fmt::format("A person solved the CAPTCHA on {}; try again now.", screen);
  }
  auto task = d.services.store->GetTask(d.scope.task_id);
  if (!task.ok()) return "Error: " + task.status().message();
  const std::string space = task->space.empty() ? "personal" : task->space;
  if (Status st = d.services.store->SetCaptchaWait(d.scope.job_id, space, screen); !st.ok()) {
    return "Error: could not record the CAPTCHA wait: " + st.message();
  }
  settled = Settle(movement, std::string(SentinelName(Sentinel::kWaitingHumanBrowser)));
  settled->wait_reason = "captcha";
  settled->resume_movement = movement;
  return fmt::format(
      "The task waits for a person to solve the CAPTCHA on {}; it resumes in this movement.",
      screen);
}

std::string HandleControl(AgentLoopDeps& d, const std::string& movement,
                          const tools::ToolCall& call, const tools::ControlToolInfo& info,
                          std::optional<MovementResult>& settled) {
  if (call.name == tools::kDelegate) return RunDelegate(d, movement, call);
  if (d.loop.delegate_depth > 0) {  // only the job's own agent may park or spawn
    return fmt::format(
        "Error: {} is not available to a delegate sub-agent; finish with complete and let the "
        "delegating agent do it.",
        call.name);
  }
  if (call.name == tools::kSpinOffTask && call.arguments.value("space", "").empty()) {
    return HandleSpinOffLocal(d, call);
  }
  if (info.creates_request) return HandleRequestPark(d, movement, call, info, settled);
  if (call.name == tools::kWaitSubTask) return HandleWaitSubTask(d, movement, settled);
  if (call.name == tools::kRequestCaptchaHelp) {
    return HandleCaptchaHelp(d, movement, call, settled);
  }
  if (call.name == tools::kWriteHandoff && d.loop.handoff) {
    return d.loop.handoff->OnWriteHandoff(d, movement, call.arguments, settled);
  }
  return fmt::format("Error: {} is not available in this version of maestro.", call.name);
}

// A `tool.call` event per dispatched call: the task's event stream shows it
// and /metrics builds the tool-duration histogram from it. When the
// Dispatcher keeps the ledger (movement_runner.cc RecordToolCall then only counts)
// the event carries the task's tool_call_count in the same commit; returns
// whether it did.
bool AppendToolCallEvent(AgentLoopDeps& d, const tools::ToolCall& call,
                         const tools::ToolResult& r) {
  Event e;
  e.task_id = d.scope.task_id;
  e.job_id = d.scope.job_id;
  e.type = "tool.call";
  e.payload = {{"tool", call.name},
               {"call_id", call.id},
               {"duration_ms", r.duration_ms},
               {"is_error", r.is_error}};
  TaskStatsDelta stats;
  if (d.scope.ledger != nullptr) stats.tool_calls = 1;
  // Audit only: a lost event never fails the call (the count goes with it).
  return d.services.store->AppendEvent(e, stats).ok() && stats.tool_calls > 0;
}

// The park tools' one ledger record each (context/ledger.h: the Dispatcher
// records the regular calls), so the task's tool cards show them: `parked`
// when the call parked the job, else finished/error with its answer.
bool IsParkTool(const std::string& name) {
  return name == tools::kRequestTool || name == tools::kRequestPackage ||
         name == tools::kSpinOffTask || name == tools::kWaitSubTask ||
         name == tools::kRequestCaptchaHelp;
}

void RecordParkCall(AgentLoopDeps& d, const tools::ToolCall& call, bool parked,
                    const std::string& content, int64_t duration_ms) {
  if (d.scope.ledger == nullptr || d.loop.delegate_depth > 0) return;
  tools::ToolResult r = tools::ToolResult::Ok(content);
  r.is_error = content.rfind("Error", 0) == 0;
  Status st = d.scope.ledger->ParkCall({d.scope.task_id, d.scope.job_id, call.id}, call.name,
                                       call.arguments, parked, duration_ms, r);
  if (!st.ok()) spdlog::warn("job {}: tool ledger: {}", d.scope.job_id, st.ToString());
}

std::string NotAllowed(const Movement& mv, const std::string& name) {
  std::string list;
  for (const auto& t : mv.allowed_tools.value_or(std::vector<std::string>{})) {
    list += (list.empty() ? "" : ", ") + t;
  }
  return fmt::format("Error: {} is not allowed in movement '{}'. Allowed here: {}.", name, mv.name,
                     list);
}

}  // namespace

std::string CallBatchSignature(const std::vector<llm::ToolCall>& calls) {
  std::string sig;
  for (const auto& c : calls) {
    Json args = Json::parse(c.arguments, nullptr, false);
    sig += c.name + '\x1f' + (args.is_discarded() ? c.arguments : args.dump()) + '\x1e';
  }
  return sig;
}

CallResults HandleToolCalls(AgentLoopDeps& d, const std::string& movement,
                            const std::vector<llm::ToolCall>& calls) {
  CallResults out;
  out.contents.resize(calls.size());
  out.is_error.resize(calls.size(), false);
  out.counted.resize(calls.size(), false);
  const Movement* mv = d.loop.piece->FindMovement(movement);
  std::vector<tools::ToolCall> regular;
  std::vector<size_t> regular_at;
  for (size_t i = 0; i < calls.size(); ++i) {
    Parsed p = ParseCall(calls[i]);
    std::string& content = out.contents[i];
    const std::string& name = p.call.name;
    bool control =
        name == tools::kComplete || name == tools::kTransition || tools::FindControlTool(name);
    // The Dispatcher traces the calls it runs; the engine those it answers.
    const bool dispatched =
        p.error.empty() && !control && !(mv && !ToolAllowedInMovement(*mv, name));
    telemetry::Span span;
    if (!dispatched)
      span =
          telemetry::genai::StartToolSpan(*d.services.tracer, d.loop.trace_parent, name, p.call.id);
    if (!p.error.empty()) {
      content = p.error;
    } else if (control && out.settled) {
      content = kAlreadySettled;
    } else if (name == tools::kComplete) {
      content = HandleComplete(movement, p.call, out.settled);
    } else if (name == tools::kTransition) {
      content = HandleTransition(d, movement, p.call, out.settled);
    } else if (control) {
      const auto started = std::chrono::steady_clock::now();
      content = HandleControl(d, movement, p.call, *tools::FindControlTool(name), out.settled);
      if (IsParkTool(name)) {
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - started)
                            .count();
        RecordParkCall(d, p.call, out.settled.has_value(), content, ms);
      }
    } else if (mv && !ToolAllowedInMovement(*mv, name)) {
      content = NotAllowed(*mv, name);
    } else if (PolicyVerdict pv = ApplyAutoPrompter(d, movement, p.call); pv.denial) {
      content = *pv.denial;
    } else {
      if (!pv.instruction.empty()) out.instructions.push_back(std::move(pv.instruction));
      regular.push_back(std::move(p.call));
      regular_at.push_back(i);
      continue;
    }
    out.is_error[i] = content.rfind("Error", 0) == 0;
    if (span.recording() && out.settled && IsParkTool(name))
      span.SetAttribute("maestro.parked", true);
    telemetry::genai::EndToolSpan(*d.services.tracer, span, out.is_error[i],
                                  d.services.tracer->capture_content() ? calls[i].arguments : "",
                                  d.services.tracer->capture_content() ? content : "");
  }
  if (!regular.empty()) {
    std::vector<tools::ToolResult> results = d.services.dispatcher->Run(regular, d.Dispatch());
    for (size_t k = 0; k < results.size() && k < regular_at.size(); ++k) {
      out.counted[regular_at[k]] = AppendToolCallEvent(d, regular[k], results[k]);
      // A regular tool that parks (BrowseWeb on a login page): the job waits
      // for a person and re-enters this movement (seed 001 catalog).
      if (!results[k].park_wait_reason.empty() && d.loop.delegate_depth > 0) {
        results[k].content =
            "Not parked: a delegate sub-agent cannot wait for a person. Finish with complete and "
            "say that this page needs a login.\n\n" +
            results[k].content;
      } else if (!results[k].park_wait_reason.empty() && !out.settled) {
        out.settled = Settle(movement, std::string(SentinelName(Sentinel::kWaitingHumanBrowser)));
        out.settled->wait_reason = results[k].park_wait_reason;
        out.settled->resume_movement = movement;
      }
      out.contents[regular_at[k]] = std::move(results[k].content);
      out.is_error[regular_at[k]] = results[k].is_error;
    }
  }
  return out;
}

}  // namespace maestro::engine
