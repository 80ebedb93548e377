// Seed 004 end to end: a small context_length forces a handoff mid-job and the
// task still completes. WorkerPool -> PieceExecutor -> OpenAiClient ->
// maestro-fakellm, scripted: read two large files (the context passes the
// handoff threshold, the engine asks for WriteHandoff), write the handoff;
// the continuation job then completes. From the fake's request log: the
// first request of the continuation is [system, handoff facts + instruction]
// — it starts with the handoff document, nothing of the old session — with
// the same system message and tools bytes, so the server reuses that prefix.
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "engine/handoff/trigger.h"
#include "engine/piece_executor.h"
#include "engine_rig.h"
#include "fakellm_process.h"
#include "store/sqlite/sqlite_store.h"
#include "support/temp_dir.h"
#include "tools/builtin.h"
#include "tools/sandbox.h"
#include "worker/worker_pool.h"

namespace maestro::engine {
namespace {

using maestro::testing::FakeLlmProcess;
using maestro::testing::TempDir;
using maestro::testing::ToolCallReply;

Json Requests(const FakeLlmProcess& f) {
  httplib::Client c("127.0.0.1", f.port());
  auto res = c.Get("/v1/_requests");
  return res && res->status == 200 ? Json::parse(res->body)["requests"] : Json::array();
}

Json Handoff() {
  return {{"spec_ref", "the task instruction"},
          {"status",
           {{"completed", {"read notes-a.txt"}},
            {"in_progress", {"summarizing notes-b.txt: read, not summarized"}},
            {"pending", {"the summary"}}}},
          {"decisions", {{{"what", "read both files first"}, {"why", "the summary needs both"}}}},
          {"blockers", Json::array()},
          {"files_changed", Json::array()}};
}

std::string HandoffScript() {
  Json replies =
      Json::array({ToolCallReply("ReadFile", {{"path", "notes-a.txt"}}),
                   ToolCallReply("ReadFile", {{"path", "notes-b.txt"}}),
                   ToolCallReply("WriteHandoff", Handoff()),
                   // the continuation job
                   ToolCallReply("complete", {{"status", "success"}, {"result", "summary done"}})});
  return Json{{"replies", replies}, {"default", {{"text", "script exhausted"}}}}.dump();
}

// ~7,000 letters and spaces: ~3,000 tokens by the fake's count (the estimate
// follows it through the calibration).
std::string Notes(const std::string& word) {
  std::string out;
  while (out.size() < 7'000) out += word + " alpha beta gamma delta epsilon\n";
  return out;
}

class HandoffFakeLlmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_.File("script.json")) << HandoffScript();
    fake_ = std::make_unique<FakeLlmProcess>(
        // One slot: with llama-server's default slot selection (similarity
        // 0.5) the short fresh session would go to another, empty slot.
        std::vector<std::string>{"--script", dir_.File("script.json"), "--slots", "1"});
    std::filesystem::create_directories(dir_.File("proj"));
    std::ofstream(dir_.File("proj/notes-a.txt")) << Notes("first");
    std::ofstream(dir_.File("proj/notes-b.txt")) << Notes("second");
    tools::Space space{"proj", dir_.File("proj"), {}};
    space.policy.allowed_tools = {"ReadFile", "ListDir"};
    // handoff at 0.6 x 14,000 = 8,400 tokens: after the second file, not the first
    rig_.Start(dir_.path(), space, fake_->base_url(), 14'000);
    ASSERT_FALSE(HasFatalFailure());
  }
  Job WaitForEnd(const std::string& job_id) { return rig_.WaitForEnd(job_id); }

  TempDir dir_;
  std::unique_ptr<FakeLlmProcess> fake_;
  test::EngineRig rig_;
};

TEST_F(HandoffFakeLlmTest, SmallContextHandsOffMidJobAndTheContinuationCompletesTheTask) {
  NewTask t;
  t.instruction = "Summarize notes-a.txt and notes-b.txt.";
  t.piece = "chat";
  t.space = "proj";
  auto created = rig_.store().CreateTask(t);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  rig_.pool().Notify();

  Job first = WaitForEnd(created->job.id);
  ASSERT_EQ(first.status, JobStatus::kSucceeded) << first.error_message;
  EXPECT_EQ(first.result.rfind("handoff 0001.yaml; continued in job ", 0), 0u) << first.result;
  auto jobs = rig_.store().ListJobs(created->task.id);
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 2u);
  const Job& cont = jobs->front().id == first.id ? jobs->back() : jobs->front();
  EXPECT_EQ(cont.continued_from_job_id, first.id);
  Job second = WaitForEnd(cont.id);
  ASSERT_EQ(second.status, JobStatus::kSucceeded) << second.error_message;
  EXPECT_EQ(second.result, "summary done");
  auto task = rig_.store().GetTask(created->task.id);
  ASSERT_TRUE(task.ok());
  EXPECT_EQ(task->status, JobStatus::kSucceeded);

  Json reqs = Requests(*fake_);
  ASSERT_EQ(reqs.size(), 4u) << reqs.dump().substr(0, 2000);
  // The engine asked for the handoff before the WriteHandoff call.
  bool asked = false;
  for (const Json& m : reqs[2]["body"]["messages"]) {
    asked |= m["role"] == "user" && m["content"] == HandoffRequestMessage();
  }
  EXPECT_TRUE(asked);
  auto comments = rig_.store().ListComments(created->task.id);
  ASSERT_TRUE(comments.ok());
  bool by_agent = false;
  for (const Comment& c : *comments)
    by_agent |= c.kind == CommentKind::kHandoff && c.author == "agent";
  EXPECT_TRUE(by_agent);  // the agent's document, not the engine's fallback
  // The request after the handoff starts with the handoff document.
  const Json& next = reqs[3]["body"];
  ASSERT_EQ(next["messages"].size(), 2u) << next["messages"].dump().substr(0, 2000);
  EXPECT_EQ(next["messages"][0], reqs[0]["body"]["messages"][0]);  // the same system message
  std::string facts = next["messages"][1]["content"];
  EXPECT_EQ(facts.rfind("## Handoff from the previous session (facts only)", 0), 0u) << facts;
  EXPECT_NE(facts.find("summarizing notes-b.txt: read, not summarized"), std::string::npos);
  EXPECT_NE(facts.find("read both files first"), std::string::npos);
  EXPECT_NE(facts.find(t.instruction), std::string::npos);
  EXPECT_EQ(facts.find("first alpha beta"), std::string::npos);  // no old tool output
  EXPECT_EQ(next["tools"].dump(), reqs[0]["body"]["tools"].dump());
  // The tools + system prefix is served from the cache.
  EXPECT_GT(reqs[3]["cache"]["cache_n"].get<int64_t>(), 1000) << reqs[3]["cache"].dump();
  EXPECT_TRUE(std::filesystem::exists(
      dir_.File("contexts/completed/" + created->task.id + "/handoffs/0001.yaml")));
}

}  // namespace
}  // namespace maestro::engine
