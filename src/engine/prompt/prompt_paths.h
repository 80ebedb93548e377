// The prompt paths: how a job's conversation starts or grows (seed 000 §3.2),
// named once here. src/engine/prompt/ holds the whole prompt assembly: this
// file (which path, and each path's messages), prompt_builder.h (the blocks:
// system message, final user message, movement guidance) and
// transcript_replay.h (the prior turns a replaying path carries).
//
// The seed's five paths, and the one maestro adds for seed 004:
//
//   kNewJob               [system, user(dynamic + instruction)]
//   same-job transition   existing messages + user(next movement guidance):
//                         TransitionGuidanceMessage (prompt_builder.h),
//                         which the agent loop appends — the one path that
//                         grows a running conversation; the head is never
//                         rewritten
//   kSamePieceContinue    [system, ...replay(keep transitions in the last
//                         thread), user(dynamic + instruction)]
//   kCrossPieceContinue   [system of the NEW piece, ...replay(no
//                         transitions), user(dynamic + instruction)]
//   kFollowUp             a job created by a comment or an ASK answer, and
//                         the same job run again (retry, resume after a park,
//                         crash recovery; its instruction is a resume note):
//                         like a same-piece Continue (DESIGN.md §5 goes
//                         beyond the seed, which starts these fresh)
//   kHandoffContinuation  the first run of a job a handoff queued:
//                         [system, user(dynamic + handoff facts +
//                         instruction [+ start movement guidance])] —
//                         nothing of the old session is replayed
//                         (engine/handoff/); its console (the last
//                         commands' output) is what carries over
//
// Every path's messages alternate roles (role_alternation.h): adjacent user
// messages — the replay's last user turn and the final one, the facts and
// the guidance — are merged into one. A follow-up after an ASK quotes the
// question in its note (the replay keeps the ASK's call: transcript_replay.h
// rule 4b), and a follow-up's first run starts in the movement its replayed
// conversation is in (PieceExecutor).
//
// PlanJobPrompt picks the path of a job's run from the store (how the job
// came to be) and the transcript (whether there is anything to replay), and
// writes the instruction of its final user message: the task instruction, the
// Continue handoff comment, the follow-up or resume note, then the job's
// undelivered user comments (comment_delivery.h; each once, tagged with its
// id — the caller acknowledges `delivered` after the conversation is
// written) and the ended subtasks' notice. SeedConversation then builds the
// path's first `messages`.
//
// In every path the handoff of DynamicContext is part of the dynamic context
// only when no turn was replayed. The system message always carries the
// guidance of the piece's initial movement, so it is byte-identical for every
// job of the piece in a workspace and a Continue, follow-up or handoff
// continuation reuses the whole cached prefix; a job that starts elsewhere
// (resume after ASK/park, an override) gets that movement's guidance in its
// final user message instead, just as a transition would append it. The
// `tools` array is built separately (piece_tools.h) and sent beside these
// messages.
//
// Thread safety: no state; PlanJobPrompt reads the store and the task's
// files, the replaying paths read the transcript file.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/env.h"
#include "core/json.h"
#include "core/status.h"
#include "engine/handoff/document.h"
#include "engine/piece/piece.h"
#include "engine/piece/piece_tools.h"
#include "engine/prompt/prompt_builder.h"
#include "engine/prompt/transcript_replay.h"
#include "store/store.h"

namespace maestro::engine {

// The start paths (the same-job transition is TransitionGuidanceMessage).
enum class PromptPath {
  kNewJob,
  kSamePieceContinue,
  kCrossPieceContinue,
  kFollowUp,
  kHandoffContinuation,
};
std::string_view PromptPathName(PromptPath path);

struct JobPromptPlan {
  PromptPath path = PromptPath::kNewJob;
  std::string instruction;
  // kHandoffContinuation: the newest saved handoff the conversation starts from.
  std::optional<HandoffDocument> handoff;
  // The comments `instruction` delivers (to acknowledge once written).
  std::vector<Comment> delivered;
  // A follow-up of an ASK: the question comment its note quotes (also
  // acknowledged once written: it reached the agent's conversation).
  std::vector<Comment> quoted;
};

// The task's files the planner reads.
struct JobPromptFiles {
  std::string transcript_path;  // the task's transcript.jsonl
  std::string handoffs_dir;     // the task's handoffs/ ("" = none: no handoff path)
  Env* env = Env::Default();    // reads the handoff
};

// `ran_before`: the task's newest conversation thread belongs to `job`
// (MessageStore::thread_job_id()); `movement`: the movement the run starts
// in, named in a resume note ("" = none named).
Result<JobPromptPlan> PlanJobPrompt(Store& store, const Task& task, const Job& job,
                                    const JobPromptFiles& files, bool ran_before,
                                    const std::string& movement = "");

struct PromptInputs {
  const Piece* piece = nullptr;       // REQUIRES: non-null (the job's piece)
  const PieceTools* tools = nullptr;  // REQUIRES: non-null (the job's tools)
  StaticPreamble preamble;
  DynamicContext dynamic;
  std::string task_instruction;  // JobPromptPlan::instruction
  std::string start_movement;    // resume > override > initial; "" = the initial movement
  // The movement the replayed conversation ends in (a same-piece path; "" =
  // unknown): when the run starts elsewhere, the final user message names
  // the start movement with its guidance even when it is the initial one.
  std::string conversation_movement;
};

struct JobStart {
  PromptPath path = PromptPath::kNewJob;
  std::string transcript_path;               // the replaying paths: the task's transcript.jsonl
  const HandoffDocument* handoff = nullptr;  // kHandoffContinuation: REQUIRES non-null
};

struct SeededConversation {
  std::vector<Json> messages;
  ReplayStats replay;  // zero unless the path replays
  int replayed_turns = 0;
  int merged_user_messages = 0;  // adjacent user messages merged into one
};

// The first `messages` of a job's run on `start.path`, with adjacent user
// messages merged (role_alternation.h): every path's messages alternate.
// Replaying paths fail only if the transcript exists but cannot be read.
Result<SeededConversation> SeedConversation(const PromptInputs& in, const JobStart& start);

}  // namespace maestro::engine
