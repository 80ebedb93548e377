// A coding task end to end on the Anthropic Messages and Gemini fakes of
// maestro-fakellm (issue 50): real `maestro serve` with a profile whose
// `provider` is anthropic or gemini. The walk: a transition plan ->
// implement, a tool approval park and its resume in the same job, the
// approved command, `complete`, then a Continue. Every request must reach the
// provider's route and pass the fake's validation of the provider's wire
// format; every request after the first of a job reads back the whole prompt
// of the request before it (on Anthropic from the breakpoint that request
// wrote), and the task's figures
// (llm.call events, the job's usage and cost) carry the cache reads and
// writes as they do for every provider.
#include "serve_fixture.h"

namespace maestro::testing {
namespace {

class ProviderTaskTest : public ServeEngineTest, public ::testing::WithParamInterface<const char*> {
 protected:
  std::string provider() const { return GetParam(); }
  // The route the fake must have seen for every request.
  std::string Route() const {
    return provider() == "anthropic" ? "/v1/messages" : "/v1beta/models/fake:streamGenerateContent";
  }
};

TEST_P(ProviderTaskTest, CodingTaskWithAnApprovalParkAndAContinueRunsOnTheProvider) {
  llm_provider_ = provider();
  // Anthropic-like prices: a cache read 0.1x input, a 5-minute write 1.25x.
  extra_llm_config_ =
      "  price:\n    input: 3\n    cached_input: 0.3\n    cache_write: 3.75\n    output: 15\n";
  Json args = {{"command", "echo granted-50"}, {"network", true}};
  Json park = ToolCallReply("RequestTool",
                            {{"tool", "RunCommand"}, {"arguments", args}, {"reason", "net"}});
  Json replies = Json::array({ToolCallReply("transition", {{"next", "implement"}}), park, park,
                              ToolCallReply("RunCommand", args), SucceedReply("changed"),
                              Matching(SucceedReply("continued"), "CONT-50")});
  for (auto& r : replies) r["repeat"] = 1;
  Start(replies);

  Json c = Create("make the change", "coding");
  Json parked = WaitStatus(c, "waiting_human");
  EXPECT_EQ(parked["resume_movement"], "implement");
  Json pending = Get(TaskPath(c) + "/tool-requests")["requests"];
  ASSERT_EQ(pending.size(), 1u) << pending.dump();
  auto [code, decided] =
      Post(TaskPath(c) + "/tool-requests/" + pending[0]["id"].get<std::string>() + "/decide",
           {{"decision", "approve"}, {"scope", "once"}});
  ASSERT_EQ(code, 200) << decided.dump();
  WaitStatus(c, "succeeded");
  auto [k, cont] = Post(TaskPath(c) + "/continue", {{"note", "CONT-50 one more thing"}});
  ASSERT_EQ(k, 201) << cont.dump();
  const std::string task = c["task"]["id"];
  WaitJob(task, cont["job"]["id"], [](const Json& j) { return j["status"] == "succeeded"; });

  // Six requests: transition, the park, its re-issue after the resume
  // (answered as approved), the command, complete; the Continue's complete.
  Json reqs = FakeRequests();
  ASSERT_EQ(reqs.size(), 6u) << LogTail();
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(reqs[i]["path"], Route()) << i;
    EXPECT_EQ(reqs[i]["status"], 200) << i << ": " << reqs[i].dump().substr(0, 2000);
  }
  EXPECT_TRUE(Contains(reqs[4]["body"].dump(), "granted-50")) << "the approved command ran";

  // The llm.call events: what the UI's feed shows per call and sums per job.
  Json calls = Json::array();
  for (const auto& e : Events(task)) {
    if (e["type"] == "llm.call") calls.push_back(e);
  }
  ASSERT_EQ(calls.size(), 6u);
  int64_t written = 0;
  for (size_t i = 0; i < calls.size(); ++i) {
    const Json& p = calls[i]["payload"];
    const double prompt = p["promptTokens"].get<double>();
    const double cached = p["cachedPromptTokens"].get<double>();
    written += p["cacheWritePromptTokens"].get<int64_t>();
    EXPECT_EQ(p["promptTokens"], reqs[i]["cache"]["prompt_tokens"]) << i;
    EXPECT_EQ(p["cachedPromptTokens"], reqs[i]["cache"]["cache_read"]) << i;
    // After the first request of a job, each reads back the whole prompt the
    // request before it sent (Anthropic from the breakpoint it wrote there,
    // Gemini implicitly): only what the turn added is paid in full — here
    // a movement's guidance or the resume note makes that up to 9%.
    const bool first_of_job = i == 0 || i == 5;
    if (!first_of_job) {
      EXPECT_GE(cached, reqs[i - 1]["cache"]["prompt_tokens"].get<double>())
          << "request " << i << ": " << reqs[i]["cache"].dump();
      EXPECT_GE(cached / prompt, 0.90) << "request " << i << ": " << reqs[i]["cache"].dump();
    }
  }
  // Anthropic writes what its breakpoints mark; Gemini caches implicitly.
  if (provider() == "anthropic") {
    EXPECT_GT(written, 0);
  } else {
    EXPECT_EQ(written, 0);
  }

  // The job's usage (the UI's cache-hit figure and cost) from the same calls.
  Json view = Get(TaskPath(c));
  Json first_job;
  for (const auto& j : view["jobs"]) {
    if (j["id"] == c["job"]["id"]) first_job = j;
  }
  ASSERT_TRUE(first_job.is_object()) << view.dump();
  const Json& u = first_job["usage"];
  EXPECT_EQ(u["llm_calls"], 5);
  int64_t prompt = 0, cached = 0, write = 0, out = 0;
  for (size_t i = 0; i < 5; ++i) {
    prompt += calls[i]["payload"]["promptTokens"].get<int64_t>();
    cached += calls[i]["payload"]["cachedPromptTokens"].get<int64_t>();
    write += calls[i]["payload"]["cacheWritePromptTokens"].get<int64_t>();
    out += calls[i]["payload"]["completionTokens"].get<int64_t>();
  }
  EXPECT_EQ(u["prompt_tokens"], prompt);
  EXPECT_EQ(u["cached_tokens"], cached);
  EXPECT_EQ(u["cache_write_tokens"], write);
  const double cost =
      ((prompt - cached - write) * 3.0 + cached * 0.3 + write * 3.75 + out * 15.0) / 1e6;
  EXPECT_NEAR(u["cost"].get<double>(), cost, 1e-9);
  EXPECT_GT(u["cache_hit_pct"].get<double>(), provider() == "anthropic" ? 70.0 : 0.0) << u.dump();
}

INSTANTIATE_TEST_SUITE_P(Providers, ProviderTaskTest, ::testing::Values("anthropic", "gemini"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace maestro::testing
