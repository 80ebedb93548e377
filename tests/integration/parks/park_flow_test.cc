// Park tools through the REAL worker (issue 6 "Done when"): WorkerPool +
// SqliteStore + PieceExecutor + the builtin tool registry, with an
// in-process LlmClient that answers from the conversation it is sent (so a
// resumed or follow-up job, which replays the transcript, gets the reply a
// model would give). Each park tool parks, frees the worker, and resumes:
//   RequestTool approve -> same job, same movement, the tool now runs
//   RequestTool deny    -> re-issued call gets the denial, no second request
//   complete ASK        -> question comment; the answer's follow-up resumes
//   SpinOffTask x5 + WaitSubTask -> fan-out/fan-in, parent requeued once
//   SpinOffTask to another space -> spawn_request, child started on approval
// and a crash between a side-effecting call's `started` and `finished`
// parks the retried job for reconciliation instead of repeating the call.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "context/context_dirs.h"
#include "context/context_startup.h"
#include "context/ledger.h"
#include "engine/job/piece_executor.h"
#include "sandbox/sandbox.h"
#include "store/policy.h"
#include "store/sqlite/sqlite_store.h"
#include "support/scripted_llm.h"
#include "support/temp_dir.h"
#include "tools/builtin.h"
#include "worker/worker_pool.h"

namespace maestro::engine {
namespace {

using maestro::testing::TempDir;
using Calls = maestro::testing::ScriptedLlm::ToolCalls;
// Decides the model's next tool calls from the task id and the messages sent.
using Responder = std::function<Calls(const std::string& task_id, const std::vector<Json>&)>;

// The tool name of the call a tool message answers.
std::string ToolNameOf(const std::vector<Json>& messages, const Json& tool_msg) {
  for (const Json& m : messages) {
    if (m.value("role", "") != "assistant" || !m.contains("tool_calls")) continue;
    for (const Json& c : m["tool_calls"]) {
      if (c["id"] == tool_msg["tool_call_id"]) return c["function"]["name"];
    }
  }
  return "";
}

std::string Text(const Json& m) {
  return m.contains("content") && m["content"].is_string() ? m["content"].get<std::string>() : "";
}

bool AnyContains(const std::vector<Json>& messages, const std::string& role,
                 const std::string& needle) {
  for (const Json& m : messages) {
    if (m.value("role", "") == role && Text(m).find(needle) != std::string::npos) return true;
  }
  return false;
}

Calls One(const std::string& name, Json args) { return {{name, std::move(args)}}; }
Calls Complete(const std::string& result) {
  return One("complete", {{"status", "success"}, {"result", result}});
}

class ParkFlowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    llm_.mutable_profile().context_length = 200'000;
    StoreOptions so;
    so.on_job_available = [this] {
      if (pool_) pool_->Notify();
    };
    auto st = SqliteStore::Open(dir_.File("maestro.db"), so);
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    store_ = std::move(st).value();
    for (const char* name : {"proj", "other"}) {
      std::filesystem::create_directories(dir_.File(name));
      tools::Space space{name, dir_.File(name), {}};
      space.policy.allowed_tools = {"ReadFile", "ListDir", "SpinOffTask", "WaitSubTask"};
      ASSERT_TRUE(spaces_.Register(space).ok());
    }
    auto reg = tools::NewBuiltinRegistry(
        std::make_shared<tools::Sandbox>(tools::Sandbox::Unavailable("test")));
    ASSERT_TRUE(reg.ok());
    registry_ = std::move(reg).value();
    // `lookonly`: a movement that may read but never write, even if granted.
    std::filesystem::create_directories(dir_.File("pieces"));
    std::ofstream(dir_.File("pieces/lookonly.yaml")) << R"(name: lookonly
description: Read, never write.
movements:
  - name: look
    description: Look around.
    allowed_tools: [ReadFile, RequestTool]
    guidance: Read and report.
    rules: []
)";
    PieceCatalogOptions po;
    po.user_dirs = {dir_.File("pieces")};
    catalog_ = std::make_unique<PieceCatalog>(PieceCatalog::Load(po));
    ASSERT_NE(catalog_->Find("lookonly"), nullptr);
    PieceExecutorOptions o;
    o.store = store_.get();
    o.catalog = catalog_.get();
    o.registry = registry_.get();
    o.spaces = &spaces_;
    o.workspace.data_dir = dir_.path();
    o.workspace.ephemeral_policy.allowed_tools = {"ReadFile", "WriteFile"};
    o.workspace.ephemeral_policy.edit_allowed = true;
    o.data_dir = dir_.path();
    o.llm_factory = [this](const std::string&) -> Result<std::unique_ptr<llm::LlmClient>> {
      return llm_.Handle();
    };
    executor_ = std::make_unique<PieceExecutor>(std::move(o));
  }
  void TearDown() override {
    if (pool_) pool_->Shutdown();
  }

  // The model answers every call with the responder's tool calls.
  void Set(Responder responder) {
    llm_.Respond([responder](const std::string& task_id, const std::vector<Json>& messages) {
      maestro::testing::ScriptedLlm::Reply reply;
      reply.calls = responder(task_id, messages);
      return reply;
    });
  }

  // One worker thread: a parent holds it until it parks, so its children
  // run only after it waits (the fan-in is then deterministic).
  void StartPool() {
    WorkerPoolOptions wo;
    wo.threads = 1;
    wo.worker_id_prefix = "test";
    wo.jobs.poll_interval_ms = 50;
    pool_ = std::make_unique<WorkerPool>(*store_, *executor_, wo);
    pool_->Start();
  }

  Store::CreatedTask NewTask(const std::string& instruction, const std::string& space = "proj",
                             const std::string& piece = "chat") {
    maestro::NewTask t;
    t.title = instruction.substr(0, 20);
    t.instruction = instruction;
    t.piece = piece;
    t.space = space;
    auto c = store_->CreateTask(t);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return *c;
  }

  Job WaitFor(const std::string& job_id, JobStatus want) {
    for (int i = 0; i < 600; ++i) {
      auto j = store_->GetJob(job_id);
      // The worker done with it too: its context directory has moved on.
      if (j.ok() && j->status == want && !(pool_ && pool_->Holds(job_id))) return *j;
      if (j.ok() && IsTerminal(j->status) && !IsTerminal(want)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    auto j = store_->GetJob(job_id);
    ADD_FAILURE() << "job " << job_id << " is " << (j.ok() ? JobStatusName(j->status) : "?") << " ("
                  << (j.ok() ? j->error_message + j->result : "") << "), wanted "
                  << JobStatusName(want);
    return j.ok() ? *j : Job{};
  }

  std::vector<Request> Requests(const std::string& task_id) {
    auto r = store_->ListRequests(task_id, std::nullopt);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : std::vector<Request>{};
  }

  std::string ContextDir(const std::string& task_id) {
    auto d = context::ContextDirs(dir_.path()).Locate(task_id);
    EXPECT_TRUE(d.ok());
    return d.ok() ? *d : "";
  }

  TempDir dir_;
  std::unique_ptr<SqliteStore> store_;
  tools::SpaceRegistry spaces_;
  std::unique_ptr<tools::ToolRegistry> registry_;
  std::unique_ptr<PieceCatalog> catalog_;
  maestro::testing::ScriptedLlm llm_;  // one model for every job
  std::unique_ptr<PieceExecutor> executor_;
  std::unique_ptr<WorkerPool> pool_;
};

// Asks for WriteFile (not in the space's policy), writes once approved,
// gives up when denied.
Calls WriteWithApproval(const std::string&, const std::vector<Json>& m) {
  const Json write_args = {{"path", "hello.txt"}, {"content", "hi"}};
  const Json& last = m.back();
  if (last["role"] == "tool") {
    std::string tool = ToolNameOf(m, last);
    if (tool == "RequestTool" && Text(last).rfind("Approved", 0) == 0) {
      return One("WriteFile", write_args);
    }
    if (tool == "RequestTool" && Text(last).rfind("Error", 0) == 0) {
      return Complete("gave up: " + Text(last).substr(0, 40));
    }
    if (tool == "WriteFile") return Complete("wrote: " + Text(last));
  }
  return One("RequestTool",
             {{"tool", "WriteFile"}, {"arguments", write_args}, {"reason", "to save the file"}});
}

TEST_F(ParkFlowTest, RequestToolApprovedResumesInTheSameMovementAndTheToolRuns) {
  Set(WriteWithApproval);
  StartPool();
  auto t = NewTask("write hello.txt");
  Job parked = WaitFor(t.job.id, JobStatus::kWaitingHuman);
  EXPECT_EQ(parked.wait_reason, "tool_request");
  EXPECT_EQ(parked.resume_movement, "chat");
  auto reqs = Requests(t.task.id);
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(dir_.File("proj/hello.txt")));

  ASSERT_TRUE(store_->DecideRequest(reqs[0].id, "approve", "once", "alice").ok());
  Job done = WaitFor(t.job.id, JobStatus::kSucceeded);  // the same job, resumed
  EXPECT_EQ(done.result.rfind("wrote: ", 0), 0u) << done.result;
  std::ifstream f(dir_.File("proj/hello.txt"));
  std::string content((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "hi");
  EXPECT_EQ(Requests(t.task.id).size(), 1u);  // no second card
  // It re-entered movement 'chat' (the resume note names it).
  EXPECT_TRUE(AnyContains(llm_.LastRequest(t.task.id), "user", "resumes in movement 'chat'"));
}

TEST_F(ParkFlowTest, RequestToolDeniedReissuedCallGetsTheDenialWithoutANewRequest) {
  Set(WriteWithApproval);
  StartPool();
  auto t = NewTask("write hello.txt");
  WaitFor(t.job.id, JobStatus::kWaitingHuman);
  auto reqs = Requests(t.task.id);
  ASSERT_EQ(reqs.size(), 1u);
  ASSERT_TRUE(store_->DecideRequest(reqs[0].id, "deny", "", "alice").ok());
  Job done = WaitFor(t.job.id, JobStatus::kSucceeded);
  EXPECT_EQ(done.result.rfind("gave up: Error: the user denied", 0), 0u) << done.result;
  EXPECT_EQ(Requests(t.task.id).size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(dir_.File("proj/hello.txt")));
}

// An approval could not make WriteFile callable in `look`, so the request is
// refused at once: no card for the person, the agent is told why.
TEST_F(ParkFlowTest, RequestToolForAToolTheMovementForbidsIsRefusedWithoutARequest) {
  Set(WriteWithApproval);
  StartPool();
  auto t = NewTask("write hello.txt", "proj", "lookonly");
  Job done = WaitFor(t.job.id, JobStatus::kSucceeded);
  EXPECT_EQ(done.result.rfind("gave up: Error: WriteFile cannot be used in", 0), 0u) << done.result;
  EXPECT_TRUE(Requests(t.task.id).empty());
  EXPECT_FALSE(std::filesystem::exists(dir_.File("proj/hello.txt")));
}

TEST_F(ParkFlowTest, AskParksWithAQuestionAndTheAnswersFollowUpResumesTheMovement) {
  Set([](const std::string&, const std::vector<Json>& m) {
    if (AnyContains(m, "user", "## Follow-up") && AnyContains(m, "user", "blue")) {
      return Complete("painting it blue");
    }
    return One(
        "complete",
        {{"status", "needs_user_input"}, {"result", "need a color"}, {"question", "Which color?"}});
  });
  StartPool();
  auto t = NewTask("paint the fence");
  Job asked = WaitFor(t.job.id, JobStatus::kWaitingHuman);
  EXPECT_EQ(asked.wait_reason, "ask");
  EXPECT_EQ(asked.resume_movement, "chat");
  auto comments = store_->ListComments(t.task.id);
  ASSERT_TRUE(comments.ok());
  EXPECT_EQ(comments->back().kind, CommentKind::kQuestion);
  EXPECT_EQ(comments->back().body, "Which color?");

  auto posted = store_->PostComment(t.task.id, "alice", "blue", {});
  ASSERT_TRUE(posted.ok()) << posted.status().ToString();
  ASSERT_EQ(posted->outcome, CommentOutcome::kFollowUp);
  Job follow = WaitFor(posted->job.id, JobStatus::kSucceeded);
  EXPECT_EQ(follow.result, "painting it blue");
  EXPECT_EQ(follow.resume_movement, "chat");
  EXPECT_EQ(follow.continued_from_job_id, t.job.id);
}

// The parent fans out 5 SpinOffTask calls, waits, and on resume reports what
// its children returned; each child answers with its own number.
Calls FanOut(const std::string&, const std::vector<Json>& m) {
  const std::string first_user = Text(m[1]);
  if (auto at = first_user.find("CHILD-"); at != std::string::npos) {
    return Complete("result of " + first_user.substr(at, 7));
  }
  const Json& last = m.back();
  if (last["role"] == "user" && Text(last).find("## Subtasks") != std::string::npos) {
    int seen = 0;
    for (size_t p = Text(last).find("result of CHILD-"); p != std::string::npos;
         p = Text(last).find("result of CHILD-", p + 1)) {
      ++seen;
    }
    return Complete("saw " + std::to_string(seen) + " results");
  }
  if (!AnyContains(m, "tool", "Subtask ")) {
    Calls spin;
    for (int i = 1; i <= 5; ++i) {
      spin.push_back({"SpinOffTask",
                      {{"title", "child " + std::to_string(i)},
                       {"instruction", "CHILD-" + std::to_string(i) + " compute"},
                       {"piece", "chat"}}});
    }
    return spin;
  }
  return One("WaitSubTask", {{"reason", "need their results"}});
}

int RequeuesFromSubtaskWait(Store& store, const std::string& task_id, const std::string& job_id) {
  auto events = store.ListEvents(task_id, "", 10000);
  int n = 0;
  for (const Event& e : events.ok() ? *events : std::vector<Event>{}) {
    if (e.type == "job.status" && e.job_id == job_id &&
        e.payload.value("from", "") == "waiting_subtasks" &&
        e.payload.value("to", "") == "queued") {
      ++n;
    }
  }
  return n;
}

TEST_F(ParkFlowTest, WaitSubTaskFansOutToFiveChildrenAndTheParentResumesOnceWithTheirResults) {
  Set(FanOut);
  StartPool();
  auto t = NewTask("PARENT: fan out");
  Job done = WaitFor(t.job.id, JobStatus::kSucceeded);
  EXPECT_EQ(done.result, "saw 5 results");
  EXPECT_EQ(done.resume_movement, "chat");
  auto kids = store_->ListChildJobs(t.job.id);
  ASSERT_TRUE(kids.ok());
  ASSERT_EQ(kids->size(), 5u);
  for (const Job& k : *kids) {
    EXPECT_EQ(k.status, JobStatus::kSucceeded);
    EXPECT_EQ(k.result.rfind("result of CHILD-", 0), 0u);
  }
  EXPECT_EQ(RequeuesFromSubtaskWait(*store_, t.task.id, t.job.id), 1);
  // Two runs of the parent: spin-offs + WaitSubTask, then (after the last
  // child) one call that reads the results and completes.
  EXPECT_EQ(llm_.CallsFor(t.task.id), 3);
}

TEST_F(ParkFlowTest, SpinOffTaskToAnotherSpaceWaitsForApprovalThenStartsTheChildThere) {
  Set([](const std::string&, const std::vector<Json>& m) -> Calls {
    if (Text(m[1]).find("CHILD-9") != std::string::npos) return Complete("other space done");
    const Json& last = m.back();
    const Json spin = {{"title", "other work"},
                       {"instruction", "CHILD-9 work in the other space"},
                       {"space", "other"}};
    if (last["role"] == "tool" && ToolNameOf(m, last) == "SpinOffTask") {
      if (Text(last).rfind("Approved", 0) == 0) return One("WaitSubTask", Json::object());
      return Complete("not approved");
    }
    if (last["role"] == "user" && Text(last).find("## Subtasks") != std::string::npos) {
      return Complete(Text(last).find("other space done") != std::string::npos ? "child finished"
                                                                               : "no result");
    }
    return One("SpinOffTask", spin);
  });
  StartPool();
  auto t = NewTask("PARENT: spawn elsewhere");
  Job parked = WaitFor(t.job.id, JobStatus::kWaitingHuman);
  EXPECT_EQ(parked.wait_reason, "spawn_request");
  auto kids = store_->ListChildJobs(t.job.id);
  ASSERT_TRUE(kids.ok());
  EXPECT_TRUE(kids->empty());  // nothing starts before the approval
  auto reqs = Requests(t.task.id);
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].kind, RequestKind::kSpawn);

  ASSERT_TRUE(store_->DecideRequest(reqs[0].id, "approve", "", "alice").ok());
  Job done = WaitFor(t.job.id, JobStatus::kSucceeded);
  EXPECT_EQ(done.result, "child finished");
  kids = store_->ListChildJobs(t.job.id);
  ASSERT_TRUE(kids.ok());
  ASSERT_EQ(kids->size(), 1u);
  auto child = store_->GetTask((*kids)[0].task_id);
  ASSERT_TRUE(child.ok());
  EXPECT_EQ(child->space, "other");
  EXPECT_EQ((*kids)[0].status, JobStatus::kSucceeded);
  EXPECT_EQ(Requests(t.task.id).size(), 1u);
}

TEST_F(ParkFlowTest, CrashBetweenStartedAndFinishedParksForReconciliationAndIsNotRepeated) {
  Set([](const std::string&, const std::vector<Json>& m) -> Calls {
    if (m.back()["role"] == "tool") return Complete("written after the check");
    return One("WriteFile", {{"path", "out.txt"}, {"content", "x"}});
  });
  auto t = NewTask("write out.txt", "");  // ephemeral workspace: WriteFile allowed
  // Attempt 1 "ran" on a worker that died after the ledger's `started` of a
  // WriteFile (and of a ReadFile), before their `finished`.
  ClaimFilter f;
  f.worker_id = "dead-worker";
  auto claimed = store_->ClaimNextJob(f, 60'000);
  ASSERT_TRUE(claimed.ok() && claimed->has_value());
  const Job j1 = **claimed;
  context::ContextDirs dirs(dir_.path());
  ASSERT_TRUE(dirs.Init().ok());
  auto cdir = dirs.Ensure(t.task.id, context::Placement::kRunning);
  ASSERT_TRUE(cdir.ok());
  {
    auto ledger = tools::ToolLedger::Open(*cdir, SystemClock::Default());
    ASSERT_TRUE(ledger.ok());
    ASSERT_TRUE((*ledger)
                    ->Started({t.task.id, j1.id, "call_w"}, "WriteFile",
                              {{"path", "out.txt"}, {"content", "x"}}, false)
                    .ok());
    ASSERT_TRUE((*ledger)
                    ->Started({t.task.id, j1.id, "call_r"}, "ReadFile", {{"path", "a.txt"}}, true)
                    .ok());
  }
  // The lease sweeper's verdict on the dead worker: retry now.
  ASSERT_TRUE(store_
                  ->FinishJob(Lease{j1.id, j1.worker_id, j1.fencing_token},
                              JobOutcome::Retry("worker died", 1))
                  .ok());
  StartPool();
  Job parked = WaitFor(j1.id, JobStatus::kWaitingHuman);
  EXPECT_EQ(parked.attempt, 2);
  EXPECT_EQ(parked.wait_reason, "reconcile");
  EXPECT_EQ(llm_.CallsFor(t.task.id), 0);  // the agent did not run, nothing repeated
  auto comments = store_->ListComments(t.task.id);
  ASSERT_TRUE(comments.ok());
  EXPECT_EQ(comments->back().kind, CommentKind::kQuestion);
  EXPECT_NE(comments->back().body.find("call_w (WriteFile)"), std::string::npos);
  EXPECT_NE(comments->back().body.find("may or may not have taken effect"), std::string::npos);
  EXPECT_EQ(comments->back().body.find("call_r"), std::string::npos);  // reads are harmless
  auto plan = tools::PlanRecovery(ContextDir(t.task.id), j1.id);
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->rerun.empty());  // the read was closed
  ASSERT_EQ(plan->reconcile.size(), 1u);
  const std::string ws = dir_.File("workspaces/tasks/" + t.task.id + "/out.txt");
  EXPECT_FALSE(std::filesystem::exists(ws));

  // A person checks the workspace and replies: that settles the call.
  auto posted = store_->PostComment(t.task.id, "alice", "checked: out.txt is missing, redo it", {});
  ASSERT_TRUE(posted.ok()) << posted.status().ToString();
  EXPECT_EQ(posted->outcome, CommentOutcome::kFollowUp);
  Job follow = WaitFor(posted->job.id, JobStatus::kSucceeded);
  EXPECT_EQ(follow.result, "written after the check");
  EXPECT_TRUE(std::filesystem::exists(ws));
  auto after = tools::PlanRecovery(ContextDir(t.task.id), j1.id);
  ASSERT_TRUE(after.ok());
  EXPECT_FALSE(after->needs_reconciliation());
  auto records = tools::ToolLedger::Read(ContextDir(t.task.id));
  ASSERT_TRUE(records.ok());
  bool settled = false;
  for (const auto& r : *records) {
    if (r.event == "reconciled" && r.key.call_id == "call_w") {
      settled = r.result.find("checked: out.txt is missing") != std::string::npos;
    }
  }
  EXPECT_TRUE(settled);
}

// ---- One decider of a job's end (issue 46 step 4). The worker's steps by
// hand — Execute, FinishJob, OnCommitted — so the moment between the commit
// and the next claim can be looked at: the store decides the status, the
// context directory follows the committed status, and the start-up
// reconcile (which places a directory by the task's status) agrees.
class JobEndTest : public ParkFlowTest {
 protected:
  Job ClaimOne() {
    ClaimFilter f;
    f.worker_id = "by-hand";
    auto c = store_->ClaimNextJob(f, 60'000);
    EXPECT_TRUE(c.ok() && c->has_value()) << "nothing to claim";
    return c.ok() && c->has_value() ? **c : Job{};
  }
  static Lease LeaseOf(const Job& j) { return Lease{j.id, j.worker_id, j.fencing_token}; }

  struct Ended {
    JobOutcome reported;
    Job committed;
  };
  // Execute, then `before_finish` (what happens while the job still runs),
  // then the finish; the job as committed.
  Ended RunToCommit(const Job& job, const std::function<void()>& before_finish = nullptr) {
    CancelToken cancel;
    auto out = executor_->Execute(job, LeaseOf(job), cancel);
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    if (!out.ok()) return {};
    if (before_finish) before_finish();
    Status finished = store_->FinishJob(LeaseOf(job), *out);
    EXPECT_TRUE(finished.ok()) << finished.ToString();
    auto committed = store_->GetJob(job.id);
    EXPECT_TRUE(committed.ok());
    return {*out, committed.ok() ? *committed : Job{}};
  }

  std::optional<context::Placement> PlaceOf(const std::string& task_id) {
    return context::ContextDirs(dir_.path()).Find(task_id);
  }
  // Where the start-up reconcile puts the task's directory.
  context::Placement WhereTheTaskStatusSays(const std::string& task_id) {
    auto t = store_->GetTask(task_id);
    EXPECT_TRUE(t.ok());
    return context::PlacementFor(t.ok() ? t->status : JobStatus::kFailed);
  }
  // The reconcile run now would move nothing.
  void ExpectReconcileAgrees() {
    auto report = context::ContextDirs(dir_.path()).Reconcile(*store_);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_TRUE(report->moved.empty()) << report->moved.size() << " moved";
  }
};

TEST_F(JobEndTest, ASubtaskParkWithNoOpenChildIsRequeuedAndItsContextWaitsInPaused) {
  auto calls = std::make_shared<int>(0);
  Set([calls](const std::string&, const std::vector<Json>&) -> Calls {
    switch (++*calls) {
      case 1:
        return One("SpinOffTask", {{"title", "child"}, {"instruction", "CHILD-1 compute"}});
      case 2:
        return One("WaitSubTask", {{"reason", "need its result"}});
      default:
        return Complete("went on");
    }
  });
  auto t = NewTask("PARENT: spin off one child and wait");
  const Job job = ClaimOne();
  // The run parks on its open child; the child ends before the parent's
  // finish, so when the store decides there is no open child left.
  Ended e = RunToCommit(job, [&] {
    const Job child = ClaimOne();
    ASSERT_EQ(child.parent_job_id, job.id);
    ASSERT_TRUE(store_->FinishJob(LeaseOf(child), JobOutcome::Succeeded("child done")).ok());
  });
  EXPECT_EQ(e.reported.kind, JobOutcome::Kind::kParked);
  EXPECT_EQ(e.reported.park_status, JobStatus::kWaitingSubtasks) << "what the run reported";
  EXPECT_EQ(e.committed.status, JobStatus::kQueued) << "no open child: the store requeues";
  EXPECT_EQ(PlaceOf(t.task.id), context::Placement::kPaused) << "left running/ at the run's end";
  executor_->OnCommitted(job, e.reported, e.committed);
  EXPECT_EQ(PlaceOf(t.task.id), context::Placement::kPaused);
  EXPECT_EQ(PlaceOf(t.task.id), WhereTheTaskStatusSays(t.task.id));
  ExpectReconcileAgrees();

  // The requeued job runs again, ends, and only then goes to completed/.
  const Job again = ClaimOne();
  EXPECT_EQ(again.id, job.id);
  Ended done = RunToCommit(again);
  EXPECT_EQ(done.committed.status, JobStatus::kSucceeded);
  EXPECT_EQ(done.committed.result, "went on");
  EXPECT_EQ(PlaceOf(t.task.id), context::Placement::kPaused) << "nothing moves before the commit";
  executor_->OnCommitted(again, done.reported, done.committed);
  EXPECT_EQ(PlaceOf(t.task.id), context::Placement::kCompleted);
  ExpectReconcileAgrees();
}

TEST_F(JobEndTest, AnAskAnsweredBeforeTheFinishSucceedsAndItsContextWaitsForTheFollowUp) {
  Set([](const std::string&, const std::vector<Json>& m) {
    if (AnyContains(m, "user", "blue")) return Complete("painting it blue");
    return One("complete", {{"status", "needs_user_input"}, {"question", "Which color?"}});
  });
  auto t = NewTask("paint the fence");
  const Job job = ClaimOne();
  // The answer comes after the run's last delivery point, before its finish.
  Ended e = RunToCommit(job, [&] {
    auto posted = store_->PostComment(t.task.id, "alice", "blue", {});
    ASSERT_TRUE(posted.ok()) << posted.status().ToString();
    EXPECT_EQ(posted->outcome, CommentOutcome::kInterjection);
  });
  EXPECT_EQ(e.reported.kind, JobOutcome::Kind::kParked);
  EXPECT_EQ(e.reported.wait_reason, "ask") << "what the run reported";
  EXPECT_EQ(e.committed.status, JobStatus::kSucceeded) << "the comment answered the ASK";
  EXPECT_EQ(e.committed.result, policy::kAnsweredResult);
  executor_->OnCommitted(job, e.reported, e.committed);
  // The job succeeded, but the task goes on in the follow-up that took the
  // comment: the directory waits in paused/, not completed/.
  EXPECT_EQ(store_->GetTask(t.task.id)->status, JobStatus::kQueued);
  EXPECT_EQ(PlaceOf(t.task.id), context::Placement::kPaused);
  EXPECT_EQ(PlaceOf(t.task.id), WhereTheTaskStatusSays(t.task.id));
  ExpectReconcileAgrees();

  const Job follow = ClaimOne();
  EXPECT_EQ(follow.continued_from_job_id, job.id);
  Ended done = RunToCommit(follow);
  EXPECT_EQ(done.committed.result, "painting it blue");
  executor_->OnCommitted(follow, done.reported, done.committed);
  EXPECT_EQ(PlaceOf(t.task.id), context::Placement::kCompleted);
  ExpectReconcileAgrees();
}

TEST_F(JobEndTest, ALateHookNeverPullsTheDirectoryFromUnderTheNextJob) {
  Set([](const std::string&, const std::vector<Json>&) { return Complete("done"); });
  auto t = NewTask("say done");
  const Job job = ClaimOne();
  Ended e = RunToCommit(job);
  ASSERT_EQ(e.committed.status, JobStatus::kSucceeded);
  // Before the hook runs, a comment starts a follow-up whose run takes the
  // directory to running/.
  auto posted = store_->PostComment(t.task.id, "alice", "and once more", {});
  ASSERT_TRUE(posted.ok()) << posted.status().ToString();
  ASSERT_TRUE(
      context::ContextDirs(dir_.path()).MoveTo(t.task.id, context::Placement::kRunning).ok());
  executor_->OnCommitted(job, e.reported, e.committed);
  EXPECT_EQ(PlaceOf(t.task.id), context::Placement::kRunning) << "moved only from paused/";
}

TEST_F(JobEndTest, ACrashBetweenTheCommitAndTheMoveIsPutRightAtTheNextStart) {
  Set([](const std::string&, const std::vector<Json>&) { return Complete("done"); });
  auto t = NewTask("say done");
  const Job job = ClaimOne();
  Ended e = RunToCommit(job);
  ASSERT_EQ(e.committed.status, JobStatus::kSucceeded);
  // The worker dies here: OnCommitted never runs.
  EXPECT_EQ(PlaceOf(t.task.id), context::Placement::kPaused);
  ASSERT_TRUE(context::ReconcileContextsAtStart(dir_.path(), *store_).ok());
  EXPECT_EQ(PlaceOf(t.task.id), context::Placement::kCompleted);
}

}  // namespace
}  // namespace maestro::engine
