// delegate (issue 6 item 6): a sub-agent in an isolated child conversation,
// its answer as the parent's tool result, the recursion depth limit, and its
// deltas tagged as a delegate stream. A scripted LlmClient shared by parent
// and sub-agents (their calls interleave in script order), a real
// SqliteStore, TaskContext and Dispatcher.
#include "engine/loop/delegate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include "loop_fixture.h"
#include "support/json_lines.h"

namespace maestro::engine {
namespace {

using maestro::testing::JsonLines;

bool Mentions(const std::vector<Json>& messages, const std::string& text) {
  for (const Json& m : messages) {
    if (m.dump().find(text) != std::string::npos) return true;
  }
  return false;
}

class DelegateTest : public test::LoopTest {
 protected:
  void SetUp() override {
    LoopSetup s;
    s.piece = "chat";
    s.read_file = [this](const Json& a, const tools::ToolContext&) {
      ++reads_;
      return tools::ToolResult::Ok("text of " + a.value("path", std::string()));
    };
    s.tools = {"ReadFile", "delegate", "RequestTool"};
    s.allowed = {"ReadFile", "delegate"};
    SetUpLoop(std::move(s));
  }

  AgentLoopDeps Deps(int max_depth) {
    services_.on_delta = [this](const std::string& job, const Json& delta) {
      EXPECT_EQ(job, job_.id);
      deltas_.push_back(delta);
    };
    scope_.limits.max_delegate_depth = max_depth;
    return LoopTest::Deps();
  }

  static bool Offers(const std::string& tools_bytes, const std::string& name) {
    return tools_bytes.find("\"name\":\"" + name + "\"") != std::string::npos;
  }

  std::atomic<int> reads_{0};
};

TEST_F(DelegateTest, AnswerIsTheParentsToolResultAndTheParentConversationStaysIsolated) {
  llm_.Call("delegate", {{"task", "find the answer in notes.txt"}, {"context", "it is a number"}});
  llm_.Call("ReadFile", {{"path", "notes.txt"}});  // the sub-agent
  llm_.Call("complete", {{"status", "success"}, {"result", "the answer is 42"}});
  llm_.Call("complete", {{"status", "success"}, {"result", "done: 42"}});  // the parent again
  AgentLoopDeps d = Deps(2);
  MovementResult r = RunMovement(d, "chat");
  ASSERT_EQ(r.next, "COMPLETE");
  EXPECT_EQ(r.result, "done: 42");
  EXPECT_EQ(reads_, 1);
  ASSERT_EQ(llm_.requests.size(), 4u);

  // The sub-agent's first request: its own system message and task, none of
  // the parent's conversation.
  const std::vector<Json>& child = llm_.requests[1];
  ASSERT_EQ(child.size(), 2u);
  EXPECT_EQ(child[0]["role"], "system");
  EXPECT_NE(child[0]["content"].get<std::string>().find("sub-agent"), std::string::npos);
  EXPECT_NE(child[1]["content"].get<std::string>().find("find the answer in notes.txt"),
            std::string::npos);
  EXPECT_NE(child[1]["content"].get<std::string>().find("it is a number"), std::string::npos);
  EXPECT_FALSE(Mentions(child, "fix the bug"));

  // The parent's next request = its previous one + the delegate call + ONE
  // tool message holding the answer; nothing of the sub-agent's work.
  const std::vector<Json>& before = llm_.requests[0];
  const std::vector<Json>& after = llm_.requests[3];
  ASSERT_EQ(after.size(), before.size() + 2);
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(after[i], before[i]);
  EXPECT_EQ(after.back()["role"], "tool");
  EXPECT_EQ(after.back()["content"], "the answer is 42");
  EXPECT_FALSE(Mentions(after, "text of notes.txt"));

  // The sub-agent's conversation is in its own files under the task's dir.
  bool found = false;
  for (const auto& e : std::filesystem::directory_iterator(ctx_->dir() + "/delegates")) {
    auto lines = JsonLines(e.path().string() + "/current.jsonl");
    found = found || Mentions(lines, "text of notes.txt");
  }
  EXPECT_TRUE(found);
}

TEST_F(DelegateTest, DepthLimitRemovesDelegateFromTheSubAgentAndRefusesACall) {
  llm_.Call("delegate", {{"task", "outer"}});
  llm_.Call("delegate", {{"task", "inner"}});  // the sub-agent at depth 1 = the limit
  llm_.Call("complete", {{"status", "success"}, {"result", "did it myself"}});
  llm_.Call("complete", {{"status", "success"}, {"result", "ok"}});
  AgentLoopDeps d = Deps(1);
  MovementResult r = RunMovement(d, "chat");
  ASSERT_EQ(r.next, "COMPLETE");
  ASSERT_EQ(llm_.tools_bytes.size(), 4u);
  EXPECT_TRUE(Offers(llm_.tools_bytes[0], "delegate"));
  EXPECT_FALSE(Offers(llm_.tools_bytes[1], "delegate"));
  EXPECT_TRUE(Offers(llm_.tools_bytes[1], "ReadFile"));
  EXPECT_FALSE(Offers(llm_.tools_bytes[1], "RequestTool"));  // no park tools in a sub-agent
  // The refused inner call: an Error result in the sub-agent's conversation.
  const Json& refused = llm_.requests[2].back();
  EXPECT_EQ(refused["role"], "tool");
  EXPECT_EQ(refused["content"].get<std::string>().rfind("Error: delegate is not available", 0), 0u)
      << refused.dump();
  EXPECT_EQ(llm_.requests[3].back()["content"], "did it myself");
}

TEST_F(DelegateTest, NestedSubAgentsBelowTheLimitWorkAndDepthZeroLimitRefuses) {
  llm_.Call("delegate", {{"task", "outer"}});
  llm_.Call("delegate", {{"task", "inner"}});  // depth 1 < 2: allowed
  llm_.Call("complete", {{"status", "success"}, {"result", "inner answer"}});  // depth 2
  llm_.Call("complete", {{"status", "success"}, {"result", "outer got: inner answer"}});
  llm_.Call("complete", {{"status", "success"}, {"result", "ok"}});
  AgentLoopDeps d = Deps(2);
  ASSERT_EQ(RunMovement(d, "chat").next, "COMPLETE");
  EXPECT_TRUE(Offers(llm_.tools_bytes[1], "delegate"));   // depth 1
  EXPECT_FALSE(Offers(llm_.tools_bytes[2], "delegate"));  // depth 2 = limit
  EXPECT_EQ(llm_.requests[3].back()["content"], "inner answer");
  EXPECT_EQ(llm_.requests[4].back()["content"], "outer got: inner answer");

  // A loop with no depth budget answers delegate with an Error.
  maestro::testing::ScriptedLlm other;
  other.Call("delegate", {{"task", "x"}});
  other.Call("complete", {{"status", "success"}, {"result", "fine"}});
  services_.llm = &other;
  AgentLoopDeps none = Deps(0);
  ASSERT_EQ(RunMovement(none, "chat").next, "COMPLETE");
  EXPECT_EQ(other.requests.size(), 2u);  // no sub-agent ran
  EXPECT_EQ(other.requests[1].back()["content"].get<std::string>().rfind("Error", 0), 0u);
}

TEST_F(DelegateTest, SubAgentDeltasAreTaggedAndItsParkCallsAreRefused) {
  llm_.Call("delegate", {{"task", "look"}});
  llm_.Call("RequestTool", {{"tool", "WriteFile"}, {"reason", "need it"}});  // sub-agent
  llm_.Call("complete", {{"status", "error"}, {"result", "cannot"}});
  llm_.Call("complete", {{"status", "success"}, {"result", "ok"}});
  AgentLoopDeps d = Deps(2);
  ASSERT_EQ(RunMovement(d, "chat").next, "COMPLETE");
  auto requests = store_->ListRequests(created_.task.id, std::nullopt);
  ASSERT_TRUE(requests.ok());
  EXPECT_TRUE(requests->empty());  // the sub-agent could not create an approval card
  EXPECT_EQ(llm_.requests[2].back()["content"].get<std::string>().rfind("Error", 0), 0u);
  // Its failure is an Error result for the parent.
  EXPECT_EQ(llm_.requests[3].back()["content"].get<std::string>().rfind(
                "Error: the sub-agent stopped (agent_error)", 0),
            0u);

  const std::string call_id = "call_1";  // the parent's delegate call
  int tagged = 0, untagged_results = 0, phases = 0;
  for (const Json& delta : deltas_) {
    if (delta.value("type", "") == "delegate") {
      ++phases;
      EXPECT_EQ(delta["call_id"], call_id);
      EXPECT_FALSE(delta.contains("delegate"));
      continue;
    }
    if (delta.contains("delegate")) {
      ++tagged;
      EXPECT_EQ(delta["delegate"]["call_id"], call_id);
      EXPECT_EQ(delta["delegate"]["depth"], 1);
    } else if (delta.value("type", "") == "tool_result") {
      ++untagged_results;
    }
  }
  EXPECT_EQ(phases, 2);            // started, finished
  EXPECT_GE(tagged, 2);            // the sub-agent's movement + its RequestTool result (at least)
  EXPECT_EQ(untagged_results, 2);  // the parent's delegate and complete results
}

// The sub-agent runs in the job's scope, not a copy of it: its calls go into
// the job's ledger under the job's ids and the delegate call's key prefix,
// and the job's cancel token, cancelled while the sub-agent works, refuses
// its next call and ends both loops.
TEST_F(DelegateTest, TheSubAgentRunsInTheJobsScopeUnderItsOwnKeyPrefix) {
  CancelToken cancel;
  scope_.ledger = &ctx_->ledger();
  scope_.cancel = &cancel;
  llm_.Call("delegate", {{"task", "read two files"}});  // call_1: the parent's
  llm_.Call("ReadFile", {{"path", "one.txt"}});         // call_2: the sub-agent's
  llm_.Call("ReadFile", {{"path", "two.txt"}},          // call_3, made as the job is cancelled
            [&] { cancel.Cancel(CancelToken::Reason::kUserCancel); });
  llm_.Call("complete", {{"status", "success"}, {"result", "never reached"}});
  AgentLoopDeps d = Deps(2);
  MovementResult r = RunMovement(d, "chat");
  EXPECT_EQ(r.next, "ABORT");
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(reads_, 1) << "the job's token refused the sub-agent's second read";
  EXPECT_EQ(llm_.requests.size(), 3u);

  auto records = tools::ToolLedger::Read(ctx_->dir());
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  std::vector<std::string> reads;
  for (const tools::LedgerRecord& rec : *records) {
    if (rec.tool != "ReadFile") continue;
    EXPECT_EQ(rec.key.task_id, created_.task.id);
    EXPECT_EQ(rec.key.job_id, job_.id);
    reads.push_back(rec.event + " " + rec.key.call_id);
  }
  EXPECT_EQ(reads, (std::vector<std::string>{"started delegate:call_1/call_2",
                                             "finished delegate:call_1/call_2",
                                             "error delegate:call_1/call_3"}));
}

TEST(DelegateToolDefsTest, DropsControlAndParkToolsAndDelegateAtTheLimit) {
  tools::ToolRegistry reg;
  tools::ToolSpec read;
  read.name = "ReadFile";
  read.description = "Read a file.";
  read.read_only = true;
  read.parameters = {{"type", "object"}, {"properties", Json::object()}};
  ASSERT_TRUE(
      reg.Register(read,
                   [](const Json&, const tools::ToolContext&) { return tools::ToolResult::Ok(""); })
          .ok());
  ASSERT_TRUE(tools::RegisterParkTools(reg).ok());
  Piece piece = test::Builtin("chat");
  auto parent =
      BuildPieceTools(piece, test::Defs(reg.ToolsArray({"ReadFile", "delegate", "RequestTool",
                                                        "WaitSubTask", "SpinOffTask"})));
  ASSERT_TRUE(parent.ok()) << parent.status().ToString();
  auto names = [](const std::vector<Json>& defs) {
    std::vector<std::string> out;
    for (const Json& d : defs) out.push_back(d["function"]["name"]);
    return out;
  };
  EXPECT_EQ(names(DelegateToolDefs(*parent, 1, 2)),
            (std::vector<std::string>{"ReadFile", "delegate"}));
  EXPECT_EQ(names(DelegateToolDefs(*parent, 2, 2)), (std::vector<std::string>{"ReadFile"}));
}

}  // namespace
}  // namespace maestro::engine
