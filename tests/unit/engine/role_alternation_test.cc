// Role alternation (issue 45 item 3): adjacent user messages merged in the
// seeded messages and in the copy the agent loop sends, and nothing else
// touched.
#include "engine/prompt/role_alternation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "chat_messages.h"
#include "context/message_store.h"
#include "core/durable_file.h"
#include "support/temp_dir.h"

namespace maestro::engine {
namespace {

using test::Asst;
using test::Call;
using test::Sys;
using test::Tool;
using test::User;

std::vector<Json> ReadLines(const std::string& path) {
  std::vector<Json> out;
  EXPECT_TRUE(ForEachLine(*Env::Default(), path, [&](std::string_view line, uint64_t) {
                out.push_back(Json::parse(line));
                return true;
              }).ok());
  return out;
}

TEST(RoleAlternation, AdjacentUserMessagesBecomeOneJoinedByABlankLine) {
  std::vector<Json> m = {Sys(), User("a"), User("b"), User("c"), Asst("x"), User("d")};
  EXPECT_TRUE(HasAdjacentUserMessages(m));
  EXPECT_EQ(MergeAdjacentUserMessages(m), 2);
  EXPECT_EQ(Json(m).dump(), Json({Sys(), User("a\n\nb\n\nc"), Asst("x"), User("d")}).dump());
  EXPECT_FALSE(HasAdjacentUserMessages(m));
  // A tool result between two user messages is not adjacency.
  std::vector<Json> ok = {Sys(), User("a"), Asst("", {Call("c", "ReadFile")}), Tool("c", "r"),
                          User("b")};
  EXPECT_EQ(MergeAdjacentUserMessages(ok), 0);
}

TEST(RoleAlternation, ContentPartsAreConcatenatedWithTheTouchingTextsJoined) {
  Json image = {{"type", "image_url"}, {"image_url", {{"url", "data:image/png;base64,AA"}}}};
  Json parts = {{"role", "user"},
                {"content", Json::array({{{"type", "text"}, {"text", "see"}}, image})}};
  Json merged = MergeUserMessages(User("first"), parts);
  EXPECT_EQ(merged["content"].dump(),
            Json::array({{{"type", "text"}, {"text", "first\n\nsee"}}, image}).dump());
  Json back = MergeUserMessages(parts, User("after"));
  ASSERT_EQ(back["content"].size(), 3u);
  EXPECT_EQ(back["content"][2]["text"], "after");
}

// The merged text of a longer conversation starts with the merged text of
// the shorter one: what a chat template renders keeps the old prompt as its
// prefix up to the old message's end.
TEST(RoleAlternation, AGrowingRunKeepsItsTextAsAPrefix) {
  std::vector<Json> before = {Sys(), User("U0"), User("U1")};
  std::vector<Json> after = {Sys(), User("U0"), User("U1"), User("U2")};
  MergeAdjacentUserMessages(before);
  MergeAdjacentUserMessages(after);
  std::string old_text = before[1]["content"];
  std::string new_text = after[1]["content"];
  EXPECT_EQ(new_text.rfind(old_text, 0), 0u);
}

TEST(RoleAlternation, TheCopyMergesRunsAndCopiesEveryOtherLineByteForByte) {
  maestro::testing::TempDir dir;
  std::string in = dir.path() + "/current.jsonl";
  std::string out = dir.path() + "/alternating.jsonl";
  std::vector<Json> msgs = {Sys("s"),
                            User("task"),
                            Asst("", {Call("c1", "ReadFile", R"({"path":"a"})")}),
                            Tool("c1", "é\u00e9 r"),
                            User("guidance"),
                            User("interjection"),
                            User("warning"),
                            Asst("done")};
  std::string text;
  for (const Json& m : msgs) text += context::MessageLine(m);
  ASSERT_TRUE(ReplaceFileContent(*Env::Default(), in, text).ok());
  auto bytes = WriteAlternatingCopy(*Env::Default(), in, out);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto size = FileSize(*Env::Default(), out);
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*bytes, *size);
  std::vector<Json> got = ReadLines(out);
  MergeAdjacentUserMessages(msgs);
  EXPECT_EQ(Json(got).dump(), Json(msgs).dump());
  EXPECT_FALSE(HasAdjacentUserMessages(got));
  // The lines before the run are the source's bytes.
  std::string copy;
  ASSERT_TRUE(ForEachLine(*Env::Default(), out, [&](std::string_view l, uint64_t) {
                copy.append(l).push_back('\n');
                return true;
              }).ok());
  std::string head = context::MessageLine(Sys("s")) + context::MessageLine(User("task"));
  EXPECT_EQ(copy.rfind(head, 0), 0u);
}

TEST(RoleAlternation, TheStoreSaysWhenItsLiveFileHasAdjacentUserMessages) {
  maestro::testing::TempDir dir;
  SystemClock clock;
  auto ms = context::MessageStore::Open(dir.path(), &clock);
  ASSERT_TRUE(ms.ok()) << ms.status().ToString();
  ASSERT_TRUE(ms->SeedThread("j1", {Sys(), User("task")}, "").ok());
  EXPECT_FALSE(ms->has_adjacent_user_messages());
  ASSERT_TRUE(ms->AddMessage(Asst("", {Call("c", "ReadFile")}), "j1").ok());
  ASSERT_TRUE(ms->AddMessage(Tool("c", "r"), "j1").ok());
  ASSERT_TRUE(ms->AddMessage(User("guidance"), "j1").ok());
  EXPECT_FALSE(ms->has_adjacent_user_messages());
  ASSERT_TRUE(ms->AddMessage(User("interjection"), "j1").ok());
  EXPECT_TRUE(ms->has_adjacent_user_messages());
  // Reopened (a recovered run): counted from the file.
  auto again = context::MessageStore::Open(dir.path(), &clock);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->has_adjacent_user_messages());
  // A new seed (merged by SeedConversation) clears it.
  ASSERT_TRUE(again->SeedThread("j2", {Sys(), User("task\n\nmore")}, "").ok());
  EXPECT_FALSE(again->has_adjacent_user_messages());
}

}  // namespace
}  // namespace maestro::engine
