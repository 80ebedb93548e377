// The tools array: layout, byte stability, control tool schemas, run-time checks.
#include "engine/piece/piece_tools.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/handoff/document.h"
#include "engine_test_util.h"
#include "tools/park_tools.h"
#include "tools/registry.h"
#include "tools/schema.h"

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
  Status en = tools::ValidateArgs(c["parameters"], {{"status", "done"}, {"result", ""}});
  EXPECT_EQ(en.field(), "status");
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

// WriteHandoff has one definition (tools::WriteHandoffToolSpec): the
// registry lists it and the engine offers it. What must not drift apart is
// that schema and the parser the engine checks a call with (ParseHandoff).
TEST(PieceTools, WriteHandoffSchemaOfTheRegistryMatchesTheOfferedOne) {
  tools::ToolRegistry registry;
  ASSERT_TRUE(tools::RegisterParkTools(registry).ok());
  const tools::ToolSpec* listed = registry.Find("WriteHandoff");
  ASSERT_NE(listed, nullptr);
  Json offered = tools::ToolEntry(tools::WriteHandoffToolSpec())["function"]["parameters"];
  EXPECT_EQ(listed->parameters, offered) << listed->parameters.dump() << "\n" << offered.dump();
}

TEST(PieceTools, WriteHandoffSchemaAndParseHandoffAcceptAndRefuseAlike) {
  const Json schema = tools::WriteHandoffToolSpec().parameters;
  const Json valid = {
      {"spec_ref", "SPEC.md"},
      {"status", {{"completed", {"a"}}, {"in_progress", Json::array()}, {"pending", {"b"}}}},
      {"decisions", {{{"what", "x"}, {"why", "y"}}}},
      {"blockers", Json::array()},
      {"files_changed", {"a.cc — created"}}};
  EXPECT_TRUE(tools::ValidateArgs(schema, valid).ok());
  EXPECT_TRUE(ParseHandoff(valid).ok());
  Json extra = valid;
  extra["next_steps"] = Json::array();
  Json missing = valid;
  missing.erase("decisions");
  Json nested = valid;
  nested["decisions"][0].erase("why");
  Json status_extra = valid;
  status_extra["status"]["done"] = Json::array();
  for (const Json& bad : {extra, missing, nested, status_extra}) {
    EXPECT_FALSE(tools::ValidateArgs(schema, bad).ok()) << bad.dump();
    EXPECT_FALSE(ParseHandoff(bad).ok()) << bad.dump();
  }
}
}  // namespace
}  // namespace maestro::engine
