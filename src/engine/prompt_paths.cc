#include "engine/prompt_paths.h"

namespace maestro::engine {

namespace {

bool Replays(PromptPath p) { return p != PromptPath::kNewJob; }

bool KeepsTransitions(PromptPath p) {
  return p == PromptPath::kSamePieceContinue || p == PromptPath::kFollowUp;
}

}  // namespace

Result<SeededConversation> SeedConversation(const PromptInputs& in, const JobStart& start) {
  const Piece& piece = *in.piece;
  SeededConversation out;
  out.messages.push_back(BuildSystemMessage(in.preamble, *in.tools, piece, piece.initial_movement));
  if (Replays(start.path)) {
    ReplayOptions ro;
    ro.keep_transitions_in_last_thread = KeepsTransitions(start.path);
    MAESTRO_ASSIGN_OR_RETURN(ReplayResult r, ReplayTranscriptFile(start.transcript_path, ro));
    out.replay = r.stats;
    out.replayed_turns = static_cast<int>(r.messages.size());
    for (auto& m : r.messages) out.messages.push_back(std::move(m));
  }
  std::string start_movement =
      in.start_movement.empty() ? piece.initial_movement : in.start_movement;
  std::string extra = start_movement == piece.initial_movement
                          ? std::string()
                          : MovementGuidanceText(piece, start_movement);
  out.messages.push_back(
      BuildFinalUserMessage(in.dynamic, out.replayed_turns == 0, extra, in.task_instruction));
  return out;
}

void AppendTransition(std::vector<Json>& messages, const Piece& piece,
                      const std::string& movement) {
  messages.push_back(TransitionGuidanceMessage(piece, movement));
}

}  // namespace maestro::engine
