// SseParser: frames come out whole however the transfer splits the bytes.
#include "cli/sse_frames.h"

#include <gtest/gtest.h>

namespace maestro::cli {
namespace {

TEST(SseParser, FramesSplitAnywhereComeOutWhole) {
  const std::string stream =
      ": keep-alive\n\nid: 41\nevent: job.status\ndata: {\"a\":1}\n\n"
      "id: 42\r\nevent: delta\r\ndata: one\r\ndata: two\r\n\r\n"
      "event: end\ndata:{\"status\":\"succeeded\"}\n\n";
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    SseParser p;
    auto frames = p.Feed(stream.substr(0, cut));
    auto rest = p.Feed(stream.substr(cut));
    frames.insert(frames.end(), rest.begin(), rest.end());
    ASSERT_EQ(frames.size(), 3u) << "cut at " << cut;
    EXPECT_EQ(frames[0].id, "41");
    EXPECT_EQ(frames[0].event, "job.status");
    EXPECT_EQ(frames[0].data, "{\"a\":1}");
    EXPECT_EQ(frames[1].id, "42");
    EXPECT_EQ(frames[1].data, "one\ntwo");
    EXPECT_EQ(frames[2].id, "");
    EXPECT_EQ(frames[2].event, "end");
    EXPECT_EQ(frames[2].data, "{\"status\":\"succeeded\"}");
  }
}

TEST(SseParser, AnUnfinishedFrameWaitsForItsBlankLine) {
  SseParser p;
  EXPECT_TRUE(p.Feed("id: 1\ndata: x\n").empty());
  auto f = p.Feed("\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].data, "x");
}

}  // namespace
}  // namespace maestro::cli
