#include "engine/prompt/prompt_builder.h"

#include <fmt/format.h>

#include "core/utf8.h"

namespace maestro::engine {

std::string StaticPreamble::DefaultCommonRules() {
  return "You are an agent of maestro, working on a task for a user inside a workspace.\n"
         "- Work only through the tools you are given; read files before changing them.\n"
         "- Each piece of work happens in a movement; its guidance says what to do and which "
         "movement comes next. Use `transition` to move on and `complete` to finish.\n"
         "- If you cannot continue without the user's decision, call `complete` with status "
         "\"needs_user_input\" and a question. Do not ask for what you can find out yourself.\n"
         "- Tool results that start with \"Error\" mean the call did not happen; fix the call or "
         "choose another way.\n"
         "- Reply with tool calls; plain text without a tool call does not advance the task.";
}

std::string ToolOverview(const PieceTools& tools) {
  std::string out;
  for (const auto& def : tools.tools) {
    const Json& f = def["function"];
    std::string desc = f.value("description", "");
    auto cut = desc.find(". ");
    if (cut != std::string::npos) desc = desc.substr(0, cut + 1);
    if (auto nl = desc.find('\n'); nl != std::string::npos) desc = desc.substr(0, nl);
    out += fmt::format("- {}: {}\n", f.value("name", ""), desc);
  }
  return out;
}

namespace {

void Section(std::string& out, const char* title, const std::string& body) {
  if (body.empty()) return;
  out += fmt::format("\n\n## {}\n{}", title, body);
  while (!out.empty() && out.back() == '\n') out.pop_back();
}

}  // namespace

std::string MovementGuidanceText(const Piece& piece, const std::string& movement) {
  const Movement* m = piece.FindMovement(movement);
  if (!m) return fmt::format("# Movement: {}", movement);
  std::string out = fmt::format("# Movement: {} (piece {})", m->name, piece.name);
  if (!m->description.empty()) out += "\n" + m->description;
  Section(out, "Persona", m->persona.text);
  Section(out, "Policy", m->policy.text);
  Section(out, "Knowledge", m->knowledge.text);
  Section(out, "Guidance", m->guidance);
  std::string perms =
      m->edit ? "You may modify files in this movement." : "Do not modify files in this movement.";
  if (m->allowed_tools) {
    std::string list;
    for (const auto& t : *m->allowed_tools) list += (list.empty() ? "" : ", ") + t;
    perms += fmt::format("\nTools usable in this movement: {} (and transition/complete).",
                         list.empty() ? "none" : list);
  }
  Section(out, "Permissions", perms);
  std::string next;
  for (const auto& r : m->rules) {
    next += fmt::format("- `{}`{}\n", r.next, r.condition.empty() ? "" : ": " + r.condition);
  }
  Section(out, "Next",
          next.empty() ? "This movement has no transitions; call `complete` when the work is done."
                       : "Call `transition` with one of these when its condition holds:\n" + next);
  return out;
}

Json BuildSystemMessage(const StaticPreamble& p, const PieceTools& tools, const Piece& piece,
                        const std::string& movement) {
  std::string text = p.common_rules;
  Section(text, "Tools", ToolOverview(tools));
  Section(text, "Workspace instructions (AGENTS.md)", p.agents_md);
  Section(text, "Memory index", p.memory_index);
  Section(text, "Skills index", p.skills_index);
  Section(text, "Working directory", p.working_directory);
  text += "\n\n" + MovementGuidanceText(piece, movement);
  return {{"role", "system"}, {"content", text}};
}

std::string DynamicContextText(const DynamicContext& ctx, bool include_handoff) {
  std::string out;
  if (!ctx.datetime.empty()) out += "Current date and time: " + ctx.datetime;
  Section(out, "Mission", ctx.mission);
  std::string files;
  for (const auto& f : ctx.files) files += "- " + f + "\n";
  Section(out, "Files", files);
  Section(out, "Attached files (in the workspace; read them with ReadFile)",
          AttachedFilesText(ctx.attachments));
  if (include_handoff) Section(out, "Handoff from the previous session", ctx.handoff);
  Section(out, "Console", ctx.console);
  while (!out.empty() && out.front() == '\n') out.erase(out.begin());
  return out;
}

Json BuildFinalUserMessage(const DynamicContext& ctx, bool include_handoff,
                           const std::string& extra_guidance, const std::string& task_instruction) {
  std::string text = DynamicContextText(ctx, include_handoff);
  if (!text.empty()) text = "# Context\n" + text + "\n\n";
  if (!extra_guidance.empty()) text += extra_guidance + "\n\n";
  text += "# Task\n" + task_instruction;
  return UserMessageWithImages(text, ctx.attachments);
}

Json TransitionGuidanceMessage(const Piece& piece, const std::string& movement,
                               const MovementFeedback& feedback) {
  std::string text = MovementGuidanceText(piece, movement);
  if (!feedback.reason.empty()) {
    // The reason is the model's own text: cut, so a runaway one cannot
    // double the conversation (it is in the transition call as well).
    constexpr size_t kMaxReason = 4000;
    std::string reason(Utf8Prefix(feedback.reason, kMaxReason));
    if (reason.size() < feedback.reason.size()) reason += " […]";
    Section(text, fmt::format("Feedback from movement '{}'", feedback.from_movement).c_str(),
            reason);
  }
  Section(text, "Loop monitor", feedback.loop_warning);
  return UserMessage(text);
}

Json UserMessage(const std::string& text) { return {{"role", "user"}, {"content", text}}; }

std::string AttachedFilesText(const std::vector<AttachedFile>& files) {
  std::string out;
  for (const AttachedFile& f : files) {
    out += fmt::format("- {} ({}, {} bytes, {}{})\n", f.path, f.name, f.size, f.content_type,
                       f.image_url.empty() ? "" : ", also shown to you as an image");
  }
  return out;
}

Json UserMessageWithImages(const std::string& text, const std::vector<AttachedFile>& files) {
  Json parts = Json::array({{{"type", "text"}, {"text", text}}});
  for (const AttachedFile& f : files) {
    if (f.image_url.empty()) continue;
    parts.push_back({{"type", "image_url"}, {"image_url", {{"url", f.image_url}}}});
  }
  if (parts.size() == 1) return UserMessage(text);
  return {{"role", "user"}, {"content", parts}};
}

}  // namespace maestro::engine
