// Dispatcher: order of results, parallel read-only calls, sequential
// side-effecting ones, validation/unknown-tool errors, ledger records.
#include "tools/dispatcher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "core/clock.h"
#include "support/temp_dir.h"
#include "telemetry/telemetry.h"

namespace maestro::tools {
namespace {

// Test tools that log when they start and end and how many run at once.
class Probe {
 public:
  void Enter(const std::string& what) {
    int now = ++running_;
    int seen = max_.load();
    while (now > seen && !max_.compare_exchange_weak(seen, now)) {
    }
    Log("start " + what);
  }
  void Leave(const std::string& what) {
    Log("end " + what);
    --running_;
  }
  int max_concurrency() const { return max_.load(); }
  std::vector<std::string> log() {
    std::lock_guard<std::mutex> l(mu_);
    return log_;
  }

 private:
  void Log(const std::string& s) {
    std::lock_guard<std::mutex> l(mu_);
    log_.push_back(s);
  }
  std::atomic<int> running_{0}, max_{0};
  std::mutex mu_;
  std::vector<std::string> log_;
};

Json Schema() {
  return {{"type", "object"},
          {"properties",
           {{"tag", {{"type", "string"}}}, {"ms", {{"type", "integer"}, {"minimum", 0}}}}},
          {"required", {"tag"}},
          {"additionalProperties", false}};
}

class DispatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto handler = [this](const Json& a, const ToolContext& ctx) {
      const std::string tag = a["tag"];
      probe_.Enter(tag);
      std::this_thread::sleep_for(std::chrono::milliseconds(a.value("ms", 0)));
      probe_.Leave(tag);
      return ToolResult::Ok("result " + tag + " key " + ctx.key.ToString());
    };
    ToolSpec look{"Look", "read", Schema(), true, ToolClass::kRead};
    ToolSpec poke{"Poke", "write", Schema(), false, ToolClass::kRead};
    ToolSpec loud{"Loud", "big output", Schema(), true, ToolClass::kRead};
    loud.output_cap_bytes = 64;
    ASSERT_TRUE(registry_.Register(look, handler).ok());
    ASSERT_TRUE(registry_.Register(poke, handler).ok());
    ASSERT_TRUE(registry_
                    .Register(loud,
                              [](const Json&, const ToolContext&) {
                                return ToolResult::Ok(std::string(1000, 'z'));
                              })
                    .ok());
    ctx_.task_id = "t1";
    ctx_.job_id = "j1";
    ctx_.policy.allowed_tools = {"Look", "Poke", "Loud"};
  }
  static ToolCall Call(std::string id, std::string name, Json args) {
    return {std::move(id), std::move(name), std::move(args)};
  }

  Probe probe_;
  ToolRegistry registry_;
  Dispatcher dispatcher_{&registry_, ToolAuthorizer(nullptr), {}, 4};
  ToolScope ctx_;
};

TEST_F(DispatcherTest, ParallelReadOnlyCallsKeepCallOrder) {
  // The first call is the slowest, so the calls finish in reverse order.
  std::vector<ToolCall> calls = {Call("c1", "Look", {{"tag", "a"}, {"ms", 400}}),
                                 Call("c2", "Look", {{"tag", "b"}, {"ms", 200}}),
                                 Call("c3", "Look", {{"tag", "c"}, {"ms", 0}})};
  auto results = dispatcher_.Run(calls, ctx_);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].call_id, "c1");
  EXPECT_EQ(results[0].content, "result a key t1/j1/c1");
  EXPECT_EQ(results[1].content, "result b key t1/j1/c2");
  EXPECT_EQ(results[2].content, "result c key t1/j1/c3");
  EXPECT_GE(probe_.max_concurrency(), 2);
  auto log = probe_.log();
  EXPECT_EQ(log.back(), "end a");  // finished last, returned first
}

TEST_F(DispatcherTest, ASideEffectingCallRunsAloneBetweenItsNeighbours) {
  std::vector<ToolCall> calls = {Call("1", "Look", {{"tag", "r1"}, {"ms", 100}}),
                                 Call("2", "Look", {{"tag", "r2"}, {"ms", 100}}),
                                 Call("3", "Poke", {{"tag", "w"}, {"ms", 50}}),
                                 Call("4", "Look", {{"tag", "r3"}})};
  auto results = dispatcher_.Run(calls, ctx_);
  ASSERT_EQ(results.size(), 4u);
  auto log = probe_.log();
  auto at = [&](const std::string& s) {
    return std::find(log.begin(), log.end(), s) - log.begin();
  };
  EXPECT_GT(at("start w"), at("end r1"));
  EXPECT_GT(at("start w"), at("end r2"));
  EXPECT_EQ(at("end w") + 1, at("start r3"));
  EXPECT_EQ(results[2].content, "result w key t1/j1/3");
}

TEST_F(DispatcherTest, BadCallsGetErrorResultsNamingTheProblem) {
  std::vector<ToolCall> calls = {Call("1", "Lok", {{"tag", "x"}}), Call("2", "Look", {{"tag", 5}}),
                                 Call("3", "Look", Json::object()),
                                 Call("4", "Loud", {{"tag", "x"}})};
  auto r = dispatcher_.Run(calls, ctx_);
  EXPECT_EQ(r[0].content, "Error: unknown tool 'Lok'; did you mean 'Look'?");
  EXPECT_TRUE(r[1].is_error);
  EXPECT_NE(r[1].content.find("field 'tag' must be string"), std::string::npos) << r[1].content;
  EXPECT_NE(r[2].content.find("missing required field 'tag'"), std::string::npos);
  EXPECT_FALSE(r[3].is_error);
  EXPECT_LT(r[3].content.size(), 120u);
  EXPECT_NE(r[3].content.find("bytes cut"), std::string::npos);
  EXPECT_TRUE(probe_.log().empty());  // nothing invalid ran
}

TEST_F(DispatcherTest, EveryRunCallIsLedgeredStartedThenFinished) {
  testing::TempDir dir;
  FakeClock clock;
  auto ledger = ToolLedger::Open(dir.path(), &clock);
  ASSERT_TRUE(ledger.ok());
  ctx_.ledger = ledger->get();
  dispatcher_.Run({Call("1", "Look", {{"tag", "a"}}), Call("2", "Poke", {{"tag", "b"}}),
                   Call("3", "Poke", Json::object())},
                  ctx_);
  auto recs = ToolLedger::Read(dir.path());
  ASSERT_TRUE(recs.ok());
  ASSERT_EQ(recs->size(), 5u);
  EXPECT_EQ((*recs)[0].event, "started");
  EXPECT_EQ((*recs)[0].key.call_id, "1");
  EXPECT_TRUE((*recs)[0].read_only);
  EXPECT_EQ((*recs)[0].args, Json({{"tag", "a"}}));
  EXPECT_EQ((*recs)[1].event, "finished");
  EXPECT_EQ((*recs)[1].result, "result a key t1/j1/1");
  EXPECT_EQ((*recs)[2].event, "started");
  EXPECT_FALSE((*recs)[2].read_only);
  EXPECT_EQ((*recs)[3].seq, 4);
  // The refused call is audited but was never started.
  EXPECT_EQ((*recs)[4].event, "error");
  EXPECT_EQ((*recs)[4].key.call_id, "3");
  EXPECT_NE((*recs)[4].result.find("missing required field 'tag'"), std::string::npos);
  auto plan = PlanRecovery(dir.path(), "j1");
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->rerun.empty());
  EXPECT_TRUE(plan->reconcile.empty());
}

TEST_F(DispatcherTest, EachToolGetsItsOwnTimeoutAsDeadline) {
  ToolSpec busy{"Busy", "loops until its deadline", Schema(),
                true,   ToolClass::kRead,           std::chrono::milliseconds(150)};
  ASSERT_TRUE(registry_
                  .Register(busy,
                            [](const Json&, const ToolContext& ctx) {
                              while (!ctx.Expired())
                                std::this_thread::sleep_for(std::chrono::milliseconds(5));
                              return ToolResult::Ok("stopped");
                            })
                  .ok());
  ctx_.policy.allowed_tools.insert("Busy");
  const auto start = std::chrono::steady_clock::now();
  auto r = dispatcher_.Run({Call("1", "Busy", {{"tag", "x"}})}, ctx_);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r[0].content, "stopped");
  EXPECT_GE(took, std::chrono::milliseconds(150));
  EXPECT_LT(took, std::chrono::seconds(5));
}

TEST_F(DispatcherTest, ACancelledJobRunsNothingMore) {
  CancelToken cancel;
  cancel.Cancel(CancelToken::Reason::kUserCancel);
  ctx_.cancel = &cancel;
  auto r = dispatcher_.Run({Call("1", "Poke", {{"tag", "w"}})}, ctx_);
  EXPECT_TRUE(r[0].is_error);
  EXPECT_TRUE(probe_.log().empty());
}

// A DispatchContext refers to the job's scope, never copies it: the scope
// filled after the contexts were made is the one their calls run under; a
// sub-agent's context (its own key prefix) writes the job's ledger under the
// job's ids; and the job's token, cancelled by a call of the sub-agent's
// batch, stops the rest of that batch and the agent's next one.
TEST_F(DispatcherTest, ContextsReferToTheJobsScopeAndDifferOnlyInTheirKeyPrefix) {
  testing::TempDir dir;
  FakeClock clock;
  auto ledger = ToolLedger::Open(dir.path(), &clock);
  ASSERT_TRUE(ledger.ok());
  CancelToken cancel;
  ToolSpec stop{"Stop", "cancels the job", Schema(), false, ToolClass::kRead};
  ASSERT_TRUE(registry_
                  .Register(stop,
                            [&cancel](const Json&, const ToolContext&) {
                              cancel.Cancel(CancelToken::Reason::kUserCancel);
                              return ToolResult::Ok("stopping");
                            })
                  .ok());
  const DispatchContext agent(ctx_);
  const DispatchContext sub(ctx_, "delegate:c7/");
  ctx_.ledger = ledger->get();
  ctx_.cancel = &cancel;
  ctx_.policy.allowed_tools.insert("Stop");

  auto first = dispatcher_.Run({Call("1", "Look", {{"tag", "a"}})}, agent);
  EXPECT_EQ(first[0].content, "result a key t1/j1/1");
  auto second =
      dispatcher_.Run({Call("1", "Look", {{"tag", "b"}}), Call("2", "Stop", {{"tag", "s"}}),
                       Call("3", "Poke", {{"tag", "c"}})},
                      sub);
  EXPECT_EQ(second[0].content, "result b key t1/j1/delegate:c7/1");
  EXPECT_EQ(second[1].content, "stopping");
  EXPECT_EQ(second[2].content, "Error: cancelled before it ran");
  auto third = dispatcher_.Run({Call("2", "Look", {{"tag", "d"}})}, agent);
  EXPECT_EQ(third[0].content, "Error: cancelled before it ran");
  EXPECT_EQ(probe_.log(), (std::vector<std::string>{"start a", "end a", "start b", "end b"}));

  auto recs = ToolLedger::Read(dir.path());
  ASSERT_TRUE(recs.ok());
  std::vector<std::string> seen;
  for (const LedgerRecord& r : *recs) {
    EXPECT_EQ(r.key.task_id, "t1");
    EXPECT_EQ(r.key.job_id, "j1");
    seen.push_back(r.event + " " + r.key.call_id);
  }
  EXPECT_EQ(seen,
            (std::vector<std::string>{"started 1", "finished 1", "started delegate:c7/1",
                                      "finished delegate:c7/1", "started delegate:c7/2",
                                      "finished delegate:c7/2", "error delegate:c7/3", "error 2"}));
}

// Each dispatched call is an execute_tool span under the context's parent,
// and the tool sees that span's traceparent (what an MCP tool sends on).
TEST_F(DispatcherTest, ATracedCallIsAChildSpanAndItsToolSeesTheTraceparent) {
  std::string seen;
  ToolSpec spec{"Trace", "traced", {{"type", "object"}}, true, ToolClass::kRead};
  ASSERT_TRUE(registry_
                  .Register(spec,
                            [&seen](const Json&, const ToolContext& ctx) {
                              seen = ctx.traceparent;
                              return ToolResult::Ok("ok");
                            })
                  .ok());
  ctx_.policy.allowed_tools.insert("Trace");
  EXPECT_EQ(dispatcher_.RunOne(Call("u1", "Trace", Json::object()), ctx_).content, "ok");
  EXPECT_EQ(seen, "") << "no tracer: no trace context";

  telemetry::OtlpExporterOptions eo;
  eo.endpoint = "http://127.0.0.1:9";  // never started: spans stay queued
  telemetry::OtlpTracer tracer(std::make_unique<telemetry::OtlpExporter>(eo), 1.0, false);
  telemetry::SpanStart ps;
  ps.name = "movement";
  telemetry::Span parent = tracer.Start(ps);
  Dispatcher traced(&registry_, ToolAuthorizer(nullptr), {Env::Default(), &tracer});
  EXPECT_EQ(
      traced.RunOne(Call("c9", "Trace", Json::object()), {ctx_, "", parent.context()}).content,
      "ok");
  auto tp = telemetry::ParseTraceparent(seen);
  ASSERT_TRUE(tp) << seen;
  EXPECT_EQ(telemetry::Hex(tp->trace_id), telemetry::Hex(parent.context().trace_id));
  EXPECT_NE(telemetry::Hex(tp->span_id), telemetry::Hex(parent.context().span_id));
  EXPECT_EQ(tracer.exporter().queued(), 1u) << "the tool span ended";
}

}  // namespace
}  // namespace maestro::tools
