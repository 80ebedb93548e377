#include "llm/sse_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace maestro::llm {
namespace {

struct Collected {
  std::vector<SseEvent> events;
  std::vector<std::string> comments;
};

// Feeds `text` in pieces of `step` bytes.
Collected Parse(const std::string& text, size_t step, bool* cut = nullptr) {
  Collected c;
  SseParser p([&](const SseEvent& e) { c.events.push_back(e); },
              [&](std::string_view s) { c.comments.emplace_back(s); });
  for (size_t i = 0; i < text.size(); i += step) p.Feed(std::string_view(text).substr(i, step));
  bool was_cut = p.Finish();
  if (cut) *cut = was_cut;
  return c;
}

TEST(SseParser, DataLinesAndDoneAcrossEverySplit) {
  const std::string text = "data: {\"a\":1}\n\ndata: [DONE]\n\n";
  for (size_t step = 1; step <= text.size(); ++step) {
    Collected c = Parse(text, step);
    ASSERT_EQ(c.events.size(), 2u) << "step " << step;
    EXPECT_EQ(c.events[0].data, "{\"a\":1}");
    EXPECT_EQ(c.events[1].data, "[DONE]");
  }
}

TEST(SseParser, MultiLineEventJoinsDataWithNewline) {
  Collected c = Parse("data: {\"a\":\ndata: 1}\nid: 7\nevent: delta\n\n", 3);
  ASSERT_EQ(c.events.size(), 1u);
  EXPECT_EQ(c.events[0].data, "{\"a\":\n1}");
  EXPECT_EQ(c.events[0].id, "7");
  EXPECT_EQ(c.events[0].event, "delta");
}

TEST(SseParser, CrLfAndBareCrLineEndsSplitBetweenCrAndLf) {
  const std::string crlf = "data: x\r\n\r\ndata: y\r\r";
  for (size_t step = 1; step <= crlf.size(); ++step) {
    Collected c = Parse(crlf, step);
    ASSERT_EQ(c.events.size(), 2u) << "step " << step;
    EXPECT_EQ(c.events[0].data, "x");
    EXPECT_EQ(c.events[1].data, "y");
  }
}

TEST(SseParser, CommentsAndKeepAlivesAreNotEvents) {
  Collected c = Parse(": keep-alive\n\n:ping\ndata: z\n\n", 2);
  ASSERT_EQ(c.events.size(), 1u);
  EXPECT_EQ(c.events[0].data, "z");
  ASSERT_EQ(c.comments.size(), 2u);
  EXPECT_EQ(c.comments[0], " keep-alive");
}

TEST(SseParser, NoSpaceAfterColonAndFieldWithoutColon) {
  Collected c = Parse("data:tight\ndata\n\n", 100);
  ASSERT_EQ(c.events.size(), 1u);
  EXPECT_EQ(c.events[0].data, "tight\n");
}

TEST(SseParser, BlankLinesWithoutDataDispatchNothing) {
  Collected c = Parse("\n\n\nevent: x\n\n", 1);
  EXPECT_TRUE(c.events.empty());
}

TEST(SseParser, StreamCutMidEventIsReportedAndDiscarded) {
  bool cut = false;
  Collected c = Parse("data: {\"a\":1}\n\ndata: {\"tru", 4, &cut);
  EXPECT_TRUE(cut);
  ASSERT_EQ(c.events.size(), 1u);
  cut = false;
  c = Parse("data: {\"a\":1}\n\ndata: {\"b\":2}\n", 4, &cut);  // no blank line
  EXPECT_TRUE(cut);
  EXPECT_EQ(c.events.size(), 1u);
  c = Parse("data: {\"a\":1}\n\n", 4, &cut);
  EXPECT_FALSE(cut);
}

}  // namespace
}  // namespace maestro::llm
