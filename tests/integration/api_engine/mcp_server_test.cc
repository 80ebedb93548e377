// maestro as an MCP server (`/mcp`, Streamable HTTP) against the real
// `maestro serve` + `maestro-fakellm`: the lifecycle and version
// negotiation, the session header, tools/list, create_task with wait and
// progress over SSE until its result (finished or needing a person),
// get_task / list_tasks / comment / decide-less errors / cancel_task,
// notifications/cancelled ending a wait, visibility across users, 401
// without a token — and the official TypeScript SDK client
// (tests/mcp/clients/sdk_client.mjs) run with node against it.
#include <filesystem>
#include <random>
#include <set>
#include <sstream>

#include "serve_fixture.h"

namespace maestro::testing {
namespace {

struct McpReply {
  int status = 0;
  std::string content_type;
  std::string session_id;  // Mcp-Session-Id of the answer
  std::string www_authenticate;
  std::string body;
  Json json;                   // the body as JSON (application/json answers)
  std::vector<Json> messages;  // the SSE `message` events (text/event-stream answers)
};

// The JSON-RPC messages of an SSE body (`event: message` frames).
std::vector<Json> SseMessages(const std::string& body) {
  std::vector<Json> out;
  std::istringstream in(body);
  std::string event, data;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("event: ", 0) == 0) event = line.substr(7);
    if (line.rfind("data: ", 0) == 0) data += line.substr(6);
    if (line.empty()) {
      if (event == "message" && !data.empty()) out.push_back(Json::parse(data, nullptr, false));
      event.clear();
      data.clear();
    }
  }
  return out;
}

Json Request(const Json& id, const std::string& method, const Json& params = Json::object()) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
}

Json InitializeRequest(const std::string& version) {
  return Request(1, "initialize",
                 {{"protocolVersion", version},
                  {"capabilities", Json::object()},
                  {"clientInfo", {{"name", "gtest"}, {"version", "1"}}}});
}

Json CallRequest(const Json& id, const std::string& tool, const Json& args, Json meta = nullptr) {
  Json params = {{"name", tool}, {"arguments", args}};
  if (!meta.is_null()) params["_meta"] = meta;
  return Request(id, "tools/call", params);
}

class McpServerTest : public ServeEngineTest {
 protected:
  McpReply McpPost(const Json& msg, const std::string& session = "",
                   const std::string& token = "tok", httplib::Headers extra = {}) const {
    httplib::Client c("127.0.0.1", port_);
    if (!token.empty()) c.set_bearer_token_auth(token);
    c.set_read_timeout(60, 0);
    httplib::Headers h = {{"Accept", "application/json, text/event-stream"}};
    if (!session.empty()) h.emplace("Mcp-Session-Id", session);
    for (const auto& kv : extra) h.insert(kv);
    return ToReply(c.Post("/mcp", h, msg.dump(), "application/json"));
  }

  static McpReply ToReply(const httplib::Result& r) {
    McpReply out;
    if (!r) return out;
    out.status = r->status;
    out.content_type = r->get_header_value("Content-Type");
    out.session_id = r->get_header_value("Mcp-Session-Id");
    out.www_authenticate = r->get_header_value("WWW-Authenticate");
    out.body = r->body;
    if (out.content_type.rfind("text/event-stream", 0) == 0) {
      out.messages = SseMessages(r->body);
    } else if (!r->body.empty()) {
      out.json = Json::parse(r->body, nullptr, false);
    }
    return out;
  }

  // initialize + notifications/initialized; returns the session id.
  std::string Initialize(const std::string& version = "2025-11-25",
                         const std::string& token = "tok") {
    McpReply r = McpPost(InitializeRequest(version), "", token);
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_FALSE(r.session_id.empty()) << "no Mcp-Session-Id";
    McpReply ack =
        McpPost({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}, r.session_id, token);
    EXPECT_EQ(ack.status, 202) << ack.body;
    return r.session_id;
  }

  // tools/call answered with JSON; returns its `result`.
  Json Call(const std::string& session, const std::string& tool, const Json& args,
            const std::string& token = "tok") {
    McpReply r = McpPost(CallRequest(++next_id_, tool, args), session, token);
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json["id"], next_id_) << r.body;
    EXPECT_TRUE(r.json.contains("result")) << r.body;
    return r.json["result"];
  }

  std::string UserToken(const std::string& user) {
    auto [status, body] = Post("/api/local/tokens", {{"user", user}});
    EXPECT_EQ(status, 201) << body.dump();
    return body.value("token", "");
  }

  static std::string Text(const Json& result) {
    std::string out;
    for (const auto& c : result.value("content", Json::array())) out += c.value("text", "");
    return out;
  }

  int next_id_ = 100;
};

TEST_F(McpServerTest, InitializeNegotiatesTheVersionAndLaterRequestsNeedTheSession) {
  Start(Json::array());
  // The latest, an older accepted one, and an unknown one (→ the latest).
  for (const auto& [asked, agreed] :
       std::vector<std::pair<std::string, std::string>>{{"2025-11-25", "2025-11-25"},
                                                        {"2025-06-18", "2025-06-18"},
                                                        {"2025-03-26", "2025-03-26"},
                                                        {"2024-11-05", "2025-11-25"},
                                                        {"1999-01-01", "2025-11-25"}}) {
    McpReply r = McpPost(InitializeRequest(asked));
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json["result"]["protocolVersion"], agreed) << asked;
    EXPECT_EQ(r.json["result"]["serverInfo"]["name"], "maestro");
    EXPECT_TRUE(r.json["result"]["capabilities"].contains("tools"));
    EXPECT_EQ(r.json["id"], 1);
    EXPECT_EQ(r.session_id.size(), 64u) << "a random 32-byte hex id";
  }
  McpReply bad = McpPost(Request(1, "initialize", Json::object()));
  EXPECT_EQ(bad.json["error"]["code"], -32602) << bad.body;

  std::string session = Initialize();
  // No session header → 400; an unknown session → 404 (the client must
  // initialize again).
  McpReply missing = McpPost(Request(2, "ping"));
  EXPECT_EQ(missing.status, 400) << missing.body;
  EXPECT_EQ(missing.json["error"]["code"], -32600);
  McpReply unknown = McpPost(Request(2, "ping"), std::string(64, 'a'));
  EXPECT_EQ(unknown.status, 404) << unknown.body;
  // ping → {}.
  McpReply ping = McpPost(Request("p-1", "ping"), session);
  ASSERT_EQ(ping.status, 200) << ping.body;
  EXPECT_EQ(ping.json["id"], "p-1");
  EXPECT_EQ(ping.json["result"], Json::object());
  // The protocol version header: an unsupported one is refused.
  McpReply old =
      McpPost(Request(3, "ping"), session, "tok", {{"MCP-Protocol-Version", "1999-01-01"}});
  EXPECT_EQ(old.status, 400) << old.body;
  McpReply ok =
      McpPost(Request(3, "ping"), session, "tok", {{"MCP-Protocol-Version", "2025-11-25"}});
  EXPECT_EQ(ok.status, 200) << ok.body;
  // Unknown method → -32601; batches are refused; a notification → 202.
  McpReply method = McpPost(Request(4, "resources/list"), session);
  EXPECT_EQ(method.json["error"]["code"], -32601) << method.body;
  McpReply batch = McpPost(Json::array({Request(5, "ping")}), session);
  EXPECT_EQ(batch.status, 400) << batch.body;
  EXPECT_EQ(batch.json["error"]["code"], -32600) << batch.body;
  McpReply note =
      McpPost({{"jsonrpc", "2.0"}, {"method", "notifications/roots/list_changed"}}, session);
  EXPECT_EQ(note.status, 202);
  auto parse_error = Client().Post("/mcp", {{"Accept", "application/json, text/event-stream"}},
                                   "{not json", "application/json");
  ASSERT_TRUE(parse_error);
  McpReply garbage = ToReply(parse_error);
  EXPECT_EQ(garbage.status, 400);
  EXPECT_EQ(garbage.json["error"]["code"], -32700) << garbage.body;
  // A client that does not accept SSE is refused (the spec's MUST).
  auto no_sse = Client().Post("/mcp", {{"Accept", "application/json"}}, Request(6, "ping").dump(),
                              "application/json");
  ASSERT_TRUE(no_sse);
  EXPECT_EQ(no_sse->status, 406);

  // GET: no server-initiated stream. DELETE ends the session.
  auto get = Client().Get("/mcp", {{"Accept", "text/event-stream"}, {"Mcp-Session-Id", session}});
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);
  auto del = Client().Delete("/mcp", {{"Mcp-Session-Id", session}});
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 204);
  EXPECT_EQ(McpPost(Request(7, "ping"), session).status, 404) << "the ended session";
  auto again = Client().Delete("/mcp", {{"Mcp-Session-Id", session}});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 404);
}

TEST_F(McpServerTest, UnauthenticatedRequestsAre401AndSessionsBelongToTheirUser) {
  Start(Json::array());
  McpReply none = McpPost(InitializeRequest("2025-11-25"), "", "");
  EXPECT_EQ(none.status, 401) << none.body;
  EXPECT_NE(none.www_authenticate.find("Bearer"), std::string::npos);
  EXPECT_EQ(McpPost(InitializeRequest("2025-11-25"), "", "wrong").status, 401);
  httplib::Client anon("127.0.0.1", port_);
  auto get = anon.Get("/mcp");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 401);

  // A session id is useless with another user's token: 404 like an unknown one.
  std::string session = Initialize();
  std::string bob = UserToken("bob");
  EXPECT_EQ(McpPost(Request(2, "ping"), session, bob).status, 404);
  EXPECT_EQ(McpPost(Request(2, "ping"), session, "tok").status, 200);
}

TEST_F(McpServerTest, ToolsListDescribesEveryToolWithSchemas) {
  Start(Json::array());
  std::string session = Initialize();
  McpReply r = McpPost(Request(2, "tools/list"), session);
  ASSERT_EQ(r.status, 200) << r.body;
  std::set<std::string> names;
  for (const auto& t : r.json["result"]["tools"]) {
    names.insert(t["name"].get<std::string>());
    EXPECT_EQ(t["inputSchema"]["type"], "object") << t.dump();
    EXPECT_EQ(t["outputSchema"]["type"], "object") << t.dump();
    EXPECT_FALSE(t.value("description", "").empty());
    EXPECT_FALSE(t.value("title", "").empty());
  }
  EXPECT_EQ(names, (std::set<std::string>{"create_task", "get_task", "list_tasks", "comment",
                                          "decide_request", "cancel_task"}));
  const Json create = r.json["result"]["tools"][0];
  EXPECT_EQ(create["inputSchema"]["required"], Json::array({"instruction"}));
  EXPECT_EQ(create["inputSchema"]["properties"]["wait"]["type"], "boolean");

  // A 2025-03-26 session gets no output schemas and no structuredContent
  // (the JSON is in the text block).
  std::string old = Initialize("2025-03-26");
  McpReply r2 = McpPost(Request(2, "tools/list"), old);
  for (const auto& t : r2.json["result"]["tools"]) EXPECT_FALSE(t.contains("outputSchema"));
  Json listed = Call(old, "list_tasks", Json::object());
  EXPECT_FALSE(listed.contains("structuredContent"));
  EXPECT_NE(Text(listed).find("\"tasks\":[]"), std::string::npos) << listed.dump();
}

TEST_F(McpServerTest, CreateTaskWithWaitStreamsProgressUntilTheJobsResult) {
  Start(Json::array({Matching(SucceedReply("MCP-RESULT-42 a haiku"), "MCP-WAIT write"),
                     Matching(SucceedReply("second"), "MCP-WAIT-2")}));
  std::string session = Initialize();
  McpReply r = McpPost(
      CallRequest(7, "create_task",
                  {{"instruction", "MCP-WAIT write a haiku"}, {"title", "haiku"}, {"wait", true}},
                  {{"progressToken", "prog-1"}}),
      session);
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(r.content_type.rfind("text/event-stream", 0), 0u) << r.content_type;
  ASSERT_GE(r.messages.size(), 2u) << r.body;

  // Progress first: the token, increasing values, a short message each.
  int64_t last = 0;
  std::string messages;
  for (size_t i = 0; i + 1 < r.messages.size(); ++i) {
    const Json& n = r.messages[i];
    ASSERT_EQ(n["method"], "notifications/progress") << n.dump();
    EXPECT_EQ(n["params"]["progressToken"], "prog-1");
    EXPECT_GT(n["params"]["progress"].get<int64_t>(), last);
    last = n["params"]["progress"].get<int64_t>();
    messages += n["params"]["message"].get<std::string>() + "\n";
  }
  EXPECT_NE(messages.find("task created"), std::string::npos) << messages;
  EXPECT_NE(messages.find("→ running"), std::string::npos) << messages;
  EXPECT_NE(messages.find("LLM call"), std::string::npos) << messages;
  EXPECT_NE(messages.find("→ succeeded"), std::string::npos) << messages;

  // Then the tools/call response, once the job is terminal.
  const Json& end = r.messages.back();
  EXPECT_EQ(end["id"], 7) << end.dump();
  const Json& result = end["result"];
  EXPECT_EQ(result["isError"], false);
  const Json& sc = result["structuredContent"];
  EXPECT_EQ(sc["status"], "succeeded");
  EXPECT_EQ(sc["waiting_human"], false);
  EXPECT_EQ(sc["result"], "MCP-RESULT-42 a haiku");
  EXPECT_EQ(sc["job"]["status"], "succeeded");
  EXPECT_EQ(sc["task"]["title"], "haiku");
  EXPECT_EQ(sc["task"]["owner"], "admin") << "the token's user owns the task";
  EXPECT_NE(Text(result).find("MCP-RESULT-42"), std::string::npos);
  // The same task over REST.
  Json shown = Get("/api/local/tasks/" + sc["task"]["id"].get<std::string>());
  EXPECT_EQ(shown["latest_job"]["result"], "MCP-RESULT-42 a haiku");

  // `wait` without a progress token: no notifications, just the result.
  McpReply quiet =
      McpPost(CallRequest(8, "create_task", {{"instruction", "MCP-WAIT-2 again"}, {"wait", true}}),
              session);
  ASSERT_EQ(quiet.messages.size(), 1u) << quiet.body;
  EXPECT_EQ(quiet.messages[0]["id"], 8);
  EXPECT_EQ(quiet.messages[0]["result"]["structuredContent"]["status"], "succeeded");
}

TEST_F(McpServerTest, CreateTaskWaitEndsWhenTheJobNeedsYouAndCommentAnswers) {
  Start(
      Json::array({Matching(ToolCallReply("complete", {{"status", "needs_user_input"},
                                                       {"result", "need a colour"},
                                                       {"question", "MCP-QUESTION which colour?"}}),
                            "MCP-ASK"),
                   Matching(SucceedReply("painted blue"), "blue")}));
  std::string session = Initialize();
  McpReply r = McpPost(
      CallRequest(9, "create_task", {{"instruction", "MCP-ASK paint the fence"}, {"wait", true}},
                  {{"progressToken", 5}}),
      session);
  ASSERT_FALSE(r.messages.empty()) << r.body;
  const Json& end = r.messages.back();
  ASSERT_EQ(end["id"], 9) << r.body;
  const Json& sc = end["result"]["structuredContent"];
  EXPECT_EQ(sc["status"], "waiting_human");
  EXPECT_EQ(sc["waiting_human"], true);
  EXPECT_EQ(sc["job"]["wait_reason"], "ask");
  EXPECT_EQ(sc["question"], "MCP-QUESTION which colour?") << sc.dump();
  EXPECT_NE(Text(end["result"]).find("needs you"), std::string::npos);
  EXPECT_EQ(r.messages.front()["params"]["progressToken"], 5) << "an integer token as given";

  // The answer goes through the write gate: a follow-up job.
  std::string task = sc["task"]["id"];
  Json answered = Call(session, "comment", {{"task_id", task}, {"body", "blue"}});
  EXPECT_EQ(answered["isError"], false) << answered.dump();
  EXPECT_EQ(answered["structuredContent"]["outcome"], "followup");
  std::string followup = answered["structuredContent"]["job"]["id"];
  WaitJob(task, followup, [](const Json& j) { return j["status"] == "succeeded"; });
}

TEST_F(McpServerTest, GetListCommentAndCancelTasksThroughTools) {
  Json slow = SucceedReply("slow done");
  slow["delay_ms"] = 4000;
  Start(Json::array({slow}));
  std::string session = Initialize();

  // Without wait: the queued task at once, as JSON.
  McpReply created =
      McpPost(CallRequest(11, "create_task", {{"instruction", "MCP-TOOLS work"}}), session);
  ASSERT_EQ(created.status, 200) << created.body;
  ASSERT_EQ(created.content_type.rfind("application/json", 0), 0u);
  const Json& sc = created.json["result"]["structuredContent"];
  std::string task = sc["task"]["id"];
  EXPECT_EQ(sc["job"]["status"], "queued");
  EXPECT_EQ(sc["task"]["piece"], "chat");

  Json shown = Call(session, "get_task", {{"task_id", task}});
  EXPECT_EQ(shown["isError"], false) << shown.dump();
  EXPECT_EQ(shown["structuredContent"]["task"]["id"], task);
  EXPECT_EQ(shown["structuredContent"]["jobs"].size(), 1u);

  Json listed = Call(session, "list_tasks", Json::object());
  ASSERT_EQ(listed["structuredContent"]["tasks"].size(), 1u) << listed.dump();
  EXPECT_EQ(listed["structuredContent"]["tasks"][0]["id"], task);
  Json none = Call(session, "list_tasks", {{"status", "failed"}});
  EXPECT_EQ(none["structuredContent"]["tasks"].size(), 0u);

  WaitFakeRequests(1);  // the job runs (its LLM call takes 4 s)
  Json comment = Call(session, "comment", {{"task_id", task}, {"body", "MCP-NOTE also rhyme"}});
  EXPECT_EQ(comment["isError"], false) << comment.dump();
  EXPECT_EQ(comment["structuredContent"]["outcome"], "interjection");

  // Another user sees nothing of it.
  std::string bob = UserToken("bob");
  std::string bob_session = Initialize("2025-11-25", bob);
  Json hidden = Call(bob_session, "get_task", {{"task_id", task}}, bob);
  EXPECT_EQ(hidden["isError"], true);
  EXPECT_NE(Text(hidden).find("no such task"), std::string::npos) << hidden.dump();
  EXPECT_EQ(
      Call(bob_session, "list_tasks", Json::object(), bob)["structuredContent"]["tasks"].size(),
      0u);
  EXPECT_EQ(Call(bob_session, "cancel_task", {{"task_id", task}}, bob)["isError"], true);

  Json cancelled = Call(session, "cancel_task", {{"task_id", task}});
  EXPECT_EQ(cancelled["isError"], false) << cancelled.dump();
  EXPECT_EQ(cancelled["structuredContent"]["stopping"].get<int>() +
                cancelled["structuredContent"]["cancelled"].get<int>(),
            1);
  WaitJob(task, sc["job"]["id"], [](const Json& j) { return j["status"] == "cancelled"; });
}

TEST_F(McpServerTest, BadArgumentsAreToolErrorsAndUnknownToolsAreProtocolErrors) {
  Start(Json::array());
  std::string session = Initialize();
  struct Case {
    std::string tool;
    Json args;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {"create_task", Json::object(), "instruction is required"},
           {"create_task", {{"instruction", "x"}, {"piece", "nope"}}, "unknown piece 'nope'"},
           {"create_task", {{"instruction", "x"}, {"wait", "yes"}}, "wait must be a boolean"},
           {"create_task", {{"instruction", "x"}, {"colour", "red"}}, "unknown argument 'colour'"},
           {"create_task", {{"instruction", 5}}, "instruction must be a string"},
           {"get_task", Json::object(), "task_id is required"},
           {"get_task", {{"task_id", "00000000-0000-0000-0000-000000000000"}}, "no such task"},
           {"list_tasks", {{"status", "sleeping"}}, "status must be one of"},
           {"comment", {{"task_id", "00000000-0000-0000-0000-000000000000"}}, "body is required"},
           {"decide_request",
            {{"task_id", "t"}, {"kind", "bogus"}, {"request_id", "r"}, {"decision", "approve"}},
            "kind must be tool, package or spawn"},
           {"cancel_task",
            {{"task_id", "00000000-0000-0000-0000-000000000000"}},
            "no such task"}}) {
    Json r = Call(session, c.tool, c.args);
    EXPECT_EQ(r["isError"], true) << c.tool << " " << r.dump();
    EXPECT_NE(Text(r).find(c.says), std::string::npos) << c.tool << ": " << r.dump();
    EXPECT_FALSE(r.contains("structuredContent"));
  }
  EXPECT_EQ(Get("/api/local/tasks")["tasks"].size(), 0u) << "a refused create wrote nothing";

  McpReply unknown = McpPost(CallRequest(1, "drop_database", Json::object()), session);
  EXPECT_EQ(unknown.json["error"]["code"], -32602) << unknown.body;
  McpReply not_object = McpPost(CallRequest(2, "get_task", "task"), session);
  EXPECT_EQ(not_object.json["error"]["code"], -32602) << not_object.body;
}

TEST_F(McpServerTest, HostileBodiesAndArgumentsGetJsonRpcErrorsAndTheServerStaysUp) {
  Start(Json::array());
  std::string session = Initialize();
  std::mt19937 rng(25);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<std::string> bodies;
  for (int i = 0; i < 30; ++i) {
    std::string b(static_cast<size_t>(1 + i * 5), '\0');
    for (char& c : b) c = static_cast<char>(byte(rng));
    bodies.push_back(b);
  }
  const std::string valid = CallRequest(1, "get_task", {{"task_id", "x"}}).dump();
  for (size_t cut = 1; cut < valid.size(); cut += 4) bodies.push_back(valid.substr(0, cut));
  bodies.push_back(std::string(100000, '{'));
  bodies.push_back("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}");
  bodies.push_back("{\"jsonrpc\":\"2.0\",\"id\":1e400,\"method\":\"ping\"}");
  bodies.push_back("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}");
  bodies.push_back("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}");
  bodies.push_back("{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"ping\"}");
  bodies.push_back("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}");
  bodies.push_back("[]");
  for (const std::string& body : bodies) {
    httplib::Client c("127.0.0.1", port_);
    c.set_bearer_token_auth("tok");
    auto r = c.Post(
        "/mcp", {{"Accept", "application/json, text/event-stream"}, {"Mcp-Session-Id", session}},
        body, "application/json");
    ASSERT_TRUE(r) << Json(body).dump().substr(0, 120);
    ASSERT_GE(r->status, 400) << Json(body).dump().substr(0, 120) << " -> " << r->body;
    ASSERT_LT(r->status, 500) << r->body;
    Json j = Json::parse(r->body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r->body;
    EXPECT_EQ(j["jsonrpc"], "2.0");
    EXPECT_TRUE(j["error"].contains("code")) << r->body;
    EXPECT_EQ(r->body.find("json.exception"), std::string::npos) << r->body;
    EXPECT_EQ(r->body.find("what()"), std::string::npos) << r->body;
  }
  // Every argument of every tool with values of the wrong type: a tool
  // error (isError) naming it, or a protocol error — never a 5xx.
  McpReply list = McpPost(Request(2, "tools/list"), session);
  int calls = 0;
  for (const auto& tool : list.json["result"]["tools"]) {
    for (const auto& [arg, schema] : tool["inputSchema"]["properties"].items()) {
      for (const Json& bad : {Json(7), Json(true), Json::object({{"x", 1}}), Json::array(),
                              Json(1.5e300), Json(std::string(5000, 'z'))}) {
        if (schema.value("type", "") == "string" && bad.is_string()) continue;
        Json args = {{arg, bad}};
        McpReply r = McpPost(CallRequest(3, tool["name"], args), session);
        ++calls;
        ASSERT_EQ(r.status, 200) << tool["name"] << " " << args.dump().substr(0, 80) << r.body;
        ASSERT_TRUE(r.json.contains("result")) << r.body;
        EXPECT_EQ(r.json["result"]["isError"], true)
            << tool["name"] << " " << args.dump() << r.body;
      }
    }
  }
  EXPECT_GT(calls, 50);
  auto health = Client().Get("/api/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(Get("/api/local/tasks")["tasks"].size(), 0u) << "nothing hostile was written";
  EXPECT_EQ(LogTail().find("AddressSanitizer"), std::string::npos) << LogTail();
}

TEST_F(McpServerTest, CancelledNotificationEndsTheWaitStreamButNotTheTask) {
  Json slow = SucceedReply("slow done");
  slow["delay_ms"] = 6000;
  Start(Json::array({slow}));
  std::string session = Initialize();
  McpReply waited;
  std::thread waiter([&] {
    waited =
        McpPost(CallRequest(21, "create_task", {{"instruction", "MCP-CANCEL slow"}, {"wait", true}},
                            {{"progressToken", "c-1"}}),
                session);
  });
  WaitFakeRequests(1);
  const auto t0 = std::chrono::steady_clock::now();
  McpReply note = McpPost({{"jsonrpc", "2.0"},
                           {"method", "notifications/cancelled"},
                           {"params", {{"requestId", 21}, {"reason", "user gave up"}}}},
                          session);
  EXPECT_EQ(note.status, 202);
  waiter.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s) << "the stream did not end";
  EXPECT_EQ(waited.status, 200) << waited.body;
  for (const auto& m : waited.messages) {
    EXPECT_FALSE(m.contains("id")) << "no response after a cancellation: " << m.dump();
  }
  // The task goes on (cancelling a request is not cancelling the task).
  Json tasks = Get("/api/local/tasks")["tasks"];
  ASSERT_EQ(tasks.size(), 1u);
  std::string task = tasks[0]["id"];
  Json job = Get("/api/local/tasks/" + task)["latest_job"];
  EXPECT_EQ(job["status"], "running") << job.dump();
  Post("/api/local/tasks/" + task + "/cancel", Json::object());
}

// The official MCP TypeScript SDK (tests/mcp, pinned; installed by
// scripts/mcp_servers.sh) as the client: connect with the bearer token,
// create_task with wait and an onprogress callback, get_task, DELETE.
TEST_F(McpServerTest, TheTypeScriptSdkClientCreatesATaskWithProgressAndReadsItsResult) {
  const std::string dir = MAESTRO_MCP_TEST_DIR;
  ASSERT_TRUE(std::filesystem::exists(dir + "/node_modules/@modelcontextprotocol/sdk/package.json"))
      << "the MCP SDK is not installed: run scripts/mcp_servers.sh";
  Start(Json::array({SucceedReply("SDK-RESULT-7 done")}));
  Process node({"/usr/bin/env", "node", dir + "/clients/sdk_client.mjs", ServerUrl() + "/mcp",
                "tok", "MCP-SDK write a haiku"},
               {}, dir_.File("node.out"), dir_.File("node.err"));
  auto code = node.Wait(60s);
  ASSERT_TRUE(code.has_value()) << "the SDK client did not finish";
  const std::string out = node.Stdout();
  ASSERT_EQ(*code, 0) << out << "\n" << node.Stderr() << "\n" << LogTail();

  std::map<std::string, Json> last;
  int progress_lines = 0;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    Json j = Json::parse(line, nullptr, false);
    ASSERT_TRUE(j.is_object()) << line;
    last[j["event"].get<std::string>()] = j;
    progress_lines += j["event"] == "progress";
  }
  EXPECT_EQ(last["connected"]["protocolVersion"], "2025-11-25") << out;
  EXPECT_EQ(last["connected"]["server"]["name"], "maestro");
  EXPECT_EQ(last["tools"]["names"].size(), 6u);
  const Json& result = last["result"];
  EXPECT_GE(result["progressCount"].get<int>(), 1) << out;
  EXPECT_EQ(result["progressCount"].get<int>(), progress_lines);
  EXPECT_EQ(result["result"]["isError"], false);
  EXPECT_EQ(result["result"]["structuredContent"]["status"], "succeeded") << out;
  EXPECT_EQ(result["result"]["structuredContent"]["result"], "SDK-RESULT-7 done");
  EXPECT_EQ(last["task"]["status"], "succeeded");
  EXPECT_TRUE(last.count("closed")) << "the session's DELETE failed: " << out;

  // The task it created, over REST.
  Json tasks = Get("/api/local/tasks")["tasks"];
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[0]["instruction"], "MCP-SDK write a haiku");
  EXPECT_EQ(tasks[0]["id"], last["task"]["id"]);
}

}  // namespace
}  // namespace maestro::testing
