// Tool ledger crash recovery: a read-only call left open is re-run, a
// side-effecting one is reported for reconciliation and never repeated.
#include "context/ledger.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/clock.h"
#include "support/fault_injection_env.h"
#include "support/temp_dir.h"
#include "tools/dispatcher.h"

namespace maestro::tools {
namespace {

class LedgerTest : public ::testing::Test {
 protected:
  std::unique_ptr<ToolLedger> Open() {
    auto l = ToolLedger::Open(dir_.path(), &clock_);
    EXPECT_TRUE(l.ok()) << l.status().ToString();
    return l.ok() ? std::move(l).value() : nullptr;
  }
  testing::TempDir dir_;
  FakeClock clock_;
};

TEST_F(LedgerTest, RecoverySplitsReadOnlyFromSideEffectingOpenCalls) {
  {
    auto l = Open();
    IdempotencyKey done{"t", "j1", "c1"}, read{"t", "j1", "c2"}, write{"t", "j1", "c3"};
    ASSERT_TRUE(l->Started(done, "WriteFile", {{"path", "a"}}, false).ok());
    ASSERT_TRUE(l->Finished(done, "WriteFile", false, 3, ToolResult::Ok("wrote")).ok());
    ASSERT_TRUE(l->Started(read, "ReadFile", {{"path", "a"}}, true).ok());
    ASSERT_TRUE(l->Started(write, "RunCommand", {{"command", "make install"}}, false).ok());
    // Another job's open call is not this job's business.
    ASSERT_TRUE(l->Started({"t", "j2", "c9"}, "RunCommand", {{"command", "x"}}, false).ok());
    // ...crash: the process dies here.
  }
  auto plan = PlanRecovery(dir_.path(), "j1");
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->rerun.size(), 1u);
  EXPECT_EQ(plan->rerun[0].key.call_id, "c2");
  ASSERT_EQ(plan->reconcile.size(), 1u);
  EXPECT_EQ(plan->reconcile[0].key.call_id, "c3");
  EXPECT_TRUE(plan->needs_reconciliation());
  const std::string comment = ReconcileComment(*plan);
  EXPECT_NE(comment.find("c3"), std::string::npos);
  EXPECT_NE(comment.find("make install"), std::string::npos);
  EXPECT_NE(comment.find("may or may not"), std::string::npos);

  // Once reconciled, the job has nothing left to settle.
  auto l = Open();
  ASSERT_TRUE(l->Reconciled({"t", "j1", "c3"}, "RunCommand", "user checked: installed").ok());
  auto after = PlanRecovery(dir_.path(), "j1");
  ASSERT_TRUE(after.ok());
  EXPECT_FALSE(after->needs_reconciliation());
  EXPECT_EQ(after->rerun.size(), 1u);
}

// Which records are synced (issue 19: no fsync where nothing needs it): a
// power loss keeps every record of a side-effecting call, and loses only
// the unsynced tail of read-only records — whose calls recovery re-runs.
TEST_F(LedgerTest, APowerLossKeepsSideEffectRecordsAndMayDropTrailingReads) {
  testing::FaultInjectionEnv env;
  auto l = ToolLedger::Open(dir_.path(), &clock_, &env);
  ASSERT_TRUE(l.ok());
  IdempotencyKey read1{"t", "j", "r1"}, write{"t", "j", "w1"}, read2{"t", "j", "r2"};
  ASSERT_TRUE((*l)->Started(read1, "ReadFile", {{"path", "a"}}, true).ok());
  ASSERT_TRUE((*l)->Finished(read1, "ReadFile", true, 1, ToolResult::Ok("a")).ok());
  ASSERT_TRUE((*l)->Started(write, "WriteFile", {{"path", "b"}}, false).ok());  // synced
  ASSERT_TRUE((*l)->Started(read2, "ReadFile", {{"path", "c"}}, true).ok());    // not synced
  ASSERT_TRUE(env.SimulateCrash(testing::FaultInjectionEnv::Crash::kPowerLoss).ok());
  l->reset();
  auto records = ToolLedger::Read(dir_.path());
  ASSERT_TRUE(records.ok());
  std::vector<std::string> seen;
  for (const auto& r : *records) seen.push_back(r.key.call_id + ":" + r.event);
  // The write's sync carried the reads before it; the read after it is gone.
  EXPECT_EQ(seen, (std::vector<std::string>{"r1:started", "r1:finished", "w1:started"}));
  auto plan = PlanRecovery(dir_.path(), "j");
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->reconcile.size(), 1u);
  EXPECT_EQ(plan->reconcile[0].key.call_id, "w1");
  EXPECT_TRUE(plan->rerun.empty());
}

TEST_F(LedgerTest, ATornLastLineIsIgnoredAndAppendsContinueTheSequence) {
  {
    auto l = Open();
    ASSERT_TRUE(l->Started({"t", "j", "c1"}, "ReadFile", {{"path", "a"}}, true).ok());
  }
  std::ofstream(dir_.File("tools.jsonl"), std::ios::app) << R"({"seq":2,"event":"fin)";
  auto l = Open();
  ASSERT_TRUE(l->Started({"t", "j", "c2"}, "ReadFile", {{"path", "b"}}, true).ok());
  auto recs = ToolLedger::Read(dir_.path());
  ASSERT_TRUE(recs.ok());
  ASSERT_EQ(recs->size(), 2u);
  EXPECT_EQ((*recs)[1].key.call_id, "c2");
  EXPECT_EQ((*recs)[1].seq, 2);
}

// A crash injected between "started" and "finished" of a side-effecting
// call: the dispatcher's own records, cut short by a tool that "dies".
TEST_F(LedgerTest, CrashInsideASideEffectingCallIsNotRepeated) {
  ToolRegistry reg;
  int runs = 0;
  const Json schema = {{"type", "object"}, {"properties", Json::object()}};
  ASSERT_TRUE(reg.Register({"Deploy", "side effect", schema, false, ToolClass::kRead},
                           [&](const Json&, const ToolContext&) -> ToolResult {
                             ++runs;
                             throw std::runtime_error("simulated crash");  // never returns normally
                           })
                  .ok());
  ASSERT_TRUE(reg.Register({"Peek", "read", schema, true, ToolClass::kRead},
                           [](const Json&, const ToolContext&) { return ToolResult::Ok("ok"); })
                  .ok());
  auto ledger = Open();
  ToolScope ctx;
  ctx.task_id = "t";
  ctx.job_id = "j";
  ctx.policy.allowed_tools = {"Deploy", "Peek"};
  ctx.ledger = ledger.get();
  // Simulate the crash by writing only what a dying worker would have
  // durably written: the `started` line (fdatasync'ed before the call).
  ASSERT_TRUE(ledger->Started({"t", "j", "call-7"}, "Deploy", Json::object(), false).ok());
  ASSERT_TRUE(ledger->Started({"t", "j", "call-8"}, "Peek", Json::object(), true).ok());
  ledger.reset();

  auto plan = PlanRecovery(dir_.path(), "j");
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->reconcile.size(), 1u);
  EXPECT_EQ(plan->reconcile[0].tool, "Deploy");
  EXPECT_EQ(plan->reconcile[0].key.ToString(), "t/j/call-7");
  // The engine re-runs only the read-only call.
  auto reopened = Open();
  ctx.ledger = reopened.get();
  Dispatcher d(&reg, ToolAuthorizer(nullptr));
  std::vector<ToolCall> rerun;
  for (const auto& r : plan->rerun) rerun.push_back({r.key.call_id, r.tool, r.args});
  auto results = d.Run(rerun, ctx);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].content, "ok");
  EXPECT_EQ(runs, 0);  // the side effect was not repeated
  auto again = PlanRecovery(dir_.path(), "j");
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->rerun.empty());
  EXPECT_EQ(again->reconcile.size(), 1u);  // still waiting for a person
}

// The real thing: the worker process dies (_exit) inside a side-effecting
// call, after its effect and before its `finished` record.
TEST_F(LedgerTest, ProcessDeathInsideASideEffectingCallParksForReconciliation) {
  // "fast" (fork, no re-exec): the child must write into THIS fixture's temp dir.
  GTEST_FLAG_SET(death_test_style, "fast");
  const std::string effect = dir_.File("effect.txt");
  const std::string ledger_dir = dir_.File("ctx");
  auto crash_run = [&] {
    ToolRegistry reg;
    const Json schema = {{"type", "object"}, {"properties", Json::object()}};
    (void)reg.Register({"Append", "side effect", schema, false, ToolClass::kRead},
                       [&](const Json&, const ToolContext&) -> ToolResult {
                         std::ofstream(effect, std::ios::app) << "done\n";
                         _exit(77);  // the worker dies before the result is recorded
                       });
    (void)reg.Register({"Peek", "read", schema, true, ToolClass::kRead},
                       [](const Json&, const ToolContext&) { return ToolResult::Ok("ok"); });
    FakeClock clock;
    auto ledger = ToolLedger::Open(ledger_dir, &clock);
    ToolScope ctx;
    ctx.task_id = "t";
    ctx.job_id = "j";
    ctx.policy.allowed_tools = {"Append", "Peek"};
    ctx.ledger = ledger->get();
    Dispatcher(&reg, ToolAuthorizer(nullptr))
        .Run({{"c1", "Peek", Json::object()}, {"c2", "Append", Json::object()}}, ctx);
  };
  EXPECT_EXIT(crash_run(), ::testing::ExitedWithCode(77), "");

  auto plan = PlanRecovery(ledger_dir, "j");
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->rerun.empty());  // c1 finished before the crash
  ASSERT_EQ(plan->reconcile.size(), 1u);
  EXPECT_EQ(plan->reconcile[0].key.call_id, "c2");
  EXPECT_EQ(plan->reconcile[0].tool, "Append");
  EXPECT_NE(ReconcileComment(*plan).find("c2 (Append)"), std::string::npos);
  std::ifstream in(effect);
  std::string all((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(all, "done\n");  // it happened exactly once; recovery does not repeat it
}

}  // namespace
}  // namespace maestro::tools
