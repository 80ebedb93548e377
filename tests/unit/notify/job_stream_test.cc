#include "notify/job_stream.h"

#include <gtest/gtest.h>

#include <thread>

#include "notify/delta_stamp.h"

namespace maestro {
namespace {

using namespace std::chrono_literals;

TEST(JobStreamHubTest, SequencesStartAtOneAndArePerJob) {
  JobStreamHub hub;
  EXPECT_EQ(hub.Publish("a", {{"text", "x"}}), 1u);
  EXPECT_EQ(hub.Publish("a", {{"text", "y"}}), 2u);
  EXPECT_EQ(hub.Publish("b", {{"text", "z"}}), 1u);
  auto r = hub.ReadAfter("a", 0, 0ms);
  ASSERT_EQ(r.deltas.size(), 2u);
  EXPECT_EQ(r.deltas[0].data["text"], "x");
  EXPECT_EQ(r.deltas[1].seq, 2u);
  EXPECT_FALSE(r.truncated);
}

TEST(JobStreamHubTest, ResumeAfterASequenceGetsOnlyTheRest) {
  JobStreamHub hub;
  for (int i = 1; i <= 5; ++i) hub.Publish("j", {{"i", i}});
  auto r = hub.ReadAfter("j", 3, 0ms);
  ASSERT_EQ(r.deltas.size(), 2u);
  EXPECT_EQ(r.deltas[0].seq, 4u);
  EXPECT_EQ(r.deltas[1].data["i"], 5);
}

TEST(JobStreamHubTest, RingDropsOldestAndReportsTruncation) {
  JobStreamHub hub(/*ring_capacity=*/3);
  for (int i = 1; i <= 10; ++i) hub.Publish("j", {{"i", i}});
  auto r = hub.ReadAfter("j", 2, 0ms);
  ASSERT_EQ(r.deltas.size(), 3u);
  EXPECT_EQ(r.deltas.front().seq, 8u);
  EXPECT_TRUE(r.truncated);
  auto tail = hub.ReadAfter("j", 8, 0ms);
  EXPECT_FALSE(tail.truncated);
  EXPECT_EQ(tail.deltas.size(), 2u);
}

TEST(JobStreamHubTest, ReaderWakesOnPublish) {
  JobStreamHub hub;
  std::thread pub([&] {
    std::this_thread::sleep_for(50ms);
    hub.Publish("j", {{"text", "late"}});
  });
  auto start = std::chrono::steady_clock::now();
  auto r = hub.ReadAfter("j", 0, 5000ms);
  pub.join();
  ASSERT_EQ(r.deltas.size(), 1u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST(JobStreamHubTest, ReadTimesOutWithNothingAndStopWakes) {
  JobStreamHub hub;
  EXPECT_TRUE(hub.ReadAfter("j", 0, 20ms).deltas.empty());
  std::thread stopper([&] {
    std::this_thread::sleep_for(30ms);
    hub.Stop();
  });
  auto start = std::chrono::steady_clock::now();
  hub.ReadAfter("j", 0, 10s);
  stopper.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_TRUE(hub.stopped());
}

TEST(JobStreamHubTest, LeastRecentlyPublishedJobIsEvicted) {
  JobStreamHub hub(/*ring_capacity=*/8, /*max_jobs=*/2);
  hub.Publish("a", {{"n", 1}});
  hub.Publish("b", {{"n", 1}});
  hub.Publish("a", {{"n", 2}});  // a is now newer than b
  hub.Publish("c", {{"n", 1}});  // evicts b
  EXPECT_TRUE(hub.ReadAfter("b", 0, 0ms).deltas.empty());
  EXPECT_EQ(hub.ReadAfter("a", 0, 0ms).deltas.size(), 2u);
  EXPECT_EQ(hub.ReadAfter("c", 0, 0ms).deltas.size(), 1u);
}

TEST(JobStreamHubTest, PublisherFunctionFeedsTheHub) {
  JobStreamHub hub;
  JobStreamHub::PublishFn fn = hub.Publisher();
  fn("j", {{"type", "text"}, {"text", "hi"}});
  auto r = hub.ReadAfter("j", 0, 0ms);
  ASSERT_EQ(r.deltas.size(), 1u);
  EXPECT_EQ(r.deltas[0].data["text"], "hi");
}

TEST(StampDeltaTest, ObjectsGetTheirTimeOtherValuesPassUnchanged) {
  Json stamped = StampDelta({{"type", "text"}, {"text", "hi"}}, 1234);
  EXPECT_EQ(stamped["at"], 1234);
  EXPECT_EQ(stamped["text"], "hi");
  EXPECT_EQ(StampDelta(Json::array({1, 2}), 1234), Json::array({1, 2}));
  EXPECT_EQ(StampDelta("text", 1234), Json("text"));
}

}  // namespace
}  // namespace maestro
