#include "engine/handoff/trigger.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>

#include "context/task_context.h"
#include "context/token_estimate.h"
#include "engine/loop/movement_runner.h"
#include "engine/prompt/console_context.h"
#include "engine/prompt/prompt_builder.h"
#include "engine/prompt/workspace_context.h"

namespace maestro::engine {
namespace {

// The raw estimate of current.jsonl's first line: the static system message
// the continuation starts with as well.
int64_t SystemMessageTokens(const std::string& current_path) {
  std::ifstream in(current_path, std::ios::binary);
  std::string line;
  if (!std::getline(in, line)) return 0;
  Json sys = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  return sys.is_object() ? context::EstimateMessageTokens(sys) : 0;
}

}  // namespace

HandoffMonitor::HandoffMonitor(const context::ContextConfig& c)
    : threshold_(static_cast<int64_t>(static_cast<double>(c.context_length) * c.handoff_threshold)),
      max_wait_(std::max(1, c.handoff_max_wait_iterations)) {}

HandoffMonitor::Action HandoffMonitor::OnIteration(int64_t estimate) {
  if (fallback_due_) return Action::kNone;  // already told the engine
  if (!requested_) {
    if (estimate <= threshold_) return Action::kNone;
    requested_ = true;
    return Action::kRequestHandoff;
  }
  if (++waited_ > max_wait_) {
    fallback_due_ = true;
    return Action::kWriteFallback;
  }
  return Action::kNone;
}

std::string HandoffRequestMessage() {
  return "[maestro] This session's context is nearly full. Stop the current work now and call "
         "the WriteHandoff tool once, recording only facts for a fresh session: spec_ref (where "
         "the task's spec is), status.completed / status.in_progress (say which part is done) / "
         "status.pending, decisions (what was chosen and why), blockers, and files_changed "
         "(\"path — what changed\" for every file you changed). Do not add next steps, plans or "
         "advice: the next session reads the spec and decides for itself. No other fields are "
         "accepted.";
}

HandoffStep::HandoffStep(HandoffStepOptions options)
    : opt_(std::move(options)), monitor_(opt_.config) {}

std::optional<MovementResult> HandoffStep::BeforeCall(AgentLoopDeps& d, const std::string& movement,
                                                      int64_t estimate) {
  if (done_ || impossible_) return std::nullopt;
  switch (monitor_.OnIteration(estimate)) {
    case HandoffMonitor::Action::kNone:
      return std::nullopt;
    case HandoffMonitor::Action::kRequestHandoff:
      spdlog::info("job {}: estimate {} over the handoff threshold {}: asking for WriteHandoff",
                   d.scope.job_id, estimate, monitor_.ThresholdTokens());
      if (Status s = AppendMessage(d, UserMessage(HandoffRequestMessage())); !s.ok()) {
        spdlog::warn("job {}: handoff request: {}", d.scope.job_id, s.ToString());
      }
      EmitDelta(d, {{"type", "handoff_request"}, {"estimate", estimate}});
      return std::nullopt;
    case HandoffMonitor::Action::kWriteFallback:
      break;
  }
  spdlog::info("job {}: no WriteHandoff after the request; the engine writes the handoff",
               d.scope.job_id);
  auto r = Fallback(d, movement);
  if (r.ok()) return std::move(r).value();
  // Not fatal yet: the session may still finish; the overflow path retries.
  spdlog::warn("job {}: fallback handoff: {}", d.scope.job_id, r.status().ToString());
  return std::nullopt;
}

std::string HandoffStep::OnWriteHandoff(AgentLoopDeps& d, const std::string& movement,
                                        const Json& args, std::optional<MovementResult>& settled) {
  if (done_) return "Error: the handoff of this session was already written.";
  if (!monitor_.requested()) {
    return "Error: WriteHandoff is accepted only when maestro asks for a handoff (when this "
           "session's context is nearly full). Go on with the task and finish it with `complete`.";
  }
  auto doc = ParseHandoff(args);
  if (!doc.ok()) {
    const Status& s = doc.status();
    return fmt::format("Error: {}{}. Call WriteHandoff again with facts only.", s.message(),
                       s.field().empty() ? "" : " (field '" + s.field() + "')");
  }
  auto r = HandOff(d, movement, *doc, /*fallback=*/false);
  if (!r.ok()) return "Error: the handoff could not be saved: " + r.status().message();
  settled = *r;
  return "Handoff saved: " + r->result + ". This session ends here.";
}

Result<MovementResult> HandoffStep::OnOverflow(AgentLoopDeps& d, const std::string& movement,
                                               const std::string& why) {
  if (done_) return Internal("the session already handed off");
  if (impossible_) return Status(StatusCode::kResourceExhausted, "no handoff is possible");
  spdlog::info("job {}: context exhausted ({}): the engine writes the handoff", d.scope.job_id,
               why);
  return Fallback(d, movement);
}

Result<MovementResult> HandoffStep::Fallback(AgentLoopDeps& d, const std::string& movement) {
  FallbackFacts facts;
  facts.spec_ref = opt_.spec_ref;
  facts.job_id = d.scope.job_id;
  facts.workspace = opt_.workspace;
  // The history and git are extra facts: without them the ledger's remain.
  auto moves = ReadSessionMovements(d.loop.ctx->env(), d.loop.ctx->messages().messages_path(),
                                    d.scope.job_id, movement);
  if (moves.ok()) {
    facts.movements = std::move(moves).value();
  } else {
    spdlog::warn("job {}: fallback handoff: movement history: {}", d.scope.job_id,
                 moves.status().ToString());
    facts.movements.visited = {movement};
  }
  if (!opt_.workspace.empty()) {
    if (auto git = GitChangedPaths(opt_.workspace); git.ok()) facts.git_changed = *git;
  }
  MAESTRO_ASSIGN_OR_RETURN(HandoffDocument doc, FallbackHandoff(facts, d.loop.ctx->tools()));
  return HandOff(d, movement, doc, /*fallback=*/true);
}

Status HandoffStep::CheckPossible(AgentLoopDeps& d, const HandoffDocument& doc) const {
  int written = CountHandoffFiles(d.loop.ctx->handoffs_dir());
  if (written >= opt_.max_handoffs) {
    return Status(
        StatusCode::kResourceExhausted,
        fmt::format("the task already handed off {} times (limit {})", written, opt_.max_handoffs));
  }
  // The fresh session's first prompt: system + dynamic context + facts +
  // instruction + tools. The context's files and console (the bulk of it)
  // are what the continuation will list: the same workspace and ledger.
  DynamicContext dynamic;
  if (!opt_.workspace.empty()) {
    if (auto files = WorkspaceFileLines(opt_.workspace); files.ok()) dynamic.files = *files;
  }
  if (auto console = ConsoleContextText(d.loop.ctx->env(), d.loop.ctx->dir(),
                                        d.loop.ctx->messages().messages_path());
      console.ok()) {
    dynamic.console = *console;
  }
  int64_t raw = SystemMessageTokens(d.loop.ctx->messages().current_path()) +
                context::EstimateMessageTokens(UserMessage(
                    "# Context\n" + DynamicContextText(dynamic, /*include_handoff=*/false) +
                    "\n\n" + ContinuationUserMessage(opt_.instruction, doc))) +
                context::EstimateToolsTokens(d.loop.piece_tools->bytes);
  int64_t fresh = d.loop.ctx->messages().calibration().Apply(raw);
  if (fresh > monitor_.ThresholdTokens()) {
    return Status(StatusCode::kResourceExhausted,
                  fmt::format("a fresh session would start with {} estimated tokens, over the "
                              "handoff threshold {}",
                              fresh, monitor_.ThresholdTokens()));
  }
  return Status::Ok();
}

Result<MovementResult> HandoffStep::HandOff(AgentLoopDeps& d, const std::string& movement,
                                            const HandoffDocument& doc, bool fallback) {
  if (Status possible = CheckPossible(d, doc); !possible.ok()) {
    impossible_ = true;
    spdlog::info("job {}: no handoff possible ({}); compression takes over", d.scope.job_id,
                 possible.message());
    return possible;
  }
  HandoffInputs in;
  in.job = opt_.job;
  in.workspace = opt_.workspace;
  in.fallback = fallback;
  in.resume_movement = movement;
  MAESTRO_ASSIGN_OR_RETURN(HandoffResult hr, CompleteHandoff(*d.loop.ctx, doc, in));
  done_ = true;
  MovementResult r;
  r.movement = movement;
  r.next = std::string(SentinelName(Sentinel::kComplete));
  r.result = HandoffJobOutcome(hr).result;
  r.handed_off = true;
  EmitDelta(d, {{"type", "handoff"},
                {"path", std::filesystem::path(hr.path).filename().string()},
                {"fallback", fallback},
                {"continuation_job_id", hr.continuation.id}});
  spdlog::info("job {}: handed off ({}): {}", d.scope.job_id, fallback ? "engine" : "agent",
               r.result);
  return r;
}

}  // namespace maestro::engine
