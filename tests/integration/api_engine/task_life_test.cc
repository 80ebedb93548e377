// A task's whole life against the real `maestro serve` + `maestro-fakellm`:
// long lives with follow-ups and restarts (the exact `messages` of every
// request), comments in every job state, and SIGKILLs at exact code points
// (MAESTRO_CRASH_AT, core/crash_point.h) with exactly one effect after each.
#include <filesystem>
#include <fstream>

#include "serve_fixture.h"

namespace maestro::testing {
namespace {

// Success, answered once (the script does not repeat it).
Json CompleteOnce(const std::string& result = "done") {
  Json r = ToolCallReply("complete", {{"status", "success"}, {"result", result}});
  r["repeat"] = 0;
  return r;
}

const Json& Messages(const Json& logged) { return logged["body"]["messages"]; }

// How many messages of the request contain `needle`.
int CountIn(const Json& logged, const std::string& needle) {
  int n = 0;
  for (const auto& m : Messages(logged)) n += Contains(m.dump(), needle) ? 1 : 0;
  return n;
}

// Issue 45 item 3: no request holds two user messages in a row (strict chat
// templates refuse them), and exactly one system message, first.
void ExpectAlternates(const Json& reqs) {
  for (size_t k = 0; k < reqs.size(); ++k) {
    const Json& msgs = Messages(reqs[k]);
    ASSERT_FALSE(msgs.empty()) << k;
    EXPECT_EQ(msgs[0]["role"], "system") << "request " << k;
    for (size_t i = 1; i < msgs.size(); ++i) {
      EXPECT_NE(msgs[i]["role"], "system") << "request " << k << " message " << i;
      EXPECT_FALSE(msgs[i - 1]["role"] == "user" && msgs[i]["role"] == "user")
          << "request " << k << ": user messages " << i - 1 << " and " << i << " adjacent:\n"
          << MessagesText(reqs[k]);
    }
  }
}

// `prev`'s messages are the start of `next`'s: equal, except that `prev`'s
// last message may have grown into `next`'s merged user message (the text
// of the old one first, so a chat template renders the old prompt as the
// new one's prefix up to its end-of-turn marker).
void ExpectGrowsFrom(const Json& prev_req, const Json& next_req, size_t from = 0) {
  const Json& prev = Messages(prev_req);
  const Json& msgs = Messages(next_req);
  ASSERT_LE(prev.size(), msgs.size()) << MessagesText(prev_req) << "---\n"
                                      << MessagesText(next_req);
  for (size_t m = from; m < prev.size(); ++m) {
    if (msgs[m] == prev[m]) continue;
    bool grown = m + 1 == prev.size() && prev[m]["role"] == "user" && msgs[m]["role"] == "user" &&
                 prev[m]["content"].is_string() && msgs[m]["content"].is_string() &&
                 msgs[m]["content"].get<std::string>().rfind(
                     prev[m]["content"].get<std::string>() + "\n\n", 0) == 0;
    EXPECT_TRUE(grown) << "message " << m << ":\n" << prev[m].dump() << "\n" << msgs[m].dump();
  }
}

// Lease recovery fast enough for a test after a SIGKILL.
constexpr const char* kFastLeases = "  lease_ms: 1000\n  sweep_interval_ms: 200\n";

class TaskLifeTest : public ServeEngineTest {
 protected:
  // Start with leases short enough that a job of a killed serve is
  // recovered within a test.
  void StartLife(const Json& replies, int workers = 2) {
    extra_jobs_config_ = kFastLeases;
    Start(replies, workers);
  }

  // Starts serve armed to SIGKILL itself at `point`.
  void ArmCrash(const std::string& point) {
    serve_->Signal(SIGTERM);
    ASSERT_TRUE(serve_->Wait(std::chrono::seconds(20)).has_value());
    StartServe({{"MAESTRO_CRASH_AT", point}});
  }
  // Waits for the armed serve to die at its point, then starts it clean.
  void ExpectCrashThenRestart() {
    auto code = serve_->Wait(std::chrono::seconds(30));
    ASSERT_TRUE(code.has_value()) << "serve did not reach its crash point\n" << LogTail();
    EXPECT_EQ(*code, 128 + SIGKILL);
    StartServe();
  }

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

  Json Comments(const std::string& task_id) {
    return Get("/api/local/tasks/" + task_id + "/comments")["comments"];
  }
};

TEST_F(TaskLifeTest, AChatAnsweredTenTimesGrowsByOneMessagePerAnswerAcrossRestarts) {
  Start(Json::array({CompleteOnce("answered")}), 1);
  Json c = Create("LIFE-0 keep a running list");
  std::string task = c["task"]["id"];
  WaitStatus(c, "succeeded");
  for (int i = 1; i <= 10; ++i) {
    if (i == 4 || i == 8) RestartServe();
    auto [code, body] = Post(TaskPath(c) + "/comments", {{"body", "LIFE-" + std::to_string(i)}});
    ASSERT_EQ(code, 201) << body.dump();
    ASSERT_EQ(body["outcome"], "followup");
    WaitJob(task, body["job"]["id"], [](const Json& j) { return j["status"] == "succeeded"; });
  }
  Json reqs = FakeRequests();
  ASSERT_EQ(reqs.size(), 11u);
  for (size_t k = 0; k < reqs.size(); ++k) {
    const Json& msgs = Messages(reqs[k]);
    // [system, one user message]: the instruction and each answer joined by
    // a blank line (a finished job's `complete` is not replayed, so the
    // answers are adjacent user turns, merged: issue 45 item 3). Before:
    // 2 + k messages, k + 1 of them user messages in a row.
    EXPECT_EQ(msgs.size(), 2u) << "request " << k << ":\n" << MessagesText(reqs[k]);
    EXPECT_EQ(msgs[0]["role"], "system");
    for (size_t j = 0; j <= k; ++j) {
      std::string needle = j == 0 ? "LIFE-0 " : "admin: LIFE-" + std::to_string(j) + "\\n";
      EXPECT_EQ(CountIn(reqs[k], needle), 1) << "LIFE-" << j << " in request " << k << ":\n"
                                             << MessagesText(reqs[k]);
    }
    if (k == 0) continue;
    // The previous request's text is this one's prefix.
    ExpectGrowsFrom(reqs[k - 1], reqs[k]);
    // Prefix retention on the fake's llama-server-like cache.
    int64_t cached = reqs[k]["cache"]["cache_n"];
    int64_t before = reqs[k - 1]["cache"]["prompt_tokens"];
    EXPECT_GE(static_cast<double>(cached), 0.99 * static_cast<double>(before)) << k;
  }
  for (const auto& cm : Comments(task)) {
    if (cm["kind"] == "reply") {
      EXPECT_GT(cm.value("delivered_at", 0), 0) << cm.dump();
    }
  }
}

// One task through follow-up, ASK + answer, an interjection while a tool
// runs, a 500 and its retry, Continue of the same piece and of another, with
// restarts between steps. After each step: the exact shape of the request,
// every MIX tag once, and the previous request kept as the prefix.
TEST_F(TaskLifeTest, AMixedLifeKeepsEveryTurnOnceAndThePrefixAcrossItsPaths) {
  Json ask = Matching(ToolCallReply("complete", {{"status", "needs_user_input"},
                                                 {"result", "need a colour"},
                                                 {"question", "Which colour?"}}),
                      "MIX-1");
  Json slow = Matching(ToolCallReply("ListDir", Json::object()), "MIX-2");
  slow["delay_ms"] = 1200;
  Json fail = Matching({{"status", 500}, {"error_message", "scripted failure"}}, "MIX-3");
  // Each reply once: a follow-up's user message is merged with the turn
  // before it, so an earlier tag is in the last message again.
  Json replies = Json::array({Matching(CompleteOnce("started"), "MIX-0"), ask, slow, fail,
                              Matching(CompleteOnce("resumed"), "(The job resumes"),
                              Matching(CompleteOnce("more"), "MIX-5"),
                              Matching(CompleteOnce("reviewed"), "MIX-6")});
  for (auto& r : replies) r["repeat"] = 1;
  Start(replies, 1);
  Json c = Create("MIX-0 paint the fence");
  std::string task = c["task"]["id"];
  auto last_done = [&] { return LatestJobWhen(task, "succeeded"); };
  auto comment = [&](const std::string& text, const std::string& outcome) {
    auto [code, body] = Post(TaskPath(c) + "/comments", {{"body", text}});
    EXPECT_EQ(code, 201) << body.dump();
    EXPECT_EQ(body["outcome"], outcome) << text;
  };
  last_done();                                    // R0 [sys, U0]
  comment("MIX-1 ask me something", "followup");  // R1 [sys, U0, U1] -> ASK
  LatestJobWhen(task, "waiting_human");
  RestartServe();
  comment("MIX-2 blue", "followup");  // R2 [sys, U0, U1, U2] -> slow ListDir
  WaitFakeRequests(3);
  comment("MIX-3 and green", "interjection");  // R3 [.., A, T, U3] -> 500, retry
  last_done();                                 // R4 [.., U3, resume note]
  RestartServe();
  auto [k1, b1] = Post(TaskPath(c) + "/continue", {{"note", "MIX-5 one more coat"}});
  ASSERT_EQ(k1, 201) << b1.dump();
  WaitJob(task, b1["job"]["id"], [](const Json& j) { return j["status"] == "succeeded"; });
  auto [k2, b2] =
      Post(TaskPath(c) + "/continue", {{"note", "MIX-6 check it"}, {"piece", "review"}});
  ASSERT_EQ(k2, 201) << b2.dump();
  WaitJob(task, b2["job"]["id"], [](const Json& j) { return j["status"] == "succeeded"; });

  Json reqs = FakeRequests();
  ASSERT_EQ(reqs.size(), 7u) << LogTail();
  // Issue 45 items 1 and 3 changed these shapes on purpose: the ASK's
  // `complete` call and its result are replayed (R2 on: +2), and a user turn
  // that follows a user turn is merged into it (R1: the follow-up joins the
  // instruction; R4: the resume note joins the interjection; R5/R6: the
  // Continue notes join the turn before them), so every request alternates.
  // Before: {2, 3, 4, 7, 8, 9, 10} with the question lost.
  const std::vector<size_t> sizes = {2, 2, 5, 8, 8, 8, 8};
  for (size_t k = 0; k < reqs.size(); ++k) {
    const Json& msgs = Messages(reqs[k]);
    EXPECT_EQ(msgs.size(), sizes[k]) << "request " << k << ":\n" << MessagesText(reqs[k]);
    EXPECT_EQ(msgs[0]["role"], "system");
    for (int j : {0, 1, 2, 3, 5, 6}) {
      std::string tag = "MIX-" + std::to_string(j) + " ";
      int want = j <= static_cast<int>(k) ? 1 : 0;  // MIX-j enters with request j
      EXPECT_EQ(CountIn(reqs[k], tag), want) << tag << " in request " << k << ":\n"
                                             << MessagesText(reqs[k]);
    }
    EXPECT_EQ(CountIn(reqs[k], "Which colour?"), k >= 2 ? 2 : 0)
        << "the ASK's call and the follow-up's note, request " << k << ":\n"
        << MessagesText(reqs[k]);
    // The previous request is this one's prefix (its last user message
    // grown by a merge), but for the system message of another piece.
    if (k > 0) ExpectGrowsFrom(reqs[k - 1], reqs[k], k == 6 ? 1 : 0);
  }
  ExpectAlternates(reqs);
  EXPECT_EQ(reqs[3]["status"], 500);
  EXPECT_TRUE(Contains(Messages(reqs[4]).back().dump(), "(The job resumes"));
  EXPECT_NE(Messages(reqs[6])[0], Messages(reqs[5])[0]) << "review has its own system message";
}

// Issue 45 items 1 and 3 through a whole life: an ASK and its answer, two
// interjections posted together, and an interjection after a warning (a
// user message appended after a user message while the job runs). Every
// request alternates roles, the answer arrives with its question (the ASK's
// call in the replay and quoted by the follow-up's note), and each request
// reuses the previous one's cached prefix on the fake's llama-server model.
TEST_F(TaskLifeTest, EveryRequestOfALifeAlternatesRolesAndTheAnswerKeepsItsQuestion) {
  Json ask = Matching(ToolCallReply("complete", {{"status", "needs_user_input"},
                                                 {"result", "need a colour"},
                                                 {"question", "Which colour?"}}),
                      "ALT-0");
  Json list = Matching(ToolCallReply("ListDir", Json::object()), "ALT-1");
  list["delay_ms"] = 1500;
  Json musing = Matching({{"text", "Thinking about the brushes."}}, "ALT-2b");
  musing["delay_ms"] = 1500;
  Json replies = Json::array({ask, list, musing, Matching(CompleteOnce("painted"), "ALT-3"),
                              Matching(CompleteOnce("painted again"), "ALT-4")});
  for (auto& r : replies) r["repeat"] = 1;
  Start(replies, 1);
  Json c = Create("ALT-0 paint the fence");
  std::string task = c["task"]["id"];
  LatestJobWhen(task, "waiting_human");
  auto post = [&](const std::string& text, const std::string& outcome) {
    auto [code, body] = Post(TaskPath(c) + "/comments", {{"body", text}});
    EXPECT_EQ(code, 201) << body.dump();
    EXPECT_EQ(body["outcome"], outcome) << text;
  };
  post("ALT-1 blue", "followup");
  WaitFakeRequests(2);  // the ListDir reply is held 1.5 s: both land in that call
  post("ALT-2a use a brush", "interjection");
  post("ALT-2b two coats", "interjection");
  WaitFakeRequests(3);  // a text-only reply, held: its warning, then this one
  post("ALT-3 and the gate", "interjection");
  LatestJobWhen(task, "succeeded");
  post("ALT-4 once more", "followup");
  LatestJobWhen(task, "succeeded");

  Json reqs = FakeRequests();
  ASSERT_EQ(reqs.size(), 5u) << LogTail();
  ExpectAlternates(reqs);
  for (size_t k = 1; k < reqs.size(); ++k) {
    ExpectGrowsFrom(reqs[k - 1], reqs[k]);
    int64_t cached = reqs[k]["cache"]["cache_n"];
    int64_t before = reqs[k - 1]["cache"]["prompt_tokens"];
    EXPECT_GE(static_cast<double>(cached), 0.98 * static_cast<double>(before)) << k;
  }
  // R1: the ASK's call and result, then one user message: the note quoting
  // the question, and the answer.
  const Json& r1 = Messages(reqs[1]);
  ASSERT_EQ(r1.size(), 5u) << MessagesText(reqs[1]);
  EXPECT_EQ(r1[2]["role"], "assistant");
  EXPECT_TRUE(Contains(r1[2]["tool_calls"].dump(), "Which colour?")) << r1[2].dump();
  EXPECT_EQ(r1[3]["role"], "tool");
  const std::string note = r1[4]["content"];
  EXPECT_TRUE(Contains(note, "## Follow-up\nYou asked the user:\n> Which colour?\n")) << note;
  EXPECT_TRUE(Contains(note, "ALT-1 blue")) << note;
  // R2: the two interjections are one user message.
  const Json& r2 = Messages(reqs[2]);
  EXPECT_TRUE(Contains(r2.back().dump(), "ALT-2a") && Contains(r2.back().dump(), "ALT-2b"))
      << MessagesText(reqs[2]);
  EXPECT_EQ(CountIn(reqs[2], "ALT-2a"), 1);
  // R3: the text-only warning and the interjection after it: one message
  // (sent from the alternating copy; current.jsonl keeps both lines).
  const Json& r3 = Messages(reqs[3]);
  EXPECT_EQ(r3.size(), r2.size() + 2) << MessagesText(reqs[3]);
  EXPECT_TRUE(Contains(r3.back().dump(), "no tool call") && Contains(r3.back().dump(), "ALT-3"))
      << r3.back().dump();
  // R4: the next follow-up replays the run with the merged turn (and the
  // ASK) and adds its note to the last user turn.
  EXPECT_EQ(CountIn(reqs[4], "ALT-3"), 1) << MessagesText(reqs[4]);
  EXPECT_EQ(CountIn(reqs[4], "Which colour?"), 2) << MessagesText(reqs[4]);
  for (const auto& cm : Comments(task)) {
    if (cm["kind"] == "question") {
      EXPECT_GT(cm.value("delivered_at", 0), 0) << "quoted by the follow-up: " << cm.dump();
    }
  }
}

// Issue 45 item 2: a follow-up on a coding task that ended in `review`
// resumes in `review` (its guidance named in the follow-up's message), so
// review's transition `fix` is taken — before, it started in `plan` and the
// transition was refused.
TEST_F(TaskLifeTest, AFollowUpResumesInTheMovementWhereTheTaskEnded) {
  Json replies = Json::array(
      {Matching(ToolCallReply("transition", {{"next", "implement"}}), "FU-0"),
       Matching(ToolCallReply("transition", {{"next", "review"}}), "# Movement: implement"),
       Matching(CompleteOnce("reviewed"), "# Movement: review"),
       Matching(ToolCallReply("transition", {{"next", "fix"}}), "FU-1"),
       Matching(CompleteOnce("fixed"), "# Movement: fix")});
  for (auto& r : replies) r["repeat"] = 1;
  Start(replies, 1);
  Json c = Create("FU-0 add a greeting", "coding");
  std::string task = c["task"]["id"];
  LatestJobWhen(task, "succeeded");
  auto [code, body] = Post(TaskPath(c) + "/comments", {{"body", "FU-1 also fix the typo"}});
  ASSERT_EQ(code, 201) << body.dump();
  ASSERT_EQ(body["outcome"], "followup");
  Json done = WaitJob(task, body["job"]["id"], [](const Json& j) {
    return j["status"] == "succeeded" || j["status"] == "failed";
  });
  EXPECT_EQ(done["status"], "succeeded") << LogTail();
  EXPECT_EQ(done["result"], "fixed") << done.dump();
  Json reqs = FakeRequests();
  ASSERT_EQ(reqs.size(), 5u) << LogTail();
  ExpectAlternates(reqs);
  const std::string follow = Messages(reqs[3]).back().dump();
  EXPECT_TRUE(Contains(follow, "FU-1") && Contains(follow, "# Movement: review")) << follow;
  EXPECT_FALSE(Contains(MessagesText(reqs[4]), "not allowed")) << MessagesText(reqs[4]);
  EXPECT_TRUE(Contains(Messages(reqs[4]).back().dump(), "# Movement: fix"))
      << MessagesText(reqs[4]);
}

// A life through a tool approval (a comment meanwhile is refused with 409,
// a restart before the decision), the re-issued call, the granted command, a
// subtask, and a comment while the job waits for it (delivered when the last
// child wakes it). Every request of the parent keeps the previous one as its
// prefix and holds every turn once.
TEST_F(TaskLifeTest, ALifeThroughAnApprovalAndASubtaskKeepsEveryTurnOnce) {
  Json run_args = {{"command", "echo APP-NET-OK"}, {"network", true}};
  Json request = ToolCallReply(
      "RequestTool", {{"tool", "RunCommand"}, {"arguments", run_args}, {"reason", "net"}});
  Json child = Matching(CompleteOnce("child done"), "APP-CHILD");
  child["delay_ms"] = 1500;
  child["repeat"] = 1;
  Start(Json::array(
      {Matching(request, "APP-0"), Matching(request, "(The job resumes"),
       Matching(ToolCallReply("RunCommand", run_args), "Approved (request"),
       Matching(ToolCallReply("SpinOffTask", {{"title", "child"}, {"instruction", "APP-CHILD go"}}),
                "APP-NET-OK"),
       child, Matching(ToolCallReply("WaitSubTask", Json::object()), "Subtask "),
       Matching(CompleteOnce("all done"), "APP-5")}));
  Json c = Create("APP-0 fetch the page");
  std::string task = c["task"]["id"];
  LatestJobWhen(task, "waiting_human");
  auto [refused, why] = Post(TaskPath(c) + "/comments", {{"body", "APP-X not now"}});
  EXPECT_EQ(refused, 409) << why.dump();  // decide the request first; nothing written
  RestartServe();
  Json pending = Get(TaskPath(c) + "/tool-requests")["requests"];
  ASSERT_EQ(pending.size(), 1u);
  auto [code, body] =
      Post(TaskPath(c) + "/tool-requests/" + pending[0]["id"].get<std::string>() + "/decide",
           {{"decision", "approve"}, {"scope", "once"}});
  ASSERT_EQ(code, 200) << body.dump();
  LatestJobWhen(task, "waiting_subtasks");
  auto [k5, b5] = Post(TaskPath(c) + "/comments", {{"body", "APP-5 then summarise"}});
  ASSERT_EQ(k5, 201) << b5.dump();
  EXPECT_EQ(b5["outcome"], "interjection");
  Json done = LatestJobWhen(task, "succeeded");
  EXPECT_EQ(done["id"], c["job"]["id"]) << "one job from the first call to the end";

  Json parent = RequestsWith(FakeRequests(), "APP-0 fetch");
  ASSERT_EQ(parent.size(), 6u) << LogTail();
  for (size_t k = 0; k < parent.size(); ++k) {
    EXPECT_EQ(CountIn(parent[k], "APP-0 fetch"), 1) << MessagesText(parent[k]);
    EXPECT_EQ(CountIn(parent[k], "APP-X"), 0);
    EXPECT_EQ(CountIn(parent[k], "APP-5 then"), k == 5 ? 1 : 0) << MessagesText(parent[k]);
    if (k == 0) continue;
    const Json& prev = Messages(parent[k - 1]);
    const Json& msgs = Messages(parent[k]);
    ASSERT_GT(msgs.size(), prev.size()) << k;
    for (size_t m = 0; m < prev.size(); ++m) {
      EXPECT_EQ(msgs[m], prev[m]) << "request " << k << " message " << m;
    }
  }
  EXPECT_EQ(Get(TaskPath(c) + "/tool-requests")["requests"].size(), 1u) << "no second card";
  EXPECT_TRUE(Contains(Messages(parent[5]).back().dump(), "## Subtasks"));
}

// Issue 45 item 3 on the handoff path: a coding task hands off in
// `implement` (a small context), and the continuation resumes there. Its
// first request was [system, user(facts + instruction), user(implement's
// guidance)]; now the two are one user message, and every request of both
// jobs alternates.
TEST_F(TaskLifeTest, AHandoffContinuationOutsideTheInitialMovementAlternatesRoles) {
  extra_config_ =
      "llm_profiles:\n  small:\n    base_url: {llm_base_url}\n    model: fake\n"
      "    max_attempts: 1\n    context_length: 12000\n";
  Json handoff = {{"spec_ref", "the task instruction"},
                  {"status",
                   {{"completed", {"looked for files"}},
                    {"in_progress", Json::array()},
                    {"pending", {"the greeting"}}}},
                  {"decisions", Json::array()},
                  {"blockers", Json::array()},
                  {"files_changed", Json::array()}};
  Json replies = Json::array(
      {Matching(ToolCallReply("transition", {{"next", "implement"}}), "HO-0"),
       Matching(ToolCallReply("WriteHandoff", handoff), "context is nearly full"),
       {{"match", {{"any_message_contains", "## Handoff from the previous session"}}},
        {"tool_calls",
         Json::array({{{"name", "complete"},
                       {"arguments", {{"status", "success"}, {"result", "HO-DONE"}}}}})}}});
  for (int i = 0; i < 12; ++i) {
    std::string text;
    while (text.size() < 3'000) text += "step " + std::to_string(i) + " thinking out loud. ";
    Json r = ToolCallReply("Glob", {{"pattern", "*.n" + std::to_string(i)}});
    r["text"] = text;
    replies.push_back(r);
  }
  for (auto& r : replies) r["repeat"] = 1;
  Start(replies, 1);
  auto [code, c] =
      Post("/api/local/tasks",
           {{"instruction", "HO-0 add a greeting"}, {"piece", "coding"}, {"profile", "small"}});
  ASSERT_EQ(code, 201) << c.dump();
  std::string task = c["task"]["id"];
  Json done;
  const auto end = std::chrono::steady_clock::now() + 40s;
  while (std::chrono::steady_clock::now() < end) {
    Json jobs = Get("/api/local/tasks/" + task)["jobs"];
    if (jobs.size() == 2 && jobs[0]["status"] != "running" && jobs[1]["status"] != "running" &&
        jobs[1]["status"] != "queued" && jobs[0]["status"] != "queued") {
      done = jobs;
      break;
    }
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(done.is_array()) << Get("/api/local/tasks/" + task).dump() << LogTail();
  Json reqs = FakeRequests();
  Json cont = RequestsWith(reqs, "## Handoff from the previous session");
  ASSERT_FALSE(cont.empty()) << LogTail();
  const Json& first = Messages(cont[0]);
  ASSERT_EQ(first.size(), 2u) << MessagesText(cont[0]);
  EXPECT_TRUE(Contains(first[1].dump(), "## Handoff from the previous session") &&
              Contains(first[1].dump(), "# Movement: implement"))
      << first[1].dump();
  ExpectAlternates(reqs);
}

// Issue 45 item 8: metadata.json says what ran the task — the resolved
// profile's name, model and context length — when the request named none.
TEST_F(TaskLifeTest, TheTaskMetadataNamesTheProfileThatRanIt) {
  Start(Json::array({CompleteOnce()}), 1);
  Json c = Create("META-0 say hello");
  std::string task = c["task"]["id"];
  LatestJobWhen(task, "succeeded");
  std::string path;
  for (const char* place : {"completed", "running", "paused"}) {
    std::string p = DataDir() + "/contexts/" + place + "/" + task + "/metadata.json";
    if (std::filesystem::exists(p)) path = p;
  }
  ASSERT_FALSE(path.empty()) << "no metadata.json for " << task;
  std::ifstream in(path);
  Json meta = Json::parse(std::string(std::istreambuf_iterator<char>(in), {}));
  EXPECT_EQ(meta["config"]["llm_provider"], "default") << meta.dump();
  EXPECT_EQ(meta["config"]["model"], "fake") << meta.dump();
  EXPECT_EQ(meta["config"]["context_length"], 1000000) << meta.dump();
  // The task row says the same (GET /api/local/tasks/{id}; both backends
  // share the statement, the store conformance suite runs it on each).
  Json row = Get("/api/local/tasks/" + task);
  EXPECT_EQ(row["task"]["llm_provider"], "default") << row.dump();
  EXPECT_EQ(row["task"]["model"], "fake") << row.dump();
  EXPECT_EQ(row["task"]["context_length"], 1000000) << row.dump();
}

// Issue 45 item 9: with context_storage.request_json, the body of each LLM
// request is in the context's request.json while it is sent — the exact
// bytes the server received — and the file is gone when the session ends.
TEST_F(TaskLifeTest, RequestJsonHoldsTheBodyBeingSentAndIsRemovedAtTheEnd) {
  extra_config_ = "context_storage:\n  request_json: true\n";
  Json slow = Matching(CompleteOnce("sent"), "RQ-0");
  slow["delay_ms"] = 1500;
  Start(Json::array({slow}), 1);
  Json c = Create("RQ-0 say hello");
  std::string task = c["task"]["id"];
  WaitFakeRequests(1);
  const std::string running = DataDir() + "/contexts/running/" + task + "/request.json";
  ASSERT_TRUE(std::filesystem::exists(running)) << LogTail();
  std::ifstream in(running);
  Json body = Json::parse(std::string(std::istreambuf_iterator<char>(in), {}), nullptr, false);
  ASSERT_TRUE(body.is_object()) << "request.json is the whole body";
  EXPECT_EQ(body["messages"], Messages(FakeRequests()[0]));
  EXPECT_EQ(body["tools"], FakeRequests()[0]["body"]["tools"]);
  LatestJobWhen(task, "succeeded");
  for (const char* place : {"completed", "running", "paused"}) {
    EXPECT_FALSE(
        std::filesystem::exists(DataDir() + "/contexts/" + place + "/" + task + "/request.json"))
        << place;
  }
}

TEST_F(TaskLifeTest, ACommentOnAQueuedJobIsInItsFirstPromptOnce) {
  Json slow = Matching(CompleteOnce("a"), "TASK-A");
  slow["delay_ms"] = 1500;
  slow["repeat"] = 1;
  Start(Json::array({slow, CompleteOnce("b")}), 1);
  Json a = Create("TASK-A first");
  std::this_thread::sleep_for(300ms);
  Json b = Create("TASK-B second");  // the only worker is busy with A
  auto [code, body] = Post(TaskPath(b) + "/comments", {{"body", "EARLY-NOTE use bullet points"}});
  ASSERT_EQ(code, 201) << body.dump();
  EXPECT_EQ(body["outcome"], "reused");
  WaitStatus(b, "succeeded");
  Json reqs = RequestsWith(FakeRequests(), "TASK-B");
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(CountIn(reqs[0], "EARLY-NOTE"), 1) << MessagesText(reqs[0]);
  EXPECT_EQ(Get(TaskPath(b))["jobs"].size(), 1u);  // no follow-up needed
  bool delivered = false;
  for (const auto& cm : Comments(b["task"]["id"])) {
    if (Contains(cm["body"].dump(), "EARLY-NOTE")) delivered = cm.value("delivered_at", 0) > 0;
  }
  EXPECT_TRUE(delivered);
}

TEST_F(TaskLifeTest, AnInterjectionDuringTheFinalTurnIsCarriedIntoAFollowUp) {
  Json slow = Matching(CompleteOnce("first"), "TASK-C");
  slow["delay_ms"] = 1500;
  slow["repeat"] = 1;
  Start(Json::array({slow, CompleteOnce("second")}), 1);
  Json c = Create("TASK-C answer briefly");
  std::this_thread::sleep_for(300ms);
  auto [code, body] = Post(TaskPath(c) + "/comments", {{"body", "LATE-NOTE and in French"}});
  ASSERT_EQ(code, 201) << body.dump();
  ASSERT_EQ(body["outcome"], "interjection");
  Json job = LatestJobWhen(c["task"]["id"], "succeeded");
  EXPECT_NE(job["id"], c["job"]["id"]) << "a follow-up carried the comment";
  Json reqs = FakeRequests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(CountIn(reqs[0], "LATE-NOTE"), 0);
  EXPECT_EQ(CountIn(reqs[1], "LATE-NOTE"), 1) << MessagesText(reqs[1]);
}

// ---- kill points: SIGKILL at an exact boundary, then one effect ----------

TEST_F(TaskLifeTest, KilledAfterAFollowUpIsSeededItsCommentIsDeliveredOnce) {
  StartLife(Json::array({CompleteOnce()}));
  Json c = Create("TASK-K0 start");
  WaitStatus(c, "succeeded");
  ArmCrash("seed.written");
  auto [code, body] = Post(TaskPath(c) + "/comments", {{"body", "K0-NOTE once more"}});
  ASSERT_EQ(code, 201);
  ASSERT_EQ(body["outcome"], "followup");
  ExpectCrashThenRestart();
  WaitJob(
      c["task"]["id"], body["job"]["id"], [](const Json& j) { return j["status"] == "succeeded"; },
      30s);
  Json with = RequestsWith(FakeRequests(), "K0-NOTE");
  ASSERT_EQ(with.size(), 1u) << "the crash came before any request with it";
  EXPECT_EQ(CountIn(with[0], "K0-NOTE"), 1) << MessagesText(with[0]);
  EXPECT_TRUE(Contains(Messages(with[0]).back().dump(), "(The job resumes"));
}

TEST_F(TaskLifeTest, KilledAfterAnInterjectionIsAppendedItIsDeliveredOnce) {
  Json slow = Matching(ToolCallReply("ListDir", Json::object()), "TASK-K1");
  slow["delay_ms"] = 1500;
  StartLife(Json::array({slow, CompleteOnce()}));
  ArmCrash("interjection.appended");
  Json c = Create("TASK-K1 list the files");
  std::this_thread::sleep_for(300ms);
  auto [code, body] = Post(TaskPath(c) + "/comments", {{"body", "K1-NOTE count them too"}});
  ASSERT_EQ(code, 201);
  ASSERT_EQ(body["outcome"], "interjection");
  ExpectCrashThenRestart();
  LatestJobWhen(c["task"]["id"], "succeeded");
  Json with = RequestsWith(FakeRequests(), "K1-NOTE");
  ASSERT_FALSE(with.empty());
  for (const auto& r : with) EXPECT_EQ(CountIn(r, "K1-NOTE"), 1) << MessagesText(r);
}

TEST_F(TaskLifeTest, KilledAfterASubtaskIsCommittedTheChildExistsOnce) {
  Json spin = Matching(
      ToolCallReply("SpinOffTask", {{"title", "child"}, {"instruction", "CHILD-K2 do it"}}),
      "TASK-K2");
  StartLife(Json::array({spin, CompleteOnce()}));
  ArmCrash("spawn.committed");
  Json c = Create("TASK-K2 split the work");
  ExpectCrashThenRestart();
  LatestJobWhen(c["task"]["id"], "succeeded");
  Json tasks = Get("/api/local/tasks")["tasks"];
  EXPECT_EQ(tasks.size(), 2u) << tasks.dump();  // the parent and ONE child
  // The recovered run saw the call answered, not dropped.
  Json after = RequestsWith(FakeRequests(), "TASK-K2");
  ASSERT_FALSE(after.empty());
  EXPECT_EQ(CountIn(after.back(), "Subtask "), 1) << MessagesText(after.back());
}

TEST_F(TaskLifeTest, KilledAfterTheLedgerFinishedACommandItIsNotRunAgain) {
  Json run = Matching(ToolCallReply("RunCommand", {{"command", "echo x >> log.txt"}}), "TASK-K3");
  StartLife(Json::array({run, CompleteOnce()}));
  ArmCrash("tool.finished");
  Json c = Create("TASK-K3 append to the log");
  ExpectCrashThenRestart();
  std::string task = c["task"]["id"];
  LatestJobWhen(task, "succeeded");
  std::ifstream log(DataDir() + "/workspaces/tasks/" + task + "/log.txt");
  std::string all((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_EQ(all, "x\n");
}

TEST_F(TaskLifeTest, KilledRightAfterATransitionTheJobResumesInTheNewMovement) {
  Json to_implement = Matching(ToolCallReply("transition", {{"next", "implement"}}), "TASK-K4");
  Json done_in_implement = Matching(CompleteOnce("implemented"), "# Movement: implement");
  StartLife(Json::array({to_implement, done_in_implement}));
  ArmCrash("movement.entered");
  Json c = Create("TASK-K4 add a greeting", "coding");
  ExpectCrashThenRestart();
  LatestJobWhen(c["task"]["id"], "succeeded");
  Json reqs = FakeRequests();
  ASSERT_EQ(reqs.size(), 2u) << reqs.dump();
  const Json& last = Messages(reqs[1]).back();
  EXPECT_TRUE(Contains(last.dump(), "# Movement: implement")) << MessagesText(reqs[1]);
  EXPECT_TRUE(Contains(last.dump(), "resumes")) << last.dump();
}

// Issue 46 step 4: a job's context directory moves on after its end is
// committed, from the committed status. Killed between the two, the
// directory waits in paused/ under a terminal task; the next start's
// reconcile puts it in completed/.
TEST_F(TaskLifeTest, KilledBetweenAJobsCommitAndItsContextMoveTheNextStartPutsItRight) {
  StartLife(Json::array({CompleteOnce()}));
  ArmCrash("job.committed");
  Json c = Create("TASK-K5 say hello");
  const std::string task = c["task"]["id"];
  auto code = serve_->Wait(std::chrono::seconds(30));
  ASSERT_TRUE(code.has_value()) << "serve did not reach its crash point\n" << LogTail();
  EXPECT_EQ(*code, 128 + SIGKILL);
  const std::string paused = DataDir() + "/contexts/paused/" + task;
  const std::string completed = DataDir() + "/contexts/completed/" + task;
  EXPECT_TRUE(std::filesystem::exists(paused)) << "the kill came before the move";
  EXPECT_FALSE(std::filesystem::exists(completed));
  StartServe();
  EXPECT_EQ(LatestJobWhen(task, "succeeded")["result"], "done") << "committed before the kill";
  EXPECT_TRUE(std::filesystem::exists(completed)) << LogTail();
  EXPECT_FALSE(std::filesystem::exists(paused));
}

}  // namespace
}  // namespace maestro::testing
