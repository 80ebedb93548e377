// The `coding` piece end to end: WorkerPool -> PieceExecutor -> HttpLlmClient
// -> maestro-fakellm (scripted: read a file, transition, edit, review, fix
// loop, complete; an interjection mid-run; then a same-piece Continue).
// From the fake's request log: (a) the `tools` bytes are identical in every
// request, (b) the first request after every transition and after the
// interjection reused >= 99% of its prompt, (c) the Continue's first request
// reused >= 95% of its prompt (the replayed prefix and more).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cache_figures.h"
#include "engine/job/piece_executor.h"
#include "engine_rig.h"
#include "fakellm_process.h"
#include "sandbox/sandbox.h"
#include "store/sqlite/sqlite_store.h"
#include "support/temp_dir.h"
#include "tools/builtin.h"
#include "worker/worker_pool.h"

namespace maestro::engine {
namespace {

using maestro::testing::FakeLlmProcess;
using maestro::testing::TempDir;
using maestro::testing::ToolCallReply;
using test::ServerRequests;

constexpr char kInterjection[] = "Please keep the public API unchanged.";

std::string ReviewLoopScript() {
  Json read = ToolCallReply("ReadFile", {{"path", "main.c"}});
  read["delay_ms"] = 1500;  // the test posts its interjection while this is in flight
  Json replies = Json::array(
      {read, ToolCallReply("transition", {{"next", "implement"}}),
       ToolCallReply(
           "EditFile",
           {{"path", "main.c"}, {"old_string", "return 1;"}, {"new_string", "return 0;"}}),
       ToolCallReply("transition", {{"next", "review"}}),
       ToolCallReply("transition", {{"next", "fix"}}),
       ToolCallReply("EditFile",
                     {{"path", "main.c"}, {"old_string", "int main"}, {"new_string", "int  main"}}),
       ToolCallReply("transition", {{"next", "review"}}),
       ToolCallReply("complete", {{"status", "success"}, {"result", "main returns 0 now"}}),
       // The Continue job.
       ToolCallReply("complete", {{"status", "success"}, {"result", "test added"}})});
  return Json{{"replies", replies}, {"default", {{"text", "script exhausted"}}}}.dump();
}

// A large, static AGENTS.md: the prompts are then ~50k tokens, as in seed
// 001's measurements, so a transition's guidance is well under 1% of them.
std::string BigAgentsMd() {
  std::ostringstream s;
  for (int i = 0; i < 5000; ++i) s << "Rule " << i << ": keep functions short and named well.\n";
  return s.str();
}

class EngineFakeLlmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_.File("script.json")) << ReviewLoopScript();
    fake_ = std::make_unique<FakeLlmProcess>(
        std::vector<std::string>{"--script", dir_.File("script.json")});

    std::filesystem::create_directories(dir_.File("proj"));
    std::ofstream(dir_.File("proj/main.c")) << "int main() { return 1; }\n";
    std::ofstream(dir_.File("proj/AGENTS.md")) << BigAgentsMd();
    tools::Space space{"proj", dir_.File("proj"), {}};
    space.policy.allowed_tools = {"ReadFile", "WriteFile", "EditFile", "ListDir", "Glob", "Grep"};
    space.policy.edit_allowed = true;
    rig_.Start(dir_.path(), space, fake_->base_url(), 1'000'000);
    ASSERT_FALSE(HasFatalFailure());
  }
  Job WaitForEnd(const std::string& job_id) { return rig_.WaitForEnd(job_id); }

  TempDir dir_;
  std::unique_ptr<FakeLlmProcess> fake_;
  test::EngineRig rig_;
};

double Reuse(const Json& rec) {
  double prompt = rec["cache"]["prompt_tokens"].get<double>();
  return prompt > 0 ? rec["cache"]["cache_n"].get<double>() / prompt : 0;
}

std::string LastContent(const Json& rec) {
  const Json& last = rec["body"]["messages"].back();
  return last["content"].is_string() ? last["content"].get<std::string>() : "";
}

TEST_F(EngineFakeLlmTest, CodingPieceKeepsThePromptCacheOnEveryPath) {
  NewTask t;
  t.instruction = "Make main return 0.";
  t.piece = "coding";
  t.space = "proj";
  auto created = rig_.store().CreateTask(t);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  rig_.pool().Notify();
  // Interject while the first LLM call is in flight.
  for (int i = 0; i < 200 && ServerRequests(*fake_).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  auto c = rig_.store().PostComment(created->task.id, "alice", kInterjection, {});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->outcome, CommentOutcome::kInterjection);

  Job job = WaitForEnd(created->job.id);
  ASSERT_EQ(job.status, JobStatus::kSucceeded) << job.error_message;
  EXPECT_EQ(job.result, "main returns 0 now");
  std::ifstream f(dir_.File("proj/main.c"));
  std::string code((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(code, "int  main() { return 0; }\n");

  Json reqs = ServerRequests(*fake_);
  ASSERT_EQ(reqs.size(), 8u);
  std::string tools = reqs[0]["body"]["tools"].dump();
  int transitions = 0, interjections = 0;
  for (size_t i = 0; i < reqs.size(); ++i) {
    const Json& r = reqs[i];
    ASSERT_EQ(r["status"], 200) << i;
    EXPECT_EQ(r["body"]["tools"].dump(), tools) << "request " << i;  // (a)
    std::string last = LastContent(r);
    bool after_transition = last.rfind("# Movement:", 0) == 0;
    bool after_interjection = last.find(kInterjection) != std::string::npos;
    transitions += after_transition;
    interjections += after_interjection;
    if (after_transition || after_interjection) {
      EXPECT_GE(Reuse(r), 0.99) << "request " << i << " cache " << r["cache"].dump();  // (b)
    }
  }
  EXPECT_EQ(transitions, 4);
  EXPECT_EQ(interjections, 1);

  // (c) a same-piece Continue replays the transcript behind the same system
  // message: the server reuses the prefix it already holds.
  auto cont = rig_.store().ContinueTask(created->task.id, "", "alice", "Also add a test.");
  ASSERT_TRUE(cont.ok()) << cont.status().ToString();
  rig_.pool().Notify();
  Job second = WaitForEnd(cont->job.id);
  ASSERT_EQ(second.status, JobStatus::kSucceeded) << second.error_message;
  reqs = ServerRequests(*fake_);
  ASSERT_EQ(reqs.size(), 9u);
  const Json& first = reqs[8];
  EXPECT_GT(first["body"]["messages"].size(), 10u);  // replayed turns
  EXPECT_EQ(first["body"]["tools"].dump(), tools);
  EXPECT_GE(Reuse(first), 0.95) << first["cache"].dump();
  auto comments = rig_.store().ListComments(created->task.id);
  ASSERT_TRUE(comments.ok());
  EXPECT_EQ(comments->back().kind, CommentKind::kResult);
  EXPECT_EQ(comments->back().body, "test added");
}

}  // namespace
}  // namespace maestro::engine
