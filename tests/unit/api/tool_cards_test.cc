// FoldToolCards: the ledger's records as one card per logical call —
// started → finished/error, a crash-closed call reconciled, a park call
// waiting while its job is parked, folded with its re-issue after the
// resume, and lines that are not records skipped (ToolLedger::Read).
#include "api/tool_cards.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/temp_dir.h"

namespace maestro::tools {
namespace {

LedgerRecord Rec(std::string event, std::string job, std::string call, std::string tool, TimeMs ts,
                 Json args = Json(), std::string result = "", int64_t ms = 0) {
  LedgerRecord r;
  r.event = std::move(event);
  r.key = {"task", std::move(job), std::move(call)};
  r.tool = std::move(tool);
  r.ts = ts;
  r.args = std::move(args);
  r.result = std::move(result);
  r.duration_ms = ms;
  return r;
}

auto Parked(bool parked) {
  return [parked](const std::string&) { return parked; };
}

TEST(ToolCardsTest, StartedAndEndedCallsAreOneCardEach) {
  std::vector<LedgerRecord> recs = {
      Rec("started", "j1", "c1", "WriteFile", 1000, {{"path", "a.md"}}),
      Rec("started", "j1", "c2", "ReadFile", 1001, {{"path", "b.md"}}),
      Rec("finished", "j1", "c1", "WriteFile", 1010, Json(), "wrote a.md", 10),
      Rec("error", "j1", "c2", "ReadFile", 1012, Json(), "Error: no file", 11),
      Rec("started", "j1", "c3", "RunCommand", 1020, {{"command", "ls"}}),
  };
  recs[1].read_only = true;
  auto cards = FoldToolCards(recs, Parked(false));
  ASSERT_EQ(cards.size(), 3u);
  EXPECT_EQ(cards[0].call_id, "c1");
  EXPECT_EQ(cards[0].status, "finished");
  EXPECT_EQ(cards[0].args["path"], "a.md");
  EXPECT_EQ(cards[0].result, "wrote a.md");
  EXPECT_EQ(cards[0].duration_ms, 10);
  EXPECT_EQ(cards[0].started_at, 1000);
  EXPECT_EQ(cards[0].finished_at, 1010);
  EXPECT_EQ(cards[1].status, "error");
  EXPECT_TRUE(cards[1].read_only);
  EXPECT_EQ(cards[2].status, "running");
  EXPECT_FALSE(cards[2].finished_at.has_value());

  recs.push_back(Rec("reconciled", "j2", "c3", "RunCommand", 2000, Json(), "settled"));
  recs.back().key.job_id = "j1";
  cards = FoldToolCards(recs, Parked(false));
  EXPECT_EQ(cards[2].status, "reconciled");
  EXPECT_EQ(cards[2].result, "settled");
}

TEST(ToolCardsTest, AParkCallWaitsWhileParkedAndFoldsWithItsReissue) {
  const Json args = {{"tool", "RunCommand"}, {"reason", "tests"}};
  std::vector<LedgerRecord> recs = {
      Rec("parked", "j1", "p1", "RequestTool", 1005, args, "Request R1 created; the task waits", 5),
  };
  auto waiting = FoldToolCards(recs, Parked(true));
  ASSERT_EQ(waiting.size(), 1u);
  EXPECT_EQ(waiting[0].status, "waiting");
  EXPECT_FALSE(waiting[0].finished_at.has_value()) << "not finished while parked";
  EXPECT_EQ(waiting[0].started_at, 1000);

  // Resumed, not re-issued yet: its answer stands.
  EXPECT_EQ(FoldToolCards(recs, Parked(false))[0].status, "finished");

  // The re-issue after the approval (new call id, same tool and args), and
  // an unrelated call in between.
  recs.push_back(Rec("started", "j1", "x", "ReadFile", 5000, {{"path", "a"}}));
  recs.push_back(Rec("finished", "j1", "x", "ReadFile", 5001, Json(), "a", 1));
  recs.push_back(Rec("finished", "j1", "p2", "RequestTool", 9000, args, "Approved", 2));
  auto cards = FoldToolCards(recs, Parked(false));
  ASSERT_EQ(cards.size(), 2u) << "the park and its re-issue are one card";
  EXPECT_EQ(cards[0].call_id, "p1");
  EXPECT_EQ(cards[0].status, "finished");
  EXPECT_EQ(cards[0].result, "Approved");
  EXPECT_EQ(cards[0].finished_at, 9000);
  EXPECT_EQ(cards[0].duration_ms, 8000) << "the wait is part of the call";
  EXPECT_EQ(cards[1].tool, "ReadFile");

  // Another job's identical call, and different arguments, are other calls.
  recs.push_back(Rec("parked", "j2", "p1", "RequestTool", 9100, args, "Request R2", 1));
  recs.push_back(Rec("parked", "j2", "p3", "RequestTool", 9200, {{"tool", "Other"}}, "R3", 1));
  EXPECT_EQ(FoldToolCards(recs, Parked(true)).size(), 4u);

  // A re-issue that parks again (still pending) stays one waiting card.
  std::vector<LedgerRecord> again = {
      Rec("parked", "j1", "p1", "RequestPackage", 100, {{"name", "x"}}, "created", 1),
      Rec("parked", "j1", "p2", "RequestPackage", 200, {{"name", "x"}}, "still waiting", 1),
  };
  auto one = FoldToolCards(again, Parked(true));
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].status, "waiting");
}

TEST(ToolCardsTest, TornAndForeignLinesAreSkippedWhenRead) {
  testing::TempDir dir;
  {
    std::ofstream out(dir.File("tools.jsonl"));
    out << R"({"seq":1,"event":"started","task_id":"t","job_id":"j","call_id":"c","tool":"ReadFile","args":{"path":"a"},"read_only":true,"ts":10})"
        << "\n"
        << R"({"seq":"two","event":7})"
        << "\n"  // wrong types
        << "garbage \xff\xfe not json\n"
        << R"({"job_id":"j","call_id":"old","tool":"X","status":"success"})"
        << "\n"  // other shape
        << R"({"seq":3,"event":"finished","task_id":"t","job_id":"j","call_id":"c","tool":"ReadFile","read_only":true,"ts":12,"duration_ms":2,"result":"ok"})"
        << "\n"
        << R"({"seq":4,"event":"started","task_id":"t","job_id":"j","call_id":"d","to)";  // torn
  }
  auto recs = ToolLedger::Read(dir.path());
  ASSERT_TRUE(recs.ok()) << recs.status().ToString();
  auto cards = FoldToolCards(*recs, Parked(false));
  ASSERT_EQ(cards.size(), 1u);
  EXPECT_EQ(cards[0].status, "finished");
  EXPECT_EQ(cards[0].result, "ok");
  EXPECT_EQ(cards[0].args["path"], "a");
}

TEST(ToolCardsTest, TheLedgerWritesAParkCallWithItsArguments) {
  testing::TempDir dir;
  FakeClock clock(5000);
  auto ledger = ToolLedger::Open(dir.path(), &clock);
  ASSERT_TRUE(ledger.ok());
  const Json args = {{"ecosystem", "pip"}, {"name", "requests"}, {"reason", "http"}};
  ASSERT_TRUE((*ledger)
                  ->ParkCall({"t", "j", "c"}, "RequestPackage", args, true, 3, ToolResult::Ok("R1"))
                  .ok());
  auto recs = ToolLedger::Read(dir.path());
  ASSERT_TRUE(recs.ok());
  ASSERT_EQ(recs->size(), 1u);
  EXPECT_EQ((*recs)[0].event, "parked");
  EXPECT_EQ((*recs)[0].args, args);
  auto plan = PlanRecovery(dir.path(), "j");
  ASSERT_TRUE(plan.ok());
  EXPECT_FALSE(plan->needs_reconciliation()) << "a park call is never an open call";
  EXPECT_TRUE(plan->rerun.empty());
}

}  // namespace
}  // namespace maestro::tools
