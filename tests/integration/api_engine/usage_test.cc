// Issue 17 "Daily use" against the real `maestro serve` + `maestro-fakellm`:
// usage and cost per task and job from a price table, automatic titles and
// PATCH, the 404s of malformed ids, and the /metrics additions.
#include <cmath>

#include "serve_fixture.h"

namespace maestro::testing {
namespace {

class UsageTest : public ServeEngineTest {
 protected:
  // USD per million tokens of the default profile; "free" has no price.
  static constexpr double kInput = 2.0, kCached = 0.5, kOutput = 8.0;
  void StartPriced(const Json& replies) {
    extra_llm_config_ = "  price: {input: 2, cached_input: 0.5, output: 8}\n";
    extra_config_ = "llm_profiles:\n  free:\n    base_url: {llm_base_url}\n    model: fake\n";
    Start(replies, 1);
  }

  // The llm.call payload sums of one job, from the task's events.
  struct Sums {
    int64_t calls = 0, prompt = 0, cached = 0, completion = 0, ms = 0;
  };
  Sums FromEvents(const std::string& task_id, const std::string& job_id) const {
    Sums s;
    for (const auto& e : Events(task_id)) {
      if (e["type"] != "llm.call" || e["job_id"] != job_id) continue;
      ++s.calls;
      s.prompt += e["payload"]["promptTokens"].get<int64_t>();
      s.cached += e["payload"]["cachedPromptTokens"].get<int64_t>();
      s.completion += e["payload"]["completionTokens"].get<int64_t>();
      s.ms += e["payload"]["totalMs"].get<int64_t>();
    }
    return s;
  }
  static double Cost(const Sums& s) {
    return ((s.prompt - s.cached) * kInput + s.cached * kCached + s.completion * kOutput) / 1e6;
  }
  static void ExpectUsage(const Json& u, const Sums& s, const std::string& what) {
    EXPECT_EQ(u["llm_calls"], s.calls) << what << " " << u.dump();
    EXPECT_EQ(u["prompt_tokens"], s.prompt) << what;
    EXPECT_EQ(u["cached_tokens"], s.cached) << what;
    EXPECT_EQ(u["completion_tokens"], s.completion) << what;
    EXPECT_EQ(u["model_ms"], s.ms) << what;
    double pct = s.prompt > 0 ? std::round(1000.0 * s.cached / s.prompt) / 10.0 : 0.0;
    EXPECT_DOUBLE_EQ(u["cache_hit_pct"].get<double>(), pct) << what;
    EXPECT_EQ(u["currency"], "USD") << what;
  }
};

TEST_F(UsageTest, TaskAndJobUsageAndCostComeFromTheCallsAndThePriceTable) {
  StartPriced(Json::array({ToolCallReply("ListDir", Json::object()), SucceedReply("listed"),
                           SucceedReply("again"), SucceedReply("free one")}));
  Json a = Create("PRICED list the files");
  WaitStatus(a, "succeeded");
  const std::string task = a["task"]["id"];
  // A follow-up job on the same task: the task adds up two jobs.
  auto [code, follow] = Post(TaskPath(a) + "/comments", {{"body", "once more"}});
  ASSERT_EQ(code, 201) << follow.dump();
  const std::string job2 = follow["job"]["id"];
  WaitJob(task, job2, [](const Json& j) { return j["status"] == "succeeded"; });
  auto [bcode, b] = Post("/api/local/tasks", {{"instruction", "FREE task"}, {"profile", "free"}});
  ASSERT_EQ(bcode, 201) << b.dump();
  WaitStatus(b, "succeeded");

  Sums s1 = FromEvents(task, a["job"]["id"]);
  Sums s2 = FromEvents(task, job2);
  ASSERT_EQ(s1.calls, 2) << "ListDir, then complete";
  ASSERT_EQ(s2.calls, 1);
  ASSERT_GT(s1.prompt, 0);
  ASSERT_GT(s1.cached, 0) << "the second call reuses the fake's prompt cache";
  ASSERT_GT(s1.completion, 0);

  Json detail = Get(TaskPath(a));
  ASSERT_EQ(detail["jobs"].size(), 2u) << detail.dump();
  for (const auto& j : detail["jobs"]) {
    const Sums& s = j["id"] == a["job"]["id"] ? s1 : s2;
    ExpectUsage(j["usage"], s, "job " + j["id"].get<std::string>());
    EXPECT_NEAR(j["usage"]["cost"].get<double>(), Cost(s), 1e-9) << j["usage"].dump();
  }
  ExpectUsage(detail["latest_job"]["usage"], s2, "latest_job");
  Sums total{s1.calls + s2.calls, s1.prompt + s2.prompt, s1.cached + s2.cached,
             s1.completion + s2.completion, s1.ms + s2.ms};
  ExpectUsage(detail["task"]["usage"], total, "task");
  EXPECT_NEAR(detail["task"]["usage"]["cost"].get<double>(), Cost(s1) + Cost(s2), 1e-9);
  EXPECT_GT(detail["task"]["usage"]["cost"].get<double>(), 0.0);

  // A job on a profile without a price: its cost, and its task's, is unknown.
  Json bdetail = Get(TaskPath(b));
  EXPECT_EQ(bdetail["jobs"][0]["profile"], "free");
  EXPECT_EQ(bdetail["jobs"][0]["usage"]["llm_calls"], 1);
  EXPECT_TRUE(bdetail["jobs"][0]["usage"]["cost"].is_null()) << bdetail.dump();
  EXPECT_TRUE(bdetail["task"]["usage"]["cost"].is_null());

  // The list carries the same usage on each task.
  Json list = Get("/api/local/tasks")["tasks"];
  ASSERT_EQ(list.size(), 2u);
  for (const auto& t : list) {
    const Json& want = t["id"] == task ? detail["task"]["usage"] : bdetail["task"]["usage"];
    EXPECT_EQ(t["usage"], want) << t.dump();
  }
}

TEST_F(UsageTest, TitlesArePatchableAndMalformedIdsAreNoSuchTask) {
  Start(Json::array({SucceedReply("done")}), 1);
  Json c = Create("\n## Weekly report\nwith the numbers");
  EXPECT_EQ(c["task"]["title"], "Weekly report") << "named from its instruction at creation";
  const std::string path = TaskPath(c);

  auto patch = [&](const std::string& p, const std::string& body, const std::string& token) {
    httplib::Client h("127.0.0.1", port_);
    h.set_bearer_token_auth(token);
    auto r = h.Patch(p, body, "application/json");
    return r ? std::pair<int, Json>{r->status, Json::parse(r->body, nullptr, false)}
             : std::pair<int, Json>{0, Json()};
  };
  auto [code, renamed] = patch(path, R"({"title":"  Q3 numbers  "})", "tok");
  ASSERT_EQ(code, 200) << renamed.dump();
  EXPECT_EQ(renamed["task"]["title"], "Q3 numbers");
  EXPECT_TRUE(renamed["task"].contains("usage"));
  EXPECT_EQ(Get(path)["task"]["title"], "Q3 numbers");
  bool updated = false;
  for (const auto& e : Events(c["task"]["id"])) {
    updated = updated || (e["type"] == "task.updated" && e["payload"]["title"] == "Q3 numbers");
  }
  EXPECT_TRUE(updated) << "a task.updated event for live views";

  struct Bad {
    std::string body, field;
  };
  for (const Bad& b : std::vector<Bad>{{R"({"title":""})", "title"},
                                       {R"({"title":"   "})", "title"},
                                       {R"({"title":5})", "title"},
                                       {R"({})", "title"},
                                       {R"({"title":"a\nb"})", "title"},
                                       {"{\"title\":\"" + std::string(201, 'x') + "\"}", "title"},
                                       {R"({"title":"ok","colour":"red"})", "colour"},
                                       {"not json", "body"}}) {
    auto [bcode, err] = patch(path, b.body, "tok");
    EXPECT_EQ(bcode, 400) << b.body << " " << err.dump();
    EXPECT_EQ(err["error"]["field"], b.field) << b.body << " " << err.dump();
  }
  EXPECT_EQ(Get(path)["task"]["title"], "Q3 numbers") << "refused patches change nothing";

  // Another user's private task, and an unknown id: 404 like every task route.
  auto [tcode, tok] = Post("/api/local/tokens", {{"user", "bob"}});
  ASSERT_EQ(tcode, 201) << tok.dump();
  auto [hidden, hidden_body] = patch(path, R"({"title":"mine now"})", tok["token"]);
  EXPECT_EQ(hidden, 404) << hidden_body.dump();
  const std::string unknown = "00000000-0000-4000-8000-000000000000";
  auto [ucode, ubody] = patch("/api/local/tasks/" + unknown, R"({"title":"x"})", "tok");
  EXPECT_EQ(ucode, 404);
  EXPECT_EQ(ubody["error"]["message"], "no such task: " + unknown) << ubody.dump();
  auto [gcode, gbody] = GetWithStatus("/api/local/tasks/" + unknown);
  EXPECT_EQ(gcode, 404);
  EXPECT_EQ(gbody["error"]["message"], "no such task: " + unknown) << gbody.dump();

  // Malformed ids: "no such task|job", never "no such route".
  for (const auto& [p, message] : std::vector<std::pair<std::string, std::string>>{
           {"/api/local/tasks/not-a-uuid", "no such task: not-a-uuid"},
           {"/api/local/tasks/not-a-uuid/comments", "no such task: not-a-uuid"},
           {"/api/local/tasks/%0Aevil/events", "no such task: %0Aevil"},
           {"/api/local/tasks/" + std::string(100, 'z'),
            "no such task: " + std::string(64, 'z') + "…"},
           {"/api/local/jobs/bad!/stream", "no such job: bad!"},
           {"/api/local/jobs/x", "no such job: x"}}) {
    auto [mcode, mbody] = GetWithStatus(p);
    EXPECT_EQ(mcode, 404) << p;
    EXPECT_EQ(mbody["error"]["code"], "NOT_FOUND") << p << " " << mbody.dump();
    EXPECT_EQ(mbody["error"]["message"], message) << p << " " << mbody.dump();
  }
  auto [mpcode, mpbody] = patch("/api/local/tasks/nope", R"({"title":"x"})", "tok");
  EXPECT_EQ(mpcode, 404);
  EXPECT_EQ(mpbody["error"]["message"], "no such task: nope");
  // Still 401 first without a token; other unknown paths stay "no such route".
  EXPECT_EQ(GetWithStatus("/api/local/tasks/not-a-uuid", "").first, 401);
  auto [rcode, rbody] = GetWithStatus(path + "/nothing-here");
  EXPECT_EQ(rcode, 404);
  EXPECT_EQ(rbody["error"]["message"], "no such route");
}

TEST_F(UsageTest, MetricsHaveBuildInfoLlmLatencyAndHttpRequestsByRoute) {
  Json slow = SucceedReply("done");
  slow["delay_ms"] = 300;
  Start(Json::array({ToolCallReply("ListDir", Json::object()), slow}), 1);
  Json c = Create("measure me");
  WaitStatus(c, "succeeded");
  for (int i = 0; i < 3; ++i) Get(TaskPath(c));
  GetWithStatus("/api/local/tasks/not-a-uuid");
  GetWithStatus("/api/local/nothing");

  auto r = Client().Get("/metrics");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  const std::string& m = r->body;
  Json health = Get("/api/health");
  EXPECT_TRUE(Contains(m, "maestro_build_info{version=\"" + health["version"].get<std::string>() +
                              "\",schema=\"" + std::to_string(health["schema_version"].get<int>()) +
                              "\",backend=\"sqlite\"} 1\n"))
      << m;
  EXPECT_TRUE(Contains(m, "# TYPE maestro_llm_request_duration_seconds histogram")) << m;
  EXPECT_TRUE(Contains(m, "maestro_llm_request_duration_seconds_count 2\n")) << m;
  EXPECT_TRUE(Contains(m, "maestro_llm_request_duration_seconds_bucket{le=\"+Inf\"} 2\n")) << m;
  EXPECT_TRUE(Contains(m, "maestro_llm_request_duration_seconds_bucket{le=\"60\"} 2\n")) << m;
  // The 300 ms reply is above the 0.25 s bucket.
  EXPECT_FALSE(Contains(m, "maestro_llm_request_duration_seconds_bucket{le=\"0.25\"} 2\n")) << m;
  EXPECT_TRUE(Contains(m, "# TYPE maestro_llm_ttft_seconds histogram")) << m;
  EXPECT_TRUE(Contains(m, "maestro_llm_ttft_seconds_count 2\n")) << m;
  // The router's counters: by pattern, never by raw path.
  EXPECT_TRUE(Contains(m,
                       "maestro_http_requests_total{method=\"GET\",route=\"/api/local/tasks/"
                       "{uuid}\",code=\"200\"}"))
      << m;
  EXPECT_TRUE(Contains(
      m,
      "maestro_http_requests_total{method=\"POST\",route=\"/api/local/tasks\",code=\"201\"} 1\n"))
      << m;
  EXPECT_TRUE(Contains(
      m, "maestro_http_requests_total{method=\"GET\",route=\"unmatched\",code=\"404\"} 2\n"))
      << m;
  EXPECT_FALSE(Contains(m, c["task"]["id"].get<std::string>())) << "no raw ids in labels";
  EXPECT_FALSE(Contains(m, "not-a-uuid"));
}

}  // namespace
}  // namespace maestro::testing
