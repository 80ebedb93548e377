// The building blocks: guidance block, dynamic context, tool overview.
#include "engine/prompt/prompt_builder.h"

#include <gtest/gtest.h>

#include "engine/piece/piece_loader.h"
#include "engine_test_util.h"

namespace maestro::engine {
namespace {

Piece FullPiece() {
  auto r = LoadPieceText(
      "name: full\n"
      "movements:\n"
      "  - name: a\n"
      "    description: First step.\n"
      "    persona: You are terse.\n"
      "    policy: Never push.\n"
      "    knowledge: The repo uses CMake.\n"
      "    guidance: Do a.\n"
      "    allowed_tools: [ReadFile, Grep]\n"
      "    rules:\n"
      "      - {condition: a is done, next: b}\n"
      "      - {next: WAIT_SUBTASKS}\n"
      "  - name: b\n"
      "    edit: true\n"
      "    allowed_tools: []\n",
      "full.yaml");
  EXPECT_TRUE(r.ok()) << r.status().message();
  return *r;
}

TEST(MovementGuidance, RendersEverySectionInOrder) {
  EXPECT_EQ(MovementGuidanceText(FullPiece(), "a"),
            "# Movement: a (piece full)\n"
            "First step.\n\n"
            "## Persona\nYou are terse.\n\n"
            "## Policy\nNever push.\n\n"
            "## Knowledge\nThe repo uses CMake.\n\n"
            "## Guidance\nDo a.\n\n"
            "## Permissions\nDo not modify files in this movement.\n"
            "Tools usable in this movement: ReadFile, Grep (and transition/complete).\n\n"
            "## Next\nCall `transition` with one of these when its condition holds:\n"
            "- `b`: a is done\n"
            "- `WAIT_SUBTASKS`");
}

TEST(MovementGuidance, MovementWithoutRulesPointsAtComplete) {
  EXPECT_EQ(MovementGuidanceText(FullPiece(), "b"),
            "# Movement: b (piece full)\n\n"
            "## Permissions\nYou may modify files in this movement.\n"
            "Tools usable in this movement: none (and transition/complete).\n\n"
            "## Next\nThis movement has no transitions; call `complete` when the work is done.");
}

TEST(DynamicContext, LeavesOutEmptySections) {
  DynamicContext ctx;
  ctx.mission = "M";
  ctx.handoff = "H";
  EXPECT_EQ(DynamicContextText(ctx, true),
            "## Mission\nM\n\n## Handoff from the previous session\nH");
  EXPECT_EQ(DynamicContextText(ctx, false), "## Mission\nM");
  EXPECT_EQ(DynamicContextText(DynamicContext{}, true), "");
}

TEST(FinalUserMessage, AttachedFilesAreListedAndImagesBecomeContentParts) {
  DynamicContext ctx;
  ctx.attachments = {{"a.txt", "attachments/a.txt", 3, "text/plain", ""},
                     {"s.png", "attachments/s.png", 9, "image/png", "data:image/png;base64,AAAA"}};
  Json m = BuildFinalUserMessage(ctx, true, "", "look");
  ASSERT_TRUE(m["content"].is_array()) << m.dump();
  ASSERT_EQ(m["content"].size(), 2u);
  const std::string text = m["content"][0]["text"];
  EXPECT_NE(text.find("## Attached files"), std::string::npos) << text;
  EXPECT_NE(text.find("- attachments/a.txt (a.txt, 3 bytes, text/plain)\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("- attachments/s.png (s.png, 9 bytes, image/png, also shown to you as an "
                      "image)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# Task\nlook"), std::string::npos);
  EXPECT_EQ(m["content"][1],
            Json({{"type", "image_url"}, {"image_url", {{"url", "data:image/png;base64,AAAA"}}}}));
  ctx.attachments[1].image_url.clear();  // a profile without vision: the file only
  EXPECT_TRUE(BuildFinalUserMessage(ctx, true, "", "look")["content"].is_string());
}

TEST(FinalUserMessage, WithoutContextIsJustTheTask) {
  EXPECT_EQ(BuildFinalUserMessage(DynamicContext{}, true, "", "do it"),
            Json({{"role", "user"}, {"content", "# Task\ndo it"}}));
}

TEST(ToolOverview, OneLinePerToolWithTheFirstSentence) {
  PieceTools t = *BuildPieceTools(test::Builtin("chat"), {test::ToolDef("ReadFile",
                                                                        "Read a file. "
                                                                        "More text."),
                                                          test::ToolDef("Grep", "Search\nlines")});
  EXPECT_EQ(ToolOverview(t),
            "- Grep: Search\n"
            "- ReadFile: Read a file.\n"
            "- complete: Finish the task.\n");
}

TEST(SystemMessage, EmptyPreambleSectionsAreLeftOut) {
  Piece chat = test::Builtin("chat");
  PieceTools t = *BuildPieceTools(chat, {});
  StaticPreamble p;
  p.common_rules = "RULES";
  Json sys = BuildSystemMessage(p, t, chat, "chat");
  std::string text = sys["content"];
  EXPECT_EQ(sys["role"], "system");
  EXPECT_EQ(text.rfind("RULES\n\n## Tools\n- complete: Finish the task.\n\n# Movement: chat (piece "
                       "chat)\n",
                       0),
            0u)
      << text;
  EXPECT_EQ(text.find("AGENTS.md"), std::string::npos);
  EXPECT_EQ(text.find("Working directory"), std::string::npos);
}

// A reviewer's reason is the model's text: cut at 4,000 bytes on a
// character boundary, so the message stays valid UTF-8.
TEST(PromptBuilderTest, AnOverlongFeedbackReasonIsCutOnACharacterBoundary) {
  MovementFeedback fb;
  fb.from_movement = "a";
  fb.reason = std::string(3999, 'x') + "\u00e9" + "tail";  // é spans bytes 4000-4001
  const std::string text = TransitionGuidanceMessage(FullPiece(), "b", fb)["content"];
  const std::string want = "## Feedback from movement 'a'\n" + std::string(3999, 'x') + " […]";
  EXPECT_NE(text.find(want), std::string::npos);
  EXPECT_EQ(text.find("tail"), std::string::npos);
}

}  // namespace
}  // namespace maestro::engine
