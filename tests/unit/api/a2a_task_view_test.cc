// A2A views of maestro's rows (api/a2a_task_view.h): the state mapping
// table, the Task built from a task's jobs and comments, the stream events
// and the Agent Card.
#include "api/a2a_task_view.h"

#include <gtest/gtest.h>

namespace maestro::api::a2a {
namespace {

TEST(A2aTaskView, StateMappingTable) {
  struct Row {
    JobStatus status;
    const char* wait_reason;
    const char* state;
  };
  const Row rows[] = {
      {JobStatus::kQueued, "", "submitted"},
      {JobStatus::kRunning, "", "working"},
      {JobStatus::kRetry, "", "working"},
      {JobStatus::kWaitingSubtasks, "", "working"},
      {JobStatus::kWaitingHuman, "ask", "input-required"},
      {JobStatus::kWaitingHuman, "reconcile", "input-required"},
      {JobStatus::kWaitingHuman, "tool_request", "input-required"},
      {JobStatus::kWaitingHuman, "package_request", "input-required"},
      {JobStatus::kWaitingHuman, "spawn_request", "input-required"},
      {JobStatus::kWaitingHuman, "budget_exceeded", "input-required"},
      {JobStatus::kWaitingHuman, "mcp_auth_required", "auth-required"},
      {JobStatus::kSucceeded, "", "completed"},
      {JobStatus::kFailed, "", "failed"},
      {JobStatus::kCancelled, "", "canceled"},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(TaskStateName(StateFor(r.status, r.wait_reason)), r.state)
        << JobStatusName(r.status) << " " << r.wait_reason;
  }
  for (auto s : {TaskState::kCompleted, TaskState::kFailed, TaskState::kCanceled}) {
    EXPECT_TRUE(IsTerminal(s));
    EXPECT_TRUE(EndsStream(s));
  }
  for (auto s : {TaskState::kInputRequired, TaskState::kAuthRequired}) {
    EXPECT_FALSE(IsTerminal(s));
    EXPECT_TRUE(EndsStream(s)) << "nothing happens until someone acts";
  }
  for (auto s : {TaskState::kSubmitted, TaskState::kWorking}) EXPECT_FALSE(EndsStream(s));
}

TaskFacts Facts() {
  TaskFacts f;
  f.task.id = "11111111-2222-3333-4444-555555555555";
  f.task.piece = "chat";
  f.task.created_at = 1000;
  return f;
}

Job MakeJob(const std::string& id, JobStatus status, const std::string& wait_reason = "") {
  Job j;
  j.id = id;
  j.status = status;
  j.wait_reason = wait_reason;
  j.created_at = 2000;
  return j;
}

Comment MakeComment(const std::string& id, const std::string& job_id, const std::string& author,
                    CommentKind kind, const std::string& body) {
  Comment c;
  c.id = id;
  c.job_id = job_id;
  c.author = author;
  c.kind = kind;
  c.body = body;
  return c;
}

TEST(A2aTaskView, ATaskWithoutJobsIsSubmitted) {
  TaskFacts f = Facts();
  EXPECT_EQ(StateOf(f), TaskState::kSubmitted);
  Json t = TaskJson(f, std::nullopt);
  EXPECT_EQ(t["kind"], "task");
  EXPECT_EQ(t["id"], f.task.id);
  EXPECT_EQ(t["contextId"], "ctx-" + f.task.id);
  EXPECT_EQ(t["status"]["state"], "submitted");
  EXPECT_EQ(t["artifacts"], Json::array());
}

TEST(A2aTaskView, TheNewestJobDecidesAndAQuestionIsTheStatusMessage) {
  TaskFacts f = Facts();
  f.jobs.push_back(MakeJob("J1", JobStatus::kWaitingHuman, "ask"));
  f.comments.push_back(MakeComment("C1", "J1", "user", CommentKind::kInstruction, "do it"));
  f.comments.push_back(MakeComment("C2", "J1", "agent", CommentKind::kQuestion, "which file?"));
  EXPECT_EQ(StateOf(f), TaskState::kInputRequired);
  Json status = StatusJson(f);
  EXPECT_EQ(status["state"], "input-required");
  EXPECT_EQ(status["message"]["role"], "agent");
  EXPECT_EQ(status["message"]["parts"][0]["text"], "which file?");
  EXPECT_EQ(status["message"]["taskId"], f.task.id);
  const std::string waiting = StatusKey(f);

  // The answer made a follow-up job: the task works again.
  f.jobs[0].status = JobStatus::kSucceeded;
  f.jobs.push_back(MakeJob("J2", JobStatus::kQueued));
  EXPECT_EQ(StateOf(f), TaskState::kSubmitted);
  EXPECT_NE(StatusKey(f), waiting);
  EXPECT_FALSE(ResultArtifact(f)) << "the answered job's end is not the task's result";
}

TEST(A2aTaskView, ApprovalWaitsSayWhatToDo) {
  TaskFacts f = Facts();
  f.jobs.push_back(MakeJob("J1", JobStatus::kWaitingHuman, "tool_request"));
  Json status = StatusJson(f);
  EXPECT_EQ(status["state"], "input-required");
  const std::string text = status["message"]["parts"][0]["text"];
  EXPECT_NE(text.find("tool_request"), std::string::npos) << text;
}

TEST(A2aTaskView, ACompletedTaskHasItsResultAsArtifactAndMessage) {
  TaskFacts f = Facts();
  Job j = MakeJob("J1", JobStatus::kSucceeded);
  j.result = "the haiku";
  f.jobs.push_back(j);
  f.comments.push_back(MakeComment("C1", "J1", "user", CommentKind::kInstruction, "write"));
  f.comments.push_back(MakeComment("C2", "J1", "agent", CommentKind::kResult, "the haiku"));
  auto artifact = ResultArtifact(f);
  ASSERT_TRUE(artifact);
  EXPECT_EQ((*artifact)["artifactId"], "result-J1");
  EXPECT_EQ((*artifact)["parts"][0]["text"], "the haiku");
  Json t = TaskJson(f, std::nullopt);
  EXPECT_EQ(t["status"]["state"], "completed");
  EXPECT_EQ(t["status"]["message"]["parts"][0]["text"], "the haiku");
  ASSERT_EQ(t["artifacts"].size(), 1u);
  ASSERT_EQ(t["history"].size(), 2u);
  EXPECT_EQ(t["history"][0]["role"], "user");
  EXPECT_EQ(t["history"][0]["messageId"], "C1");
  EXPECT_EQ(t["history"][1]["role"], "agent");
  Json last = TaskJson(f, 1);
  ASSERT_EQ(last["history"].size(), 1u) << "historyLength keeps the newest";
  EXPECT_EQ(last["history"][0]["messageId"], "C2");
  EXPECT_EQ(TaskJson(f, 0)["history"].size(), 0u);

  Json update = StatusUpdateJson(f, true);
  EXPECT_EQ(update["kind"], "status-update");
  EXPECT_EQ(update["taskId"], f.task.id);
  EXPECT_EQ(update["contextId"], "ctx-" + f.task.id);
  EXPECT_EQ(update["final"], true);
  Json art = ArtifactUpdateJson(f, *artifact);
  EXPECT_EQ(art["kind"], "artifact-update");
  EXPECT_EQ(art["artifact"]["artifactId"], "result-J1");
  EXPECT_EQ(art["lastChunk"], true);
}

TEST(A2aTaskView, AFailedTaskSaysWhy) {
  TaskFacts f = Facts();
  Job j = MakeJob("J1", JobStatus::kFailed);
  j.error_message = "gave up after 3 attempts";
  f.jobs.push_back(j);
  Json status = StatusJson(f);
  EXPECT_EQ(status["state"], "failed");
  EXPECT_EQ(status["message"]["parts"][0]["text"], "gave up after 3 attempts");
  EXPECT_FALSE(ResultArtifact(f));
}

TEST(A2aTaskView, AgentCardListsThePiecesAsSkills) {
  CardInfo info;
  info.url = "http://127.0.0.1:8080/a2a";
  info.version = "1.2.3";
  info.skills = {{"chat", "talk"}, {"coding", ""}};
  Json card = AgentCard(info);
  EXPECT_EQ(card["protocolVersion"], "0.3.0");
  EXPECT_EQ(card["name"], "maestro");
  EXPECT_EQ(card["url"], info.url);
  EXPECT_EQ(card["preferredTransport"], "JSONRPC");
  EXPECT_EQ(card["version"], "1.2.3");
  EXPECT_EQ(card["capabilities"]["streaming"], true);
  EXPECT_EQ(card["capabilities"]["pushNotifications"], true);
  EXPECT_EQ(card["defaultInputModes"][0], "text/plain");
  EXPECT_EQ(card["defaultOutputModes"][0], "text/plain");
  EXPECT_EQ(card["securitySchemes"]["bearer"]["type"], "http");
  EXPECT_EQ(card["securitySchemes"]["bearer"]["scheme"], "bearer");
  EXPECT_TRUE(card["security"][0].contains("bearer"));
  ASSERT_EQ(card["skills"].size(), 2u);
  EXPECT_EQ(card["skills"][0]["id"], "chat");
  EXPECT_EQ(card["skills"][0]["description"], "talk");
  EXPECT_FALSE(card["skills"][1]["description"].get<std::string>().empty());
  EXPECT_TRUE(card["skills"][1]["tags"].is_array());
}

}  // namespace
}  // namespace maestro::api::a2a
