// Prompt building blocks (seed 000 §3.1, DESIGN.md §5): the static system
// message, the single final user message and the guidance appended at a
// transition. prompt_paths.h (beside it in src/engine/prompt/) assembles
// them into the prompt paths.
//
// Cache rules these functions keep: the system message holds only text that
// is the same for every job of a piece in a workspace (common rules, tool
// overview, AGENTS.md, memory/skills index, working directory, the piece's
// starting-movement guidance) — never the date, mission, files, handoff or
// console, which go into the one final user message together with the task
// instruction. Every function is deterministic: same inputs, same bytes.
//
// Thread safety: pure functions over values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/json.h"
#include "engine/piece/piece.h"
#include "engine/piece/piece_tools.h"

namespace maestro::engine {

// Inputs of the static preamble. Fixed per workspace and piece.
struct StaticPreamble {
  std::string common_rules = DefaultCommonRules();
  std::string agents_md;          // the workspace's AGENTS.md ("" = none)
  std::string memory_index;       // "" = none
  std::string skills_index;       // "" = none
  std::string working_directory;  // where the model sees the workspace: tools::kWorkspaceMount

  static std::string DefaultCommonRules();
};

// A file the person attached that no prompt has listed yet
// (attachment_context.h). Listed in the dynamic context; `image_url` set (a
// data: URL) when the model takes images, and then also sent as an image
// content part of the same user message.
struct AttachedFile {
  std::string name;
  std::string path;  // relative to the workspace
  int64_t size = 0;
  std::string content_type;
  std::string image_url;
};

// Inputs of the dynamic context. Differ per job; only ever in the last user message.
struct DynamicContext {
  std::string datetime;  // formatted by the caller from its Clock ("2026-07-24 10:00 UTC")
  std::string mission;
  std::vector<std::string> files;  // workspace files worth knowing about
  std::string handoff;             // the latest handoff document (seed 004)
  std::string console;             // recent console output
  std::vector<AttachedFile> attachments;
};

// "- Name: first sentence of its description" per tool, in array order.
std::string ToolOverview(const PieceTools& tools);

// The guidance block of one movement: name, description, persona, policy,
// knowledge, guidance, edit permission, tool limits and the valid
// `transition` targets with their conditions (how the model learns the
// per-movement options without changing the tools array).
// REQUIRES: `movement` is a movement of `piece`.
std::string MovementGuidanceText(const Piece& piece, const std::string& movement);

// messages[0]: the static preamble + the guidance of `movement`.
Json BuildSystemMessage(const StaticPreamble& preamble, const PieceTools& tools, const Piece& piece,
                        const std::string& movement);

// The dynamic context as text; the handoff only when `include_handoff`
// (seed 000 §3.1: only on a start with no replayed turns). "" when empty.
std::string DynamicContextText(const DynamicContext& ctx, bool include_handoff);

// The one final user message: dynamic context, then `extra_guidance` (a
// movement's guidance when the job starts elsewhere than the system message's
// movement; "" = none), then the task instruction.
Json BuildFinalUserMessage(const DynamicContext& ctx, bool include_handoff,
                           const std::string& extra_guidance, const std::string& task_instruction);

// What the movement before says to the next one (seed 000 §2: the task
// instruction gets "Movement feedback"): the `reason` its transition gave
// (a reviewer's findings) and the loop monitor's warning on entering.
struct MovementFeedback {
  std::string from_movement;
  std::string reason;
  std::string loop_warning;
};

// The user message appended at a same-job transition (Conversation.enterMovement):
// the movement's guidance, then the feedback's sections (none when empty, so
// a transition without a reason appends the guidance alone).
Json TransitionGuidanceMessage(const Piece& piece, const std::string& movement,
                               const MovementFeedback& feedback = {});

// A user message with `text` (interjections, watchdog warnings, ASK deflections).
Json UserMessage(const std::string& text);

// The lines that list attached files ("- attachments/a.txt (name, 12 bytes,
// text/plain)"); "" when there are none.
std::string AttachedFilesText(const std::vector<AttachedFile>& files);
// `text` as a user message whose content is the text part followed by one
// OpenAI image_url part per file with an image_url; a plain UserMessage
// when there is none.
Json UserMessageWithImages(const std::string& text, const std::vector<AttachedFile>& files);

}  // namespace maestro::engine
