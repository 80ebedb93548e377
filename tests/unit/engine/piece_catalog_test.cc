// Builtin pieces, user directories, overrides and the CLI entry points.
#include "engine/piece/piece_catalog.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/piece/piece_commands.h"
#include "support/temp_dir.h"

namespace maestro::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(PieceCatalog, BuiltinPiecesLoadWithoutProblems) {
  PieceCatalog cat = PieceCatalog::Load({});
  EXPECT_TRUE(cat.problems().empty()) << cat.problems()[0].ToString();
  std::vector<std::string> names;
  for (const auto& e : cat.entries()) {
    names.push_back(e.piece.name);
    EXPECT_TRUE(e.builtin);
  }
  EXPECT_THAT(names, ElementsAre("chat", "coding", "reflection", "research", "review"));
}

TEST(PieceCatalog, ChatIsOneMovementWithoutTransitions) {
  PieceCatalog cat = PieceCatalog::Load({});
  const Piece* chat = cat.Find("chat");
  ASSERT_NE(chat, nullptr);
  ASSERT_EQ(chat->movements.size(), 1u);
  EXPECT_TRUE(chat->movements[0].rules.empty());
  EXPECT_FALSE(chat->HasTransitions());
}

TEST(PieceCatalog, CodingHasPlanImplementReviewFixLoopAndMonitor) {
  PieceCatalog cat = PieceCatalog::Load({});
  const Piece* coding = cat.Find("coding");
  ASSERT_NE(coding, nullptr);
  std::vector<std::string> walk;
  for (const auto& m : coding->movements) walk.push_back(m.name);
  EXPECT_THAT(walk, ElementsAre("plan", "implement", "review", "fix"));
  EXPECT_EQ(coding->initial_movement, "plan");
  EXPECT_THAT(coding->TransitionTargets(),
              ElementsAre("implement", "review", "WAIT_SUBTASKS", "fix"));
  ASSERT_EQ(coding->loop_monitors.size(), 1u);
  EXPECT_THAT(coding->loop_monitors[0].cycle, ElementsAre("review", "fix"));
  EXPECT_EQ(coding->loop_monitors[0].on_exceed, "ABORT");
}

TEST(PieceCatalog, BuiltinFilesOnDiskLintClean) {
  // The same files `maestro piece lint pieces/*.yaml` checks in CI.
  for (const char* f : {"chat.yaml", "coding.yaml", "research.yaml", "review.yaml"}) {
    std::ostringstream out, err;
    EXPECT_EQ(RunPieceLint(std::string(MAESTRO_PIECES_DIR) + "/" + f, out, err), 0) << err.str();
    EXPECT_THAT(out.str(), HasSubstr(": ok (piece "));
  }
}

TEST(PieceCatalog, UserDirAddsOverridesAndReportsBrokenFiles) {
  testing::TempDir dir;
  std::ofstream(dir.File("chat.yaml")) << "name: chat\ndescription: mine\nmovements:\n"
                                          "  - name: talk\n    rules: []\n";
  std::ofstream(dir.File("extra.yml")) << "name: extra\nmovements:\n  - name: only\n";
  std::ofstream(dir.File("broken.yaml")) << "name: broken\nmovements:\n  - name: a\n"
                                            "    rules: [{next: COMPLETE}]\n";
  std::ofstream(dir.File("notes.txt")) << "ignored";
  PieceCatalogOptions opts;
  opts.user_dirs = {dir.path(), dir.path() + "/does-not-exist"};
  PieceCatalog cat = PieceCatalog::Load(opts);
  const Piece* chat = cat.Find("chat");
  ASSERT_NE(chat, nullptr);
  EXPECT_EQ(chat->description, "mine");
  EXPECT_EQ(chat->source, dir.File("chat.yaml"));
  ASSERT_NE(cat.Find("extra"), nullptr);
  EXPECT_EQ(cat.Find("broken"), nullptr);
  ASSERT_EQ(cat.problems().size(), 1u);
  EXPECT_EQ(cat.problems()[0].ToString(),
            dir.File("broken.yaml") +
                ":4:20: rules[].next may not be 'COMPLETE': only movements and WAIT_SUBTASKS "
                "are allowed; finishing, asking and aborting use the complete tool");
  for (const auto& e : cat.entries()) {
    if (e.piece.name == "chat") {
      EXPECT_FALSE(e.builtin);
      EXPECT_EQ(e.overrides, "builtin:chat.yaml");
    }
  }
}

TEST(PieceCatalog, GetUnknownNamesTheKnownPieces) {
  PieceCatalog cat = PieceCatalog::Load({});
  auto r = cat.Get("codin");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("known: chat, coding, reflection, research, review"));
  EXPECT_TRUE(cat.Get("coding").ok());
}

TEST(PieceCatalog, JsonForTheApi) {
  Json j = PieceCatalogJson(PieceCatalog::Load({}));
  ASSERT_EQ(j["pieces"].size(), 5u);
  const Json& coding = j["pieces"][1];
  EXPECT_EQ(coding["name"], "coding");
  EXPECT_EQ(coding["builtin"], true);
  EXPECT_EQ(coding["source"], "builtin:coding.yaml");
  EXPECT_EQ(coding["initial_movement"], "plan");
  EXPECT_EQ(coding["movements"][1]["next"], Json::parse(R"(["review","WAIT_SUBTASKS"])"));
  EXPECT_EQ(coding["movements"][1]["edit"], true);
  EXPECT_EQ(j["problems"], Json::array());
}

TEST(PieceCommands, LintPrintsProblemsAndFails) {
  testing::TempDir dir;
  std::ofstream(dir.File("p.yaml")) << "name: p\nmovements:\n  - name: a\n    rulez: []\n";
  std::ostringstream out, err;
  EXPECT_EQ(RunPieceLint(dir.File("p.yaml"), out, err), 1);
  EXPECT_EQ(err.str(), dir.File("p.yaml") +
                           ":4:5: unknown movement key 'rulez'; did you mean "
                           "'rules'?\n");
  EXPECT_EQ(out.str(), "");
}

TEST(PieceCommands, ListShowsEveryPiece) {
  std::ostringstream out, err;
  EXPECT_EQ(RunPieceList({}, out, err), 0);
  EXPECT_THAT(out.str(), HasSubstr("coding       builtin  [plan,implement,review,fix]"));
  EXPECT_THAT(out.str(), HasSubstr("chat         builtin  [chat]"));
  EXPECT_EQ(err.str(), "");
}

}  // namespace
}  // namespace maestro::engine
