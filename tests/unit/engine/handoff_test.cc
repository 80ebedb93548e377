// Handoff (seed 004): strict facts-only schema, files_changed verified
// against the workspace, saved as NNNN.yaml + comment, continuation queued
// and started from static system + spec + facts only; ledger fallback.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "context/task_context.h"
#include "core/durable_file.h"
#include "engine/handoff/continuation.h"
#include "engine/handoff/trigger.h"
#include "engine/prompt/prompt_paths.h"
#include "engine_test_util.h"
#include "support/store_fixture.h"
#include "tools/park_tools.h"
#include "workspace/git_repo.h"

namespace maestro::engine {
namespace {

using context::ContextConfig;
using context::ContextDirs;
using context::MessageLine;
using context::MessageStore;
using context::Placement;
using context::TaskContext;
using context::ToolCallRecord;

Json SeedExample() {
  return Json::parse(R"({
    "spec_ref": "/specs/auth-module.md",
    "status": {
      "completed": ["JWT issuing (RS256) — unit tests pass"],
      "in_progress": ["/api/refresh — issuing done, revocation not started"],
      "pending": ["/api/logout"]
    },
    "decisions": [{"what": "RS256 over HS256", "why": "cross-service verification"}],
    "blockers": ["user table lacks refresh_token_hash"],
    "files_changed": ["src/auth/jwt.py — created", "src/auth/login.py — created"]
  })");
}

TEST(HandoffDocumentTest, AcceptsTheSeedShapeAndRoundTripsThroughYaml) {
  auto d = ParseHandoff(SeedExample());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->spec_ref, "/specs/auth-module.md");
  EXPECT_EQ(d->in_progress.size(), 1u);
  EXPECT_EQ(d->decisions[0].why, "cross-service verification");
  auto back = HandoffFromYaml(HandoffToYaml(*d));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(HandoffToJson(*back), HandoffToJson(*d));
  // Arguments may arrive as the model's JSON text.
  EXPECT_TRUE(ParseHandoff(Json(SeedExample().dump())).ok());
}

TEST(HandoffDocumentTest, RejectsNextStepsAndEveryOtherExtraField) {
  Json a = SeedExample();
  a["next_steps"] = {"implement logout"};
  auto r = ParseHandoff(a);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().field(), "next_steps");
  EXPECT_NE(r.status().message().find("facts only"), std::string::npos);

  Json b = SeedExample();
  b["status"]["done"] = Json::array();
  EXPECT_EQ(ParseHandoff(b).status().field(), "status.done");
  Json c = SeedExample();
  c["decisions"][0]["how"] = "x";
  EXPECT_EQ(ParseHandoff(c).status().field(), "decisions[0].how");
  Json e = SeedExample();
  e.erase("files_changed");
  EXPECT_EQ(ParseHandoff(e).status().field(), "files_changed");
  Json f = SeedExample();
  f["blockers"] = {1};
  EXPECT_EQ(ParseHandoff(f).status().field(), "blockers[0]");

  Json tool = tools::ToolEntry(tools::WriteHandoffToolSpec());
  EXPECT_EQ(tool["function"]["name"], "WriteHandoff");
  EXPECT_EQ(tool["function"]["parameters"]["additionalProperties"], false);
  EXPECT_FALSE(tool["function"]["parameters"]["properties"].contains("next_steps"));
}

TEST(HandoffDocumentTest, FilesCheckFindsBothKindsOfDifference) {
  auto d = ParseHandoff(SeedExample());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(PathOfEntry("src/auth/jwt.py — created"), "src/auth/jwt.py");
  EXPECT_EQ(PathOfEntry("`./src/a.cc` - edited"), "src/a.cc");
  FilesCheck c = CheckFilesChanged(*d, {"src/auth/jwt.py", "src/db/migrate.sql"}, "git");
  EXPECT_FALSE(c.matches());
  EXPECT_EQ(c.claimed_not_changed, std::vector<std::string>{"src/auth/login.py"});
  EXPECT_EQ(c.changed_not_claimed, std::vector<std::string>{"src/db/migrate.sql"});
  EXPECT_TRUE(CheckFilesChanged(*d, {"src/auth/jwt.py", "src/auth/login.py"}, "git").matches());
}

TEST(HandoffDocumentTest, GitStatusListsChangedAndUntrackedFiles) {
  maestro::testing::TempDir ws;
  auto repo = tools::GitRepo::Init(ws.path());
  ASSERT_TRUE(repo.ok()) << repo.status().ToString();
  std::ofstream(ws.File("tracked.txt")) << "v1\n";
  ASSERT_TRUE(repo->CommitAll("init").ok());
  std::ofstream(ws.File("tracked.txt")) << "v2\n";
  std::filesystem::create_directories(ws.File("src"));
  std::ofstream(ws.File("src/new.cc")) << "int x;\n";
  auto paths = GitChangedPaths(ws.path());
  ASSERT_TRUE(paths.ok()) << paths.status().ToString();
  EXPECT_EQ(*paths, (std::set<std::string>{"src/new.cc", "tracked.txt"}));
  maestro::testing::TempDir not_git;
  EXPECT_FALSE(GitChangedPaths(not_git.path()).ok());
}

TEST(HandoffMonitorTest, RequestsAtThresholdThenFallsBackAfterWaiting) {
  ContextConfig c;
  c.context_length = 1000;
  c.handoff_threshold = 0.6;
  c.handoff_max_wait_iterations = 2;
  HandoffMonitor m(c);
  EXPECT_EQ(m.OnIteration(600), HandoffMonitor::Action::kNone);
  EXPECT_EQ(m.OnIteration(601), HandoffMonitor::Action::kRequestHandoff);
  EXPECT_EQ(m.OnIteration(650), HandoffMonitor::Action::kNone);
  EXPECT_EQ(m.OnIteration(700), HandoffMonitor::Action::kNone);
  EXPECT_EQ(m.OnIteration(750), HandoffMonitor::Action::kWriteFallback);
  EXPECT_EQ(m.OnIteration(800), HandoffMonitor::Action::kNone);
}

class HandoffFlowTest : public maestro::testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    created_ = NewTaskWith("coding");
    job_ = Claim();
    auto task = store_->GetTask(created_.task.id);
    ASSERT_TRUE(task.ok());
    dirs_ = std::make_unique<ContextDirs>(dir_.path());
    auto ctx = TaskContext::Start(*dirs_, {store_.get(), &clock_}, *task, job_, config_);
    ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
    ctx_ = std::move(ctx).value();
  }
  void Tool(const std::string& tool, const std::string& path, bool ok) {
    ToolCallRecord r;
    r.tool = tool;
    r.args = {{"path", path}};
    r.status = ok ? "success" : "error";
    r.error = ok ? "" : "permission denied";
    ASSERT_TRUE(ctx_->RecordToolCall(r).ok());
  }
  Json System() { return {{"role", "system"}, {"content", "You are maestro. Tools: ..."}}; }
  // One ended call in the ledger, as the Dispatcher records it.
  void Call(const std::string& tool, const Json& args, const std::string& result,
            const std::string& job_id = {}) {
    ToolCallRecord r;
    r.job_id = job_id;
    r.tool = tool;
    r.args = args;
    r.result = result;
    ASSERT_TRUE(ctx_->RecordToolCall(r).ok());
  }
  // A space that is its own git repository, README.md committed.
  void GitWorkspace(const maestro::testing::TempDir& ws) {
    auto repo = tools::GitRepo::Init(ws.path());
    ASSERT_TRUE(repo.ok()) << repo.status().ToString();
    std::ofstream(ws.File("README.md")) << "# project\n";
    ASSERT_TRUE(repo->CommitAll("init").ok());
  }
  int CountEvents(const std::string& type) {
    int n = 0;
    EXPECT_TRUE(ctx_->events()
                    .ForEach([&](const Json& e) {
                      n += e["type"] == type;
                      return true;
                    })
                    .ok());
    return n;
  }

  Store::CreatedTask created_;
  Job job_;
  ContextConfig config_;
  std::unique_ptr<ContextDirs> dirs_;
  std::unique_ptr<TaskContext> ctx_;
};

TEST_F(HandoffFlowTest, MismatchIsRecordedAndHandoffSavedCommentedAndContinued) {
  Tool("WriteFile", "src/auth/jwt.py", true);
  Tool("EditFile", "src/app.py", true);
  Tool("WriteFile", "src/secret.py", false);
  auto doc = ParseHandoff(SeedExample());
  ASSERT_TRUE(doc.ok());
  HandoffInputs in;
  in.job = job_;
  auto r = CompleteHandoff(*ctx_, *doc, in);
  ASSERT_TRUE(r.ok()) << r.status().ToString();

  EXPECT_EQ(std::filesystem::path(r->path).filename(), "0001.yaml");
  EXPECT_EQ(r->check.source, "ledger");
  EXPECT_EQ(r->check.claimed_not_changed, std::vector<std::string>{"src/auth/login.py"});
  EXPECT_EQ(r->check.changed_not_claimed, std::vector<std::string>{"src/app.py"});
  auto yaml = ReadFileToString(*Env::Default(), r->path);
  ASSERT_TRUE(yaml.ok());
  YAML::Node n = YAML::Load(*yaml);
  EXPECT_FALSE(n["verification"]["files_match"].as<bool>());
  EXPECT_EQ(n["verification"]["changed_not_claimed"][0].as<std::string>(), "src/app.py");
  EXPECT_FALSE(n["next_steps"]);

  bool mismatch_event = false;
  ASSERT_TRUE(ctx_->events()
                  .ForEach([&](const Json& e) {
                    if (e["type"] == "handoff.files_mismatch") mismatch_event = true;
                    return true;
                  })
                  .ok());
  EXPECT_TRUE(mismatch_event);

  auto comments = store_->ListComments(created_.task.id);
  ASSERT_TRUE(comments.ok());
  ASSERT_EQ(comments->back().kind, CommentKind::kHandoff);
  EXPECT_EQ(comments->back().body, *yaml);
  EXPECT_EQ(r->continuation.continued_from_job_id, job_.id);
  EXPECT_EQ(r->continuation.status, JobStatus::kQueued);
  EXPECT_EQ(r->continuation.piece, "coding");

  // A second handoff of the task gets the next number.
  auto r2 = CompleteHandoff(*ctx_, *doc, in);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(std::filesystem::path(r2->path).filename(), "0002.yaml");
}

TEST_F(HandoffFlowTest, ContinuationHoldsSystemSpecAndFactsOnly) {
  Piece piece = test::Builtin("coding");
  auto tools = BuildPieceTools(piece, test::PolicyTools());
  ASSERT_TRUE(tools.ok());
  PromptInputs in;
  in.piece = &piece;
  in.tools = &*tools;
  in.preamble.working_directory = "/ws";
  in.dynamic.datetime = "2026-07-24 10:00 UTC";
  Json system = BuildSystemMessage(in.preamble, *tools, piece, piece.initial_movement);

  MessageStore& ms = ctx_->messages();
  ASSERT_TRUE(ms.StartThread(job_.id, system).ok());
  std::string instruction = "Implement the auth module as /specs/auth-module.md says.";
  ASSERT_TRUE(ms.AddMessage({{"role", "user"}, {"content", instruction}}, job_.id).ok());
  ASSERT_TRUE(ms.AddMessage({{"role", "assistant"},
                             {"content", "I believe the session middleware should be replaced"}},
                            job_.id)
                  .ok());
  ASSERT_TRUE(
      ms.AddMessage({{"role", "user"}, {"content", HandoffRequestMessage()}}, job_.id).ok());
  std::string old_system_line = MessageLine(system);

  auto doc = ParseHandoff(SeedExample());
  ASSERT_TRUE(doc.ok());
  HandoffInputs hin;
  hin.job = job_;
  auto r = CompleteHandoff(*ctx_, *doc, hin);
  ASSERT_TRUE(r.ok());
  auto moved = TaskContext::EndSession(std::move(ctx_), r->continuation.status);
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(dirs_->Find(created_.task.id), Placement::kPaused);

  // The continuation job starts.
  ASSERT_TRUE(store_->FinishJob(LeaseOf(job_), HandoffJobOutcome(*r)).ok());
  Job next = Claim();
  EXPECT_EQ(next.id, r->continuation.id);
  auto task = store_->GetTask(created_.task.id);
  auto ctx2 = TaskContext::Start(*dirs_, {store_.get(), &clock_}, *task, next, config_);
  ASSERT_TRUE(ctx2.ok());
  EXPECT_TRUE((*ctx2)->is_resumed());
  auto plan =
      PlanJobPrompt(*store_, *task, next,
                    {(*ctx2)->messages().transcript_path(), (*ctx2)->handoffs_dir()}, false);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->path, PromptPath::kHandoffContinuation);
  ASSERT_TRUE(plan->handoff.has_value());
  EXPECT_EQ(plan->instruction, task->instruction);
  in.task_instruction = plan->instruction;
  auto seeded =
      SeedConversation(in, {plan->path, (*ctx2)->messages().transcript_path(), &*plan->handoff});
  ASSERT_TRUE(seeded.ok());
  ASSERT_TRUE((*ctx2)->messages().SeedThread(next.id, seeded->messages, "").ok());

  auto cur = ReadFileToString(*Env::Default(), (*ctx2)->messages().current_path());
  ASSERT_TRUE(cur.ok());
  std::vector<Json> lines;
  std::string first_line = cur->substr(0, cur->find('\n') + 1);
  EXPECT_EQ(first_line, old_system_line);  // byte-identical static prefix
  ASSERT_TRUE(ForEachLine(*Env::Default(), (*ctx2)->messages().current_path(),
                          [&](std::string_view l, uint64_t) {
                            lines.push_back(Json::parse(l));
                            return true;
                          })
                  .ok());
  ASSERT_EQ(lines.size(), 2u);
  std::string user = lines[1]["content"];
  EXPECT_EQ(lines[1]["role"], "user");
  EXPECT_NE(user.find(task->instruction), std::string::npos);
  EXPECT_NE(user.find("/api/refresh — issuing done"), std::string::npos);
  EXPECT_NE(user.find("RS256 over HS256"), std::string::npos);
  EXPECT_EQ(user.find("I believe"), std::string::npos);    // no old reasoning
  EXPECT_EQ(user.find("files_match"), std::string::npos);  // engine notes stay out
  // The dynamic context comes first (issue 45 item 5: seed 000 §3 puts the
  // date, files and console beside the handoff), then the facts.
  EXPECT_EQ(user.rfind("# Context\nCurrent date and time: 2026-07-24 10:00 UTC\n\n"
                       "## Handoff from the previous session (facts only)\n",
                       0),
            0u)
      << user;
  // Nor the old request (the piece's guidance in the system line may name the tool).
  EXPECT_EQ(cur->find("This session's context is nearly full"), std::string::npos);
  EXPECT_EQ(cur->substr(first_line.size()).find("WriteHandoff"), std::string::npos);
  EXPECT_EQ((*ctx2)->messages().thread(), 2);
}

TEST_F(HandoffFlowTest, FallbackHandoffComesFromTheToolLedger) {
  Tool("ReadFile", "README.md", true);
  Tool("WriteFile", "src/a.cc", true);
  Tool("EditFile", "src/a.cc", true);
  Tool("WriteFile", "/etc/passwd", false);
  FallbackFacts facts;
  facts.spec_ref = "task instruction";
  facts.job_id = job_.id;
  auto d = FallbackHandoff(facts, ctx_->tools());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->files_changed, std::vector<std::string>{"src/a.cc — EditFile"});
  ASSERT_EQ(d->blockers.size(), 1u);
  EXPECT_NE(d->blockers[0].find("permission denied"), std::string::npos);
  EXPECT_NE(d->blockers[0].find("WriteFile `/etc/passwd`"), std::string::npos);
  EXPECT_NE(d->in_progress[0].find("4 calls"), std::string::npos);
  EXPECT_EQ(d->completed, std::vector<std::string>{"read README.md"});
  HandoffInputs in;
  in.job = job_;
  in.fallback = true;
  auto r = CompleteHandoff(*ctx_, *d, in);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->check.matches());
  EXPECT_EQ(r->comment.author, "system");
}

// Issue 45 item 4: the model names a file as it sees it, git as it stores it.
TEST(HandoffPathTest, EveryFormOfAWorkspacePathBecomesGitsForm) {
  EXPECT_EQ(WorkspaceRelativePath("/workspace/notes.md"), "notes.md");
  EXPECT_EQ(WorkspaceRelativePath("./notes.md"), "notes.md");
  EXPECT_EQ(WorkspaceRelativePath("notes.md"), "notes.md");
  EXPECT_EQ(WorkspaceRelativePath("a//b"), "a/b");
  EXPECT_EQ(WorkspaceRelativePath("/workspace//docs/./x/../b.md"), "docs/b.md");
  EXPECT_EQ(WorkspaceRelativePath("docs/"), "docs");
  EXPECT_EQ(WorkspaceRelativePath("/workspace"), "");
  EXPECT_EQ(WorkspaceRelativePath("/workspace/"), "");
  EXPECT_EQ(WorkspaceRelativePath("."), "");
  EXPECT_EQ(WorkspaceRelativePath("/srv/ws/task/src/a.cc", "/srv/ws/task"), "src/a.cc");
  EXPECT_EQ(WorkspaceRelativePath("/srv/ws/task/", "/srv/ws/task/"), "");
  // Outside stays outside (normalized), so it never equals a workspace file.
  EXPECT_EQ(WorkspaceRelativePath("/workspace-other/notes.md"), "/workspace-other/notes.md");
  EXPECT_EQ(WorkspaceRelativePath("/workspace/../etc/passwd"), "/etc/passwd");
  EXPECT_EQ(WorkspaceRelativePath("../notes.md"), "../notes.md");
  EXPECT_EQ(WorkspaceRelativePath("/srv/ws/task2/a.cc", "/srv/ws/task"), "/srv/ws/task2/a.cc");
  EXPECT_EQ(PathOfEntry("`/workspace/notes.md` — created"), "notes.md");
  EXPECT_EQ(PathOfEntry("./docs//b.md (new)"), "docs/b.md");
}

TEST(HandoffPathTest, FilesCheckComparesOneFormAndNamesEachPathOnce) {
  HandoffDocument d;
  d.files_changed = {"/workspace/notes.md — created", "notes.md — edited", "./docs//b.md — created",
                     "ghost.md - created", "/workspace/ghost.md"};
  FilesCheck c = CheckFilesChanged(d, {"notes.md", "docs/b.md", "c.md"}, "git");
  EXPECT_EQ(c.claimed_not_changed, std::vector<std::string>{"ghost.md"});
  EXPECT_EQ(c.changed_not_claimed, std::vector<std::string>{"c.md"});
}

TEST_F(HandoffFlowTest, ACorrectHandoffNamingTheMountPathIsNoMismatch) {
  maestro::testing::TempDir ws;
  GitWorkspace(ws);
  ASSERT_FALSE(HasFatalFailure());
  std::ofstream(ws.File("notes.md")) << "notes\n";  // what the WriteFile call did
  Call("WriteFile", {{"path", "/workspace/notes.md"}, {"content", "notes\n"}}, "wrote");
  Json args = SeedExample();
  args["files_changed"] = {"notes.md — created"};
  auto doc = ParseHandoff(args);
  ASSERT_TRUE(doc.ok());
  HandoffInputs in;
  in.job = job_;
  in.workspace = ws.path();
  auto r = CompleteHandoff(*ctx_, *doc, in);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->check.source, "git+ledger");
  EXPECT_TRUE(r->check.matches()) << r->check.ToJson().dump();
  EXPECT_EQ(CountEvents("handoff.files_mismatch"), 0);
  YAML::Node n = YAML::Load(*ReadFileToString(*Env::Default(), r->path));
  EXPECT_TRUE(n["verification"]["files_match"].as<bool>());
  EXPECT_EQ(n["verification"]["changed_not_claimed"].size(), 0u);

  // A real mismatch still reports, each path once in git's form.
  args["files_changed"] = {"other.md — created"};
  auto wrong = ParseHandoff(args);
  ASSERT_TRUE(wrong.ok());
  auto r2 = CompleteHandoff(*ctx_, *wrong, in);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2->check.claimed_not_changed, std::vector<std::string>{"other.md"});
  EXPECT_EQ(r2->check.changed_not_claimed, std::vector<std::string>{"notes.md"});
  EXPECT_EQ(CountEvents("handoff.files_mismatch"), 1);
  YAML::Node n2 = YAML::Load(*ReadFileToString(*Env::Default(), r2->path));
  ASSERT_EQ(n2["verification"]["changed_not_claimed"].size(), 1u);
  EXPECT_EQ(n2["verification"]["changed_not_claimed"][0].as<std::string>(), "notes.md");
}

TEST(HandoffFallbackTest, KeyLinesPreferErrorsAndCountsAndAreBounded) {
  EXPECT_EQ(KeyLines("[exit code 2]\ncc -c a.c\nFAIL: check_b\nmake: *** [check] Error 2\n"),
            "FAIL: check_b | make: *** [check] Error 2");
  EXPECT_EQ(KeyLines("[exit code 0]\none\ntwo\nthree\nfour\n"), "two | three | four");
  EXPECT_EQ(KeyLines("[exit code 0]\n\n"), "");
  std::string long_line(1000, 'e');
  long_line += " error";
  std::string k = KeyLines(long_line + "\n" + long_line + "\n" + long_line + "\n" + long_line);
  EXPECT_LE(k.size(), 3 * (160 + 3) + 2 * 3u);
}

// Issue 45 item 10: the agent ignored the request; the engine's document
// still says what the session did.
TEST_F(HandoffFlowTest, FallbackCarriesFilesCommandsKeyLinesAndMovements) {
  maestro::testing::TempDir ws;
  GitWorkspace(ws);
  ASSERT_FALSE(HasFatalFailure());
  // The session: started in plan, moved to implement with a reason.
  MessageStore& ms = ctx_->messages();
  ASSERT_TRUE(
      ms.SeedThread(job_.id, {System(), UserMessage("Write a.md and docs/b.md.")}, "plan").ok());
  Json transition = {
      {"id", "c1"},
      {"type", "function"},
      {"function",
       {{"name", "transition"},
        {"arguments", R"({"next":"implement","reason":"the plan names a.md and docs/b.md"})"}}}};
  ASSERT_TRUE(ms.AddMessage({{"role", "assistant"},
                             {"content", nullptr},
                             {"tool_calls", Json::array({transition})}},
                            job_.id)
                  .ok());
  ASSERT_TRUE(ms.AddMessage({{"role", "tool"}, {"tool_call_id", "c1"}, {"content", "ok"}}, job_.id,
                            "transition")
                  .ok());
  ASSERT_TRUE(ms.AddMessage(UserMessage("## implement ..."), job_.id, "", "implement").ok());
  // What it did, in the ledger and on disk.
  std::filesystem::create_directories(ws.File("docs"));
  std::ofstream(ws.File("a.md")) << "a\n";
  std::ofstream(ws.File("docs/b.md")) << "";
  Call("WriteFile", {{"path", "/workspace/a.md"}, {"content", "a\n"}}, "wrote a.md");
  Call("WriteFile", {{"path", "./docs//b.md"}, {"content", ""}}, "wrote docs/b.md");
  Call("RunCommand", {{"command", "make check"}},
       "[exit code 2]\ncc -c a.c\nlinking\nFAIL: check_b (docs/b.md is empty)\n"
       "make: *** [check] Error 2\n");
  Call("RunCommand", {{"command", "./run-checks --quick"}},
       "[exit code 0]\nrunning 2 checks\nall 2 checks passed\n");
  Call("ReadFile", {{"path", "/workspace/README.md"}}, "# project");
  Call("RunCommand", {{"command", "rm -rf build"}}, "[exit code 0]\n", "another-job");
  Call("RunRemote", {{"host", "box"}, {"command", "systemctl is-active app"}},
       "[exit code 3]\ninactive\n");

  auto moves = ReadSessionMovements(ctx_->env(), ms.messages_path(), job_.id, "implement");
  ASSERT_TRUE(moves.ok()) << moves.status().ToString();
  EXPECT_EQ(moves->visited, (std::vector<std::string>{"plan", "implement"}));
  ASSERT_EQ(moves->transitions.size(), 1u);
  EXPECT_EQ(moves->transitions[0].what, "moved from movement `plan` to `implement`");
  EXPECT_EQ(moves->transitions[0].why, "the plan names a.md and docs/b.md");

  FallbackFacts f;
  f.spec_ref = "task instruction";
  f.job_id = job_.id;
  f.workspace = ws.path();
  f.movements = *moves;
  auto git = GitChangedPaths(ws.path());
  ASSERT_TRUE(git.ok());
  f.git_changed = *git;
  auto d = FallbackHandoff(f, ctx_->tools());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->files_changed,
            (std::vector<std::string>{"a.md — WriteFile", "docs/b.md — WriteFile"}));
  auto has = [](const std::vector<std::string>& v, const std::string& a, const std::string& b) {
    for (const auto& s : v) {
      if (s.find(a) != std::string::npos && s.find(b) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has(d->completed, "movement `plan`: left for `implement`", ""));
  EXPECT_TRUE(has(d->completed, "`./run-checks --quick` — exit code 0", "all 2 checks passed"))
      << HandoffToYaml(*d);
  EXPECT_TRUE(has(d->completed, "read README.md", ""));
  EXPECT_TRUE(has(d->blockers, "`make check` — exit code 2", "FAIL: check_b (docs/b.md is empty)"))
      << HandoffToYaml(*d);
  EXPECT_TRUE(has(d->blockers, "`make check`", "Error 2"));
  // A remote command counts as a command, its host named (issue 45 item 7).
  EXPECT_TRUE(has(d->blockers, "`systemctl is-active app on box` — exit code 3", "inactive"))
      << HandoffToYaml(*d);
  EXPECT_FALSE(has(d->completed, "rm -rf build", ""));  // another session's command
  EXPECT_FALSE(has(d->blockers, "rm -rf build", ""));
  EXPECT_TRUE(has(d->in_progress, "movement `implement`: the session ended in it", ""));
  ASSERT_EQ(d->decisions.size(), 1u);
  EXPECT_EQ(d->decisions[0].why, "the plan names a.md and docs/b.md");

  HandoffInputs in;
  in.job = job_;
  in.workspace = ws.path();
  in.fallback = true;
  auto r = CompleteHandoff(*ctx_, *d, in);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->check.matches()) << r->check.ToJson().dump();  // its own check agrees
  EXPECT_EQ(CountEvents("handoff.files_mismatch"), 0);
}

TEST_F(HandoffFlowTest, FallbackIsBoundedWhateverTheLedgerHolds) {
  std::string noise;
  for (int i = 0; i < 200; ++i)
    noise += "error: line " + std::to_string(i) + std::string(300, 'x') + "\n";
  for (int i = 0; i < 60; ++i) {
    Call("RunCommand", {{"command", "check-" + std::to_string(i) + std::string(500, ' ') + "tail"}},
         "[exit code 1]\n" + noise);
    Call("ReadFile", {{"path", "f" + std::to_string(i) + ".txt"}}, "text");
  }
  FallbackFacts f;
  f.spec_ref = "task instruction";
  f.job_id = job_.id;
  f.movements.visited = {"chat"};
  auto d = FallbackHandoff(f, ctx_->tools());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->blockers.size(), kFallbackMaxBlockers);
  EXPECT_NE(d->blockers.back().find("check-59"), std::string::npos);  // the newest kept
  for (const auto& b : d->blockers) EXPECT_LE(b.size(), 800u) << b;
  EXPECT_NE(d->in_progress.back().find("48 earlier commands not listed"), std::string::npos);
  EXPECT_LT(HandoffToYaml(*d).size(), 12'000u);
}

}  // namespace
}  // namespace maestro::engine
