// The five ways a conversation starts or grows (seed 000 §3.2), producing
// the exact `messages` array of the first request.
//
//   kNewJob              [system, user(dynamic + instruction)]
//   same-job transition  existing messages + user(next movement guidance)
//                        (AppendTransition; the head is never rewritten)
//   kSamePieceContinue   [system, ...replay(keep transitions in last thread),
//                         user(dynamic + instruction)]
//   kCrossPieceContinue  [system of the NEW piece, ...replay(no transitions),
//                         user(dynamic + instruction)]
//   kFollowUp            a job created by a comment or an ASK answer: like a
//                        same-piece Continue (DESIGN.md §5 goes beyond the
//                        seed, which starts these fresh); the instruction
//                        carries the comment.
//
// In every path the handoff is part of the dynamic context only when no turn
// was replayed. The system message always carries the guidance of the
// piece's initial movement, so it is byte-identical for every job of the
// piece in a workspace and a Continue or follow-up reuses the whole cached
// prefix; a job that starts elsewhere (resume after ASK/park, an override)
// gets that movement's guidance in its final user message instead, just as a
// transition would append it. The `tools` array is built separately
// (piece_tools.h) and sent beside these messages.
//
// Thread safety: pure functions; the replaying paths read the transcript file.
#pragma once

#include <string>
#include <vector>

#include "core/json.h"
#include "core/status.h"
#include "engine/piece.h"
#include "engine/piece_tools.h"
#include "engine/prompt_builder.h"
#include "engine/transcript_replay.h"

namespace maestro::engine {

enum class PromptPath { kNewJob, kSamePieceContinue, kCrossPieceContinue, kFollowUp };

struct PromptInputs {
  const Piece* piece = nullptr;       // REQUIRES: non-null (the job's piece)
  const PieceTools* tools = nullptr;  // REQUIRES: non-null (the job's tools)
  StaticPreamble preamble;
  DynamicContext dynamic;
  std::string task_instruction;  // with feedback / follow-up / subtask notices already added
  std::string start_movement;    // resume > override > initial; "" = the initial movement
};

struct JobStart {
  PromptPath path = PromptPath::kNewJob;
  std::string transcript_path;  // the replaying paths: the task's transcript.jsonl
};

struct SeededConversation {
  std::vector<Json> messages;
  ReplayStats replay;  // zero for kNewJob
  int replayed_turns = 0;
};

// The first `messages` of a job. Replaying paths fail only if the transcript
// exists but cannot be read.
Result<SeededConversation> SeedConversation(const PromptInputs& in, const JobStart& start);

// Same-job transition: appends the next movement's guidance as a user message.
void AppendTransition(std::vector<Json>& messages, const Piece& piece, const std::string& movement);

}  // namespace maestro::engine
