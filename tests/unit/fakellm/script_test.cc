#include "fakellm/script.h"

#include <gtest/gtest.h>

namespace maestro::fakellm {
namespace {

Json Req(const std::string& last, const std::string& tool = "") {
  Json r = {{"messages", {{{"role", "system"}, {"content", "sys"}}, {{"role", "user"}, {"content", last}}}}};
  if (!tool.empty()) r["tools"] = {{{"type", "function"}, {"function", {{"name", tool}}}}};
  return r;
}

TEST(Script, SequenceThenDefault) {
  auto s = Script::FromJson(Json::parse(R"({"replies":[
      {"status":429,"retry_after_ms":20},
      {"text":"hello","repeat":2}],
    "default":{"text":"bye"}})"));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->Next(Req("x")).status, 429);
  EXPECT_EQ(s->Next(Req("x")).text, "hello");
  EXPECT_EQ(s->Next(Req("x")).text, "hello");
  EXPECT_EQ(s->Next(Req("x")).text, "bye");
}

TEST(Script, MatchWaitsForItsRequest) {
  auto s = Script::FromJson(Json::parse(R"({"replies":[
      {"match":{"last_message_contains":"README"},"text":"done"},
      {"match":{"tool_offered":"ReadFile"},
       "tool_calls":[{"name":"ReadFile","arguments":{"path":"README.md"}}]}]})"));
  ASSERT_TRUE(s.ok());
  ScriptReply r1 = s->Next(Req("start", "ReadFile"));
  ASSERT_EQ(r1.tool_calls.size(), 1u);
  EXPECT_EQ(r1.tool_calls[0].arguments, R"({"path":"README.md"})");
  EXPECT_EQ(r1.finish_reason, "tool_calls");
  EXPECT_EQ(s->Next(Req("contents of README")).text, "done");
  EXPECT_EQ(s->Next(Req("anything")).text, "ok");  // built-in default
}

TEST(Script, UnknownKeysAndBadShapesAreErrors) {
  EXPECT_FALSE(Script::FromJson(Json::parse(R"({"replies":[{"txt":"x"}]})")).ok());
  EXPECT_FALSE(Script::FromJson(Json::parse(R"({"replies":{}})")).ok());
  EXPECT_FALSE(Script::FromJson(Json::parse(R"({"replies":[{"tool_calls":[{}]}]})")).ok());
}

}  // namespace
}  // namespace maestro::fakellm
