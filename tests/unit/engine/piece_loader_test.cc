// Lint and load: every problem kind, reported as file:line:col: message.
#include "engine/piece/piece_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "support/temp_dir.h"

namespace maestro::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> Lint(const std::string& yaml, const std::string& base_dir = "") {
  PieceParse p = ParsePieceText(yaml, "p.yaml", base_dir);
  std::vector<std::string> out;
  for (const auto& pr : p.problems) out.push_back(pr.ToString());
  return out;
}

// Two movements, plan -> review; each case below edits one line of it.
const char* kValid =
    "name: p\n"                // 1
    "movements:\n"             // 2
    "  - name: plan\n"         // 3
    "    rules:\n"             // 4
    "      - condition: go\n"  // 5
    "        next: review\n"   // 6
    "  - name: review\n";      // 7

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

TEST(PieceLint, ValidPieceHasNoProblemsAndDefaults) {
  PieceParse p = ParsePieceText(kValid, "p.yaml", "");
  EXPECT_THAT(p.problems, IsEmpty());
  EXPECT_EQ(p.piece.initial_movement, "plan");
  EXPECT_EQ(p.piece.max_movements, 30);
  ASSERT_EQ(p.piece.movements.size(), 2u);
  EXPECT_EQ(p.piece.movements[0].rules[0].next, "review");
  EXPECT_EQ(p.piece.TransitionTargets(), std::vector<std::string>{"review"});
}

struct LintCase {
  const char* name;
  std::string yaml;
  std::vector<std::string> expected;
};

class PieceLintTable : public ::testing::TestWithParam<LintCase> {};

TEST_P(PieceLintTable, ReportsExactly) { EXPECT_EQ(Lint(GetParam().yaml), GetParam().expected); }

INSTANTIATE_TEST_SUITE_P(
    Problems, PieceLintTable,
    ::testing::Values(
        LintCase{"UnknownPieceKeySuggestsNearest",
                 std::string(kValid) + "descripton: x\n",
                 {"p.yaml:8:1: unknown piece key 'descripton'; did you mean 'description'?"}},
        LintCase{"UnknownMovementKeySuggestsNearest",
                 Replace(kValid, "  - name: review\n", "  - name: review\n    guidence: x\n"),
                 {"p.yaml:8:5: unknown movement key 'guidence'; did you mean 'guidance'?"}},
        LintCase{"UnknownKeyWithoutNearMiss",
                 std::string(kValid) + "zzzzzzzz: 1\n",
                 {"p.yaml:8:1: unknown piece key 'zzzzzzzz'"}},
        LintCase{"UnknownRuleKey",
                 Replace(kValid, "condition: go", "conditon: go"),
                 {"p.yaml:5:9: unknown rule key 'conditon'; did you mean 'condition'?"}},
        LintCase{"MissingTargetSuggestsNearest",
                 Replace(kValid, "next: review", "next: reveiw"),
                 {"p.yaml:6:15: rules[].next 'reveiw' is not a movement of this piece; did you "
                  "mean 'review'?",
                  "p.yaml:7:11: movement 'review' is unreachable from initial movement 'plan'"}},
        LintCase{"CompleteInRulesNext",
                 Replace(kValid, "next: review", "next: COMPLETE"),
                 {"p.yaml:6:15: rules[].next may not be 'COMPLETE': only movements and "
                  "WAIT_SUBTASKS are allowed; finishing, asking and aborting use the complete "
                  "tool",
                  "p.yaml:7:11: movement 'review' is unreachable from initial movement 'plan'"}},
        LintCase{"AbortInRulesNext",
                 Replace(kValid, "        next: review\n",
                         "        next: review\n      - condition: x\n        next: ABORT\n"),
                 {"p.yaml:8:15: rules[].next may not be 'ABORT': only movements and "
                  "WAIT_SUBTASKS are allowed; finishing, asking and aborting use the complete "
                  "tool"}},
        LintCase{"AskInRulesNext",
                 Replace(kValid, "        next: review\n",
                         "        next: review\n      - condition: x\n        next: ASK\n"),
                 {"p.yaml:8:15: rules[].next may not be 'ASK': only movements and WAIT_SUBTASKS "
                  "are allowed; finishing, asking and aborting use the complete tool"}},
        LintCase{"WaitingHumanSentinelInRulesNext",
                 Replace(kValid, "        next: review\n",
                         "        next: review\n      - condition: x\n"
                         "        next: WAITING_HUMAN_TOOL_REQUEST\n"),
                 {"p.yaml:8:15: rules[].next may not be 'WAITING_HUMAN_TOOL_REQUEST': only "
                  "movements and WAIT_SUBTASKS are allowed; finishing, asking and aborting use "
                  "the complete tool"}},
        LintCase{
            "WaitSubtasksIsAllowed",
            Replace(kValid, "        next: review\n",
                    "        next: review\n      - condition: x\n        next: WAIT_SUBTASKS\n"),
            {}},
        LintCase{"UnreachableMovement",
                 std::string(kValid) + "  - name: orphan\n",
                 {"p.yaml:8:11: movement 'orphan' is unreachable from initial movement 'plan'"}},
        LintCase{"DuplicateMovementName",
                 Replace(kValid, "  - name: review\n", "  - name: review\n  - name: plan\n"),
                 {"p.yaml:8:11: duplicate movement name 'plan' (first defined at line 3)"}},
        LintCase{"SentinelAsMovementName",
                 std::string(kValid) + "  - name: COMPLETE\n",
                 {"p.yaml:8:11: movement name 'COMPLETE' is reserved for the engine",
                  "p.yaml:8:11: movement 'COMPLETE' is unreachable from initial movement "
                  "'plan'"}},
        LintCase{"UnknownInitialMovement",
                 std::string(kValid) + "initial_movement: plam\n",
                 {"p.yaml:8:19: initial_movement 'plam' is not a movement of this piece; did "
                  "you mean 'plan'?"}},
        LintCase{"MaxMovementsNotAnInteger",
                 std::string(kValid) + "max_movements: many\n",
                 {"p.yaml:8:16: 'max_movements' must be an integer"}},
        LintCase{"MaxMovementsOutOfRange",
                 std::string(kValid) + "max_movements: 0\n",
                 {"p.yaml:8:16: 'max_movements' must be between 1 and 1000, got 0"}},
        LintCase{"EditNotABool",
                 Replace(kValid, "  - name: review\n", "  - name: review\n    edit: maybe\n"),
                 {"p.yaml:8:11: 'edit' must be true or false"}},
        LintCase{
            "RulesNotAList",
            Replace(kValid, "  - name: review\n", "  - name: review\n    rules: {next: plan}\n"),
            {"p.yaml:8:12: 'rules' must be a list of {condition, next}"}},
        LintCase{"MovementsNotAList",
                 "name: p\nmovements: plan\n",
                 {"p.yaml:2:12: 'movements' must be a list of movements"}},
        LintCase{"MissingNameAndMovements",
                 "description: x\n",
                 {"p.yaml:1:1: missing required key 'name'",
                  "p.yaml:1:1: missing required key 'movements'"}},
        LintCase{"RuleWithoutNext",
                 Replace(kValid, "        next: review\n", ""),
                 {"p.yaml:5:9: rule is missing required key 'next'",
                  "p.yaml:6:11: movement 'review' is unreachable from initial movement 'plan'"}},
        LintCase{"UnknownToolSuggestsNearest",
                 Replace(kValid, "  - name: review\n",
                         "  - name: review\n    allowed_tools: [ReadFile, ReadFiel]\n"),
                 {"p.yaml:8:31: unknown tool 'ReadFiel'; did you mean 'ReadFile'?"}},
        LintCase{"GuidanceAndInstructionBoth",
                 Replace(kValid, "  - name: review\n",
                         "  - name: review\n    guidance: a\n    instruction: b\n"),
                 {"p.yaml:9:5: give either 'guidance' or 'instruction', not both"}},
        LintCase{
            "DefaultNextUnknown",
            Replace(kValid, "  - name: review\n", "  - name: review\n    default_next: nowhere\n"),
            {"p.yaml:7:11: default_next 'nowhere' is not a movement of this piece"}},
        LintCase{"DefaultNextSentinel",
                 Replace(kValid, "  - name: review\n", "  - name: review\n    default_next: ASK\n"),
                 {"p.yaml:7:11: default_next of 'review' may be a movement or COMPLETE, not "
                  "'ASK'"}},
        LintCase{
            "LoopMonitorBadTargets",
            std::string(kValid) + "loop_monitors:\n  - cycle: [plan, reviw]\n    on_exceed: stop\n",
            {"p.yaml:9:5: loop monitor cycle entry 'reviw' is not a movement of this "
             "piece; did you mean 'review'?",
             "p.yaml:9:5: on_exceed (ABORT or a movement) 'stop' is not a movement of this "
             "piece"}},
        LintCase{"DuplicateKey",
                 Replace(kValid, "  - name: review\n",
                         "  - name: review\n    edit: true\n    edit: false\n"),
                 {"p.yaml:9:5: duplicate movement key 'edit' (first at line 8)"}},
        LintCase{"YamlSyntaxError",
                 "name: p\nmovements: [a\n",
                 {"p.yaml:3:1: end of sequence flow not found"}}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(PieceLint, EveryProblemIsReportedInFileOrder) {
  std::string yaml = Replace(kValid, "next: review", "next: COMPLETE");
  yaml = Replace(yaml, "  - name: plan\n", "  - name: plan\n    edit: sometimes\n");
  yaml += "max_movments: 3\n";
  auto got = Lint(yaml);
  ASSERT_EQ(got.size(), 4u) << ::testing::PrintToString(got);
  EXPECT_EQ(got[0], "p.yaml:4:11: 'edit' must be true or false");
  EXPECT_THAT(got[1], ::testing::StartsWith("p.yaml:7:15: rules[].next may not be 'COMPLETE'"));
  EXPECT_THAT(got[2], ::testing::StartsWith("p.yaml:8:11: movement 'review' is unreachable"));
  EXPECT_EQ(got[3], "p.yaml:9:1: unknown piece key 'max_movments'; did you mean 'max_movements'?");
}

TEST(PieceLint, TextFileReferencesResolveNextToThePiece) {
  testing::TempDir dir;
  std::ofstream(dir.File("persona.md")) << "You are careful.";
  std::string yaml = Replace(kValid, "  - name: review\n",
                             "  - name: review\n    persona: {file: persona.md}\n"
                             "    policy: {file: missing.md}\n");
  std::ofstream(dir.File("p.yaml")) << yaml;
  PieceParse p = ParsePieceFile(dir.File("p.yaml"));
  ASSERT_EQ(p.problems.size(), 1u);
  EXPECT_EQ(p.problems[0].ToString(),
            dir.File("p.yaml") + ":9:20: cannot read file '" + dir.File("missing.md") + "'");
  EXPECT_EQ(p.piece.movements[1].persona.text, "You are careful.");
  EXPECT_EQ(p.piece.movements[1].persona.file, "persona.md");
}

TEST(PieceLoad, RefusesAPieceWithProblemsListingAll) {
  auto r = LoadPieceText(Replace(kValid, "next: review", "next: ASK"), "p.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(),
              ::testing::HasSubstr("p.yaml:6:15: rules[].next may not be 'ASK'"));
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("\np.yaml:7:11: movement 'review'"));
}

TEST(PieceLoad, MissingFileIsAProblemWithoutPosition) {
  PieceParse p = ParsePieceFile("/nonexistent/x.yaml");
  ASSERT_EQ(p.problems.size(), 1u);
  EXPECT_EQ(p.problems[0].ToString(), "/nonexistent/x.yaml: cannot open file");
}

TEST(PieceLoad, ReadsEveryMovementField) {
  const char* yaml =
      "name: full\n"
      "description: d\n"
      "initial_movement: b\n"
      "max_movements: 7\n"
      "movements:\n"
      "  - name: a\n"
      "    instruction: do a\n"
      "    persona: inline persona\n"
      "    allowed_tools: [ReadFile]\n"
      "    edit: true\n"
      "    default_next: b\n"
      "    max_iterations: 12\n"
      "    rules: [{condition: c, next: b}, {condition: w, next: WAIT_SUBTASKS}]\n"
      "  - name: b\n"
      "    guidance: do b\n"
      "    rules: [{next: a}]\n"
      "loop_monitors:\n"
      "  - {cycle: [a, b], threshold: 2, warning: careful, on_exceed: b}\n";
  auto r = LoadPieceText(yaml, "full.yaml");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Piece& p = *r;
  EXPECT_EQ(p.initial_movement, "b");
  EXPECT_EQ(p.max_movements, 7);
  const Movement& a = p.movements[0];
  EXPECT_EQ(a.guidance, "do a");
  EXPECT_EQ(a.persona.text, "inline persona");
  EXPECT_THAT(*a.allowed_tools, ElementsAre("ReadFile"));
  EXPECT_TRUE(a.edit);
  EXPECT_EQ(a.default_next, "b");
  EXPECT_EQ(a.max_iterations, 12);
  EXPECT_FALSE(p.movements[1].allowed_tools.has_value());
  ASSERT_EQ(p.loop_monitors.size(), 1u);
  EXPECT_THAT(p.loop_monitors[0].cycle, ElementsAre("a", "b"));
  EXPECT_EQ(p.loop_monitors[0].threshold, 2);
  EXPECT_EQ(p.loop_monitors[0].on_exceed, "b");
  EXPECT_THAT(p.TransitionTargets(), ElementsAre("b", "WAIT_SUBTASKS", "a"));
}

}  // namespace
}  // namespace maestro::engine
