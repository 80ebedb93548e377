// A prefix shared across tasks (issue 19 item 1): every workspace is shown to
// the model at /workspace, so two tasks of one piece — each in its own
// ephemeral workspace — send byte-identical system text and tools, and the
// second task's first request reuses the LLM server's cache of the first up
// to its dynamic user message. Measured on maestro-fakellm's llama-server
// cache model (one slot, Qwen3 rendering).
#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>

#include "cache_figures.h"
#include "engine_rig.h"
#include "support/temp_dir.h"

namespace maestro::engine {
namespace {

using maestro::testing::FakeLlmProcess;
using maestro::testing::TempDir;
using test::PrefixTokens;
using test::ServerRequests;

TEST(CrossTaskCache, TheSecondTaskReusesThePrefixUpToItsDynamicMessage) {
  TempDir dir;
  Json done = {
      {"tool_calls", Json::array({{{"name", "complete"},
                                   {"arguments", {{"status", "success"}, {"result", "ok"}}}}})}};
  std::ofstream(dir.File("script.json"))
      << Json{{"replies", Json::array({done, done})}, {"default", {{"text", "exhausted"}}}}.dump();
  FakeLlmProcess fake({"--script", dir.File("script.json"), "--slots", "1"});
  std::filesystem::create_directories(dir.File("proj"));
  test::EngineRig rig;
  rig.Start(dir.path(), tools::Space{"proj", dir.File("proj"), {}}, fake.base_url(), 100'000);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());

  for (const char* instruction : {"Summarize the notes.", "List the open questions."}) {
    NewTask t;
    t.instruction = instruction;
    t.piece = "coding";  // no space: each task gets its own ephemeral workspace
    auto created = rig.store().CreateTask(t);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    rig.pool().Notify();
    Job job = rig.WaitForEnd(created->job.id);
    ASSERT_EQ(job.status, JobStatus::kSucceeded) << job.error_message;
  }
  Json reqs = ServerRequests(fake);
  ASSERT_EQ(reqs.size(), 2u);
  const Json& first = reqs[0]["body"];
  const Json& second = reqs[1]["body"];
  EXPECT_EQ(first["messages"][0], second["messages"][0]);  // the system text
  EXPECT_EQ(first["tools"].dump(), second["tools"].dump());
  EXPECT_NE(first["messages"][0]["content"].get<std::string>().find("/workspace"),
            std::string::npos);
  const int64_t prefix = PrefixTokens(second);
  const int64_t reused = reqs[1]["cache"]["cache_n"].get<int64_t>();
  RecordProperty("prefix_tokens", static_cast<int>(prefix));
  RecordProperty("reused_tokens", static_cast<int>(reused));
  EXPECT_GE(static_cast<double>(reused), 0.9 * static_cast<double>(prefix))
      << "reused " << reused << " of a " << prefix << "-token prefix; cache "
      << reqs[1]["cache"].dump();
}

}  // namespace
}  // namespace maestro::engine
