// The end-to-end flows of maestro scaled out on PostgreSQL: `maestro serve
// --workers 0` answers the API while two `maestro worker` processes run
// every job (pg_cluster.h). Create → result, ASK → answering comment →
// result, a tool approval (park → decide via the API → the same job resumes
// in a worker and finishes), a subtask (child and parent on the workers),
// Continue of a finished task; the task's SSE event stream shows a worker's
// job.status changes within a couple of seconds (LISTEN/NOTIFY), and the
// job's live stream shows every delta of a job run in another process. A worker
// whose data_dir has no marker, or another database's, refuses to start.
#include <future>
#include <map>

#include "pg_cluster.h"
#include "task_shapes.h"

namespace maestro::testing {
namespace {

namespace sh = shapes;

class ScaleoutFlowsTest : public PgClusterTest {
 protected:
  // The latest job of the task once it reaches `status`.
  Json LatestJobWhen(const std::string& task_id, const std::string& status,
                     std::chrono::milliseconds limit = 30s) {
    Json job;
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      job = Get("/api/local/tasks/" + task_id)["latest_job"];
      if (job.is_object() && job["status"] == status) return job;
      std::this_thread::sleep_for(20ms);
    }
    ADD_FAILURE() << "latest job of " << task_id << " not " << status << ": " << job.dump() << "\n"
                  << LogTail();
    return job;
  }
  std::string Id(const Json& created) const { return created["task"]["id"]; }
};

TEST_F(ScaleoutFlowsTest, ATaskCreatedOnTheApiIsAnsweredByAWorker) {
  StartCluster(sh::Plain("<<F1>>", "answer-F1"), 2, 2);
  Json c = Create("<<F1>> say hello");
  Json job = WaitStatus(c, "succeeded", 30s);
  EXPECT_EQ(job["result"], "answer-F1") << job.dump();
  EXPECT_EQ(job["attempt"], 1);
  EXPECT_EQ(Get(TaskPath(c))["task"]["status"], "succeeded");
  EXPECT_EQ(RequestsWith(FakeRequests(), "<<F1>>").size(), 1u);
}

TEST_F(ScaleoutFlowsTest, AnAskIsAnsweredByACommentAndAWorkerFinishes) {
  StartCluster(sh::AskThenAnswer("<<F2>>", "Which colour?", "ANSWER-F2", "painted-F2"), 2, 2);
  Json c = Create("<<F2>> paint the fence");
  Json asked = LatestJobWhen(Id(c), "waiting_human");
  EXPECT_EQ(asked["wait_reason"], "ask") << asked.dump();
  auto [code, body] = Post(TaskPath(c) + "/comments", {{"body", "ANSWER-F2 blue"}});
  ASSERT_EQ(code, 201) << body.dump();
  EXPECT_EQ(body["outcome"], "followup");
  Json done =
      WaitJob(Id(c), body["job"]["id"], [](const Json& j) { return j["status"] == "succeeded"; });
  EXPECT_EQ(done["result"], "painted-F2") << done.dump();
  Json comments = Get(TaskPath(c) + "/comments")["comments"];
  int answers = 0;
  for (const auto& cm : comments) {
    if (!Contains(cm["body"].dump(), "ANSWER-F2")) continue;
    ++answers;
    EXPECT_GT(cm.value("delivered_at", 0), 0) << cm.dump();
  }
  EXPECT_EQ(answers, 1) << comments.dump();
  // The follow-up carries the conversation on: the instruction, then the
  // answer (the ASK's `complete` call itself is not replayed).
  Json answered = RequestsWith(FakeRequests(), "ANSWER-F2");
  ASSERT_EQ(answered.size(), 1u);
  EXPECT_TRUE(Contains(MessagesText(answered[0]), "<<F2>> paint the fence"));
}

TEST_F(ScaleoutFlowsTest, AToolApprovalParksAndTheSameJobResumesOnAWorker) {
  StartCluster(sh::ApprovedCommand("<<F3>>", "OUT-F3", "ran-F3"), 2, 2);
  Json c = Create("<<F3>> fetch the page");
  Json parked = LatestJobWhen(Id(c), "waiting_human");
  EXPECT_EQ(parked["wait_reason"], "tool_request") << parked.dump();
  Json pending = Get(TaskPath(c) + "/tool-requests")["requests"];
  ASSERT_EQ(pending.size(), 1u) << pending.dump();
  EXPECT_EQ(pending[0]["status"], "pending");
  auto [code, body] =
      Post(TaskPath(c) + "/tool-requests/" + pending[0]["id"].get<std::string>() + "/decide",
           {{"decision", "approve"}, {"scope", "once"}});
  ASSERT_EQ(code, 200) << body.dump();
  // Requeued; a worker may have claimed it before the reply was built.
  EXPECT_TRUE(body["job"]["status"] == "queued" || body["job"]["status"] == "running")
      << body.dump();
  Json done = LatestJobWhen(Id(c), "succeeded");
  EXPECT_EQ(done["id"], c["job"]["id"]) << "the parked job itself resumed";
  EXPECT_EQ(done["result"], "ran-F3");
  Json after = Get(TaskPath(c) + "/tool-requests")["requests"];
  ASSERT_EQ(after.size(), 1u) << "no second card";
  EXPECT_EQ(after[0]["status"], "approved");
  int decided = 0;
  for (const auto& e : Events(Id(c))) decided += e["type"] == "request.decided";
  EXPECT_EQ(decided, 1);
  // The granted command ran in the worker's sandbox: its output came back.
  EXPECT_EQ(RequestsWith(FakeRequests(), "OUT-F3-42").size(), 1u) << LogTail();
}

TEST_F(ScaleoutFlowsTest, ASubtaskRunsOnAWorkerAndWakesItsParent) {
  StartCluster(sh::WithSubtask("<<F4>>", "<<F4C>>", "child-F4", "parent-F4"), 2, 2);
  Json c = Create("<<F4>> split the work");
  Json done = LatestJobWhen(Id(c), "succeeded", 60s);
  EXPECT_EQ(done["result"], "parent-F4") << done.dump();
  EXPECT_EQ(done["id"], c["job"]["id"]);
  Json tasks = Get("/api/local/tasks")["tasks"];
  ASSERT_EQ(tasks.size(), 2u) << tasks.dump();
  for (const auto& t : tasks) {
    if (t["id"] == Id(c)) continue;
    Json child = Get("/api/local/tasks/" + t["id"].get<std::string>())["latest_job"];
    EXPECT_EQ(child["parent_job_id"], c["job"]["id"]);
    EXPECT_EQ(child["status"], "succeeded");
    EXPECT_EQ(child["result"], "child-F4");
  }
  // The child's conversation never holds the parent's tag (task_shapes.h).
  for (const auto& r : RequestsWith(FakeRequests(), "<<F4C>>")) {
    if (!Contains(MessagesText(r), "The subtasks of this job have ended") &&
        !Contains(MessagesText(r), "created (job ")) {
      EXPECT_FALSE(Contains(MessagesText(r), "<<F4>>")) << MessagesText(r);
    }
  }
}

TEST_F(ScaleoutFlowsTest, ContinueOfAFinishedTaskRunsANewJobOnAWorker) {
  Json replies = Json::array({sh::On(sh::Complete("second-F5"), {"<<F5>>", "NOTE-F5"})});
  sh::Append(replies, sh::Plain("<<F5>>", "first-F5"));
  StartCluster(replies, 2, 2);
  Json c = Create("<<F5>> draft it");
  EXPECT_EQ(WaitStatus(c, "succeeded")["result"], "first-F5");
  auto [code, body] = Post(TaskPath(c) + "/continue", {{"note", "NOTE-F5 now polish it"}});
  ASSERT_EQ(code, 201) << body.dump();
  EXPECT_EQ(body["job"]["continued_from_job_id"], c["job"]["id"]);
  Json done =
      WaitJob(Id(c), body["job"]["id"], [](const Json& j) { return j["status"] == "succeeded"; });
  EXPECT_EQ(done["result"], "second-F5") << done.dump();
  EXPECT_EQ(Get(TaskPath(c))["jobs"].size(), 2u);
}

// The job's status changes are committed by a worker process; serve learns
// of them through NOTIFY and pushes them on the task's SSE stream. Without
// NOTIFY they would wait for the stream's 15 s keep-alive tick.
TEST_F(ScaleoutFlowsTest, TheTaskStreamShowsAWorkersStatusChangesWithinTwoSeconds) {
  Json slow = sh::On(sh::Complete("done-F6"), {"<<F6>>", "ANSWER-F6"});
  slow["delay_ms"] = 1000;  // the job is running while both streams are open
  // Streamed text: deltas a same-process stream would show.
  slow["text"] = std::string(64, 'x');
  slow["chunk_chars"] = 4;
  Json replies = Json::array({slow});
  sh::Append(replies, sh::AskThenAnswer("<<F6>>", "Which one?", "ANSWER-F6", "unused"));
  StartCluster(replies, 2, 2);
  Json c = Create("<<F6>> pick one");
  LatestJobWhen(Id(c), "waiting_human");
  // Open the task's stream now; the follow-up job's events all come after.
  const std::string ask_job = c["job"]["id"];
  auto events = std::async(std::launch::async, [&] {
    return ReadSse(port_, TaskPath(c) + "/events", [&](const SseFrame& f) {
      return f.event == "job.status" && Contains(f.data, "\"to\":\"succeeded\"") &&
             !Contains(f.data, ask_job);
    });
  });
  std::this_thread::sleep_for(300ms);
  auto [code, body] = Post(TaskPath(c) + "/comments", {{"body", "ANSWER-F6 the left one"}});
  ASSERT_EQ(code, 201) << body.dump();
  const std::string job_id = body["job"]["id"];
  auto live = std::async(std::launch::async, [&] {
    return ReadSse(port_, "/api/local/jobs/" + job_id + "/stream",
                   [](const SseFrame& f) { return f.event == "end"; });
  });
  std::vector<SseFrame> frames = events.get();
  std::vector<SseFrame> deltas = live.get();
  WaitJob(Id(c), job_id, [](const Json& j) { return j["status"] == "succeeded"; });

  // Each event once, in id order (TheTaskStreamIsInIdOrder checks the
  // stream's own order).
  std::map<int64_t, SseFrame> by_id;
  for (const auto& f : frames) by_id.emplace(std::stoll(f.id), f);
  std::vector<std::string> seen;
  std::string all;
  for (const auto& [id, f] : by_id) {
    all += f.id + " " + f.event + " " + f.data + "\n";
    if (f.event != "job.status") continue;
    Json e = Json::parse(f.data);
    if (e["job_id"] != job_id) continue;
    const std::string to = e["payload"]["to"];
    seen.push_back(to);
    if (to == "queued") continue;  // written by serve itself (the comment)
    const int64_t lag = f.received_ms - e["created_at"].get<int64_t>();
    EXPECT_LE(lag, 2000) << "job.status → " << to << " reached the stream after " << lag
                         << " ms: is NOTIFY crossing processes?";
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"queued", "running", "succeeded"})) << all;

  // The live job stream on serve: the worker relays its deltas through
  // NOTIFY (notify/delta_relay.h), so serve shows every one, in order,
  // numbered from the claim's fencing token, then `end` once the job is
  // terminal.
  ASSERT_FALSE(deltas.empty());
  std::string streamed;
  uint64_t last_seq = 0;
  for (const auto& f : deltas) {
    if (f.event != "delta") continue;
    const uint64_t seq = std::stoull(f.id);
    EXPECT_GT(seq, last_seq) << "in order, each once";
    EXPECT_GE(seq >> 32, 1u) << "numbered from the run's fencing token";
    last_seq = seq;
    Json d = Json::parse(f.data);
    if (d["type"] == "text") streamed += d["text"].get<std::string>();
  }
  EXPECT_EQ(streamed, std::string(64, 'x')) << "every text delta crossed from the worker";
  EXPECT_EQ(deltas.back().event, "end");
  EXPECT_TRUE(Contains(deltas.back().data, "succeeded")) << deltas.back().data;
}

// The stream sends each event once, in integer id order, across the
// one-to-two-digit boundary. (It once selected `CAST(id AS TEXT)`, whose
// output column PostgreSQL names `id`, so `ORDER BY id` sorted as text and
// the cursor moved back.)
TEST_F(ScaleoutFlowsTest, TheTaskStreamIsInIdOrder) {
  // Four tool calls, then the answer: enough events (> 10) to cross from
  // one-digit to two-digit ids.
  Json replies = Json::array();
  for (const char* pattern : {"*", "*.md", "*.txt", "*.c"}) {
    replies.push_back(sh::On(ToolCallReply("Glob", {{"pattern", pattern}}), {"<<F8>>"}));
    replies.back()["repeat"] = 1;
  }
  replies.push_back(sh::On(sh::Complete("done-F8"), {"<<F8>>"}));
  StartCluster(replies, 1, 1);
  Json c = Create("<<F8>> look around");
  WaitStatus(c, "succeeded", 30s);
  // Everything the stream sends within 3 s (the task is over: all of it).
  auto frames = ReadSse(
      port_, TaskPath(c) + "/events", [](const SseFrame&) { return false; }, 3s);
  std::vector<int64_t> ids;
  for (const auto& f : frames) ids.push_back(std::stoll(f.id));
  std::string got;
  for (int64_t id : ids) got += std::to_string(id) + " ";
  ASSERT_GT(ids.size(), 10u) << got;
  for (size_t i = 1; i < ids.size(); ++i) EXPECT_LT(ids[i - 1], ids[i]) << got;
}

TEST_F(ScaleoutFlowsTest, AWorkerWithoutTheDatabasesMarkerRefusesToStart) {
  StartCluster(sh::Plain("<<F7>>", "unused"), 0, 1);
  TempDir empty;
  // startup_wait_ms 0: as before waiting existed (StartOrderTest covers the wait).
  auto bare = SpawnWorker("bare", empty.path(), {{"MAESTRO_STARTUP_WAIT_MS", "0"}});
  auto code = bare->Wait(30s);
  ASSERT_TRUE(code.has_value()) << "a worker on an unmarked data dir kept running";
  EXPECT_NE(*code, 0);
  EXPECT_TRUE(Contains(bare->Stderr(), ".maestro-database-id")) << bare->Stderr();
  EXPECT_TRUE(Contains(bare->Stderr(), "is missing")) << bare->Stderr();

  TempDir other;
  std::ofstream(other.File(".maestro-database-id")) << "another-database-id\n";
  auto foreign = SpawnWorker("foreign", other.path());
  code = foreign->Wait(30s);
  ASSERT_TRUE(code.has_value()) << "a worker on another database's data dir kept running";
  EXPECT_NE(*code, 0);
  EXPECT_TRUE(Contains(foreign->Stderr(), ".maestro-database-id")) << foreign->Stderr();
  EXPECT_TRUE(Contains(foreign->Stderr(), "another-database-id")) << foreign->Stderr();

  // The cluster's own data dir (marked by serve) is accepted.
  auto member = SpawnWorker("member", DataDir());
  EXPECT_FALSE(member->Wait(3s).has_value()) << member->Stderr();
}

}  // namespace
}  // namespace maestro::testing
