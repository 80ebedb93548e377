#include "fakellm/script.h"

#include <gtest/gtest.h>

namespace maestro::fakellm {
namespace {

Json Req(const std::string& last, const std::string& tool = "") {
  Json r = {{"messages",
             {{{"role", "system"}, {"content", "sys"}}, {{"role", "user"}, {"content", last}}}}};
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

Json Conversation(const std::vector<std::string>& contents) {
  Json msgs = Json::array({{{"role", "system"}, {"content", "sys"}}});
  for (const auto& c : contents) msgs.push_back({{"role", "user"}, {"content", c}});
  return {{"messages", msgs}};
}

// Concurrent runs: each reply names its run's tag and a marker of its step;
// later steps come first, so a run gets the reply of the furthest step its
// conversation has reached, whatever the other runs consumed.
TEST(Script, AnyMessageContainsAListNeedsEveryStringInSomeMessage) {
  auto s = Script::FromJson(Json::parse(R"({"replies":[
      {"match":{"any_message_contains":["<A>","wrote "]},"text":"A done","repeat":0},
      {"match":{"any_message_contains":["<A>"]},"text":"A write","repeat":0},
      {"match":{"any_message_contains":["<B>","wrote "]},"text":"B done","repeat":0},
      {"match":{"any_message_contains":"<B>"},"text":"B write","repeat":0}]})"));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->Next(Conversation({"<B> go"})).text, "B write");
  EXPECT_EQ(s->Next(Conversation({"<A> go"})).text, "A write");
  EXPECT_EQ(s->Next(Conversation({"<A> go", "wrote 3 bytes"})).text, "A done");
  // Both strings in one message count too; a retry gets the same reply.
  EXPECT_EQ(s->Next(Conversation({"<B> go and wrote 3 bytes"})).text, "B done");
  EXPECT_EQ(s->Next(Conversation({"<B> go and wrote 3 bytes"})).text, "B done");
  EXPECT_EQ(s->Next(Conversation({"wrote 3 bytes"})).text, "ok");  // no tag: no reply
}

TEST(Script, AnyMessageContainsMustBeAStringOrAListOfStrings) {
  EXPECT_FALSE(
      Script::FromJson(Json::parse(R"({"replies":[{"match":{"any_message_contains":3}}]})")).ok());
  EXPECT_FALSE(
      Script::FromJson(Json::parse(R"({"replies":[{"match":{"any_message_contains":["a",1]}}]})"))
          .ok());
}

TEST(Script, UnknownKeysAndBadShapesAreErrors) {
  EXPECT_FALSE(Script::FromJson(Json::parse(R"({"replies":[{"txt":"x"}]})")).ok());
  EXPECT_FALSE(Script::FromJson(Json::parse(R"({"replies":{}})")).ok());
  EXPECT_FALSE(Script::FromJson(Json::parse(R"({"replies":[{"tool_calls":[{}]}]})")).ok());
}

}  // namespace
}  // namespace maestro::fakellm
