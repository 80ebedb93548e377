// Issue 18 budgets and quotas against the real `maestro serve` +
// `maestro-fakellm`: a task parks on its max_tokens BEFORE the call that
// would pass it (the fake gets no request for that step), the raise resumes
// the same job in the same movement with the prompt prefix cached, cancel
// still stops a budget-parked job, the 400s of the budget field and route,
// the daily-quota 429 with Retry-After, and the /metrics counters.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>

#include "serve_fixture.h"

namespace maestro::testing {
namespace {

const Json& Messages(const Json& logged) { return logged["body"]["messages"]; }

class BudgetTest : public ServeEngineTest {
 protected:
  Json LatestJob(const Json& created) { return Get(TaskPath(created))["latest_job"]; }
  int64_t Metric(const std::string& name) {
    httplib::Client c("127.0.0.1", port_);
    c.set_bearer_token_auth("tok");
    auto r = c.Get("/metrics");
    if (!r) return -1;
    auto at = r->body.find("\n" + name + " ");
    if (at == std::string::npos) return -1;
    return std::stoll(r->body.substr(at + name.size() + 2));
  }
};

TEST_F(BudgetTest, ParksBeforeTheCallThatWouldPassMaxTokensAndResumesTheSameMovement) {
  Start(Json::array({ToolCallReply("ListDir", Json::object()), SucceedReply("calibrated"),
                     ToolCallReply("ListDir", Json::object()), SucceedReply("done in budget"),
                     ToolCallReply("ListDir", Json::object())}),
        1);
  // Calibration: the same conversation without a budget tells what the
  // first call costs (the fake is deterministic).
  Json cal = Create("BUDGET-A list the files please");
  WaitStatus(cal, "succeeded");
  int64_t first = 0;
  for (const auto& e : Events(cal["task"]["id"])) {
    if (e["type"] == "llm.call") {
      first = e["payload"]["promptTokens"].get<int64_t>() +
              e["payload"]["completionTokens"].get<int64_t>();
      break;
    }
  }
  ASSERT_GT(first, 0);
  ASSERT_EQ(FakeRequests().size(), 2u);

  // Room for the first call, not for the second (its prompt is the first's
  // plus the reply and the tool result).
  const int64_t max_tokens = first * 3 / 2;
  auto [code, created] =
      Post("/api/local/tasks", {{"instruction", "BUDGET-B list the files please"},
                                {"budget", {{"max_tokens", max_tokens}}}});
  ASSERT_EQ(code, 201) << created.dump();
  EXPECT_EQ(created["task"]["budget"]["max_tokens"], max_tokens);
  const std::string task = created["task"]["id"];
  const std::string job = created["job"]["id"];
  Json parked = WaitJob(task, job, [](const Json& j) { return j["status"] == "waiting_human"; });
  EXPECT_EQ(parked["wait_reason"], "budget_exceeded") << parked.dump();
  const std::string movement = parked["resume_movement"];
  EXPECT_FALSE(movement.empty());
  // The call that would pass the budget was never made.
  std::this_thread::sleep_for(300ms);
  Json reqs = FakeRequests();
  ASSERT_EQ(reqs.size(), 3u) << "the first call of the budgeted task only";

  // What the budgeted task spent: its one llm.call event.
  int64_t spent = 0, calls = 0;
  for (const auto& e : Events(task)) {
    if (e["type"] != "llm.call") continue;
    ++calls;
    spent += e["payload"]["promptTokens"].get<int64_t>() +
             e["payload"]["completionTokens"].get<int64_t>();
  }
  ASSERT_EQ(calls, 1);
  Json detail = Get("/api/local/tasks/" + task);
  const Json& b = detail["task"]["budget"];
  EXPECT_EQ(b["max_tokens"], max_tokens) << b.dump();
  EXPECT_EQ(b["spent"]["llm_calls"], 1);
  EXPECT_EQ(b["spent"]["tokens"], spent);
  bool event = false;
  for (const auto& e : Events(task)) {
    if (e["type"] != "budget.exceeded") continue;
    event = true;
    EXPECT_EQ(e["payload"]["which"], "max_tokens");
    EXPECT_EQ(e["payload"]["spent"].get<double>(), static_cast<double>(spent));
    EXPECT_EQ(e["payload"]["limit"].get<double>(), static_cast<double>(max_tokens));
    EXPECT_GT(spent + e["payload"]["next"].get<double>(), static_cast<double>(max_tokens));
  }
  EXPECT_TRUE(event);
  bool note = false;
  const Json comments = Get("/api/local/tasks/" + task + "/comments")["comments"];
  for (const auto& c : comments) {
    const std::string body = c["body"];
    if (c["author"] == "system" &&
        body.find(fmt::format("spent {} of {} tokens", spent, max_tokens)) != std::string::npos &&
        body.find("raise the budget or stop") != std::string::npos) {
      note = true;
    }
  }
  EXPECT_TRUE(note) << comments.dump();
  EXPECT_EQ(Metric("maestro_budget_exceeded_total"), 1);

  // The raise route's refusals.
  auto [bad, badj] = Post("/api/local/tasks/" + task + "/budget", {{"max_tokenz", 5}});
  EXPECT_EQ(bad, 400);
  EXPECT_EQ(badj["error"]["field"], "max_tokenz") << badj.dump();
  auto [neg, negj] = Post("/api/local/tasks/" + task + "/budget", {{"max_tokens", -3}});
  EXPECT_EQ(neg, 400);
  EXPECT_EQ(negj["error"]["field"], "max_tokens");
  auto [low, lowj] = Post("/api/local/tasks/" + task + "/budget", {{"max_tokens", spent + 1}});
  EXPECT_EQ(low, 409) << lowj.dump() << ": the raised limit still stops the call";
  EXPECT_EQ(LatestJob(created)["status"], "waiting_human");

  // Raise: the same job resumes the same movement and finishes.
  auto [raised, rj] = Post("/api/local/tasks/" + task + "/budget", {{"max_tokens", 1000000}});
  ASSERT_EQ(raised, 200) << rj.dump();
  EXPECT_EQ(rj["task"]["budget"]["max_tokens"], 1000000);
  Json done = WaitJob(task, job, [](const Json& j) { return j["status"] == "succeeded"; });
  EXPECT_EQ(done["result"], "done in budget");
  reqs = FakeRequests();
  ASSERT_EQ(reqs.size(), 4u);
  // The resumed request carries the whole conversation before the park, byte
  // for byte, and the fake's cache served (nearly) all of it.
  const Json& before = Messages(reqs[2]);
  const Json& after = Messages(reqs[3]);
  ASSERT_GT(after.size(), before.size());
  for (size_t m = 0; m < before.size(); ++m) EXPECT_EQ(after[m], before[m]) << m;
  const int64_t cached = reqs[3]["cache"]["cache_n"];
  const int64_t prev = reqs[2]["cache"]["prompt_tokens"];
  const int64_t now_prompt = reqs[3]["cache"]["prompt_tokens"];
  std::printf(
      "budget resume: cached %lld of the previous request's %lld prompt tokens (%.2f%%); "
      "resumed prompt %lld\n",
      static_cast<long long>(cached), static_cast<long long>(prev), 100.0 * cached / prev,
      static_cast<long long>(now_prompt));
  EXPECT_GE(static_cast<double>(cached), 0.99 * static_cast<double>(prev));
  // The raise answers 409 once nothing is parked on the budget.
  auto [again, aj] = Post("/api/local/tasks/" + task + "/budget", {{"max_tokens", 2000000}});
  EXPECT_EQ(again, 409) << aj.dump();

  // Cancel still stops a budget-parked job.
  auto [c2, t2] = Post("/api/local/tasks", {{"instruction", "BUDGET-C one call only"},
                                            {"budget", {{"max_llm_calls", 1}}}});
  ASSERT_EQ(c2, 201) << t2.dump();
  WaitJob(t2["task"]["id"], t2["job"]["id"],
          [](const Json& j) { return j["wait_reason"] == "budget_exceeded"; });
  auto [cc, cj] = Post(TaskPath(t2) + "/cancel", Json::object());
  ASSERT_EQ(cc, 200) << cj.dump();
  WaitJob(t2["task"]["id"], t2["job"]["id"],
          [](const Json& j) { return j["status"] == "cancelled"; });
  EXPECT_EQ(FakeRequests().size(), 5u);
  EXPECT_EQ(Metric("maestro_budget_exceeded_total"), 2);
}

TEST_F(BudgetTest, TheBudgetFieldIsValidatedAndConfigDefaultsApplyPerKey) {
  extra_config_ =
      "budgets:\n  default: {max_tokens: 500000, max_wall_s: 3600}\n"
      "  pieces:\n    chat: {max_llm_calls: 40}\n";
  Start(Json::array({SucceedReply("a")}), 1);
  auto bad = [&](const Json& budget, const std::string& field) {
    auto [code, body] = Post("/api/local/tasks", {{"instruction", "x"}, {"budget", budget}});
    EXPECT_EQ(code, 400) << budget.dump() << " " << body.dump();
    EXPECT_EQ(body["error"]["field"], field) << body.dump();
    return body["error"]["message"].get<std::string>();
  };
  bad({{"max_tokenz", 5}}, "budget.max_tokenz");
  bad({{"max_tokens", 0}}, "budget.max_tokens");
  bad({{"max_tokens", 1.5}}, "budget.max_tokens");
  bad({{"max_wall_s", "soon"}}, "budget.max_wall_s");
  bad(Json::array(), "budget");
  const std::string msg = bad({{"max_cost", 0.5}}, "budget.max_cost");
  EXPECT_NE(msg.find("llm.price"), std::string::npos) << msg;
  EXPECT_TRUE(Get("/api/local/tasks")["tasks"].empty()) << "nothing written";

  auto [code, t] =
      Post("/api/local/tasks", {{"instruction", "defaults"}, {"budget", {{"max_tokens", 9000}}}});
  ASSERT_EQ(code, 201) << t.dump();
  EXPECT_EQ(t["task"]["budget"],
            Json({{"max_tokens", 9000}, {"max_llm_calls", 40}, {"max_wall_s", 3600}}));
}

TEST_F(BudgetTest, ADailyTaskQuotaAnswers429WithRetryAfter) {
  extra_config_ =
      "quotas:\n  default: {max_tasks_per_day: 5}\n  users:\n    admin: {max_tasks_per_day: 1}\n";
  Start(Json::array({SucceedReply("a")}), 1);
  Json first = Create("QUOTA one");
  httplib::Client c("127.0.0.1", port_);
  c.set_bearer_token_auth("tok");
  auto r =
      c.Post("/api/local/tasks", Json{{"instruction", "QUOTA two"}}.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 429) << r->body;
  Json body = Json::parse(r->body);
  EXPECT_EQ(body["error"]["message"],
            "daily quota of 1 tasks reached for user admin; resets at 00:00 UTC");
  ASSERT_TRUE(r->has_header("Retry-After"));
  const int64_t after = std::stoll(r->get_header_value("Retry-After"));
  EXPECT_GT(after, 0);
  EXPECT_LE(after, 86400);
  EXPECT_EQ(Get("/api/local/tasks")["tasks"].size(), 1u);
  EXPECT_EQ(Metric("maestro_quota_refusals_total"), 1);
}

}  // namespace
}  // namespace maestro::testing
