// The TaskService (api/task_service.h) on a real SqliteStore in a temp dir:
// the one place a new task is checked (unknown piece, space, profile and
// mission refused naming the field, before anything is written), the quota
// gate's refusal (field "quota", an event, no task), the budget's price
// rule, attachment staging into the task's workspace (and no workspace: no
// task), and a second user, who gets kNotFound — never the task — from
// every operation on another user's private task, which stays as it was.
#include "api/task_service.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <mutex>

#include "store/quota_gate.h"
#include "support/store_fixture.h"
#include "workspace/workspace.h"

namespace maestro {
namespace {

using api::TaskService;
using api::TaskServiceOptions;

class TaskServiceTest : public testing::StoreTest {
 protected:
  TaskServiceOptions Options() {
    TaskServiceOptions o;
    o.choices.piece_names = [] { return std::vector<std::string>{"chat", "coding"}; };
    api::SpaceView docs;
    docs.name = "docs";
    docs.path = dir_.File("docs-space");
    o.choices.spaces.push_back(docs);
    o.choices.space_pieces["docs"] = {"coding", /*grounded=*/true};
    o.choices.profiles = {{"default", "m1"}, {"big", "m2"}};
    o.clock = &clock_;
    o.data_dir = dir_.File("data");
    o.prices["default"] = {};
    return o;
  }
  void SetUp() override {
    StoreTest::SetUp();
    service_ = std::make_unique<TaskService>(*store_, Options());
  }

  size_t TaskCount() {
    auto tasks = store_->ListTasks(std::nullopt, 100);
    EXPECT_TRUE(tasks.ok());
    return tasks.ok() ? tasks->size() : 0;
  }

  // alice's private task, created through the service.
  Store::CreatedTask AlicesTask() {
    auto c = service_->Create(Json{{"instruction", "alice's secret"}}, "alice", {});
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : Store::CreatedTask{};
  }

  std::unique_ptr<TaskService> service_;
};

struct Refusal {
  const char* name;
  Json body;
  const char* field;
  const char* message;
};

TEST_F(TaskServiceTest, EveryBadChoiceIsRefusedNamingItsFieldAndWritesNothing) {
  Mission bobs;
  bobs.title = "bob's goal";
  bobs.owner = "bob";
  auto hidden = store_->CreateMission(bobs);
  ASSERT_TRUE(hidden.ok()) << hidden.status().ToString();
  const Refusal cases[] = {
      {"piece",
       {{"instruction", "x"}, {"piece", "nope"}},
       "piece",
       "unknown piece 'nope'; known pieces: chat, coding"},
      {"space",
       {{"instruction", "x"}, {"space", "nowhere"}},
       "space",
       "unknown space 'nowhere'; configured spaces: docs"},
      {"profile",
       {{"instruction", "x"}, {"profile", "huge"}},
       "profile",
       "unknown profile 'huge'; configured profiles: default, big"},
      {"model", {{"instruction", "x"}, {"model", "m9"}}, "model", "model 'm9' is not served"},
      {"grounded",
       {{"instruction", "x"}, {"space", "docs"}, {"piece", "chat"}},
       "piece",
       "space 'docs' is grounded to piece 'coding'"},
      {"mission",
       {{"instruction", "x"}, {"mission_id", "no-such-mission"}},
       "mission_id",
       "unknown mission 'no-such-mission'"},
      // Another user's private mission is as unknown as a missing one.
      {"hidden mission",
       {{"instruction", "x"}, {"mission_id", hidden->id}},
       "mission_id",
       "unknown mission"},
      {"visibility",
       {{"instruction", "x"}, {"visibility", "public"}},
       "visibility",
       "visibility must be private or shared"},
      {"instruction", {{"title", "x"}}, "instruction", "instruction"},
      {"budget",
       {{"instruction", "x"}, {"budget", {{"max_tokens", -1}}}},
       "budget.max_tokens",
       "max_tokens"},
  };
  for (const Refusal& c : cases) {
    auto created = service_->Create(c.body, "alice", {});
    ASSERT_FALSE(created.ok()) << c.name;
    EXPECT_EQ(created.status().code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_EQ(created.status().field(), c.field) << c.name << ": " << created.status().ToString();
    EXPECT_NE(created.status().message().find(c.message), std::string::npos)
        << c.name << ": " << created.status().message();
    // The hidden mission's id is not echoed as a mission of bob's.
    EXPECT_EQ(created.status().message().find("bob"), std::string::npos) << c.name;
  }
  EXPECT_EQ(TaskCount(), 0u) << "a refused create writes no task";
}

TEST_F(TaskServiceTest, ChoicesAreResolvedAsTheApiResolvesThem) {
  // No piece: a grounded space's own; a model maps onto its profile.
  auto c =
      service_->Create(Json{{"instruction", "x"}, {"space", "docs"}, {"model", "m2"}}, "alice", {});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->task.piece, "coding");
  EXPECT_EQ(c->task.space, "docs");
  EXPECT_EQ(c->task.owner, "alice");
  EXPECT_EQ(c->job.profile, "big");
  // A mission of one space puts its task there, and refuses another space.
  Mission m;
  m.title = "docs goal";
  m.owner = "alice";
  m.space = "docs";
  auto mission = store_->CreateMission(m);
  ASSERT_TRUE(mission.ok());
  auto in_mission =
      service_->Create(Json{{"instruction", "y"}, {"mission_id", mission->id}}, "alice", {});
  ASSERT_TRUE(in_mission.ok()) << in_mission.status().ToString();
  EXPECT_EQ(in_mission->task.space, "docs");
  EXPECT_EQ(in_mission->task.mission_id, mission->id);
  // The store-free half is the same check (what `maestro run` runs first).
  NewTask t;
  t.piece = "nosuch";
  Status st = TaskService::CheckChoices(service_->options().choices, &t);
  EXPECT_EQ(st.field(), "piece");
  EXPECT_EQ(st.message(), "unknown piece 'nosuch'; known pieces: chat, coding");
}

TEST_F(TaskServiceTest, TheDailyQuotaRefusesTheNextTaskWithItsFieldAndAnEvent) {
  TaskServiceOptions o = Options();
  o.budgets.quotas.all.max_tasks_per_day = 2;
  o.via = "cli";
  TaskService limited(*store_, o);
  NewTask t;
  t.instruction = "local";
  ASSERT_TRUE(limited.Create(t, {}, "alice", {}).ok());
  ASSERT_TRUE(limited.Create(Json{{"instruction", "two"}}, "alice", {}).ok());
  auto third = limited.Create(t, {}, "alice", {});
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(third.status().field(), budget::kQuotaField);
  EXPECT_NE(third.status().message().find("daily quota of 2 tasks"), std::string::npos)
      << third.status().message();
  // bob's quota is his own.
  EXPECT_TRUE(limited.Create(t, {}, "bob", {}).ok());
  EXPECT_EQ(TaskCount(), 3u);
  auto events = store_->ListEvents("", "", 1000);
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  int refused = 0;
  for (const Event& e : *events) {
    if (e.type != "quota.refused") continue;
    ++refused;
    EXPECT_EQ(e.payload.value("user", ""), "alice");
    EXPECT_EQ(e.payload.value("via", ""), "cli");
  }
  EXPECT_EQ(refused, 1);
}

TEST_F(TaskServiceTest, TheBudgetIsTheConfigsDefaultsUnderTheAskAndMaxCostNeedsAPrice) {
  TaskServiceOptions o = Options();
  o.budgets.budgets.all.max_tokens = 1000;
  o.budgets.budgets.pieces["coding"].max_llm_calls = 7;
  TaskService s(*store_, o);
  auto c =
      s.Create(Json{{"instruction", "x"}, {"piece", "coding"}, {"budget", {{"max_tokens", 50}}}},
               "alice", {});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->task.budget.value("max_tokens", 0), 50);
  EXPECT_EQ(c->task.budget.value("max_llm_calls", 0), 7);
  // "big" has no price: a max_cost cannot be measured.
  auto priceless = s.Create(
      Json{{"instruction", "x"}, {"profile", "big"}, {"budget", {{"max_cost", 1.5}}}}, "alice", {});
  ASSERT_FALSE(priceless.ok());
  EXPECT_EQ(priceless.status().field(), "budget.max_cost");
  EXPECT_NE(priceless.status().message().find("llm_profiles.big.price"), std::string::npos)
      << priceless.status().message();
  EXPECT_EQ(TaskCount(), 1u);
}

TEST_F(TaskServiceTest, FilesAreStagedInTheWorkspaceBeforeTheTaskAndNoWorkspaceWritesNothing) {
  api::UploadedFile f{"attachments[0]", "notes.txt", "text/plain", "hello\n"};
  auto c = service_->Create(Json{{"instruction", "read it"}}, "alice", {f});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const std::string ws = tools::EphemeralWorkspaceDir(dir_.File("data"), c->task.id);
  EXPECT_EQ(service_->WorkspaceDirOf(c->task.id, ""), ws);
  EXPECT_EQ(testing::ReadWholeFile(ws + "/attachments/notes.txt"), "hello\n");
  auto listed = store_->ListAttachments(c->task.id);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].path, "attachments/notes.txt");

  // A comment's files: the same name taken, so a second name; the answer
  // lists them as stored with the comment.
  auto commented = service_->Comment(c->task.id, "alice", "and this", {f});
  ASSERT_TRUE(commented.ok()) << commented.status().ToString();
  ASSERT_EQ(commented->attachments.size(), 1u);
  EXPECT_EQ(commented->attachments[0].comment_id, commented->result.comment.id);
  EXPECT_EQ(commented->attachments[0].path, "attachments/notes-1.txt");
  EXPECT_EQ(testing::ReadWholeFile(ws + "/attachments/notes-1.txt"), "hello\n");

  // A server without a data dir keeps no workspaces: refused, nothing written.
  TaskServiceOptions o = Options();
  o.data_dir = "";
  TaskService keepless(*store_, o);
  auto refused = keepless.Create(Json{{"instruction", "x"}}, "alice", {f});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(refused.status().field(), "attachments");
  EXPECT_EQ(TaskCount(), 1u);
}

TEST_F(TaskServiceTest, ASecondUserGetsNotFoundFromEveryOperationOnAPrivateTask) {
  auto c = AlicesTask();
  Request req;
  req.task_id = c.task.id;
  req.job_id = c.job.id;
  req.kind = RequestKind::kTool;
  req.name = "RunCommand";
  auto pending = store_->CreateRequest(req);
  ASSERT_TRUE(pending.ok()) << pending.status().ToString();
  auto comments_before = store_->ListComments(c.task.id);
  ASSERT_TRUE(comments_before.ok());
  const std::string want = "no such task: " + c.task.id;
  auto expect_hidden = [&](const Status& st, const char* op) {
    EXPECT_EQ(st.code(), StatusCode::kNotFound) << op << ": " << st.ToString();
    EXPECT_EQ(st.message(), want) << op;
    EXPECT_EQ(st.message().find("secret"), std::string::npos) << op;
  };
  expect_hidden(service_->VisibleTask(c.task.id, "bob").status(), "VisibleTask");
  api::UploadedFile f{"attachments[0]", "planted.txt", "text/plain", "x"};
  expect_hidden(service_->Comment(c.task.id, "bob", "hi", {f}).status(), "Comment");
  expect_hidden(service_->Continue(c.task.id, "bob", "", "").status(), "Continue");
  expect_hidden(service_->Cancel(c.task.id, "bob").status(), "Cancel");
  expect_hidden(
      service_->Decide(c.task.id, RequestKind::kTool, pending->id, "approve", "once", "bob")
          .status(),
      "Decide");
  expect_hidden(service_->RaiseBudget(c.task.id, "bob", Json{{"max_tokens", 10}}).status(),
                "RaiseBudget");
  // Nothing moved: no comment, the job queued, the request pending, no file.
  auto comments_after = store_->ListComments(c.task.id);
  ASSERT_TRUE(comments_after.ok());
  EXPECT_EQ(comments_after->size(), comments_before->size());
  EXPECT_EQ(StatusOf(c.job.id), JobStatus::kQueued);
  EXPECT_EQ(store_->GetRequest(pending->id)->status, RequestStatus::kPending);
  EXPECT_FALSE(std::filesystem::exists(tools::EphemeralWorkspaceDir(dir_.File("data"), c.task.id) +
                                       "/attachments/planted.txt"));
  // A shared task is bob's to act on; alice's own operations work.
  EXPECT_TRUE(service_->Comment(c.task.id, "alice", "go on", {}).ok());
}

TEST_F(TaskServiceTest, DecideRefusesARequestOfAnotherTaskOrKind) {
  auto mine = AlicesTask();
  auto other = AlicesTask();
  Request req;
  req.task_id = other.task.id;
  req.job_id = other.job.id;
  req.kind = RequestKind::kTool;
  req.name = "RunCommand";
  auto pending = store_->CreateRequest(req);
  ASSERT_TRUE(pending.ok());
  auto wrong_task =
      service_->Decide(mine.task.id, RequestKind::kTool, pending->id, "approve", "once", "alice");
  EXPECT_EQ(wrong_task.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(wrong_task.status().message(), "request " + pending->id + " not found");
  auto wrong_kind = service_->Decide(other.task.id, RequestKind::kPackage, pending->id, "approve",
                                     "once", "alice");
  EXPECT_EQ(wrong_kind.status().code(), StatusCode::kNotFound);
  auto decided =
      service_->Decide(other.task.id, RequestKind::kTool, pending->id, "deny", "", "alice");
  ASSERT_TRUE(decided.ok()) << decided.status().ToString();
  EXPECT_EQ(decided->request.status, RequestStatus::kDenied);
}

TEST_F(TaskServiceTest, CancelStopsTheRunningJobHereThroughTheCallback) {
  std::mutex mu;
  std::vector<std::string> stopped;
  TaskServiceOptions o = Options();
  o.cancel_running = [&](const std::string& job_id) {
    std::lock_guard<std::mutex> lock(mu);
    stopped.push_back(job_id);
  };
  TaskService s(*store_, o);
  auto c = s.Create(Json{{"instruction", "long"}}, "alice", {});
  ASSERT_TRUE(c.ok());
  Job running = Claim();
  ASSERT_EQ(running.id, c->job.id);
  auto report = s.Cancel(c->task.id, "alice");
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->flagged, 1);
  EXPECT_EQ(stopped, std::vector<std::string>{running.id});
}

}  // namespace
}  // namespace maestro
