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

Json Call(const std::string& name, const Json& args) {
  return {{"name", name}, {"arguments", args}};
}
Json Complete(const Json& args) { return {{"tool_calls", Json::array({Call("complete", args)})}}; }

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
                 {{"tool_calls", Json::array({Call("complete", {{"status", "success"},
                                                                {"result", "RUN-DEFAULT"}})})}}}}
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
    auto tasks = (*store)->ListTasks("", 10);
    EXPECT_TRUE(tasks.ok() && tasks->size() == 1u);
    auto jobs = (*store)->ListJobs(tasks->front().id);
    return jobs.ok() ? *jobs : std::vector<Job>{};
  }

  TempDir dir_;
  std::unique_ptr<FakeLlmProcess> fake_;
};

TEST_F(CliRunTest, ATaskThatEndsWaitingForAPersonExits4WithTheQuestion) {
  auto r = Run(Json::array({Complete(
                   {{"status", "needs_user_input"}, {"question", "RUN-QUESTION which colour?"}})}),
               "pick a colour", 1'000'000);
  EXPECT_EQ(r.code, 4) << r.out << r.err;
  EXPECT_NE(r.err.find("needs you"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("RUN-QUESTION which colour?"), std::string::npos) << r.err;
}

TEST_F(CliRunTest, AFailedTaskExits1) {
  auto r = Run(Json::array({Complete({{"status", "error"}, {"result", "RUN-ABORT cannot"}})}),
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
                     {"tool_calls", Json::array({Call("WriteHandoff", handoff)})}});
  replies.push_back(
      {{"match", {{"any_message_contains", "## Handoff from the previous session"}}},
       {"tool_calls", Json::array({Call("complete", {{"status", "success"},
                                                     {"result", "RUN-CONTINUED done"}})})}});
  for (int i = 0; i < 12; ++i) {
    std::string text;
    while (text.size() < 3'000) text += "step " + std::to_string(i) + " thinking out loud. ";
    replies.push_back(
        {{"text", text},
         {"tool_calls", Json::array({Call("Glob", {{"pattern", "*.n" + std::to_string(i)}})})}});
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
