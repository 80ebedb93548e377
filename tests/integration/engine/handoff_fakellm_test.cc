// Seed 004 end to end: a small context_length forces a handoff mid-job and the
// task still completes. WorkerPool -> PieceExecutor -> HttpLlmClient ->
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
#include "engine/job/piece_executor.h"
#include "engine_rig.h"
#include "fakellm_process.h"
#include "sandbox/sandbox.h"
#include "store/sqlite/sqlite_store.h"
#include "support/temp_dir.h"
#include "tools/builtin.h"
#include "worker/worker_pool.h"
#include "workspace/git_repo.h"

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
  // The fake runs `script`; the space proj holds two large notes files.
  // `real_sandbox`: RunCommand runs in bubblewrap (the rig's registry has
  // none); `git`: proj is its own repository with the notes committed.
  void Start(const std::string& script, tools::ToolPolicy policy, bool git = false,
             bool real_sandbox = false) {
    std::ofstream(dir_.File("script.json")) << script;
    fake_ = std::make_unique<FakeLlmProcess>(
        // One slot: with llama-server's default slot selection (similarity
        // 0.5) the short fresh session would go to another, empty slot.
        std::vector<std::string>{"--script", dir_.File("script.json"), "--slots", "1"});
    std::filesystem::create_directories(dir_.File("proj"));
    std::ofstream(dir_.File("proj/notes-a.txt")) << Notes("first");
    std::ofstream(dir_.File("proj/notes-b.txt")) << Notes("second");
    if (git) {
      auto repo = tools::GitRepo::Init(dir_.File("proj"));
      ASSERT_TRUE(repo.ok()) << repo.status().ToString();
      ASSERT_TRUE(repo->CommitAll("notes").ok());
    }
    std::function<void(PieceExecutorOptions&)> tune;
    if (real_sandbox) {
      auto sandbox = std::make_shared<tools::Sandbox>(tools::Sandbox::Probe());
      if (!sandbox->available()) GTEST_SKIP() << "no bubblewrap: " << sandbox->unavailable_reason();
      auto reg = tools::NewBuiltinRegistry(sandbox);
      ASSERT_TRUE(reg.ok()) << reg.status().ToString();
      registry_ = std::move(reg).value();
      tune = [this](PieceExecutorOptions& o) { o.registry = registry_.get(); };
    }
    tools::Space space{"proj", dir_.File("proj"), std::move(policy)};
    // handoff at 0.6 x 14,000 = 8,400 tokens: after the second file, not the first
    rig_.Start(dir_.path(), space, fake_->base_url(), 14'000, tune);
    ASSERT_FALSE(HasFatalFailure());
  }
  Job WaitForEnd(const std::string& job_id) { return rig_.WaitForEnd(job_id); }
  // The task's first job, run to its end; the handoff comment's YAML.
  std::string RunUntilHandoff(const std::string& piece, const std::string& instruction,
                              std::string* task_id) {
    NewTask t;
    t.instruction = instruction;
    t.piece = piece;
    t.space = "proj";
    auto created = rig_.store().CreateTask(t);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    if (!created.ok()) return "";
    *task_id = created->task.id;
    rig_.pool().Notify();
    Job first = WaitForEnd(created->job.id);
    EXPECT_EQ(first.status, JobStatus::kSucceeded) << first.error_message;
    EXPECT_EQ(first.result.rfind("handoff 0001.yaml; continued in job ", 0), 0u) << first.result;
    auto comments = rig_.store().ListComments(created->task.id);
    EXPECT_TRUE(comments.ok());
    for (const Comment& c : comments.ok() ? *comments : std::vector<Comment>{}) {
      if (c.kind == CommentKind::kHandoff) return c.body;
    }
    ADD_FAILURE() << "no handoff comment";
    return "";
  }
  // The handoff.* events of the task's context, wherever it now lies.
  int CountContextEvents(const std::string& task_id, const std::string& type) {
    int n = 0;
    for (const char* where : {"running", "paused", "completed"}) {
      std::ifstream in(
          dir_.File(std::string("contexts/") + where + "/" + task_id + "/events.jsonl"));
      for (std::string line; std::getline(in, line);) {
        Json e = Json::parse(line, nullptr, false);
        if (e.is_object() && e.value("type", "") == type) ++n;
      }
    }
    return n;
  }

  TempDir dir_;
  std::unique_ptr<FakeLlmProcess> fake_;
  std::unique_ptr<tools::ToolRegistry> registry_;  // outlives the rig's executor
  test::EngineRig rig_;
};

TEST_F(HandoffFakeLlmTest, SmallContextHandsOffMidJobAndTheContinuationCompletesTheTask) {
  tools::ToolPolicy policy;
  policy.allowed_tools = {"ReadFile", "ListDir"};
  Start(HandoffScript(), policy);
  ASSERT_FALSE(HasFatalFailure());
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
  // The dynamic context (issue 45 item 5), then the facts.
  EXPECT_EQ(facts.rfind("# Context\nCurrent date and time: ", 0), 0u) << facts;
  const size_t facts_at = facts.find("\n\n## Handoff from the previous session (facts only)\n");
  ASSERT_NE(facts_at, std::string::npos) << facts;
  EXPECT_EQ(facts.find("## Console"), std::string::npos) << "this session ran no command";
  EXPECT_LT(facts.find("## Files\n- notes-a.txt"), facts_at) << facts;
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

// Issue 45 item 4: the agent writes "/workspace/notes.md" (the path it
// sees), git reports "notes.md"; a handoff naming notes.md is correct.
Json NotesHandoff(const std::string& claim) {
  Json h = Handoff();
  h["files_changed"] = {claim + " — created"};
  return h;
}

std::string NotesScript(const std::string& claim) {
  Json replies = Json::array(
      {ToolCallReply("WriteFile", {{"path", "/workspace/notes.md"}, {"content", "# notes\n"}}),
       ToolCallReply("ReadFile", {{"path", "notes-a.txt"}}),
       ToolCallReply("ReadFile", {{"path", "notes-b.txt"}}),
       ToolCallReply("WriteHandoff", NotesHandoff(claim)),
       ToolCallReply("complete", {{"status", "success"}, {"result", "summary done"}})});
  return Json{{"replies", replies}, {"default", {{"text", "script exhausted"}}}}.dump();
}

tools::ToolPolicy EditPolicy() {
  tools::ToolPolicy policy;
  policy.allowed_tools = {"ReadFile", "ListDir", "WriteFile", "RunCommand"};
  policy.edit_allowed = true;
  policy.shell_allowed = true;
  return policy;
}

TEST_F(HandoffFakeLlmTest, AHandoffNamingTheFileAsGitDoesIsNoMismatch) {
  Start(NotesScript("notes.md"), EditPolicy(), /*git=*/true);
  ASSERT_FALSE(HasFatalFailure());
  std::string task_id;
  std::string yaml = RunUntilHandoff("chat", "Summarize the notes into notes.md.", &task_id);
  ASSERT_FALSE(yaml.empty());
  YAML::Node v = YAML::Load(yaml)["verification"];
  EXPECT_EQ(v["source"].as<std::string>(), "git+ledger") << yaml;
  EXPECT_TRUE(v["files_match"].as<bool>()) << yaml;
  EXPECT_EQ(v["changed_not_claimed"].size(), 0u) << yaml;
  EXPECT_EQ(yaml.find("/workspace/notes.md"), std::string::npos) << yaml;
  EXPECT_EQ(CountContextEvents(task_id, "handoff.written"), 1);
  EXPECT_EQ(CountContextEvents(task_id, "handoff.files_mismatch"), 0);
}

TEST_F(HandoffFakeLlmTest, ARealMismatchStillReportsEachFileOnce) {
  Start(NotesScript("summary.md"), EditPolicy(), /*git=*/true);
  ASSERT_FALSE(HasFatalFailure());
  std::string task_id;
  std::string yaml = RunUntilHandoff("chat", "Summarize the notes into notes.md.", &task_id);
  ASSERT_FALSE(yaml.empty());
  YAML::Node v = YAML::Load(yaml)["verification"];
  EXPECT_FALSE(v["files_match"].as<bool>()) << yaml;
  ASSERT_EQ(v["claimed_not_changed"].size(), 1u) << yaml;
  EXPECT_EQ(v["claimed_not_changed"][0].as<std::string>(), "summary.md");
  ASSERT_EQ(v["changed_not_claimed"].size(), 1u) << yaml;
  EXPECT_EQ(v["changed_not_claimed"][0].as<std::string>(), "notes.md");
  EXPECT_EQ(CountContextEvents(task_id, "handoff.files_mismatch"), 1);
}

// Issue 45 item 10: a coding session that planned, wrote two files, ran a
// failing and a passing command (in bubblewrap), read the notes and then
// ignored the handoff request: the engine's document carries those facts,
// and the continuation's first request shows them.
std::string IgnoringScript() {
  Json replies = Json::array(
      {ToolCallReply("transition",
                     {{"next", "implement"},
                      {"reason", "the plan: a.md and docs/b.md, checked by check-b and check-a"}}),
       ToolCallReply("WriteFile", {{"path", "/workspace/a.md"}, {"content", "alpha\n"}}),
       ToolCallReply("WriteFile", {{"path", "./docs//b.md"}, {"content", ""}}),
       ToolCallReply(
           "RunCommand",
           {{"command", "echo compiling; echo 'FAIL: check-b (docs/b.md is empty)'; exit 3"}}),
       ToolCallReply("RunCommand", {{"command", "test -s a.md && echo 'check-a: 1 passed'"}}),
       ToolCallReply("ReadFile", {{"path", "notes-a.txt"}}),
       ToolCallReply("ReadFile", {{"path", "notes-b.txt"}})});
  // The request is ignored for handoff_max_wait_iterations (3) and more.
  // (different calls each time: the same call three times is a tool loop).
  for (const char* dir : {".", "docs", "/workspace", "./docs", "/workspace/docs", "docs/"}) {
    replies.push_back(ToolCallReply("ListDir", {{"path", dir}}));
  }
  // The continuation (after what is left of the above).
  replies.push_back(ToolCallReply("complete", {{"status", "success"}, {"result", "done"}}));
  return Json{{"replies", replies}, {"default", {{"text", "script exhausted"}}}}.dump();
}

TEST_F(HandoffFakeLlmTest, TheEnginesFallbackCarriesFilesCommandsAndMovements) {
  Start(IgnoringScript(), EditPolicy(), /*git=*/true, /*real_sandbox=*/true);
  if (IsSkipped() || HasFatalFailure()) return;
  std::filesystem::create_directories(dir_.File("proj/docs"));
  std::string task_id;
  std::string yaml = RunUntilHandoff("coding", "Write a.md and docs/b.md; check both.", &task_id);
  ASSERT_FALSE(yaml.empty());
  YAML::Node n = YAML::Load(yaml);
  EXPECT_EQ(n["verification"]["written_by"].as<std::string>(), "engine") << yaml;
  auto list = [&](const YAML::Node& node) {
    std::vector<std::string> out;
    for (const auto& x : node) out.push_back(x.as<std::string>());
    return out;
  };
  auto has = [](const std::vector<std::string>& v, const std::string& a, const std::string& b) {
    for (const auto& s : v) {
      if (s.find(a) != std::string::npos && s.find(b) != std::string::npos) return true;
    }
    return false;
  };
  // Files: from the ledger and git, in git's form, once each; its own check agrees.
  EXPECT_EQ(list(n["files_changed"]),
            (std::vector<std::string>{"a.md — WriteFile", "docs/b.md — WriteFile"}))
      << yaml;
  EXPECT_TRUE(n["verification"]["files_match"].as<bool>()) << yaml;
  EXPECT_EQ(CountContextEvents(task_id, "handoff.files_mismatch"), 0);
  // Commands with their exit codes and key lines.
  auto blockers = list(n["blockers"]);
  auto completed = list(n["status"]["completed"]);
  EXPECT_TRUE(has(blockers, "exit code 3", "FAIL: check-b (docs/b.md is empty)")) << yaml;
  EXPECT_TRUE(has(completed, "`test -s a.md && echo 'check-a: 1 passed'` — exit code 0",
                  "check-a: 1 passed"))
      << yaml;
  // The movements visited and the transition's reason.
  EXPECT_TRUE(has(completed, "movement `plan`: left for `implement`", "")) << yaml;
  EXPECT_TRUE(has(list(n["status"]["in_progress"]), "movement `implement`", "")) << yaml;
  ASSERT_EQ(n["decisions"].size(), 1u) << yaml;
  EXPECT_EQ(n["decisions"][0]["why"].as<std::string>(),
            "the plan: a.md and docs/b.md, checked by check-b and check-a");
  EXPECT_TRUE(has(completed, "read notes-a.txt, notes-b.txt", "")) << yaml;
  EXPECT_LT(yaml.size(), 6'000u);

  // The continuation starts from those facts (its first request may still
  // be on its way).
  std::string facts;
  Json reqs;
  for (int i = 0; i < 100 && facts.empty(); ++i) {
    reqs = Requests(*fake_);
    for (const Json& r : reqs) {
      for (const Json& m : r["body"]["messages"]) {
        if (m["role"] != "user" || !m["content"].is_string()) continue;
        std::string c = m["content"];
        if (c.find("## Handoff from the previous session") != std::string::npos) facts = c;
      }
      if (!facts.empty()) break;
    }
    if (facts.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  bool seen = !facts.empty();
  EXPECT_NE(facts.find("FAIL: check-b (docs/b.md is empty)"), std::string::npos) << facts;
  EXPECT_NE(facts.find("docs/b.md — WriteFile"), std::string::npos) << facts;
  EXPECT_EQ(facts.find("first alpha beta"), std::string::npos);  // no old tool output
  // Issue 45 item 5: the console carries the session's last two commands.
  EXPECT_NE(facts.find("\n\n## Console\n```\n"
                       "$ echo compiling; echo 'FAIL: check-b (docs/b.md is empty)'; exit 3\n"
                       "[exit code 3]\ncompiling\nFAIL: check-b (docs/b.md is empty)\n"
                       "$ test -s a.md && echo 'check-a: 1 passed'\n[exit code 0]\n"
                       "check-a: 1 passed\n```\n\n## Handoff from the previous session"),
            std::string::npos)
      << facts;
  EXPECT_TRUE(seen) << reqs.dump().substr(0, 3000);
}

}  // namespace
}  // namespace maestro::engine
