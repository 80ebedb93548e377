// Issue 18 budgets and quotas against the real `maestro serve` +
// `maestro-fakellm`: a task parks on its max_tokens BEFORE the call that
// would pass it (the fake gets no request for that step), the raise resumes
// the same job in the same movement with the prompt prefix cached, cancel
// still stops a budget-parked job, the 400s of the budget field and route,
// the daily-quota 429 with Retry-After, and the /metrics counters. Issue 44:
// every way to spend stays inside the budget — a delegate sub-agent's calls
// and a subtask tree's calls stop at the task's max_llm_calls (counted at
// the fake), subtasks always carry a budget, and every create path (REST,
// MCP create_task, A2A message/send, a schedule's run now, SpinOffTask) is
// refused over the daily quota with the same message.
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
  // The llm.call events of every task the server has (subtasks included).
  int64_t AllLlmCalls() {
    int64_t calls = 0;
    const Json tasks = Get("/api/local/tasks")["tasks"];
    for (const auto& task : tasks) {
      for (const auto& e : Events(task["id"])) calls += e["type"] == "llm.call" ? 1 : 0;
    }
    return calls;
  }
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

// A reply used by every request after the ones before it (repeat: 0).
Json Forever(Json reply) {
  reply["repeat"] = 0;
  return reply;
}

TEST_F(BudgetTest, ADelegatesCallsCountAgainstMaxLlmCallsAsTheyHappen) {
  // The parent delegates once; the sub-agent (and any deeper one) would call
  // ListDir for ever: before, it made 27 calls on a budget of 2.
  Start(Json::array({ToolCallReply("delegate", {{"task", "list the files, again and again"}}),
                     Forever(ToolCallReply("ListDir", Json::object()))}),
        1);
  auto [code, created] = Post("/api/local/tasks", {{"instruction", "BUDGET-D delegate it"},
                                                   {"budget", {{"max_llm_calls", 2}}}});
  ASSERT_EQ(code, 201) << created.dump();
  Json parked = WaitJob(created["task"]["id"], created["job"]["id"],
                        [](const Json& j) { return j["wait_reason"] == "budget_exceeded"; });
  EXPECT_EQ(parked["status"], "waiting_human") << parked.dump();
  std::this_thread::sleep_for(500ms);
  const Json reqs = FakeRequests();
  std::printf("delegate under max_llm_calls 2: %zu calls at the fake\n", reqs.size());
  ASSERT_EQ(reqs.size(), 2u) << "the parent's call and one of the sub-agent";
  // The second call was the sub-agent's (its own conversation).
  EXPECT_NE(Messages(reqs[1])[0].dump().find("sub-agent"), std::string::npos);
  EXPECT_EQ(AllLlmCalls(), 2);
  // The parent parked on its own budget at its next call.
  bool exceeded = false;
  for (const auto& e : Events(created["task"]["id"])) {
    if (e["type"] == "budget.exceeded") exceeded = e["payload"]["which"] == "max_llm_calls";
  }
  EXPECT_TRUE(exceeded);
}

TEST_F(BudgetTest, ASubtaskTreeStaysInsideTheRootsMaxLlmCalls) {
  // Every call of every task spins off another subtask (which would spin off
  // its own...): before, the children had no limits at all.
  Start(Json::array({Forever(ToolCallReply(
            "SpinOffTask", {{"title", "child"}, {"instruction", "BUDGET-S spin off more"}}))}),
        2);
  auto [code, created] = Post(
      "/api/local/tasks", {{"instruction", "BUDGET-S root"}, {"budget", {{"max_llm_calls", 2}}}});
  ASSERT_EQ(code, 201) << created.dump();
  const std::string root = created["task"]["id"];
  WaitJob(root, created["job"]["id"],
          [](const Json& j) { return j["wait_reason"] == "budget_exceeded"; });
  // Let every child reach its end (each stops at its first check).
  const auto end = std::chrono::steady_clock::now() + 10s;
  Json tasks;
  for (;;) {
    tasks = Get("/api/local/tasks")["tasks"];
    bool open = false;
    for (const auto& t : tasks) {
      open = open || t["status"] == "queued" || t["status"] == "running";
    }
    if (!open || std::chrono::steady_clock::now() > end) break;
    std::this_thread::sleep_for(50ms);
  }
  std::this_thread::sleep_for(300ms);
  const size_t calls = FakeRequests().size();
  std::printf("subtask tree under max_llm_calls 2 (2 workers): %zu calls at the fake, %zu tasks\n",
              calls, tasks.size());
  EXPECT_GE(calls, 2u);
  EXPECT_LE(calls, 3u) << "the limit + 1 in flight";
  EXPECT_EQ(AllLlmCalls(), static_cast<int64_t>(calls));
  ASSERT_GE(tasks.size(), 2u) << "the root spun off at least one subtask";
  for (const auto& t : tasks) {
    if (t["id"] == root) continue;
    // Never none: the parent's remaining calls (at least 1 as a valid limit).
    Json detail = Get("/api/local/tasks/" + t["id"].get<std::string>());
    Json b = detail["task"]["budget"];
    ASSERT_TRUE(b.contains("max_llm_calls")) << b.dump();
    EXPECT_LE(b["max_llm_calls"].get<int64_t>(), 1) << b.dump();
    // Stopped by the root's spent budget: the subtask ends (its own raise
    // could not help) and says whose budget it was.
    EXPECT_EQ(t["status"], "failed") << detail.dump();
    EXPECT_NE(detail.dump().find("the budget of the parent task"), std::string::npos)
        << detail.dump();
  }
}

TEST_F(BudgetTest, EveryCreatePathIsRefusedOverTheDailyQuotaWithTheSameError) {
  extra_config_ = "quotas:\n  default: {max_tasks_per_day: 1}\n";
  Start(Json::array({ToolCallReply("SpinOffTask",
                                   {{"title", "child"}, {"instruction", "QUOTA-S the child"}}),
                     SucceedReply("done")}),
        1);
  const std::string refusal = "daily quota of 1 tasks reached for user admin; resets at 00:00 UTC";
  // The one allowed task spins off a subtask: refused, the tool says why.
  Json parent = Create("QUOTA-S the parent");
  WaitStatus(parent, "succeeded");
  const Json reqs = FakeRequests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_NE(Messages(reqs[1]).dump().find(refusal), std::string::npos) << Messages(reqs[1]).dump();

  // REST.
  auto [rest, rest_body] = Post("/api/local/tasks", {{"instruction", "QUOTA-R"}});
  EXPECT_EQ(rest, 429);
  EXPECT_EQ(rest_body["error"]["message"], refusal);
  // A2A message/send.
  auto [a2a, a2a_body] =
      Post("/a2a", {{"jsonrpc", "2.0"},
                    {"id", 1},
                    {"method", "message/send"},
                    {"params",
                     {{"message",
                       {{"role", "user"},
                        {"messageId", "m-1"},
                        {"parts", Json::array({{{"kind", "text"}, {"text", "QUOTA-A"}}})}}}}}});
  EXPECT_EQ(a2a, 200) << a2a_body.dump();
  EXPECT_EQ(a2a_body["error"]["message"], refusal) << a2a_body.dump();
  // MCP create_task.
  httplib::Client mcp("127.0.0.1", port_);
  mcp.set_bearer_token_auth("tok");
  httplib::Headers h = {{"Accept", "application/json, text/event-stream"}};
  Json init = {{"jsonrpc", "2.0"},
               {"id", 1},
               {"method", "initialize"},
               {"params",
                {{"protocolVersion", "2025-11-25"},
                 {"capabilities", Json::object()},
                 {"clientInfo", {{"name", "gtest"}, {"version", "1"}}}}}};
  auto ir = mcp.Post("/mcp", h, init.dump(), "application/json");
  ASSERT_TRUE(ir);
  ASSERT_EQ(ir->status, 200) << ir->body;
  h.emplace("Mcp-Session-Id", ir->get_header_value("Mcp-Session-Id"));
  mcp.Post("/mcp", h, Json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}.dump(),
           "application/json");
  Json call = {{"jsonrpc", "2.0"},
               {"id", 2},
               {"method", "tools/call"},
               {"params", {{"name", "create_task"}, {"arguments", {{"instruction", "QUOTA-M"}}}}}};
  auto cr = mcp.Post("/mcp", h, call.dump(), "application/json");
  ASSERT_TRUE(cr);
  ASSERT_EQ(cr->status, 200) << cr->body;
  Json result = Json::parse(cr->body)["result"];
  EXPECT_EQ(result["isError"], true) << cr->body;
  EXPECT_NE(result.dump().find(refusal), std::string::npos) << cr->body;
  // A schedule's run now.
  auto [sc, sched] = Post("/api/local/schedules",
                          {{"name", "s"}, {"cron", "0 7 * * *"}, {"instruction", "QUOTA-C"}});
  ASSERT_EQ(sc, 201) << sched.dump();
  auto [run, run_body] =
      Post("/api/local/schedules/" + sched["schedule"]["id"].get<std::string>() + "/run",
           Json::object());
  EXPECT_EQ(run, 429) << run_body.dump();
  EXPECT_EQ(run_body["error"]["message"], refusal);
  EXPECT_EQ(run_body["error"]["field"], "quota");

  EXPECT_EQ(Get("/api/local/tasks")["tasks"].size(), 1u) << "only the parent";
  EXPECT_EQ(Metric("maestro_quota_refusals_total"), 5) << "subtask, REST, A2A, MCP, run now";
}

}  // namespace
}  // namespace maestro::testing
