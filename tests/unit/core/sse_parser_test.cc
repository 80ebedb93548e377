// SseParser: the one SSE reader of the LLM stream, MCP replies and the CLI's
// `task watch` — events split anywhere between chunks, every line ending,
// comments, ids (the event's own and the stream's last), retry, a stream
// cut mid-event. (Gathered from the three parsers' tests it replaced.)
#include "core/sse_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace maestro {
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

// MCP's stream: a priming event (id, empty data) is no event but keeps its
// id; `retry:` is kept; the id of an event not yet complete is the last id.
TEST(SseParser, SplitsMcpEventsWhereverTheChunksEnd) {
  const std::string stream =
      "id: p1\nretry: 250\ndata: \n\n"  // priming: id only
      ": keep-alive\n\n"                // comment
      "event: message\r\nid: e2\r\ndata: {\"a\":1}\r\n\r\n"
      "data: line one\rdata:line two\r\r"  // CR endings, no space after the colon
      "id: e4\ndata: {}\n";                // unfinished: no blank line yet
  for (size_t piece : {1u, 2u, 3u, 7u, 1000u}) {
    std::vector<std::string> got;
    SseParser r([&](const SseEvent& e) { got.push_back(e.event + "|" + e.data); });
    for (size_t i = 0; i < stream.size(); i += piece)
      r.Feed(std::string_view(stream).substr(i, piece));
    ASSERT_EQ(got.size(), 2u) << "piece " << piece;
    EXPECT_EQ(got[0], "message|{\"a\":1}");
    EXPECT_EQ(got[1], "|line one\nline two");
    EXPECT_EQ(r.last_event_id(), "e4");  // the id is kept before the event completes
    EXPECT_EQ(r.retry_ms(), std::optional<int>(250));
  }
}

TEST(SseParser, ThePrimingEventSetsTheIdWithoutAnEvent) {
  int events = 0;
  SseParser r([&](const SseEvent&) { ++events; });
  r.Feed("id: only\ndata:\n\n");
  EXPECT_EQ(events, 0);
  EXPECT_EQ(r.last_event_id(), "only");
  EXPECT_FALSE(r.retry_ms());
  r.Feed("retry: soon\n\n");  // not a number: ignored
  EXPECT_FALSE(r.retry_ms());
  r.Feed(std::string("id: a\0b\n\n", 9));  // an id with a NUL is ignored
  EXPECT_EQ(r.last_event_id(), "only");
}

// The CLI's frames: each event's own id ("" when it had none, though the
// stream's last id stays), however the transfer splits the bytes.
TEST(SseParser, CliFramesSplitAnywhereComeOutWhole) {
  const std::string stream =
      ": keep-alive\n\nid: 41\nevent: job.status\ndata: {\"a\":1}\n\n"
      "id: 42\r\nevent: delta\r\ndata: one\r\ndata: two\r\n\r\n"
      "event: end\ndata:{\"status\":\"succeeded\"}\n\n";
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    std::vector<SseEvent> frames;
    SseParser p([&](const SseEvent& e) { frames.push_back(e); });
    p.Feed(stream.substr(0, cut));
    p.Feed(stream.substr(cut));
    ASSERT_EQ(frames.size(), 3u) << "cut at " << cut;
    EXPECT_EQ(frames[0].id, "41");
    EXPECT_EQ(frames[0].event, "job.status");
    EXPECT_EQ(frames[0].data, "{\"a\":1}");
    EXPECT_EQ(frames[1].id, "42");
    EXPECT_EQ(frames[1].data, "one\ntwo");
    EXPECT_EQ(frames[2].id, "");
    EXPECT_EQ(frames[2].event, "end");
    EXPECT_EQ(frames[2].data, "{\"status\":\"succeeded\"}");
    EXPECT_EQ(p.last_event_id(), "42");
  }
}

TEST(SseParser, AnUnfinishedFrameWaitsForItsBlankLine) {
  std::vector<SseEvent> frames;
  SseParser p([&](const SseEvent& e) { frames.push_back(e); });
  p.Feed("id: 1\ndata: x\n");
  EXPECT_TRUE(frames.empty());
  p.Feed("\n");
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].data, "x");
}

}  // namespace
}  // namespace maestro
