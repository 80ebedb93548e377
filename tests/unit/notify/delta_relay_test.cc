// The delta relay's encoding, reassembly and sending thread, with the send
// function standing in for PostgreSQL's NOTIFY (the real NOTIFY path runs in
// tests/integration/scaleout/delta_relay_pg_test.cc and the multi-host test).
#include "notify/delta_relay.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/mutex.h"
#include "notify/job_stream.h"

namespace maestro::notify {
namespace {

using namespace std::chrono_literals;

struct Got {
  std::string job;
  uint64_t seq;
  std::string json;
};

std::vector<Got> Decode(const std::vector<std::string>& payloads,
                        const std::string& reader_origin) {
  std::vector<Got> got;
  DeltaRelayReader reader(reader_origin,
                          [&](const std::string& job, uint64_t seq, Json, std::string json) {
                            got.push_back({job, seq, std::move(json)});
                          });
  for (const auto& p : payloads) reader.Receive(p);
  EXPECT_EQ(reader.partial_chunks(), 0u);
  return got;
}

TEST(DeltaRelayTest, BatchesFitTheNotifyLimitAndDecodeInOrder) {
  std::vector<DeltaRelay::Item> items;
  for (int i = 1; i <= 500; ++i) {
    items.push_back(
        {i % 2 ? "job-a" : "job-b", static_cast<uint64_t>(i),
         DumpJson(Json{{"type", "text"}, {"text", "token \"" + std::to_string(i) + "\" ü"}})});
  }
  auto payloads = DeltaRelay::Encode("sender", items, 7900);
  EXPECT_GT(payloads.size(), 1u);
  EXPECT_LT(payloads.size(), 20u) << "many deltas per NOTIFY";
  for (const auto& p : payloads) EXPECT_LE(p.size(), 7900u);
  auto got = Decode(payloads, "reader");
  ASSERT_EQ(got.size(), items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    EXPECT_EQ(got[i].job, items[i].job_id);
    EXPECT_EQ(got[i].seq, items[i].seq);
    EXPECT_EQ(ParseJson(got[i].json).value(), ParseJson(items[i].json).value());
  }
}

TEST(DeltaRelayTest, ABigDeltaGoesInChunksAndComesBackWhole) {
  Json big = {{"type", "tool.result"}, {"output", std::string(100'000, 'x') + "\"\\\n€"}};
  std::vector<DeltaRelay::Item> items = {{"j", 7, R"({"type":"text","text":"before"})"},
                                         {"j", 8, DumpJson(big)},
                                         {"j", 9, R"({"type":"text","text":"after"})"}};
  auto payloads = DeltaRelay::Encode("sender", items, 7900);
  for (const auto& p : payloads) EXPECT_LE(p.size(), 7900u);
  EXPECT_GT(payloads.size(), 15u);
  auto got = Decode(payloads, "reader");
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].seq, 7u);
  EXPECT_EQ(got[1].seq, 8u);
  EXPECT_EQ(ParseJson(got[1].json).value(), big);
  EXPECT_EQ(got[2].seq, 9u);
}

TEST(DeltaRelayTest, TheReaderSkipsItsOwnPayloadsAndHostileOnes) {
  auto own = DeltaRelay::Encode("me", {{"j", 1, R"({"a":1})"}}, 7900);
  EXPECT_TRUE(Decode(own, "me").empty()) << "this process's deltas are already in its hub";
  std::vector<std::string> hostile = {
      "",
      "not json",
      "[]",
      R"({"o":1})",
      R"({"o":"x","d":"nope"})",
      R"({"o":"x","d":[["j",-1,{}],["j","1",{}],[1,2,{}],["j",2]]})",
      R"({"o":"x","c":["j",1,0,0,"AA=="]})",          // zero parts
      R"({"o":"x","c":["j",1,5,2,"AA=="]})",          // part past the end
      R"({"o":"x","c":["j",1,0,100000,"AA=="]})",     // absurd part count
      R"({"o":"x","c":["j",2,0,1,"!!!not base64"]})"  // undecodable
  };
  std::vector<Got> got;
  DeltaRelayReader reader("me", [&](const std::string& job, uint64_t seq, Json, std::string json) {
    got.push_back({job, seq, json});
  });
  for (const auto& p : hostile) reader.Receive(p);
  EXPECT_TRUE(got.empty());
  // Chunks whose other parts never come are bounded.
  for (int i = 0; i < 1000; ++i) {
    reader.Receive(R"({"o":"x","c":["j",)" + std::to_string(100 + i) + R"(,0,2,"AA=="]})");
  }
  EXPECT_LE(reader.partial_chunks(), 64u);
}

TEST(DeltaRelayTest, TheThreadSendsEveryDeltaInOrderAndDropsWhenFull) {
  Mutex mu;
  std::vector<std::string> sent;
  DeltaRelayOptions o;
  o.origin = "sender";
  {
    DeltaRelay relay(o, [&](const std::vector<std::string>& payloads) {
      MutexLock lock(&mu);
      sent.insert(sent.end(), payloads.begin(), payloads.end());
      return Status::Ok();
    });
    for (uint64_t i = 1; i <= 2000; ++i) relay.Publish("j", i, R"({"type":"text","text":"t"})");
    relay.Stop();
    auto st = relay.stats();
    EXPECT_EQ(st.deltas, 2000u);
    EXPECT_EQ(st.dropped, 0u);
    EXPECT_LT(st.payloads, 2000u / 10) << "batched";
  }
  JobStreamHub hub;
  DeltaRelayReader reader("reader",
                          [&](const std::string& job, uint64_t seq, Json data, std::string json) {
                            hub.Inject(job, seq, std::move(data), std::move(json));
                          });
  {
    MutexLock lock(&mu);
    for (const auto& p : sent) reader.Receive(p);
  }
  auto all = hub.ReadJsonAfter("j", 0);
  ASSERT_EQ(all.deltas.size(), 1024u) << "the ring keeps the newest";
  EXPECT_EQ(all.deltas.back().seq, 2000u);
  EXPECT_FALSE(hub.ReadJsonAfter("j", 1999).truncated);

  // A database that refuses: the batch is dropped and counted, nothing blocks.
  DeltaRelayOptions small = o;
  small.max_pending_bytes = 100;
  DeltaRelay failing(small,
                     [](const std::vector<std::string>&) { return Unavailable("database down"); });
  for (uint64_t i = 1; i <= 50; ++i) failing.Publish("j", i, R"({"type":"text","text":"t"})");
  failing.Stop();
  auto st = failing.stats();
  EXPECT_EQ(st.deltas, 0u);
  EXPECT_EQ(st.dropped, 50u);
  EXPECT_GE(st.send_errors, 1u);
}

}  // namespace
}  // namespace maestro::notify
