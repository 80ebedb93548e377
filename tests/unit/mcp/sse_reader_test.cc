// SseReader: events split anywhere between chunks, every line ending, the
// priming event's id without a dispatch, retry, comments.
#include "mcp/sse_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace maestro::mcp {
namespace {

std::vector<std::string> FeedInPieces(SseReader& r, const std::string& stream, size_t piece) {
  std::vector<std::string> got;
  for (size_t i = 0; i < stream.size(); i += piece) {
    r.Feed(std::string_view(stream).substr(i, piece),
           [&](const SseReader::Event& e) { got.push_back(e.type + "|" + e.data); });
  }
  return got;
}

TEST(SseReaderTest, SplitsEventsWhereverTheChunksEnd) {
  const std::string stream =
      "id: p1\nretry: 250\ndata: \n\n"  // priming: id only
      ": keep-alive\n\n"                // comment
      "event: message\r\nid: e2\r\ndata: {\"a\":1}\r\n\r\n"
      "data: line one\rdata:line two\r\r"  // CR endings, no space after the colon
      "id: e4\ndata: {}\n";                // unfinished: no blank line yet
  for (size_t piece : {1u, 2u, 3u, 7u, 1000u}) {
    SseReader r;
    auto got = FeedInPieces(r, stream, piece);
    ASSERT_EQ(got.size(), 2u) << "piece " << piece;
    EXPECT_EQ(got[0], "message|{\"a\":1}");
    EXPECT_EQ(got[1], "|line one\nline two");
    EXPECT_EQ(r.last_event_id(), "e4");  // the id is kept before the event completes
    EXPECT_EQ(r.retry_ms(), std::optional<int>(250));
  }
}

TEST(SseReaderTest, ThePrimingEventSetsTheIdWithoutAnEvent) {
  SseReader r;
  int events = 0;
  r.Feed("id: only\ndata:\n\n", [&](const SseReader::Event&) { ++events; });
  EXPECT_EQ(events, 0);
  EXPECT_EQ(r.last_event_id(), "only");
  EXPECT_FALSE(r.retry_ms());
  r.Feed("retry: soon\n\n", {});  // not a number: ignored
  EXPECT_FALSE(r.retry_ms());
}

}  // namespace
}  // namespace maestro::mcp
