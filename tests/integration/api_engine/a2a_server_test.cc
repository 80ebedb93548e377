// maestro as an A2A agent (GET /.well-known/agent-card.json, POST /a2a)
// against the real `maestro serve` + `maestro-fakellm`: the open card, the
// bearer gate, the JSON-RPC errors, another user's task and a tool
// approval wait over plain HTTP — and the official A2A JavaScript SDK client
// (tests/a2a/clients/sdk_client.mjs, pinned by tests/a2a/package-lock.json)
// run with node: a blocking send to its result, a stream to `completed`, an
// input-required task answered through its taskId, a cancel, the typed
// errors, a resubscribe and the push notification configs with a delivery
// to a receiver here.
#include <algorithm>
#include <filesystem>
#include <sstream>

#include "core/mutex.h"
#include "serve_fixture.h"

namespace maestro::testing {
namespace {

Json Ask(const std::string& question) {
  return CompleteReply({{"status", "needs_user_input"}, {"question", question}});
}
// A reply for the request whose messages contain `tag` (each scenario's
// instruction carries one, so the order of the tasks does not matter).
Json For(const std::string& tag, Json reply, const char* match = "any_message_contains") {
  reply["match"] = {{match, tag}};
  return reply;
}

class A2aServerTest : public ServeEngineTest {
 protected:
  // POST /a2a; returns {HTTP status, body as JSON (null for SSE)}.
  std::pair<int, Json> Rpc(const std::string& body, const std::string& token = "tok") const {
    httplib::Client c("127.0.0.1", port_);
    if (!token.empty()) c.set_bearer_token_auth(token);
    c.set_read_timeout(30, 0);
    auto r = c.Post("/a2a", body, "application/json");
    if (!r) return {0, Json()};
    return {r->status, Json::parse(r->body, nullptr, false)};
  }
  static std::string Request(const std::string& method, const Json& params, const Json& id = 1) {
    return Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump();
  }
};

TEST_F(A2aServerTest, CardIsOpenRpcNeedsTheTokenAndErrorsHaveA2aCodes) {
  Start(Json::array());
  httplib::Client open("127.0.0.1", port_);
  auto card = open.Get("/.well-known/agent-card.json");
  ASSERT_TRUE(card);
  ASSERT_EQ(card->status, 200) << card->body;
  Json c = Json::parse(card->body);
  EXPECT_EQ(c["url"], ServerUrl() + "/a2a");
  EXPECT_EQ(c["protocolVersion"], "0.3.0");
  EXPECT_EQ(c["capabilities"]["streaming"], true);
  std::vector<std::string> skills;
  for (const auto& s : c["skills"]) skills.push_back(s["id"]);
  EXPECT_NE(std::find(skills.begin(), skills.end(), "chat"), skills.end()) << c.dump();

  auto [no_token, denied] = Rpc(Request("tasks/get", {{"id", "x"}}), "");
  EXPECT_EQ(no_token, 401);
  auto [bad_token, denied2] = Rpc(Request("tasks/get", {{"id", "x"}}), "wrong");
  EXPECT_EQ(bad_token, 401);

  auto [parse_status, parse] = Rpc("{not json");
  EXPECT_EQ(parse_status, 400);
  EXPECT_EQ(parse["error"]["code"], -32700) << parse.dump();
  auto [method_status, method] = Rpc(Request("tasks/list", Json::object(), "m"));
  EXPECT_EQ(method_status, 200);
  EXPECT_EQ(method["id"], "m");
  EXPECT_EQ(method["error"]["code"], -32601) << method.dump();
  auto [s1, missing_id] = Rpc(Request("tasks/get", Json::object()));
  EXPECT_EQ(missing_id["error"]["code"], -32602);
  EXPECT_EQ(missing_id["error"]["data"]["field"], "id") << missing_id.dump();
  auto [s2, unknown] = Rpc(Request("tasks/get", {{"id", "00000000-0000-4000-8000-000000000000"}}));
  EXPECT_EQ(unknown["error"]["code"], -32001) << unknown.dump();
  auto [s3, no_parts] = Rpc(
      Request("message/send",
              {{"message", {{"role", "user"}, {"messageId", "m1"}, {"parts", Json::array()}}}}));
  EXPECT_EQ(no_parts["error"]["code"], -32602);
  EXPECT_EQ(no_parts["error"]["data"]["field"], "message.parts") << no_parts.dump();
  auto [s4, bad_piece] =
      Rpc(Request("message/send", {{"message",
                                    {{"role", "user"},
                                     {"messageId", "m1"},
                                     {"parts", {{{"kind", "text"}, {"text", "hi"}}}},
                                     {"metadata", {{"piece", "no-such-piece"}}}}}}));
  EXPECT_EQ(bad_piece["error"]["code"], -32602);
  EXPECT_EQ(bad_piece["error"]["data"]["field"], "metadata.piece") << bad_piece.dump();
  EXPECT_TRUE(Get("/api/local/tasks")["tasks"].empty()) << "a refused message writes nothing";

  // Another user's private task is a missing one, on every method.
  Json mine = Create("A2A-PRIVATE mine");
  const std::string task_id = mine["task"]["id"];
  auto [token_status, token] = Post("/api/local/tokens", {{"user", "bob"}});
  ASSERT_EQ(token_status, 201) << token.dump();
  const std::string bob = token["token"];
  for (const auto& [method, params] : std::vector<std::pair<std::string, Json>>{
           {"tasks/get", {{"id", task_id}}},
           {"tasks/cancel", {{"id", task_id}}},
           {"tasks/pushNotificationConfig/list", {{"id", task_id}}},
           {"message/send",
            {{"message",
              {{"role", "user"},
               {"messageId", "m2"},
               {"taskId", task_id},
               {"parts", {{{"kind", "text"}, {"text", "hi"}}}}}}}}}) {
    auto [status, reply] = Rpc(Request(method, params), bob);
    EXPECT_EQ(status, 200) << method;
    EXPECT_EQ(reply["error"]["code"], -32001) << method << ": " << reply.dump();
  }
  auto [own_status, own] = Rpc(Request("tasks/get", {{"id", task_id}}));
  EXPECT_EQ(own["result"]["id"], task_id) << own.dump();
}

// An approval wait is input-required, but only a decision ends it: a
// message to it is refused with -32004 and writes nothing.
TEST_F(A2aServerTest, AnApprovalWaitIsInputRequiredAndRefusesAMessage) {
  Json park = ToolCallReply(
      "RequestTool",
      {{"tool", "RunCommand"}, {"arguments", {{"command", "echo hi"}}}, {"reason", "A2A-APPROVE"}});
  Start(Json::array({ToolCallReply("transition", {{"next", "implement"}}), park}));
  auto message = [](const Json& extra) {
    Json m = {{"kind", "message"},
              {"role", "user"},
              {"messageId", "m-approve"},
              {"parts", {{{"kind", "text"}, {"text", "change the file"}}}}};
    m.update(extra);
    return m;
  };
  auto [status, sent] =
      Rpc(Request("message/send", {{"message", message({{"metadata", {{"piece", "coding"}}}})}}));
  ASSERT_EQ(status, 200) << sent.dump();
  const Json& task = sent["result"];
  EXPECT_EQ(task["status"]["state"], "input-required") << sent.dump() << LogTail();
  const std::string text = task["status"]["message"]["parts"][0]["text"];
  EXPECT_NE(text.find("tool_request"), std::string::npos) << text;
  EXPECT_EQ(task["metadata"]["piece"], "coding");

  const std::string comments_path =
      "/api/local/tasks/" + task["id"].get<std::string>() + "/comments";
  const size_t comments = Get(comments_path).value("comments", Json::array()).size();
  EXPECT_GE(comments, 1u) << "the instruction";
  auto [s2, refused] =
      Rpc(Request("message/send", {{"message", message({{"taskId", task["id"]}})}}));
  EXPECT_EQ(refused["error"]["code"], -32004) << refused.dump();
  EXPECT_EQ(Get(comments_path).value("comments", Json::array()).size(), comments)
      << "a refused message writes nothing";

  auto [s3, cancelled] = Rpc(Request("tasks/cancel", {{"id", task["id"]}}));
  EXPECT_EQ(cancelled["result"]["status"]["state"], "canceled") << cancelled.dump();
}

// The push receiver: POST stores a notification, GET says how many came.
struct PushReceiver {
  httplib::Server server;
  int port = 0;
  std::thread thread;
  Mutex mu;
  std::vector<std::pair<std::string, Json>> got GUARDED_BY(mu);  // {token header, body}

  explicit PushReceiver(const std::string& host = "127.0.0.1") {
    server.Post("/push", [this](const httplib::Request& req, httplib::Response& res) {
      MutexLock lock(&mu);
      got.emplace_back(req.get_header_value("X-A2A-Notification-Token"),
                       Json::parse(req.body, nullptr, false));
      res.status = 200;
    });
    server.Get("/push", [this](const httplib::Request&, httplib::Response& res) {
      MutexLock lock(&mu);
      res.set_content(Json{{"count", got.size()}}.dump(), "application/json");
    });
    port = server.bind_to_any_port(host);
    thread = std::thread([this] { server.listen_after_bind(); });
  }
  ~PushReceiver() {
    server.stop();
    thread.join();
  }
  size_t count() {
    MutexLock lock(&mu);
    return got.size();
  }
  std::vector<std::string> tokens() {
    MutexLock lock(&mu);
    std::vector<std::string> out;
    for (const auto& [token, body] : got) out.push_back(token);
    return out;
  }
};

// Push configs through the real server: every internal spelling of a URL
// is refused when set (a canary on 127.0.0.1 sees nothing), and two users
// on a shared task each see and change only their own configs.
TEST_F(A2aServerTest, PushConfigsAreTheSettersOwnAndInternalUrlsAreRefused) {
  extra_config_ = "egress:\n  allow: [127.0.0.2]\n";  // the receiver, not the canary
  Start(Json::array());
  PushReceiver canary;
  PushReceiver receiver("127.0.0.2");
  ASSERT_GT(canary.port, 0);
  ASSERT_GT(receiver.port, 0);
  const std::string cp = std::to_string(canary.port);
  const std::string allowed = "http://127.0.0.2:" + std::to_string(receiver.port) + "/push";
  auto [created_status, created] =
      Post("/api/local/tasks",
           {{"instruction", "A2A-PUSH"}, {"piece", "chat"}, {"visibility", "shared"}});
  ASSERT_EQ(created_status, 201) << created.dump();
  const std::string task_id = created["task"]["id"];
  auto set = [&](const Json& config, const std::string& token) {
    return Rpc(Request("tasks/pushNotificationConfig/set",
                       {{"taskId", task_id}, {"pushNotificationConfig", config}}),
               token)
        .second;
  };
  for (const std::string& url :
       {"http://127.0.0.1:" + cp + "/push", "http://localhost:" + cp + "/push",
        "http://127.1:" + cp + "/push", "http://2130706433:" + cp + "/push",
        "http://0x7f000001:" + cp + "/push", "http://[::1]:" + cp + "/push",
        "http://0.0.0.0:" + cp + "/push",
        "http://user:pass@127.0.0.2:" + std::to_string(receiver.port) + "/push",
        std::string("http://169.254.169.254/latest/meta-data/")}) {
    Json refused = set({{"url", url}}, "tok");
    EXPECT_EQ(refused["error"]["code"], -32602) << url << ": " << refused.dump();
    EXPECT_EQ(refused["error"]["data"]["field"], "pushNotificationConfig.url") << refused.dump();
  }
  const size_t tasks_before = Get("/api/local/tasks")["tasks"].size();
  auto [s_send, sent] = Rpc(Request(
      "message/send", {{"message",
                        {{"role", "user"},
                         {"messageId", "m-push"},
                         {"parts", {{{"kind", "text"}, {"text", "hi"}}}}}},
                       {"configuration",
                        {{"blocking", false},
                         {"pushNotificationConfig", {{"url", "http://127.1:" + cp + "/"}}}}}}));
  EXPECT_EQ(sent["error"]["data"]["field"], "configuration.pushNotificationConfig.url")
      << sent.dump();
  EXPECT_EQ(Get("/api/local/tasks")["tasks"].size(), tasks_before)
      << "a refused push URL creates no task";

  // The admin's config, then bob's under the same default id.
  Json mine = set({{"url", allowed}, {"token", "admin-secret"}}, "tok");
  ASSERT_EQ(mine["result"]["pushNotificationConfig"]["id"], task_id) << mine.dump();
  auto [token_status, token] = Post("/api/local/tokens", {{"user", "bob"}});
  ASSERT_EQ(token_status, 201) << token.dump();
  const std::string bob = token["token"];
  auto [s_list, listed] = Rpc(Request("tasks/pushNotificationConfig/list", {{"id", task_id}}), bob);
  EXPECT_EQ(listed["result"], Json::array())
      << "the admin's token is not bob's to see: " << listed.dump();
  auto [s_get, got] = Rpc(Request("tasks/pushNotificationConfig/get", {{"id", task_id}}), bob);
  EXPECT_EQ(got["error"]["code"], -32602) << got.dump();
  auto [s_del, deleted] = Rpc(Request("tasks/pushNotificationConfig/delete",
                                      {{"id", task_id}, {"pushNotificationConfigId", task_id}}),
                              bob);
  EXPECT_EQ(deleted["error"]["code"], -32602)
      << "bob cannot delete the admin's: " << deleted.dump();
  Json bobs = set({{"url", allowed}, {"token", "bob-token"}}, bob);
  EXPECT_EQ(bobs["result"]["pushNotificationConfig"]["id"], task_id) << bobs.dump();
  auto [s_own, own] = Rpc(Request("tasks/pushNotificationConfig/get",
                                  {{"id", task_id}, {"pushNotificationConfigId", task_id}}));
  EXPECT_EQ(own["result"]["pushNotificationConfig"]["token"], "admin-secret")
      << "bob's set replaced nothing of the admin's: " << own.dump();
  auto [s_all, all] = Rpc(Request("tasks/pushNotificationConfig/list", {{"id", task_id}}));
  EXPECT_EQ(all["result"].size(), 1u) << all.dump();

  // Both receive the task's status, each with their own token; the canary nothing.
  for (int i = 0; i < 200 && receiver.count() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  auto tokens = receiver.tokens();
  EXPECT_NE(std::find(tokens.begin(), tokens.end(), "admin-secret"), tokens.end()) << LogTail();
  EXPECT_NE(std::find(tokens.begin(), tokens.end(), "bob-token"), tokens.end()) << LogTail();
  EXPECT_EQ(canary.count(), 0u);
}

// The configs are in the database (issue 48 item 3): one set before a
// restart of serve is there after it (get, list; another user's get and
// delete find nothing) and receives the task's later status update once.
TEST_F(A2aServerTest, PushConfigsSurviveARestartAndGetTheLaterUpdate) {
  extra_config_ = "egress:\n  allow: [127.0.0.1]\n";  // the receiver below is local
  Start(Json::array({For("RESTART-ANSWER", SucceedReply("RESTART-DONE"), "last_message_contains"),
                     For("A2A-RESTART", Ask("A2A-RESTART-Q which?"))}));
  PushReceiver receiver;
  ASSERT_GT(receiver.port, 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(receiver.port) + "/push";
  auto states = [&](const std::string& state) {
    MutexLock lock(&receiver.mu);
    size_t n = 0;
    for (const auto& [token, body] : receiver.got) {
      n += body.is_object() && body["status"].value("state", "") == state;
    }
    return n;
  };
  auto [s_sent, sent] = Rpc(Request(
      "message/send",
      {{"message",
        {{"role", "user"},
         {"messageId", "m-restart"},
         {"parts", {{{"kind", "text"}, {"text", "A2A-RESTART go"}}}}}},
       {"configuration",
        {{"blocking", false},
         {"pushNotificationConfig", {{"id", "r1"}, {"url", url}, {"token", "restart-tok"}}}}}}));
  ASSERT_TRUE(sent["result"].is_object()) << sent.dump();
  const std::string task_id = sent["result"]["id"];
  for (int i = 0; i < 400 && states("input-required") == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_EQ(states("input-required"), 1u) << LogTail();

  RestartServe();
  ASSERT_FALSE(HasFatalFailure());
  auto [s_get, got] = Rpc(Request("tasks/pushNotificationConfig/get",
                                  {{"id", task_id}, {"pushNotificationConfigId", "r1"}}));
  EXPECT_EQ(got["result"]["pushNotificationConfig"]["url"], url) << got.dump();
  EXPECT_EQ(got["result"]["pushNotificationConfig"]["token"], "restart-tok") << got.dump();
  auto [s_list, listed] = Rpc(Request("tasks/pushNotificationConfig/list", {{"id", task_id}}));
  EXPECT_EQ(listed["result"].size(), 1u) << listed.dump();
  auto [token_status, token] = Post("/api/local/tokens", {{"user", "bob"}});
  ASSERT_EQ(token_status, 201) << token.dump();
  const std::string bob = token["token"];
  auto [s_bget, bob_got] = Rpc(Request("tasks/pushNotificationConfig/get",
                                       {{"id", task_id}, {"pushNotificationConfigId", "r1"}}),
                               bob);
  EXPECT_TRUE(bob_got.contains("error")) << bob_got.dump();
  EXPECT_EQ(bob_got.dump().find("restart-tok"), std::string::npos);
  auto [s_bdel, bob_del] = Rpc(Request("tasks/pushNotificationConfig/delete",
                                       {{"id", task_id}, {"pushNotificationConfigId", "r1"}}),
                               bob);
  EXPECT_TRUE(bob_del.contains("error")) << bob_del.dump();

  auto [s_ans, answered] = Rpc(
      Request("message/send", {{"message",
                                {{"role", "user"},
                                 {"messageId", "m-restart-answer"},
                                 {"taskId", task_id},
                                 {"parts", {{{"kind", "text"}, {"text", "RESTART-ANSWER blue"}}}}}},
                               {"configuration", {{"blocking", false}}}}));
  ASSERT_TRUE(answered["result"].is_object()) << answered.dump();
  for (int i = 0; i < 400 && states("completed") == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // past the 2 s poll
  EXPECT_EQ(states("completed"), 1u) << LogTail();
  EXPECT_EQ(states("input-required"), 1u) << "not sent again after the restart";
  for (const auto& t : receiver.tokens()) EXPECT_EQ(t, "restart-tok");
}

TEST_F(A2aServerTest, TheJavaScriptSdkClientSendsStreamsAnswersAndCancels) {
  const std::string dir = MAESTRO_A2A_TEST_DIR;
  ASSERT_TRUE(std::filesystem::exists(dir + "/node_modules/@a2a-js/sdk/package.json"))
      << "the A2A SDK is not installed: run scripts/npm_pinned.sh tests/a2a";
  // The answer's reply first: the resumed run's conversation still holds
  // A2A-ASK, so the question's reply must not match it (it is used up).
  extra_config_ = "egress:\n  allow: [127.0.0.1]\n";  // the push receiver below is local
  Start(Json::array({For("BLUE", SucceedReply("PAINTED BLUE"), "last_message_contains"),
                     For("A2A-ASK", Ask("A2A-Q which colour?")),
                     For("A2A-SEND", SucceedReply("SEND-RESULT a haiku")),
                     For("A2A-STREAM",
                         [] {
                           Json r = SucceedReply("STREAM-RESULT 1 2 3");
                           r["delay_ms"] = 300;  // the stream sees the task working
                           // Streamed as it is written (live-<job> chunks).
                           r["text"] = "counting: one, two, three";
                           r["chunk_chars"] = 5;
                           return r;
                         }()),
                     For("A2A-CANCEL", Ask("A2A-CANCEL-Q shall I go on?"))}));
  PushReceiver receiver;
  ASSERT_GT(receiver.port, 0);
  const std::string push_url = "http://127.0.0.1:" + std::to_string(receiver.port) + "/push";
  Process node(
      {"/usr/bin/env", "node", dir + "/clients/sdk_client.mjs", ServerUrl(), "tok", push_url}, {},
      dir_.File("node.out"), dir_.File("node.err"));
  auto code = node.Wait(120s);
  ASSERT_TRUE(code.has_value()) << "the SDK client did not finish: " << node.Stdout();
  const std::string out = node.Stdout();
  ASSERT_EQ(*code, 0) << out << "\n" << node.Stderr() << "\n" << LogTail();

  std::map<std::string, Json> ev;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    Json j = Json::parse(line, nullptr, false);
    ASSERT_TRUE(j.is_object()) << line;
    ev[j["event"].get<std::string>()] = j;
  }
  EXPECT_EQ(ev["card"]["name"], "maestro") << out;
  EXPECT_EQ(ev["card"]["url"], ServerUrl() + "/a2a");
  EXPECT_EQ(ev["card"]["capabilities"]["pushNotifications"], true);

  // A blocking send answers with the finished task and its result.
  const Json& sent = ev["send"];
  EXPECT_EQ(sent["kind"], "task") << out;
  EXPECT_EQ(sent["state"], "completed") << out;
  EXPECT_EQ(sent["artifact"], "SEND-RESULT a haiku");
  EXPECT_EQ(sent["statusText"], "SEND-RESULT a haiku");
  EXPECT_EQ(sent["contextId"], "ctx-" + sent["id"].get<std::string>());
  EXPECT_EQ(ev["get"]["state"], "completed");
  EXPECT_EQ(ev["get"]["history"], 1) << "historyLength 1";

  // The stream: the Task, working, the result, completed with final.
  const Json& events = ev["stream"]["events"];
  ASSERT_GE(events.size(), 3u) << out;
  EXPECT_EQ(events[0]["kind"], "task");
  const Json& last = events[events.size() - 1];
  EXPECT_EQ(last["kind"], "status-update");
  EXPECT_EQ(last["state"], "completed");
  EXPECT_EQ(last["final"], true);
  const Json& artifact = events[events.size() - 2];
  EXPECT_EQ(artifact["kind"], "artifact-update");
  EXPECT_EQ(artifact["text"], "STREAM-RESULT 1 2 3");
  bool worked = false;
  for (const auto& e : events) worked = worked || e["state"] == "working";
  EXPECT_TRUE(worked) << "no working state streamed: " << events.dump();
  // The job's text as it was written: chunks of one live artifact, the first
  // not appended, the rest appended, before the result.
  std::string live;
  int chunks = 0;
  for (const auto& e : events) {
    if (e["kind"] != "artifact-update" || !e["artifactId"].is_string() ||
        e["artifactId"].get<std::string>().rfind("live-", 0) != 0) {
      continue;
    }
    EXPECT_EQ(e["append"], chunks > 0) << events.dump();
    live += e["text"].get<std::string>();
    ++chunks;
  }
  EXPECT_EQ(live, "counting: one, two, three") << events.dump();
  EXPECT_GE(chunks, 1);

  // The question, and the answer through the same task.
  EXPECT_EQ(ev["asked"]["state"], "input-required") << out;
  EXPECT_EQ(ev["asked"]["statusText"], "A2A-Q which colour?");
  EXPECT_EQ(ev["answered"]["id"], ev["asked"]["id"]);
  EXPECT_EQ(ev["answered"]["state"], "completed") << out;
  EXPECT_EQ(ev["answered"]["artifact"], "PAINTED BLUE");

  // Cancel, and the typed errors.
  EXPECT_EQ(ev["waiting"]["state"], "input-required") << out;
  EXPECT_EQ(ev["cancel"]["state"], "canceled") << out;
  EXPECT_EQ(ev["cancel-again"]["notCancelable"], true) << out;
  EXPECT_EQ(ev["missing"]["notFound"], true) << out;

  // Resubscribing to a finished task: the Task, then its final status.
  const Json& again = ev["resubscribe"]["events"];
  ASSERT_GE(again.size(), 2u) << out;
  EXPECT_EQ(again[0]["kind"], "task");
  EXPECT_EQ(again[again.size() - 1]["state"], "completed");
  EXPECT_EQ(again[again.size() - 1]["final"], true);

  // Push configs, and the notification of the task's current status.
  const Json& push = ev["push"];
  EXPECT_EQ(push["set"]["id"], "p1") << out;
  EXPECT_EQ(push["set"]["url"], push_url);
  EXPECT_EQ(push["got"], "p1");
  EXPECT_EQ(push["listed"], 1);
  EXPECT_EQ(push["afterDelete"], 0);
  EXPECT_GE(push["received"].get<int>(), 1) << out;
  {
    MutexLock lock(&receiver.mu);
    ASSERT_FALSE(receiver.got.empty());
    EXPECT_EQ(receiver.got[0].first, "PUSH-TOKEN");
    EXPECT_EQ(receiver.got[0].second["kind"], "task");
    EXPECT_EQ(receiver.got[0].second["id"], sent["id"]);
    EXPECT_EQ(receiver.got[0].second["status"]["state"], "completed");
  }

  // The tasks the messages made, over REST: one per new message.
  Json tasks = Get("/api/local/tasks")["tasks"];
  EXPECT_EQ(tasks.size(), 4u) << tasks.dump();
}

}  // namespace
}  // namespace maestro::testing
