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

TEST(JobStreamHubTest, EachRunNumbersFromItsFencingTokenAndNeverBackwards) {
  JobStreamHub hub;
  hub.BeginRun("j", 1);
  const uint64_t run1 = (uint64_t{1} << 32) + 1;
  EXPECT_EQ(hub.Publish("j", {{"n", 1}}), run1);
  EXPECT_EQ(hub.Publish("j", {{"n", 2}}), run1 + 1);
  hub.BeginRun("j", 3);  // a later claim (a resume after a park, a retry)
  const uint64_t run3 = (uint64_t{3} << 32) + 1;
  EXPECT_EQ(hub.Publish("j", {{"n", 3}}), run3);
  hub.BeginRun("j", 2);  // a stale claim never numbers backwards
  EXPECT_EQ(hub.Publish("j", {{"n", 4}}), run3 + 1);
  // A reader after the first run's last id gets the later run whole and no
  // `truncated`: the jump between runs lost nothing.
  auto r = hub.ReadAfter("j", run1 + 1, 0ms);
  ASSERT_EQ(r.deltas.size(), 2u);
  EXPECT_EQ(r.deltas[0].seq, run3);
  EXPECT_FALSE(r.truncated);
  EXPECT_EQ(hub.ReadAfter("j", 0, 0ms).deltas.size(), 4u);
}

TEST(JobStreamHubTest, InjectKeepsTheSendersNumbersAndMarksGapsWithinARun) {
  JobStreamHub hub;
  const uint64_t run = (uint64_t{2} << 32) + 1;
  EXPECT_TRUE(hub.Inject("j", run, {{"n", 1}}, R"({"n":1})"));
  EXPECT_TRUE(hub.Inject("j", run + 1, {{"n", 2}}, R"({"n":2})"));
  EXPECT_FALSE(hub.Inject("j", run + 1, {{"n", 2}}, R"({"n":2})")) << "a repeat is ignored";
  EXPECT_FALSE(hub.Inject("j", run, {{"n", 1}}, R"({"n":1})")) << "an older one too";
  auto whole = hub.ReadJsonAfter("j", 0);
  ASSERT_EQ(whole.deltas.size(), 2u);
  EXPECT_EQ(whole.deltas[1].json, R"({"n":2})");
  EXPECT_FALSE(whole.truncated);
  // run+2 and run+3 never came (a LISTEN reconnect): readers before them
  // are told, readers after them are not.
  EXPECT_TRUE(hub.Inject("j", run + 4, {{"n", 5}}, R"({"n":5})"));
  EXPECT_TRUE(hub.ReadJsonAfter("j", run + 1).truncated);
  EXPECT_FALSE(hub.ReadJsonAfter("j", run + 3).truncated);
  // The next run's first delta is no gap.
  const uint64_t next = (uint64_t{5} << 32) + 1;
  EXPECT_TRUE(hub.Inject("j", next, {{"n", 6}}, R"({"n":6})"));
  EXPECT_FALSE(hub.ReadJsonAfter("j", run + 4).truncated);
  // An API process that joins a run late says so to a reader from 0.
  EXPECT_TRUE(hub.Inject("late", run + 9, {{"n", 10}}, R"({"n":10})"));
  EXPECT_TRUE(hub.ReadJsonAfter("late", 0).truncated);
}

// A running job that stays quiet while more than max_jobs others publish
// loses its buffer, not its numbering: it goes on upwards (from 1 the API
// processes would drop every later delta as old), and readers are told.
TEST(JobStreamHubTest, AnEvictedRunningJobGoesOnNumberingUpwards) {
  JobStreamHub hub(/*ring_capacity=*/8, /*max_jobs=*/4);
  hub.BeginRun("quiet", 3);
  const uint64_t run = (uint64_t{3} << 32) + 1;
  EXPECT_EQ(hub.Publish("quiet", {{"n", 1}}), run);
  for (int i = 0; i < 20; ++i) hub.Publish("other-" + std::to_string(i), {{"n", i}});
  EXPECT_TRUE(hub.ReadAfter("quiet", 0, 0ms).deltas.empty()) << "evicted";
  EXPECT_EQ(hub.Publish("quiet", {{"n", 2}}), run + 1);
  auto r = hub.ReadJsonAfter("quiet", 0);
  ASSERT_EQ(r.deltas.size(), 1u);
  EXPECT_TRUE(r.truncated);
  EXPECT_FALSE(hub.ReadJsonAfter("quiet", run).truncated);
  // The receiving side too: an injected job evicted and heard again keeps
  // refusing what it already had.
  JobStreamHub api(/*ring_capacity=*/8, /*max_jobs=*/2);
  EXPECT_TRUE(api.Inject("j", run, {{"n", 1}}, "{}"));
  api.Inject("x", 1, {{"n", 1}}, "{}");
  api.Inject("y", 1, {{"n", 1}}, "{}");
  EXPECT_FALSE(api.Inject("j", run, {{"n", 1}}, "{}")) << "older than its next number";
  EXPECT_TRUE(api.Inject("j", run + 1, {{"n", 2}}, "{}"));
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
