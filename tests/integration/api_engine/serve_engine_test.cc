// The HTTP API driven by the real engine: `maestro serve` + `maestro-fakellm`
// (issue 7 "Done when"): cancel during a streaming LLM call and during a
// running command (children too), retry after a scripted 500, an
// interjection seen by the next LLM request, approve/deny of tool and
// package requests resuming the same movement, a double decide, and SSE
// resume under a real run. Evidence comes from the API, the fake's request
// log and /proc.
#include <dirent.h>

#include <atomic>
#include <fstream>
#include <set>
#include <sstream>

#include "serve_fixture.h"

namespace maestro::testing {
namespace {

// Does any process's command line contain `marker`?
bool ProcessWithArg(const std::string& marker) {
  DIR* d = opendir("/proc");
  if (!d) return false;
  bool found = false;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::string cmd;
    try {
      std::ifstream in(std::string("/proc/") + e->d_name + "/cmdline");
      cmd.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    } catch (const std::exception&) {
      continue;  // it exited while we read it (ESRCH): not running any more
    }
    for (char& c : cmd) c = c == '\0' ? ' ' : c;
    // bwrap, the shell and both sleeps carry it; nothing else does.
    if (Contains(cmd, marker)) found = true;
  }
  closedir(d);
  return found;
}

bool WaitFor(const std::function<bool()>& cond, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return cond();
}

int64_t MsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t)
      .count();
}

TEST_F(ServeEngineTest, CancelDuringAStreamingLlmCallStopsWithinOneSecond) {
  Json slow = {{"text", std::string(400, 'x')}, {"chunk_chars", 1}, {"token_delay_ms", 100}};
  Start(Json::array({slow}));
  Json c = Create("stream slowly");
  WaitFakeRequests(1);
  std::this_thread::sleep_for(300ms);  // the stream is flowing
  ASSERT_EQ(WaitStatus(c, "running")["status"], "running");
  auto t0 = std::chrono::steady_clock::now();
  auto [code, body] = Post(TaskPath(c) + "/cancel", Json::object());
  EXPECT_EQ(code, 200) << body.dump();
  Json job = WaitStatus(c, "cancelled", 1500ms);
  EXPECT_EQ(job["status"], "cancelled");
  EXPECT_LE(MsSince(t0), 1000) << "the streaming call was not stopped within a second";
  EXPECT_EQ(FakeRequests().size(), 1u) << "a cancelled job made no further LLM call";
}

TEST_F(ServeEngineTest, CancelDuringRunCommandKillsItsProcessesAndTheSubtask) {
  // The parent spins off a child task, then runs a command whose shell leaves
  // a background sleep; the child (second worker) runs its own command.
  Json child = ToolCallReply("RunCommand", {{"command", "sleep 30.456 & sleep 30.456"}});
  child["match"] = {{"last_message_contains", "CHILD-MARK"}};
  Json spin = ToolCallReply("SpinOffTask", {{"title", "child"}, {"instruction", "CHILD-MARK run"}});
  spin["match"] = {{"any_message_contains", "PARENT-MARK"}};
  Json run = ToolCallReply("RunCommand", {{"command", "sleep 30.123 & sleep 30.123"}});
  run["match"] = {{"any_message_contains", "PARENT-MARK"}};
  Start(Json::array({child, spin, run}));
  Json c = Create("PARENT-MARK spin off and wait");
  ASSERT_TRUE(WaitFor([] { return ProcessWithArg("30.123") && ProcessWithArg("30.456"); }, 20s))
      << "the commands did not start\n"
      << LogTail();
  std::string parent_job = c["job"]["id"];
  // The child job: the other running job (its task is the spun-off one).
  std::string child_job;
  const Json all_tasks = Get("/api/local/tasks")["tasks"];
  for (const auto& task : all_tasks) {
    if (task["id"] == c["task"]["id"]) continue;
    Json ct = Get("/api/local/tasks/" + task["id"].get<std::string>());
    if (ct["latest_job"]["parent_job_id"] == parent_job)
      child_job = ct["latest_job"]["id"].get<std::string>();
  }
  ASSERT_FALSE(child_job.empty()) << "no subtask job found";

  auto t0 = std::chrono::steady_clock::now();
  auto [code, body] = Post(TaskPath(c) + "/cancel", Json::object());
  ASSERT_EQ(code, 200) << body.dump();
  EXPECT_EQ(WaitStatus(c, "cancelled", 1500ms)["status"], "cancelled");
  EXPECT_TRUE(WaitFor([] { return !ProcessWithArg("30.123") && !ProcessWithArg("30.456"); }, 1s))
      << "a command process outlived the cancel";
  EXPECT_LE(MsSince(t0), 1000);
  Json cj;
  ASSERT_TRUE(WaitFor(
      [&] {
        const Json tasks = Get("/api/local/tasks")["tasks"];
        for (const auto& task : tasks) {
          Json ct = Get("/api/local/tasks/" + task["id"].get<std::string>());
          if (ct["latest_job"]["id"] == child_job) cj = ct["latest_job"];
        }
        return cj.value("status", "") == "cancelled";
      },
      1s))
      << "the subtask's job: " << cj.dump();
}

TEST_F(ServeEngineTest, RetriesAfterAScripted500ThenSucceeds) {
  Json fail = {{"status", 500}, {"error_message", "scripted failure"}};
  Start(Json::array({fail, ToolCallReply("complete", {{"status", "success"}, {"result", "ok"}})}));
  Json c = Create("fail once");
  Json job = WaitStatus(c, "succeeded");
  EXPECT_EQ(job["attempt"], 2) << "the job was claimed a second time after the 500";
  Json reqs = FakeRequests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0]["status"], 500);
  EXPECT_EQ(reqs[1]["status"], 200);
  bool saw_retry = false;
  for (const auto& e : Events(c["task"]["id"])) {
    if (e["type"] == "job.status" && e["payload"]["to"] == "retry") saw_retry = true;
  }
  EXPECT_TRUE(saw_retry) << "no job.status → retry event";
}

TEST_F(ServeEngineTest, InterjectionMidRunAppearsInTheNextLlmRequest) {
  Json slow = ToolCallReply("ListDir", Json::object());
  slow["delay_ms"] = 1500;
  Start(Json::array({slow, ToolCallReply("complete", {{"status", "success"}, {"result", "ok"}})}));
  Json c = Create("list the files");
  WaitFakeRequests(1);
  auto [code, body] = Post(TaskPath(c) + "/comments", {{"body", "INTERJECT-7 also count them"}});
  ASSERT_EQ(code, 201) << body.dump();
  EXPECT_EQ(body["outcome"], "interjection");
  WaitStatus(c, "succeeded");
  Json reqs = FakeRequests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_FALSE(Contains(MessagesText(reqs[0]), "INTERJECT-7"));
  const Json& last = reqs[1]["body"]["messages"].back();
  EXPECT_EQ(last["role"], "user");
  EXPECT_TRUE(Contains(last.dump(), "INTERJECT-7")) << MessagesText(reqs[1]);
}

// coding piece: plan → implement, then a park tool in `implement`. After the
// decision the job must resume in `implement` (not restart at `plan`).
class ParkResumeTest : public ServeEngineTest {
 protected:
  // Runs the task until it parks; returns the created task/job.
  Json StartAndPark(const Json& park_call, const Json& after_resume) {
    Json replies = Json::array({ToolCallReply("transition", {{"next", "implement"}}), park_call,
                                park_call});  // re-issued after the resume (seed 001)
    for (const auto& r : after_resume) replies.push_back(r);
    Start(replies);
    Json c = Create("do the change", "coding");
    Json parked = WaitStatus(c, "waiting_human");
    EXPECT_EQ(parked["resume_movement"], "implement");
    requests_before_ = FakeRequests().size();
    EXPECT_EQ(requests_before_, 2u);
    return c;
  }

  Json Pending(const Json& c, const std::string& kind) {
    Json list = Get(TaskPath(c) + "/" + kind + "-requests")["requests"];
    EXPECT_EQ(list.size(), 1u) << list.dump();
    return list.empty() ? Json() : list[0];
  }

  // The job resumed in `implement`: the first request after the decision
  // replays the parked conversation (with the park call and its answer) and
  // ends with the engine's resume note naming that movement, not `plan`.
  void ExpectSameMovementResume(const Json& reqs) {
    ASSERT_GT(reqs.size(), requests_before_);
    const Json& after = reqs[requests_before_]["body"]["messages"];
    EXPECT_EQ(after.back()["role"], "user");
    EXPECT_TRUE(Contains(after.back().dump(), "movement 'implement'")) << after.back();
    EXPECT_TRUE(Contains(MessagesText(reqs[requests_before_]), "\"Request"))
        << "the parked call's answer is part of the resumed conversation";
  }

  size_t requests_before_ = 0;
};

TEST_F(ParkResumeTest, ApprovedToolRequestResumesTheSameMovementAndGrantsTheCall) {
  Json args = {{"command", "echo granted-7"}, {"network", true}};
  Json park = ToolCallReply("RequestTool",
                            {{"tool", "RunCommand"}, {"arguments", args}, {"reason", "net"}});
  Json c = StartAndPark(
      park, Json::array({ToolCallReply("RunCommand", args),
                         ToolCallReply("complete", {{"status", "success"}, {"result", "done"}})}));
  Json req = Pending(c, "tool");
  auto [code, body] =
      Post(TaskPath(c) + "/tool-requests/" + req["id"].get<std::string>() + "/decide",
           {{"decision", "approve"}, {"scope", "once"}});
  ASSERT_EQ(code, 200) << body.dump();
  Json job = WaitStatus(c, "succeeded");
  EXPECT_EQ(job["id"], c["job"]["id"]) << "the same job resumed";
  Json reqs = FakeRequests();
  ExpectSameMovementResume(reqs);
  ASSERT_EQ(reqs.size(), 5u);
  EXPECT_TRUE(Contains(reqs[3]["body"]["messages"].back().dump(), "Approved (request"));
  EXPECT_TRUE(Contains(reqs[4]["body"]["messages"].back().dump(), "granted-7"))
      << "the approved call ran: " << reqs[4]["body"]["messages"].back();
  EXPECT_EQ(Get(TaskPath(c) + "/tool-requests")["requests"].size(), 1u) << "no second card";
}

TEST_F(ParkResumeTest, DeniedToolRequestResumesWithTheDenialAndNoSecondCard) {
  Json park = ToolCallReply(
      "RequestTool",
      {{"tool", "RunCommand"}, {"arguments", {{"command", "curl x"}}}, {"reason", "net"}});
  Json c = StartAndPark(
      park,
      Json::array({ToolCallReply("complete", {{"status", "success"}, {"result", "without"}})}));
  Json req = Pending(c, "tool");
  auto [code, body] =
      Post(TaskPath(c) + "/tool-requests/" + req["id"].get<std::string>() + "/decide",
           {{"decision", "deny"}});
  ASSERT_EQ(code, 200) << body.dump();
  WaitStatus(c, "succeeded");
  Json reqs = FakeRequests();
  ExpectSameMovementResume(reqs);
  ASSERT_EQ(reqs.size(), 4u);
  EXPECT_TRUE(Contains(reqs[3]["body"]["messages"].back().dump(), "the user denied"));
  EXPECT_EQ(Get(TaskPath(c) + "/tool-requests")["requests"].size(), 1u) << "no second card";
}

Json PackageCall(const std::string& name) {
  return ToolCallReply(
      "RequestPackage",
      {{"ecosystem", "fakeeco"}, {"name", name}, {"version", "1.2"}, {"reason", "needed"}});
}

TEST_F(ParkResumeTest, ApprovedPackageRequestRunsTheInstallerAndResumes) {
  // After the install, a command uses the package: the task's packages dir
  // is bound read-only into RunCommand's sandbox.
  Json use = ToolCallReply(
      "RunCommand", {{"command", "cat \"$MAESTRO_PACKAGES_DIR/fakeeco/left-pad/INSTALLED\""}});
  Json c = StartAndPark(PackageCall("left-pad"),
                        Json::array({use, ToolCallReply("complete", {{"status", "success"},
                                                                     {"result", "installed"}})}));
  Json req = Pending(c, "package");
  auto [code, body] =
      Post(TaskPath(c) + "/package-requests/" + req["id"].get<std::string>() + "/decide",
           {{"decision", "approve"}});
  ASSERT_EQ(code, 200) << body.dump();
  WaitStatus(c, "succeeded");
  const std::string target =
      DataDir() + "/tasks/" + c["task"]["id"].get<std::string>() + "/packages/fakeeco";
  std::ifstream marker(target + "/left-pad/INSTALLED");
  std::string line;
  std::getline(marker, line);
  EXPECT_EQ(line, "left-pad 1.2") << "the installer did not run in " << target;
  Json reqs = FakeRequests();
  ExpectSameMovementResume(reqs);
  ASSERT_EQ(reqs.size(), 5u);
  std::string result = reqs[3]["body"]["messages"].back().dump();
  EXPECT_TRUE(Contains(result, "installed at " + target)) << result;
  std::string used = reqs[4]["body"]["messages"].back().dump();
  EXPECT_TRUE(Contains(used, "left-pad 1.2")) << used;
  bool recorded = false;
  for (const auto& e : Events(c["task"]["id"])) {
    if (e["type"] == "package.install" && e["payload"]["status"] == "installed") recorded = true;
  }
  EXPECT_TRUE(recorded) << "no package.install event";
}

TEST_F(ParkResumeTest, DeniedPackageRequestResumesWithTheDenialAndInstallsNothing) {
  Json c = StartAndPark(
      PackageCall("left-pad"),
      Json::array({ToolCallReply("complete", {{"status", "success"}, {"result", "without"}})}));
  Json req = Pending(c, "package");
  auto [code, body] =
      Post(TaskPath(c) + "/package-requests/" + req["id"].get<std::string>() + "/decide",
           {{"decision", "deny"}});
  ASSERT_EQ(code, 200) << body.dump();
  WaitStatus(c, "succeeded");
  Json reqs = FakeRequests();
  ExpectSameMovementResume(reqs);
  ASSERT_EQ(reqs.size(), 4u);
  EXPECT_TRUE(Contains(reqs[3]["body"]["messages"].back().dump(), "the user denied"));
  EXPECT_FALSE(std::filesystem::exists(DataDir() + "/tasks/" + c["task"]["id"].get<std::string>() +
                                       "/packages"));
}

TEST_F(ParkResumeTest, DoubleDecideGivesOne200AndOne409AndOneGrant) {
  Json args = {{"command", "echo once"}, {"network", true}};
  Json park = ToolCallReply("RequestTool", {{"tool", "RunCommand"}, {"arguments", args}});
  Json c = StartAndPark(
      park, Json::array({ToolCallReply("complete", {{"status", "success"}, {"result", "x"}})}));
  std::string path =
      TaskPath(c) + "/tool-requests/" + Pending(c, "tool")["id"].get<std::string>() + "/decide";
  std::atomic<int> ok{0}, conflict{0};
  std::vector<std::thread> clicks;
  for (int i = 0; i < 2; ++i) {
    clicks.emplace_back([&, i] {
      int code = Post(path, {{"decision", i == 0 ? "approve" : "deny"}}).first;
      if (code == 200) ++ok;
      if (code == 409) ++conflict;
    });
  }
  for (auto& t : clicks) t.join();
  EXPECT_EQ(ok.load(), 1);
  EXPECT_EQ(conflict.load(), 1);
  WaitStatus(c, "succeeded");
  int decided = 0;
  for (const auto& e : Events(c["task"]["id"])) decided += e["type"] == "request.decided";
  EXPECT_EQ(decided, 1) << "exactly one decision was recorded";
  // The grant: at most one (one for the approve, none if the deny won).
  Json reqs = Get(TaskPath(c) + "/tool-requests")["requests"];
  ASSERT_EQ(reqs.size(), 1u);
  int grants_expected = reqs[0]["status"] == "approved" ? 1 : 0;
  EXPECT_EQ(CountGrantsInDb(c["task"]["id"]), grants_expected);
}

// Reads SSE frames from the task's event stream: returns (id, type) pairs
// until `stop(type, data)` says so or the connection ends.
std::vector<std::pair<std::string, std::string>> ReadEvents(
    int port, const std::string& path, const std::string& last_id,
    const std::function<bool(const std::string&, const std::string&)>& stop) {
  httplib::Client cl("127.0.0.1", port);
  cl.set_bearer_token_auth("tok");
  cl.set_read_timeout(20, 0);
  httplib::Headers h = {{"Accept", "text/event-stream"}};
  if (!last_id.empty()) h.emplace("Last-Event-ID", last_id);
  std::vector<std::pair<std::string, std::string>> got;
  std::string buf;
  cl.Get(path.c_str(), h, [&](const char* data, size_t n) {
    buf.append(data, n);
    size_t pos;
    while ((pos = buf.find("\n\n")) != std::string::npos) {
      std::string frame = buf.substr(0, pos);
      buf.erase(0, pos + 2);
      std::string id, type, payload;
      std::istringstream lines(frame);
      for (std::string l; std::getline(lines, l);) {
        if (l.rfind("id: ", 0) == 0) id = l.substr(4);
        if (l.rfind("event: ", 0) == 0) type = l.substr(7);
        if (l.rfind("data: ", 0) == 0) payload = l.substr(6);
      }
      if (id.empty()) continue;
      got.emplace_back(id, type);
      if (stop(type, payload)) return false;
    }
    return true;
  });
  return got;
}

TEST_F(ServeEngineTest, SseResumeWithLastEventIdLosesNothingDuringARealRun) {
  Json replies = Json::array();
  // Four different calls (the same batch three times in a row is a loop).
  for (const Json& call :
       {ToolCallReply("ListDir", Json::object()), ToolCallReply("ListDir", {{"path", "."}}),
        ToolCallReply("Glob", {{"pattern", "*"}}), ToolCallReply("Glob", {{"pattern", "*.md"}})}) {
    Json r = call;
    r["delay_ms"] = 150;
    replies.push_back(r);
  }
  replies.push_back(ToolCallReply("complete", {{"status", "success"}, {"result", "ok"}}));
  Start(replies);
  Json c = Create("list four times");
  std::string path = TaskPath(c) + "/events";
  // First connection: drop it after the first tool.call event (mid-run).
  auto first = ReadEvents(port_, path, "", [](const std::string& type, const std::string&) {
    return type == "tool.call";
  });
  ASSERT_FALSE(first.empty());
  // Reconnect from the last id seen; read until the job has ended.
  auto rest = ReadEvents(port_, path, first.back().first,
                         [](const std::string& type, const std::string& data) {
                           return type == "job.status" && Contains(data, "\"to\":\"succeeded\"");
                         });
  WaitStatus(c, "succeeded");
  std::vector<std::string> seen;
  for (const auto& [id, type] : first) seen.push_back(id);
  for (const auto& [id, type] : rest) seen.push_back(id);
  std::vector<std::string> all;
  for (const auto& e : Events(c["task"]["id"])) all.push_back(e["id"].get<std::string>());
  // Every event up to the end, each exactly once, in order.
  ASSERT_LE(seen.size(), all.size());
  EXPECT_EQ(seen, std::vector<std::string>(all.begin(), all.begin() + seen.size()));
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), seen.size()) << "duplicates";
  int tool_calls = 0;
  for (const auto& [id, type] : rest) tool_calls += type == "tool.call";
  EXPECT_EQ(tool_calls, 3) << "the reconnected stream missed tool calls";
}

}  // namespace
}  // namespace maestro::testing
