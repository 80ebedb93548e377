// PieceExecutor's error returns: a run that stops with an error after its
// context session started still ends the session, so the task's context
// directory never stays in contexts/running/ (it follows what the worker's
// retry policy makes of the error): a failing tools.json write, a required
// MCP server that cannot be opened, a model the profile does not serve; and
// a park before any LLM call (an MCP server's token is missing) ends it too.
#include "engine/job/piece_executor.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "context/context_dirs.h"
#include "sandbox/sandbox.h"
#include "support/scripted_llm.h"
#include "support/store_fixture.h"
#include "tools/builtin.h"

namespace maestro::engine {
namespace {

namespace fs = std::filesystem;

class PieceExecutorTest : public maestro::testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    llm_.mutable_profile().model = "served";
    llm_.ForbidCalls();
    auto reg = tools::NewBuiltinRegistry(
        std::make_shared<tools::Sandbox>(tools::Sandbox::Unavailable("test")));
    ASSERT_TRUE(reg.ok());
    registry_ = std::move(reg).value();
    catalog_ = std::make_unique<PieceCatalog>(PieceCatalog::Load({}));
    MakeExecutor({});
  }

  // `mcp_servers`: the executor's MCP servers (none by default).
  void MakeExecutor(std::map<std::string, mcp::ServerConfig> mcp_servers) {
    PieceExecutorOptions o;
    o.store = store_.get();
    o.catalog = catalog_.get();
    o.registry = registry_.get();
    o.spaces = &spaces_;
    o.workspace.data_dir = dir_.path();
    o.data_dir = dir_.path();
    o.clock = &clock_;
    o.llm_factory = [this](const std::string&) -> Result<std::unique_ptr<llm::LlmClient>> {
      return llm_.Handle();
    };
    o.mcp_servers = std::move(mcp_servers);
    o.reflection = reflection_;
    executor_ = std::make_unique<PieceExecutor>(std::move(o));
  }

  Result<JobOutcome> Execute(const Job& job) {
    CancelToken cancel;
    return executor_->Execute(job, LeaseOf(job), cancel);
  }

  bool AnyRunning() {
    std::error_code ec;
    fs::path running = fs::path(dir_.path()) / "contexts" / "running";
    return fs::exists(running, ec) && !fs::is_empty(running, ec);
  }

  std::string reflection_ = "off";
  maestro::testing::ScriptedLlm llm_;  // the failing paths end before any LLM call
  tools::SpaceRegistry spaces_;
  std::unique_ptr<tools::ToolRegistry> registry_;
  std::unique_ptr<PieceCatalog> catalog_;
  std::unique_ptr<PieceExecutor> executor_;
};

TEST_F(PieceExecutorTest, AnErrorAfterTheSessionStartedLeavesNothingInRunning) {
  Store::CreatedTask created = NewTaskWith("chat");
  // tools.json cannot be written (a directory stands in its place): the run
  // stops with an error after TaskContext::Start moved the directory to
  // running/.
  fs::create_directories(fs::path(dir_.path()) / "contexts" / "paused" / created.task.id /
                         "tools.json");
  Job job = Claim();
  auto r = Execute(job);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("tools.json"), std::string::npos) << r.status().ToString();
  EXPECT_FALSE(AnyRunning());
  // kInternal is transient: the job will be retried, so its context waits in paused/.
  EXPECT_EQ(context::ContextDirs(dir_.path()).Find(created.task.id), context::Placement::kPaused);
}

// A job that fails by an error return (the LLM server down through every
// retry) ends as failed as surely as an aborted run: with reflection on
// failure it gets its Reflection task, once, holding the error.
TEST_F(PieceExecutorTest, AJobFailedByAnErrorReturnIsReflectedOnOnce) {
  auto reflections = [&] {
    std::vector<Task> out;
    auto tasks = store_->ListTasks(std::nullopt, 100);
    EXPECT_TRUE(tasks.ok()) << tasks.status().ToString();
    if (!tasks.ok()) return out;
    for (const Task& t : *tasks) {
      if (t.piece == "reflection") out.push_back(t);
    }
    return out;
  };
  Store::CreatedTask created = NewTaskWith("chat");
  Job job = Claim();
  executor_->OnFailedByError(job, Unavailable("the model server refused the connection"));
  EXPECT_TRUE(reflections().empty()) << "reflection is off by default";

  reflection_ = "failure";
  MakeExecutor({});
  executor_->OnFailedByError(job, Unavailable("the model server refused the connection"));
  executor_->OnFailedByError(job, Unavailable("the model server refused the connection"));
  std::vector<Task> r = reflections();
  ASSERT_EQ(r.size(), 1u) << "one Reflection task per ended job";
  EXPECT_EQ(r[0].task_source, "reflection:" + created.task.id);
  EXPECT_NE(r[0].instruction.find("which ended failed: UNAVAILABLE"), std::string::npos)
      << r[0].instruction;
  EXPECT_NE(r[0].instruction.find("the model server refused the connection"), std::string::npos);

  reflection_ = "success";
  MakeExecutor({});
  NewTaskWith("chat");
  Job other_job = Claim();
  executor_->OnFailedByError(other_job, Unavailable("down"));
  EXPECT_EQ(reflections().size(), 1u) << "reflection on success only";
}

TEST_F(PieceExecutorTest, AFailingOpenJobMcpLeavesNothingInRunning) {
  mcp::ServerConfig server;
  server.name = "down";
  server.url = "http://127.0.0.1:9/mcp";  // nothing listens there
  server.required = true;                 // so the job cannot go on without it
  server.timeout_ms = 2'000;
  MakeExecutor({{"down", server}});
  Store::CreatedTask created = NewTaskWith("chat");
  Job job = Claim();
  auto r = Execute(job);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("down"), std::string::npos) << r.status().ToString();
  EXPECT_FALSE(AnyRunning());
  EXPECT_TRUE(context::ContextDirs(dir_.path()).Find(created.task.id).has_value());
}

TEST_F(PieceExecutorTest, ARequiredMcpServerWithoutItsTokenParksBeforeAnyLlmCall) {
  mcp::ServerConfig server;
  server.name = "tokened";
  server.url = "http://127.0.0.1:9/mcp";
  server.bearer_env = "MAESTRO_TEST_TOKEN_NEVER_SET";
  server.required = true;
  MakeExecutor({{"tokened", server}});
  Store::CreatedTask created = NewTaskWith("chat");
  Job job = Claim();
  auto r = Execute(job);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->kind, JobOutcome::Kind::kParked);
  EXPECT_EQ(r->park_status, JobStatus::kWaitingHuman);
  EXPECT_EQ(r->wait_reason, "mcp_auth_required");
  EXPECT_EQ(r->resume_movement, "chat");
  EXPECT_FALSE(AnyRunning());
  EXPECT_EQ(context::ContextDirs(dir_.path()).Find(created.task.id), context::Placement::kPaused);
  auto comments = store_->ListComments(created.task.id);
  ASSERT_TRUE(comments.ok());
  ASSERT_FALSE(comments->empty());
  EXPECT_EQ(comments->back().kind, CommentKind::kQuestion);
  EXPECT_NE(comments->back().body.find("MAESTRO_TEST_TOKEN_NEVER_SET"), std::string::npos);
}

TEST_F(PieceExecutorTest, AModelTheProfileDoesNotServeFailsWithoutAContextInRunning) {
  NewTask t;
  t.instruction = "hello";
  t.piece = "chat";
  t.model = "another";
  auto created = store_->CreateTask(t);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  Job job = Claim();
  auto r = Execute(job);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("asks for model 'another'"), std::string::npos);
  EXPECT_FALSE(AnyRunning());
}

}  // namespace
}  // namespace maestro::engine
