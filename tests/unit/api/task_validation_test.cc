// The edge checks of create/continue (issue 12 item 3): an unknown piece,
// space, profile or model is refused naming the field, and `model` is mapped
// onto the profile that serves it.
#include "api/task_validation.h"

#include <gtest/gtest.h>

namespace maestro::api {
namespace {

TaskChoices Choices() {
  TaskChoices c;
  c.piece_names = [] { return std::vector<std::string>{"chat", "coding"}; };
  c.spaces = {{"docs", "the docs", "/srv/docs", false, true, false, {"ReadFile", "WriteFile"}}};
  c.profiles = {{"default", "qwen3"}, {"fast", "qwen3-small"}};
  return c;
}

NewTask TaskOf(const std::string& piece) {
  NewTask t;
  t.instruction = "x";
  t.piece = piece;
  return t;
}

TEST(TaskChoicesTest, UnknownPieceNamesTheFieldAndTheKnownPieces) {
  Status st = CheckPiece(Choices(), "nosuch");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.field(), "piece");
  EXPECT_NE(st.message().find("chat, coding"), std::string::npos) << st.message();
  EXPECT_TRUE(CheckPiece(Choices(), "coding").ok());
  EXPECT_TRUE(CheckPiece(TaskChoices{}, "anything").ok()) << "no catalog: not checked";
}

TEST(TaskChoicesTest, SpaceMustBeConfiguredEvenWhenNoneAre) {
  EXPECT_TRUE(CheckSpace(Choices(), "").ok());
  EXPECT_TRUE(CheckSpace(Choices(), "docs").ok());
  Status st = CheckSpace(Choices(), "doc");
  EXPECT_EQ(st.field(), "space");
  EXPECT_NE(st.message().find("configured spaces: docs"), std::string::npos) << st.message();
  Status none = CheckSpace(TaskChoices{}, "docs");
  EXPECT_EQ(none.field(), "space");
  EXPECT_NE(none.message().find("spaces:"), std::string::npos) << none.message();
}

TEST(TaskChoicesTest, ProfileIsResolvedToItsModelAndUnknownOnesListTheProfiles) {
  NewTask t = TaskOf("chat");
  t.profile = "fast";
  ASSERT_TRUE(ResolveProfile(Choices(), &t).ok());
  EXPECT_EQ(t.model, "qwen3-small");

  NewTask bad = TaskOf("chat");
  bad.profile = "turbo";
  Status st = ResolveProfile(Choices(), &bad);
  EXPECT_EQ(st.field(), "profile");
  EXPECT_NE(st.message().find("configured profiles: default, fast"), std::string::npos)
      << st.message();
}

TEST(TaskChoicesTest, ModelIsMappedOntoTheProfileServingItOrRefused) {
  NewTask t = TaskOf("chat");
  t.model = "qwen3-small";
  ASSERT_TRUE(ResolveProfile(Choices(), &t).ok());
  EXPECT_EQ(t.profile, "fast");

  NewTask unknown = TaskOf("chat");
  unknown.model = "gpt-9";
  Status st = ResolveProfile(Choices(), &unknown);
  EXPECT_EQ(st.field(), "model");
  EXPECT_NE(st.message().find("fast=qwen3-small"), std::string::npos) << st.message();

  NewTask mismatch = TaskOf("chat");
  mismatch.profile = "default";
  mismatch.model = "qwen3-small";  // served, but not by the profile asked for
  EXPECT_EQ(ResolveProfile(Choices(), &mismatch).field(), "model");

  NewTask plain = TaskOf("chat");
  ASSERT_TRUE(ResolveProfile(Choices(), &plain).ok());
  EXPECT_EQ(plain.profile, "") << "no choice: the default profile, as before";
}

TEST(TaskChoicesTest, SpacesJsonHasTheExactShape) {
  Json j = SpacesJson(Choices());
  Json want = Json::parse(R"({"spaces":[{"name":"docs","description":"the docs",
    "path":"/srv/docs","network_allowed":false,"edit_allowed":true,"shell_allowed":false,
    "tools":["ReadFile","WriteFile"]}]})");
  EXPECT_EQ(j, want) << j.dump();
  EXPECT_EQ(SpacesJson(TaskChoices{}), Json::parse(R"({"spaces":[]})"));
}

TEST(TaskChoicesTest, ProfilesJsonListsNamesAndModelsDefaultFirst) {
  Json j = ProfilesJson(Choices());
  Json want = Json::parse(R"({"profiles":[{"name":"default","model":"qwen3"},
    {"name":"fast","model":"qwen3-small"}]})");
  EXPECT_EQ(j, want) << j.dump();
  EXPECT_EQ(ProfilesJson(TaskChoices{}), Json::parse(R"({"profiles":[]})"));
}

}  // namespace
}  // namespace maestro::api
