#include "engine/loop/movement_result.h"

#include <fmt/format.h>

#include "store/retry_policy.h"

namespace maestro::engine {

std::string_view PieceRunStatusName(PieceRunStatus s) {
  switch (s) {
    case PieceRunStatus::kCompleted:
      return "completed";
    case PieceRunStatus::kAborted:
      return "aborted";
    case PieceRunStatus::kCancelled:
      return "cancelled";
    case PieceRunStatus::kWaitingHuman:
      return "waiting_human";
    case PieceRunStatus::kWaitingSubtasks:
      return "waiting_subtasks";
    case PieceRunStatus::kError:
      return "error";
  }
  return "?";
}

MovementResult AbortedMovement(const std::string& movement, const char* reason,
                               std::string details) {
  MovementResult r;
  r.movement = movement;
  r.next = std::string(SentinelName(Sentinel::kAbort));
  r.abort_reason = reason;
  r.result = std::move(details);
  return r;
}

Result<MovementResult> MovementResultFromComplete(const std::string& movement, const Json& args) {
  if (!args.is_object()) return InvalidArgument("complete: arguments must be a JSON object");
  auto str = [&](const char* k) -> std::string {
    auto it = args.find(k);
    return it != args.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  auto st = args.find("status");
  if (st == args.end() || !st->is_string()) {
    return InvalidArgument("complete: 'status' is required: success | needs_user_input | error",
                           "status");
  }
  MovementResult r;
  r.movement = movement;
  r.result = str("result");
  std::string status = st->get<std::string>();
  if (status == "success") {
    r.next = "COMPLETE";
  } else if (status == "needs_user_input") {
    r.next = "ASK";
    r.question = str("question").empty() ? r.result : str("question");
    if (r.question.empty()) {
      return InvalidArgument("complete: needs_user_input requires 'question'", "question");
    }
  } else if (status == "error") {
    r.next = "ABORT";
    r.abort_reason = kAbortAgentError;
  } else {
    return InvalidArgument(fmt::format("complete: unknown status '{}': use success | "
                                       "needs_user_input | error",
                                       status),
                           "status");
  }
  return r;
}

namespace {

MovementMapping Done(PieceRunResult r) {
  MovementMapping m;
  m.kind = MovementMapping::Kind::kDone;
  m.done = std::move(r);
  return m;
}

PieceRunResult Base(const MovementResult& res, PieceRunStatus st) {
  PieceRunResult r;
  r.status = st;
  r.last_movement = res.movement;
  return r;
}

std::string DeflectionMessage(int asks, int deflection) {
  return fmt::format(
      "You have already asked the user {} time{} in this task, which is the limit. Do not ask "
      "again: decide by yourself with the information you have, state your assumptions, and "
      "continue the work (notice {} of {}; asking again ends the task).",
      asks, asks == 1 ? "" : "s", deflection, MAX_ASK_LIMIT_DEFLECTIONS);
}

MovementMapping MapAsk(const MovementResult& res, const MovementMapContext& ctx) {
  if (ctx.ask_count < ctx.max_asks) {
    PieceRunResult r = Base(res, PieceRunStatus::kWaitingHuman);
    r.question = res.question;
    r.wait_reason = "ask";
    r.resume_movement = res.movement;
    r.ask_count = ctx.ask_count + 1;
    MovementMapping m = Done(std::move(r));
    m.ask_deflections = ctx.ask_deflections;
    return m;
  }
  if (ctx.ask_deflections < MAX_ASK_LIMIT_DEFLECTIONS) {
    MovementMapping m;
    m.kind = MovementMapping::Kind::kNextMovement;
    m.next_movement = res.movement;
    m.ask_deflections = ctx.ask_deflections + 1;
    m.deflection_message = DeflectionMessage(ctx.ask_count, m.ask_deflections);
    return m;
  }
  PieceRunResult r = Base(res, PieceRunStatus::kAborted);
  r.reason = kAbortAskLimitReached;
  MovementMapping m = Done(std::move(r));
  m.ask_deflections = ctx.ask_deflections;
  return m;
}

std::string DefaultWaitReason(Sentinel s) {
  switch (s) {
    case Sentinel::kWaitingHumanBrowser:
      return "browser_login";
    case Sentinel::kWaitingHumanToolRequest:
      return "tool_request";
    case Sentinel::kWaitingHumanPackageRequest:
      return "package_request";
    case Sentinel::kWaitingHumanSpawnRequest:
      return "spawn_request";
    case Sentinel::kWaitingHumanBudget:
      return "budget_exceeded";
    default:
      return "";
  }
}

// WAIT_SUBTASKS resumes at an explicit point (the WaitSubTask tool passes the
// current movement), else the movement's default_next when it names a
// movement, else the current movement. A default_next of COMPLETE would make
// the resumed job finish without reading its children's results (the gotcha
// seed 001 warns about), so it re-enters the current movement instead.
std::string WaitSubtasksResume(const MovementResult& res, const Piece& piece) {
  if (!res.resume_movement.empty()) return res.resume_movement;
  const Movement* m = piece.FindMovement(res.movement);
  if (m && piece.FindMovement(m->default_next)) return m->default_next;
  return res.movement;
}

MovementMapping MapSentinel(Sentinel s, const MovementResult& res, const MovementMapContext& ctx) {
  switch (s) {
    case Sentinel::kComplete: {
      if (ctx.has_pending_children) {
        PieceRunResult r = Base(res, PieceRunStatus::kWaitingSubtasks);
        r.resume_movement = res.movement;
        r.result = res.result;
        return Done(std::move(r));
      }
      PieceRunResult r = Base(res, PieceRunStatus::kCompleted);
      r.result = res.result;
      r.handed_off = res.handed_off;
      return Done(std::move(r));
    }
    case Sentinel::kAbort: {
      PieceRunResult r =
          Base(res, res.cancelled ? PieceRunStatus::kCancelled : PieceRunStatus::kAborted);
      r.reason =
          res.abort_reason.empty() ? (res.cancelled ? "cancelled" : "aborted") : res.abort_reason;
      r.result = res.result;
      r.retryable = !res.cancelled && res.abort_reason == kAbortLlmError;
      return Done(std::move(r));
    }
    case Sentinel::kAsk:
      return MapAsk(res, ctx);
    case Sentinel::kWaitSubtasks: {
      PieceRunResult r = Base(res, PieceRunStatus::kWaitingSubtasks);
      r.resume_movement = WaitSubtasksResume(res, *ctx.piece);
      return Done(std::move(r));
    }
    default: {
      PieceRunResult r = Base(res, PieceRunStatus::kWaitingHuman);
      r.wait_reason = res.wait_reason.empty() ? DefaultWaitReason(s) : res.wait_reason;
      r.resume_movement = res.resume_movement.empty() ? res.movement : res.resume_movement;
      return Done(std::move(r));
    }
  }
}

}  // namespace

MovementMapping mapMovementResult(const MovementResult& res, const MovementMapContext& ctx) {
  if (!res.next) {
    PieceRunResult r = Base(res, PieceRunStatus::kError);
    r.reason = fmt::format("movement '{}' ended without a transition or completion", res.movement);
    r.retryable = true;
    MovementMapping m = Done(std::move(r));
    m.ask_deflections = ctx.ask_deflections;
    return m;
  }
  MovementMapping m;
  if (auto s = ParseSentinel(*res.next)) {
    m = MapSentinel(*s, res, ctx);
  } else if (ctx.piece->FindMovement(*res.next)) {
    m.kind = MovementMapping::Kind::kNextMovement;
    m.next_movement = *res.next;
  } else {
    PieceRunResult r = Base(res, PieceRunStatus::kError);
    r.reason = fmt::format("movement '{}' chose unknown next '{}'", res.movement, *res.next);
    m = Done(std::move(r));
  }
  if (m.deflection_message.empty()) m.ask_deflections = ctx.ask_deflections;
  return m;
}

JobOutcome ToJobOutcome(const PieceRunResult& r) {
  switch (r.status) {
    case PieceRunStatus::kCompleted:
      return JobOutcome::Succeeded(r.result);
    case PieceRunStatus::kCancelled:
      return JobOutcome::Cancelled(r.reason);
    case PieceRunStatus::kWaitingHuman: {
      JobOutcome o = JobOutcome::WaitingHuman(r.wait_reason, r.resume_movement);
      o.ask_count = r.ask_count;
      return o;
    }
    case PieceRunStatus::kWaitingSubtasks:
      return JobOutcome::WaitingSubtasks(r.resume_movement);
    case PieceRunStatus::kAborted:
    case PieceRunStatus::kError: {
      std::string why = fmt::format("{}: {}", PieceRunStatusName(r.status), r.reason);
      if (!r.result.empty()) why += " (" + r.result + ")";
      // Reported as the transient error it is; the store decides.
      if (r.retryable) return RetryPolicy::FailureOf(Unavailable(why));
      return JobOutcome::Failed(why);
    }
  }
  return JobOutcome::Failed("unknown piece result");
}

}  // namespace maestro::engine
