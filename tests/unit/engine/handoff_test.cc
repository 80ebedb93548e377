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
#include "tools/git_repo.h"
#include "tools/park_tools.h"

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
  EXPECT_EQ(user.find("2026-07-24"), std::string::npos);   // nor the dynamic context
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
  auto d = FallbackHandoff("task instruction", ctx_->tools(), job_.id);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->files_changed, std::vector<std::string>{"src/a.cc — EditFile"});
  ASSERT_EQ(d->blockers.size(), 1u);
  EXPECT_NE(d->blockers[0].find("permission denied"), std::string::npos);
  EXPECT_NE(d->in_progress[0].find("4 calls"), std::string::npos);
  HandoffInputs in;
  in.job = job_;
  in.fallback = true;
  auto r = CompleteHandoff(*ctx_, *d, in);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->check.matches());
  EXPECT_EQ(r->comment.author, "system");
}

}  // namespace
}  // namespace maestro::engine
