// The prompt guard (dedup of what is sent), the seed 004 handoff inside the
// agent loop, the watchdog inside the loop, and the handoff continuation's
// first messages — against a scripted LlmClient, a real SqliteStore, a real
// TaskContext and the real Dispatcher. Usage reports are off, so the token
// estimate is the raw heuristic (≈ 4 ASCII chars per token) and the
// thresholds below are exact.
#include "engine/loop/prompt_guard.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "context/token_estimate.h"
#include "engine/handoff/continuation.h"
#include "engine/handoff/trigger.h"
#include "engine/loop/movement_runner.h"
#include "engine/prompt/prompt_paths.h"
#include "loop_fixture.h"

namespace maestro::engine {
namespace {

constexpr int64_t kContextLength = 10'000;  // handoff at 6,000, compression at 7,000

// 16,000 ASCII chars: ~4,000 estimated tokens; different per path.
std::string BigText(const std::string& path) {
  std::string out;
  while (out.size() < 16'000) out += path + " line " + std::to_string(out.size()) + "\n";
  return out;
}

std::vector<Json> ReadJsonl(const std::string& path) {
  std::vector<Json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(Json::parse(line));
  }
  return out;
}

Json ValidHandoff() {
  return {{"spec_ref", "the task instruction"},
          {"status",
           {{"completed", {"read a.txt"}},
            {"in_progress", {"reading b.txt"}},
            {"pending", Json::array()}}},
          {"decisions", {{{"what", "read before editing"}, {"why", "to know the format"}}}},
          {"blockers", Json::array()},
          {"files_changed", Json::array()}};
}

class PromptGuardLoopTest : public test::LoopTest {
 protected:
  void SetUp() override {
    LoopSetup s;
    s.read_file = [](const Json& a, const tools::ToolContext&) {
      std::string path = a.value("path", std::string());
      if (path == "missing") return tools::ToolResult::Error("no such file");
      if (path.rfind("small", 0) == 0) return tools::ToolResult::Ok("ok " + path);
      return tools::ToolResult::Ok(BigText(path));
    };
    s.extra_tools = {tools::ToolEntry(tools::WriteHandoffToolSpec())};
    s.context_length = kContextLength;
    SetUpLoop(std::move(s));
    llm_.usage.reported = false;
  }

  AgentLoopDeps Deps(bool with_handoff) {
    AgentLoopDeps d = LoopTest::Deps();
    if (with_handoff) {
      handoff_ = std::make_unique<HandoffStep>(
          HandoffStepOptions{cc_, job_, dir_.path(), "task instruction", "fix the bug", 8});
      d.loop.handoff = handoff_.get();
    }
    return d;
  }

  // The continuation job named by a handoff result.
  Job Continuation(const MovementResult& r) {
    size_t at = r.result.find("continued in job ");
    EXPECT_NE(at, std::string::npos) << r.result;
    auto job = store_->GetJob(r.result.substr(at + 17));
    EXPECT_TRUE(job.ok()) << r.result;
    return job.ok() ? *job : Job{};
  }

  std::unique_ptr<HandoffStep> handoff_;
};

// --- dedup of what is sent ------------------------------------------------

TEST(WriteDeduplicatedMessages, LaterIdenticalLargeResultsBecomeReferences) {
  maestro::testing::TempDir dir;
  std::string in = dir.path() + "/in.jsonl", out = dir.path() + "/out.jsonl";
  std::string big(2000, 'x'), other(2000, 'y');
  std::vector<Json> lines = {test::SystemMessage(),
                             UserMessage("task"),
                             {{"role", "tool"}, {"tool_call_id", "c1"}, {"content", big}},
                             {{"role", "tool"}, {"tool_call_id", "c2"}, {"content", other}},
                             {{"role", "tool"}, {"tool_call_id", "c3"}, {"content", big}},
                             {{"role", "tool"}, {"tool_call_id", "c4"}, {"content", "short"}},
                             {{"role", "tool"}, {"tool_call_id", "c5"}, {"content", "short"}},
                             {{"role", "tool"}, {"tool_call_id", "c6"}, {"content", big}}};
  {
    std::ofstream f(in);
    for (const auto& l : lines) f << l.dump() << '\n';
  }
  auto stats = WriteDeduplicatedMessages(*Env::Default(), in, out, 512);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->results_replaced, 2);
  EXPECT_GT(stats->raw_tokens_saved, 900);  // 2 x 2000 chars, less the references
  std::vector<Json> sent = ReadJsonl(out);
  ASSERT_EQ(sent.size(), lines.size());
  for (size_t i : {0u, 1u, 2u, 3u, 5u, 6u}) EXPECT_EQ(sent[i], lines[i]) << i;
  EXPECT_EQ(sent[4]["content"], DedupReference("c1", 2000));
  EXPECT_EQ(sent[7]["content"], DedupReference("c1", 2000));
  EXPECT_EQ(sent[4]["tool_call_id"], "c3");  // the pair stays valid
}

TEST(WriteDeduplicatedMessages, UnchangedLinesKeepTheirExactBytes) {
  maestro::testing::TempDir dir;
  std::string in = dir.path() + "/in.jsonl", out = dir.path() + "/out.jsonl";
  // Key order and spacing a re-serialization would change.
  std::string odd = "{\"content\": \"hi\",  \"role\":\"user\"}";
  std::ofstream(in) << odd << "\n";
  ASSERT_TRUE(WriteDeduplicatedMessages(*Env::Default(), in, out, 1).ok());
  std::ifstream f(out);
  std::string line;
  std::getline(f, line);
  EXPECT_EQ(line, odd);
}

// The copy kept by appending: after each growth of the conversation (a torn
// last line waits for its newline) it is byte for byte the copy written
// whole, and a rewrite of the source (a new generation) starts it over.
TEST(DedupCopy, AppendedUpdatesEqualTheWholeCopyAndARewriteStartsOver) {
  maestro::testing::TempDir dir;
  std::string in = dir.path() + "/in.jsonl", out = dir.path() + "/out.jsonl",
              whole = dir.path() + "/whole.jsonl";
  auto tool = [](const std::string& id, const std::string& text) {
    return Json{{"role", "tool"}, {"tool_call_id", id}, {"content", text}}.dump() + "\n";
  };
  std::string big(2000, 'x'), other(2000, 'y');
  std::vector<std::string> growth = {
      test::SystemMessage().dump() + "\n" + UserMessage("task").dump() + "\n" + tool("c1", big),
      tool("c2", other) + tool("c3", big) + tool("c4", "short") + "{\"role\":\"assis",
      "tant\",\"content\":\"ok\"}\n" + tool("c5", big) + tool("c6", other)};
  DedupCopy copy;
  std::ofstream(in, std::ios::binary).close();
  for (const std::string& part : growth) {
    std::ofstream(in, std::ios::app | std::ios::binary) << part;
    auto stats = copy.Update(*Env::Default(), in, 1, out, 512);
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    auto want = WriteDeduplicatedMessages(*Env::Default(), in, whole, 512);
    ASSERT_TRUE(want.ok());
    EXPECT_EQ(stats->results_replaced, want->results_replaced);
    EXPECT_EQ(stats->raw_tokens_saved, want->raw_tokens_saved);
    EXPECT_EQ(maestro::testing::ReadWholeFile(out), maestro::testing::ReadWholeFile(whole));
    EXPECT_EQ(copy.out_bytes(), maestro::testing::ReadWholeFile(out).size());
  }
  EXPECT_EQ(ReadJsonl(out).size(), 9u);
  EXPECT_EQ(copy.Update(*Env::Default(), in, 1, out, 512)->results_replaced, 3);

  std::ofstream(in, std::ios::binary) << tool("d1", big) << tool("d2", big);  // compressed
  auto fresh = copy.Update(*Env::Default(), in, 2, out, 512);
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(fresh->results_replaced, 1);
  std::vector<Json> sent = ReadJsonl(out);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[1]["content"], DedupReference("d1", 2000));
}

TEST_F(PromptGuardLoopTest, BelowTheThresholdTheSameFileReadTwiceIsSentInFull) {
  // Two 4k-token reads: ~8.8k, over compression (7k) only with both.
  ctx_.reset();  // reopen with a large context: nothing crosses a threshold
  auto task = store_->GetTask(created_.task.id);
  cc_.context_length = 100'000;
  ctx_ = std::move(context::TaskContext::Start(*dirs_, {store_.get(), &clock_}, *task, job_, cc_))
             .value();
  llm_.Call("ReadFile", {{"path", "a.txt"}});
  llm_.Call("ReadFile", {{"path", "a.txt"}});
  llm_.Call("complete", {{"status", "success"}, {"result", "done"}});
  AgentLoopDeps d = Deps(false);
  EXPECT_EQ(RunMovement(d, "plan").next, "COMPLETE");
  ASSERT_EQ(llm_.requests.size(), 3u);
  EXPECT_EQ(llm_.requests[2].back()["content"], BigText("a.txt"));
  EXPECT_FALSE(d.loop.guard.dedup_active);
  EXPECT_FALSE(std::filesystem::exists(ctx_->dir() + "/sent.jsonl"));
}

TEST_F(PromptGuardLoopTest, OverTheThresholdTheRepeatedResultIsAReferenceInWhatIsSentOnly) {
  llm_.Call("ReadFile", {{"path", "a.txt"}});
  llm_.Call("ReadFile", {{"path", "a.txt"}});
  llm_.Call("ReadFile", {{"path", "small.txt"}});
  llm_.Call("complete", {{"status", "success"}, {"result", "done"}});
  AgentLoopDeps d = Deps(false);
  EXPECT_EQ(RunMovement(d, "plan").next, "COMPLETE");
  ASSERT_EQ(llm_.requests.size(), 4u);
  const auto& r1 = llm_.requests[1];
  const auto& r2 = llm_.requests[2];
  const auto& r3 = llm_.requests[3];
  EXPECT_EQ(r1.back()["content"], BigText("a.txt"));  // the first read, in full
  std::string first_id = r1.back()["tool_call_id"];
  EXPECT_EQ(r2.back()["content"], DedupReference(first_id, BigText("a.txt").size()));
  EXPECT_TRUE(d.loop.guard.dedup_active);
  // What was sent before is the unchanged prefix of what is sent now.
  for (size_t i = 0; i < r1.size(); ++i) EXPECT_EQ(r2[i], r1[i]) << i;
  for (size_t i = 0; i < r2.size(); ++i) EXPECT_EQ(r3[i], r2[i]) << i;
  // The durable conversation keeps every byte.
  std::vector<Json> current = ReadJsonl(ctx_->messages().current_path());
  int full = 0;
  for (const Json& m : current) full += m.value("content", Json()) == BigText("a.txt");
  EXPECT_EQ(full, 2);
}

// --- the seed 004 handoff -------------------------------------------------

TEST_F(PromptGuardLoopTest, OverTheHandoffThresholdTheAgentIsAskedAndItsHandoffEndsTheSession) {
  llm_.Call("ReadFile", {{"path", "a.txt"}});
  llm_.Call("ReadFile", {{"path", "b.txt"}});  // ~8.8k > 6k: the request follows
  llm_.Call("WriteHandoff", ValidHandoff());
  AgentLoopDeps d = Deps(true);
  MovementResult r = RunMovement(d, "plan");
  EXPECT_EQ(r.next, "COMPLETE");
  EXPECT_TRUE(r.handed_off);
  ASSERT_EQ(llm_.requests.size(), 3u);
  EXPECT_EQ(llm_.requests[2].back()["role"], "user");
  EXPECT_EQ(llm_.requests[2].back()["content"], HandoffRequestMessage());
  // Nothing was summarized while the handoff was pending.
  EXPECT_EQ(llm_.requests[2].size(), llm_.requests[1].size() + 3);
  Job next = Continuation(r);
  EXPECT_EQ(next.continued_from_job_id, job_.id);
  EXPECT_EQ(next.resume_movement, "plan");
  EXPECT_EQ(next.status, JobStatus::kQueued);
  EXPECT_TRUE(std::filesystem::exists(ctx_->handoffs_dir() + "/0001.yaml"));
  auto comments = store_->ListComments(created_.task.id);
  ASSERT_TRUE(comments.ok());
  bool found = false;
  for (const Comment& c : *comments)
    found |= c.kind == CommentKind::kHandoff && c.author == "agent";
  EXPECT_TRUE(found);
  // The runner's mapping keeps the flag.
  EXPECT_TRUE(mapMovementResult(r, {&piece_}).done.handed_off);
}

// Issue 45 item 5: the continuation's first message carries the dynamic
// context (the workspace's listing, the console), so whether a fresh session
// fits counts it: the same handoff as above, from a workspace whose listing
// alone is over the handoff threshold, is impossible (compression instead).
TEST_F(PromptGuardLoopTest, AHandoffWhoseContinuationsListingWouldNotFitIsImpossible) {
  // 150 listed paths of ~340 bytes (three long components): ~12k tokens.
  maestro::testing::TempDir ws;
  for (int t = 0; t < 3; ++t) {
    const std::string dir = std::to_string(t) + std::string(110, 'd') + "/" + std::string(110, 's');
    std::filesystem::create_directories(ws.File(dir));
    for (int i = 0; i < 50; ++i) {
      std::ofstream(ws.File(dir + "/" + std::to_string(100 + i) + std::string(110, 'f')));
    }
  }
  llm_.Call("ReadFile", {{"path", "a.txt"}});
  llm_.Call("ReadFile", {{"path", "b.txt"}});
  llm_.Call("WriteHandoff", ValidHandoff());
  llm_.Text("Summary: two files read.");
  llm_.Call("complete", {{"status", "success"}, {"result", "done"}});
  AgentLoopDeps d = Deps(true);
  handoff_ = std::make_unique<HandoffStep>(
      HandoffStepOptions{cc_, job_, ws.path(), "task instruction", "fix the bug", 8});
  d.loop.handoff = handoff_.get();
  MovementResult r = RunMovement(d, "plan");
  EXPECT_FALSE(r.handed_off) << r.result;
  EXPECT_TRUE(handoff_->impossible());
  EXPECT_FALSE(std::filesystem::exists(ctx_->handoffs_dir() + "/0001.yaml"));
}

TEST_F(PromptGuardLoopTest, AnUnsolicitedWriteHandoffIsRefused) {
  llm_.Call("WriteHandoff", ValidHandoff());
  llm_.Call("complete", {{"status", "success"}, {"result", "done"}});
  AgentLoopDeps d = Deps(true);
  MovementResult r = RunMovement(d, "plan");
  EXPECT_EQ(r.next, "COMPLETE");
  EXPECT_FALSE(r.handed_off);
  std::string result = llm_.requests[1].back()["content"];
  EXPECT_EQ(result.rfind("Error: WriteHandoff is accepted only when maestro asks", 0), 0u)
      << result;
}

TEST_F(PromptGuardLoopTest, NextStepsInTheHandoffAreRejectedAndTheAgentMayWriteItAgain) {
  llm_.Call("ReadFile", {{"path", "a.txt"}});
  llm_.Call("ReadFile", {{"path", "b.txt"}});
  Json bad = ValidHandoff();
  bad["next_steps"] = {"edit c.txt"};
  llm_.Call("WriteHandoff", bad);
  llm_.Call("WriteHandoff", ValidHandoff());
  AgentLoopDeps d = Deps(true);
  MovementResult r = RunMovement(d, "plan");
  EXPECT_TRUE(r.handed_off);
  ASSERT_EQ(llm_.requests.size(), 4u);
  std::string refused = llm_.requests[3].back()["content"];
  EXPECT_EQ(refused.rfind("Error:", 0), 0u);
  EXPECT_NE(refused.find("next_steps"), std::string::npos) << refused;
}

TEST_F(PromptGuardLoopTest, AnAgentThatIgnoresTheRequestGetsTheEnginesFallbackHandoff) {
  llm_.Call("ReadFile", {{"path", "a.txt"}});
  llm_.Call("ReadFile", {{"path", "b.txt"}});
  for (int i = 0; i < 5; ++i) llm_.Call("ReadFile", {{"path", "small" + std::to_string(i)}});
  AgentLoopDeps d = Deps(true);
  MovementResult r = RunMovement(d, "plan");
  EXPECT_TRUE(r.handed_off);
  // request (iteration 3), then max_wait = 3 more calls, then the fallback.
  EXPECT_EQ(llm_.requests.size(), 2u + 1u + 3u);
  std::ifstream f(ctx_->handoffs_dir() + "/0001.yaml");
  std::string yaml((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(yaml.find("written_by: engine"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("ReadFile"), std::string::npos) << yaml;  // the ledger's counts
}

TEST_F(PromptGuardLoopTest, APromptOverTheLimitHandsOffAtOnceInsteadOfAborting) {
  llm_.Call("ReadFile", {{"path", "small"}});
  llm_.Calls({{"ReadFile", {{"path", "a.txt"}}},
              {"ReadFile", {{"path", "b.txt"}}},
              {"ReadFile", {{"path", "c.txt"}}}});  // ~12k in one step: over the 10k limit
  AgentLoopDeps d = Deps(true);
  MovementResult r = RunMovement(d, "plan");
  EXPECT_EQ(r.next, "COMPLETE");
  EXPECT_TRUE(r.handed_off);
  EXPECT_EQ(llm_.requests.size(), 2u);  // no request was sent over the limit
  EXPECT_EQ(Continuation(r).resume_movement, "plan");
}

TEST_F(PromptGuardLoopTest, WhenTheHandoffIsImpossibleTooTheMovementAbortsWithContextOverflow) {
  llm_.Calls({{"ReadFile", {{"path", "a.txt"}}},
              {"ReadFile", {{"path", "b.txt"}}},
              {"ReadFile", {{"path", "c.txt"}}}});
  AgentLoopDeps d = Deps(true);
  handoff_ = std::make_unique<HandoffStep>(
      HandoffStepOptions{cc_, job_, dir_.path(), "task", "fix the bug", /*max_handoffs=*/0});
  d.loop.handoff = handoff_.get();
  MovementResult r = RunMovement(d, "plan");
  EXPECT_EQ(r.next, "ABORT");
  EXPECT_EQ(r.abort_reason, kAbortContextOverflow);
  EXPECT_NE(r.result.find("handoff impossible"), std::string::npos) << r.result;
  EXPECT_FALSE(std::filesystem::exists(ctx_->handoffs_dir() + "/0001.yaml"));
}

TEST_F(PromptGuardLoopTest, WhenNoHandoffIsPossibleCompressionTakesOverInsteadOfAborting) {
  // Three long user messages (~12k tokens, over the 10k limit) that
  // compression may summarize; the task may not hand off again.
  for (const char* name : {"a.txt", "b.txt", "c.txt"}) {
    ASSERT_TRUE(ctx_->messages().AddMessage(UserMessage(BigText(name)), job_.id).ok());
  }
  // A recent exchange the compressor keeps as the tail.
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(
        ctx_->messages().AddMessage({{"role", "assistant"}, {"content", "noted"}}, job_.id).ok());
    ASSERT_TRUE(
        ctx_->messages().AddMessage(UserMessage("go on " + std::to_string(i)), job_.id).ok());
  }
  cc_.keep_recent_messages = 2;
  llm_.Text("Summary: the user pasted three long notes.");  // the compressor's call
  llm_.Call("complete", {{"status", "success"}, {"result", "done"}});
  context::ContextCompressor compressor(&llm_, cc_);
  AgentLoopDeps d = Deps(true);
  handoff_ = std::make_unique<HandoffStep>(
      HandoffStepOptions{cc_, job_, dir_.path(), "task", "fix the bug", /*max_handoffs=*/0});
  d.loop.handoff = handoff_.get();
  services_.compressor = &compressor;
  MovementResult r = RunMovement(d, "plan");
  EXPECT_EQ(r.next, "COMPLETE") << r.abort_reason << " " << r.result;
  EXPECT_FALSE(r.handed_off);
  EXPECT_TRUE(handoff_->impossible());
  EXPECT_FALSE(handoff_->requested());  // compression is no longer held back
  ASSERT_EQ(llm_.requests.size(), 2u);  // the summary call, then the agent's
  EXPECT_LT(ctx_->messages().current_lines(), 8);
  EXPECT_FALSE(std::filesystem::exists(ctx_->handoffs_dir() + "/0001.yaml"));
}

TEST_F(PromptGuardLoopTest, AServerContextErrorHandsOff) {
  llm_.Fail(llm::LlmErrorKind::kContextLengthExceeded);
  AgentLoopDeps d = Deps(true);
  MovementResult r = RunMovement(d, "plan");
  EXPECT_TRUE(r.handed_off) << r.abort_reason << " " << r.result;
}

// --- the continuation's first messages ------------------------------------

TEST_F(PromptGuardLoopTest, TheContinuationJobStartsFromTheHandoffDocument) {
  llm_.Call("ReadFile", {{"path", "a.txt"}});
  llm_.Call("ReadFile", {{"path", "b.txt"}});
  llm_.Call("WriteHandoff", ValidHandoff());
  AgentLoopDeps d = Deps(true);
  MovementResult r = RunMovement(d, "implement");
  ASSERT_TRUE(r.handed_off);
  Job next = Continuation(r);
  ASSERT_TRUE(
      store_->FinishJob(LeaseOf(job_), HandoffJobOutcome({"x/0001.yaml", {}, {}, next})).ok());
  auto task = store_->GetTask(created_.task.id);
  ASSERT_TRUE(task.ok());
  Job claimed = Claim();
  ASSERT_EQ(claimed.id, next.id);
  auto plan = PlanJobPrompt(*store_, *task, claimed,
                            {ctx_->messages().transcript_path(), ctx_->handoffs_dir()}, false);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->path, PromptPath::kHandoffContinuation);
  ASSERT_TRUE(plan->handoff.has_value());

  PromptInputs in;
  in.piece = &piece_;
  in.tools = &tools_;
  in.task_instruction = plan->instruction;
  in.start_movement = claimed.resume_movement;
  auto seeded =
      SeedConversation(in, {plan->path, ctx_->messages().transcript_path(), &*plan->handoff});
  ASSERT_TRUE(seeded.ok());
  ASSERT_TRUE(ctx_->messages().SeedThread(claimed.id, seeded->messages, in.start_movement).ok());
  std::vector<Json> first = ReadJsonl(ctx_->messages().current_path());
  // system, then one user message (roles alternate: issue 45 item 3): the
  // facts + instruction, a blank line, the movement's guidance.
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0], BuildSystemMessage(in.preamble, tools_, piece_, piece_.initial_movement));
  std::string facts = first[1]["content"];
  EXPECT_EQ(facts.rfind("## Handoff from the previous session (facts only)", 0), 0u);
  EXPECT_NE(facts.find("reading b.txt"), std::string::npos);
  EXPECT_NE(facts.find(task->instruction), std::string::npos);
  EXPECT_EQ(facts.find(BigText("a.txt").substr(0, 40)), std::string::npos);  // nothing replayed
  const std::string guidance = TransitionGuidanceMessage(piece_, "implement")["content"];
  ASSERT_GT(facts.size(), guidance.size());
  EXPECT_EQ(facts.substr(facts.size() - guidance.size() - 2), "\n\n" + guidance);
  // The overflowed session left the transcript: a later park or retry of the
  // continuation replays from its handoff.
  EXPECT_EQ(ReadJsonl(ctx_->messages().transcript_path()), first);
  EXPECT_EQ(ctx_->messages().movement(), "implement");
}

TEST_F(PromptGuardLoopTest, AContinueByTheUserIsNotAHandoffContinuation) {
  ASSERT_TRUE(store_->FinishJob(LeaseOf(job_), JobOutcome::Succeeded("done")).ok());
  auto cont = store_->ContinueTask(created_.task.id, "", "alice", "");
  ASSERT_TRUE(cont.ok()) << cont.status().ToString();
  auto task = store_->GetTask(created_.task.id);
  Job claimed = Claim();
  auto plan = PlanJobPrompt(*store_, *task, claimed,
                            {ctx_->messages().transcript_path(), ctx_->handoffs_dir()}, false);
  ASSERT_TRUE(plan.ok());
  EXPECT_NE(plan->path, PromptPath::kHandoffContinuation);
  EXPECT_FALSE(plan->handoff.has_value());
}

// --- the watchdog inside the loop -----------------------------------------

TEST_F(PromptGuardLoopTest, RepeatedToolErrorsGetAWarningMessageThenAbortTheMovement) {
  // Alternate the arguments so the identical-call guard does not fire first.
  for (int i = 0; i < 3; ++i) {
    llm_.Calls({{"ReadFile", {{"path", "missing"}}},
                {"ReadFile", {{"path", "small" + std::to_string(i)}}}});
  }
  for (int i = 3; i < 6; ++i) {
    llm_.Calls({{"ReadFile", {{"path", "missing"}}},
                {"ReadFile", {{"path", "small" + std::to_string(i)}}}});
  }
  llm_.Call("complete", {{"status", "success"}, {"result", "never reached"}});
  AgentLoopDeps d = Deps(false);
  MovementResult r = RunMovement(d, "plan");
  EXPECT_EQ(r.next, "ABORT");
  EXPECT_EQ(r.abort_reason, kAbortWatchdog);
  EXPECT_NE(r.result.find("no such file"), std::string::npos) << r.result;
  ASSERT_EQ(llm_.requests.size(), 6u);
  // The warning is the last message of the 4th request, appended after the results.
  const Json& warning = llm_.requests[3].back();
  EXPECT_EQ(warning["role"], "user");
  EXPECT_EQ(warning["content"].get<std::string>().rfind("[maestro watchdog]", 0), 0u);
  bool delta = false;
  for (const Json& x : deltas_) delta |= x.value("type", "") == "watchdog";
  EXPECT_TRUE(delta);
}

}  // namespace
}  // namespace maestro::engine
