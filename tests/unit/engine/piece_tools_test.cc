// The tools array: layout, byte stability, control tool schemas, run-time checks.
#include "engine/piece_tools.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "context/handoff_document.h"
#include "engine_test_util.h"
#include "tools/park_tools.h"
#include "tools/registry.h"

namespace maestro::engine {
namespace {

using test::Builtin;
using test::PolicyTools;
using test::ToolDef;
using ::testing::ElementsAre;

TEST(PieceTools, CodingLayoutIsSortedRegularThenTransitionThenComplete) {
  auto t = BuildPieceTools(Builtin("coding"), PolicyTools());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_THAT(t->names, ElementsAre("EditFile", "Glob", "Grep", "ListDir", "ReadFile", "RunCommand",
                                    "WriteFile", "transition", "complete"));
  EXPECT_EQ(t->bytes, t->tools.dump());
}

TEST(PieceTools, TransitionEnumIsTheUnionOfAllTargets) {
  auto t = BuildPieceTools(Builtin("coding"), PolicyTools());
  ASSERT_TRUE(t.ok());
  const Json& tr = t->tools[t->tools.size() - 2]["function"];
  EXPECT_EQ(tr["name"], "transition");
  EXPECT_EQ(tr["parameters"]["properties"]["next"]["enum"],
            Json::parse(R"(["implement","review","WAIT_SUBTASKS","fix"])"));
  EXPECT_EQ(tr["parameters"]["required"], Json::parse(R"(["next"])"));
  // Static: the same description whatever the piece and its targets.
  auto r = BuildPieceTools(Builtin("research"), PolicyTools());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->tools[r->tools.size() - 2]["function"]["description"], tr["description"]);
}

TEST(PieceTools, CompleteIsLastWithItsSchema) {
  auto t = BuildPieceTools(Builtin("chat"), PolicyTools());
  ASSERT_TRUE(t.ok());
  const Json& c = t->tools.back()["function"];
  EXPECT_EQ(c["name"], "complete");
  EXPECT_EQ(c["parameters"]["properties"]["status"]["enum"],
            Json::parse(R"(["success","needs_user_input","error"])"));
  EXPECT_TRUE(c["parameters"]["properties"].contains("result"));
  EXPECT_TRUE(c["parameters"]["properties"].contains("question"));
  EXPECT_EQ(c["parameters"]["required"], Json::parse(R"(["status","result"])"));
}

TEST(PieceTools, PieceWithoutTransitionsHasNoTransitionTool) {
  auto t = BuildPieceTools(Builtin("chat"), PolicyTools());
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(std::count(t->names.begin(), t->names.end(), "transition"), 0);
  EXPECT_EQ(t->names.back(), "complete");
}

TEST(PieceTools, BytesDoNotDependOnPolicyOrder) {
  auto tools = PolicyTools();
  auto a = BuildPieceTools(Builtin("coding"), tools);
  std::reverse(tools.begin(), tools.end());
  tools.push_back(tools.front());  // the same definition twice (policy + grant)
  auto b = BuildPieceTools(Builtin("coding"), tools);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->bytes, b->bytes);
}

TEST(PieceTools, NarrowedToTheUnionWhenEveryMovementListsTools) {
  // review lists only read-only tools: the write tools never reach the model.
  auto t = BuildPieceTools(Builtin("review"), PolicyTools());
  ASSERT_TRUE(t.ok());
  EXPECT_THAT(t->names,
              ElementsAre("Glob", "Grep", "ListDir", "ReadFile", "RunCommand", "complete"));
}

TEST(PieceTools, RejectsReservedMalformedAndConflictingDefinitions) {
  Piece chat = Builtin("chat");
  EXPECT_FALSE(BuildPieceTools(chat, {ToolDef("complete", "x")}).ok());
  EXPECT_FALSE(BuildPieceTools(chat, {ToolDef("transition", "x")}).ok());
  EXPECT_FALSE(BuildPieceTools(chat, {Json{{"type", "function"}}}).ok());
  auto r = BuildPieceTools(chat, {ToolDef("ReadFile", "a"), ToolDef("ReadFile", "b")});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("two different definitions"));
}

TEST(PieceTools, TransitionErrorListsValidOptions) {
  Piece coding = Builtin("coding");
  EXPECT_EQ(TransitionError(coding, "plan", "implement"), "");
  EXPECT_EQ(TransitionError(coding, "implement", "WAIT_SUBTASKS"), "");
  EXPECT_EQ(TransitionError(coding, "plan", "review"),
            "Error: 'review' is not a valid transition from movement 'plan'. Valid options: "
            "implement.");
  EXPECT_EQ(TransitionError(coding, "implement", "fix"),
            "Error: 'fix' is not a valid transition from movement 'implement'. Valid options: "
            "review, WAIT_SUBTASKS.");
  EXPECT_EQ(TransitionError(Builtin("chat"), "chat", "chat"),
            "Error: movement 'chat' has no transitions. Call `complete` when the work is done.");
}

TEST(PieceTools, ToolAllowedInMovementFollowsAllowedTools) {
  Piece coding = Builtin("coding");
  const Movement& plan = *coding.FindMovement("plan");
  const Movement& implement = *coding.FindMovement("implement");
  EXPECT_TRUE(ToolAllowedInMovement(plan, "ReadFile"));
  EXPECT_FALSE(ToolAllowedInMovement(plan, "WriteFile"));
  EXPECT_TRUE(ToolAllowedInMovement(plan, "complete"));
  EXPECT_TRUE(ToolAllowedInMovement(plan, "transition"));
  EXPECT_TRUE(ToolAllowedInMovement(implement, "WriteFile"));  // no list: the policy decides
}

// The engine offers context::WriteHandoffToolDefinition (what ParseHandoff
// checks); the registry lists WriteHandoff among the design's tools. Their
// schemas must not drift apart: equal once the descriptions are dropped.
Json WithoutDescriptions(Json j) {
  if (j.is_object()) {
    j.erase("description");
    for (auto& [k, v] : j.items()) v = WithoutDescriptions(v);
  } else if (j.is_array()) {
    for (auto& v : j) v = WithoutDescriptions(v);
  }
  return j;
}

TEST(PieceTools, WriteHandoffSchemaOfTheRegistryMatchesTheOfferedOne) {
  tools::ToolRegistry registry;
  ASSERT_TRUE(tools::RegisterParkTools(registry).ok());
  const tools::ToolSpec* listed = registry.Find("WriteHandoff");
  ASSERT_NE(listed, nullptr);
  Json offered = context::WriteHandoffToolDefinition()["function"]["parameters"];
  EXPECT_EQ(WithoutDescriptions(listed->parameters), WithoutDescriptions(offered))
      << listed->parameters.dump() << "\n"
      << offered.dump();
}
}  // namespace
}  // namespace maestro::engine
