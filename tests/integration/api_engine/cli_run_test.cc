// `maestro run` against the real maestro-fakellm: it follows the whole task —
// a handoff's continuation job included — and its exit code says how the
// task ended: 0 succeeded, 4 waiting for a person (the question printed),
// 1 failed.
#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>
#include <string>

#include "core/json.h"
#include "fakellm_process.h"
#include "store/sqlite/sqlite_store.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace maestro::testing {
namespace {

using namespace std::chrono_literals;

// One entry of a scripted reply's tool_calls array.
Json CallEntry(const std::string& name, const Json& args) {
  return {{"name", name}, {"arguments", args}};
}

struct RunResult {
  int code = -1;
  std::string out, err;
};

class CliRunTest : public ::testing::Test {
 protected:
  // Starts the fake with `replies` (JSON script) and runs
  // `maestro run <instruction>` to its end.
  RunResult Run(const Json& replies, const std::string& instruction, int context_length) {
    std::ofstream(dir_.File("script.json"))
        << Json{{"replies", replies},
                {"default",
                 {{"tool_calls",
                   Json::array({CallEntry("complete",
                                          {{"status", "success"}, {"result", "RUN-DEFAULT"}})})}}}}
               .dump();
    fake_ = std::make_unique<FakeLlmProcess>(
        std::vector<std::string>{"--script", dir_.File("script.json")});
    std::ofstream(dir_.File("maestro.yaml"))
        << "jobs:\n  poll_interval_ms: 50\n  heartbeat_ms: 200\n"
        << "llm:\n  base_url: " << fake_->base_url() << "\n  model: fake\n  max_attempts: 1\n"
        << "  context_length: " << context_length << "\n";
    Process p({MAESTRO_BIN, "--config", dir_.File("maestro.yaml"), "run", instruction},
              {{"MAESTRO_DATA_DIR", dir_.File("data")}}, dir_.File("run.out"),
              dir_.File("run.err"));
    auto code = p.Wait(90s);
    return {code.value_or(-1), p.Stdout(), p.Stderr()};
  }
  Json FakeRequests() const {
    httplib::Client c("127.0.0.1", fake_->port());
    auto r = c.Get("/v1/_requests");
    return r && r->status == 200 ? Json::parse(r->body)["requests"] : Json::array();
  }
  std::vector<Job> Jobs() const {
    auto store = SqliteStore::Open(dir_.File("data/maestro.db"), StoreOptions{});
    EXPECT_TRUE(store.ok());
    auto tasks = (*store)->ListTasks(std::nullopt, 10);
    EXPECT_TRUE(tasks.ok() && tasks->size() == 1u);
    auto jobs = (*store)->ListJobs(tasks->front().id);
    return jobs.ok() ? *jobs : std::vector<Job>{};
  }

  TempDir dir_;
  std::unique_ptr<FakeLlmProcess> fake_;
};

TEST_F(CliRunTest, ATaskThatEndsWaitingForAPersonExits4WithTheQuestion) {
  auto r = Run(Json::array({CompleteReply(
                   {{"status", "needs_user_input"}, {"question", "RUN-QUESTION which colour?"}})}),
               "pick a colour", 1'000'000);
  EXPECT_EQ(r.code, 4) << r.out << r.err;
  EXPECT_NE(r.err.find("needs you"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("RUN-QUESTION which colour?"), std::string::npos) << r.err;
}

// The hint names the data dir and the exact commands; run as printed (with
// the test's port), a server on that data dir takes the answer and finishes
// the task.
TEST_F(CliRunTest, TheWaitHintSaysHowToAnswerAndThatWorks) {
  Json answer = CompleteReply({{"status", "success"}, {"result", "HINT-DONE red"}});
  answer["match"] = {{"last_message_contains", "HINT-ANSWER"}};
  auto r =
      Run(Json::array(
              {CompleteReply({{"status", "needs_user_input"}, {"question", "HINT-Q?"}}), answer}),
          "pick a colour", 1'000'000);
  ASSERT_EQ(r.code, 4) << r.err;
  const std::string env = "MAESTRO_DATA_DIR=" + dir_.File("data") + " ";
  const std::string serve_line = env + "maestro --config " + dir_.File("maestro.yaml") + " serve";
  ASSERT_NE(r.err.find("  " + serve_line + "\n"), std::string::npos) << r.err;
  auto tasks = Jobs();
  ASSERT_EQ(tasks.size(), 1u);
  const std::string task = tasks[0].task_id;
  const std::string comment_line = env + "maestro task comment " + task + " \"<answer>\"";
  ASSERT_NE(r.err.find("  " + comment_line + "\n"), std::string::npos) << r.err;

  const std::string listen = "127.0.0.1:" + std::to_string(FreePort());
  Process serve({MAESTRO_BIN, "--config", dir_.File("maestro.yaml"), "serve"},
                {{"MAESTRO_DATA_DIR", dir_.File("data")}, {"MAESTRO_LISTEN", listen}},
                dir_.File("serve.out"), dir_.File("serve.err"));
  httplib::Client c(listen.substr(0, listen.find(':')), std::stoi(listen.substr(10)));
  for (int i = 0; i < 1000; ++i) {
    if (auto h = c.Get("/api/health"); h && h->status == 200) break;
    std::this_thread::sleep_for(10ms);
  }
  // The printed command, with "<answer>" filled in; the token comes from the
  // data dir the server just wrote its admin_token into.
  auto [code, out] =
      RunCommand({MAESTRO_BIN, "task", "comment", task, "HINT-ANSWER red"},
                 {{"MAESTRO_DATA_DIR", dir_.File("data")}, {"MAESTRO_SERVER", "http://" + listen}},
                 dir_.File("comment"));
  ASSERT_EQ(code, 0) << out << serve.Stderr();
  for (int i = 0; i < 2000; ++i) {
    auto jobs = Jobs();
    if (jobs.size() == 2u && jobs[1].status == JobStatus::kSucceeded) break;
    std::this_thread::sleep_for(10ms);
  }
  auto jobs = Jobs();
  ASSERT_EQ(jobs.size(), 2u) << serve.Stderr();
  EXPECT_EQ(jobs[1].result, "HINT-DONE red");
}

TEST_F(CliRunTest, AFailedTaskExits1) {
  auto r = Run(Json::array({CompleteReply({{"status", "error"}, {"result", "RUN-ABORT cannot"}})}),
               "do the impossible", 1'000'000);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("ended failed"), std::string::npos) << r.err;
}

// A small context: replies with long text grow the conversation past the
// handoff threshold (0.6), the engine asks for WriteHandoff, the job ends
// "succeeded" with a continuation queued — and `run` waits for that
// continuation's result instead of exiting with the handoff.
TEST_F(CliRunTest, RunFollowsAHandoffContinuationToItsEnd) {
  Json handoff = {{"spec_ref", "the task instruction"},
                  {"status",
                   {{"completed", {"looked for files"}},
                    {"in_progress", Json::array()},
                    {"pending", {"the answer"}}}},
                  {"decisions", Json::array()},
                  {"blockers", Json::array()},
                  {"files_changed", Json::array()}};
  Json replies = Json::array();
  replies.push_back({{"match", {{"last_message_contains", "context is nearly full"}}},
                     {"tool_calls", Json::array({CallEntry("WriteHandoff", handoff)})}});
  replies.push_back(
      {{"match", {{"any_message_contains", "## Handoff from the previous session"}}},
       {"tool_calls", Json::array({CallEntry("complete", {{"status", "success"},
                                                          {"result", "RUN-CONTINUED done"}})})}});
  for (int i = 0; i < 12; ++i) {
    std::string text;
    while (text.size() < 3'000) text += "step " + std::to_string(i) + " thinking out loud. ";
    replies.push_back({{"text", text},
                       {"tool_calls", Json::array({CallEntry(
                                          "Glob", {{"pattern", "*.n" + std::to_string(i)}})})}});
  }
  auto r = Run(replies, "Find the notes and answer.", 12'000);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("RUN-CONTINUED done"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(r.out.find("RUN-DEFAULT"), std::string::npos) << "never handed off: " << r.out;
  EXPECT_NE(r.err.find("[next job "), std::string::npos) << r.err;
  auto jobs = Jobs();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].result.rfind("handoff 0001.yaml; continued in job ", 0), 0u) << jobs[0].result;
  EXPECT_EQ(jobs[1].continued_from_job_id, jobs[0].id);
  EXPECT_EQ(jobs[1].status, JobStatus::kSucceeded);
  EXPECT_EQ(jobs[1].result, "RUN-CONTINUED done");
}

}  // namespace
}  // namespace maestro::testing
