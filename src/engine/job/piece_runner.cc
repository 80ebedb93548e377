#include "engine/job/piece_runner.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "engine/job/loop_monitor.h"
#include "engine/prompt/prompt_builder.h"

namespace maestro::engine {
namespace {

PieceRunResult Aborted(const std::string& movement, const char* reason, std::string details) {
  PieceRunResult r;
  r.status = PieceRunStatus::kAborted;
  r.last_movement = movement;
  r.reason = reason;
  r.result = std::move(details);
  return r;
}

PieceRunResult Errored(const std::string& movement, const Status& st) {
  PieceRunResult r;
  r.status = PieceRunStatus::kError;
  r.last_movement = movement;
  r.reason = st.ToString();
  r.retryable = true;  // a storage hiccup; the next attempt may pass
  return r;
}

}  // namespace

std::string SelectStartMovement(const Piece& piece, const std::string& resume,
                                const std::string& override_movement) {
  for (const std::string* name : {&resume, &override_movement}) {
    if (name->empty()) continue;
    if (piece.FindMovement(*name)) return *name;
    spdlog::warn("piece {}: start movement '{}' does not exist; skipped", piece.name, *name);
  }
  return piece.initial_movement;
}

PieceRunResult RunPiece(AgentLoopDeps& d, const PieceRunOptions& opt) {
  LoopMonitorTracker monitor(*d.loop.piece);
  std::string movement = opt.start_movement;
  int deflections = 0;
  bool entering = true;  // false when an ASK deflection re-runs the same movement
  // The start movement's guidance is in the prompt the job was seeded with;
  // every later one is appended on entering, with what the movement before
  // said (its transition's reason) and the loop monitor's warning, so the
  // next movement's instruction carries the feedback (seed 000 §2).
  bool append_guidance = false;
  MovementFeedback feedback;
  while (true) {
    if (entering) {
      LoopMonitorVerdict v = monitor.Enter(movement);
      if (monitor.OverMaxMovements()) {
        return Aborted(movement, kAbortMaxMovements,
                       fmt::format("more than {} movements", d.loop.piece->max_movements));
      }
      if (v.kind == LoopMonitorVerdict::Kind::kWarn) {
        feedback.loop_warning = v.message;
      } else if (v.kind == LoopMonitorVerdict::Kind::kExceeded) {
        if (v.on_exceed == SentinelName(Sentinel::kAbort) ||
            !d.loop.piece->FindMovement(v.on_exceed)) {
          return Aborted(movement, kAbortLoopMonitor,
                         fmt::format("the loop monitor fired after {} cycles", v.cycles));
        }
        feedback.loop_warning = fmt::format(
            "The loop monitor ended the cycle after {} rounds; the work continues "
            "here in movement '{}'.",
            v.cycles, v.on_exceed);
        movement = v.on_exceed;
        append_guidance = true;
        monitor.Enter(movement);
      }
      Status appended = Status::Ok();
      if (append_guidance) {
        appended = AppendMovementGuidance(d, movement, feedback);
      } else if (!feedback.loop_warning.empty()) {
        appended = AppendMessage(d, UserMessage(feedback.loop_warning));
      }
      if (!appended.ok()) return Errored(movement, appended);
      feedback = {};
    }
    MovementResult result = RunMovement(d, movement);
    MovementMapContext ctx;
    ctx.piece = d.loop.piece;
    ctx.ask_count = opt.ask_count;
    ctx.max_asks = opt.max_asks;
    ctx.ask_deflections = deflections;
    ctx.has_pending_children = result.next == std::string(SentinelName(Sentinel::kComplete)) &&
                               !result.handed_off && opt.has_pending_children &&
                               opt.has_pending_children();
    MovementMapping m = mapMovementResult(result, ctx);
    if (m.kind == MovementMapping::Kind::kDone) return m.done;
    deflections = m.ask_deflections;
    entering = m.deflection_message.empty();
    if (!entering) {
      if (Status s = AppendMessage(d, UserMessage(m.deflection_message)); !s.ok()) {
        return Errored(movement, s);
      }
    } else {
      append_guidance = true;
      feedback.from_movement = movement;
      feedback.reason = result.feedback;
    }
    movement = m.next_movement;
  }
}

}  // namespace maestro::engine
