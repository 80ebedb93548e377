// The A2A JSON-RPC layer (api/a2a_protocol.h): the envelope's parse and
// its error codes, the method table, and each method's params with the
// field every refusal names.
#include "api/a2a_protocol.h"

#include <gtest/gtest.h>

namespace maestro::api::a2a {
namespace {

Json TextMessage(const std::string& text) {
  return {{"kind", "message"},
          {"messageId", "m-1"},
          {"role", "user"},
          {"parts", Json::array({{{"kind", "text"}, {"text", text}}})}};
}

std::optional<RpcError> Parse(const std::string& body, RpcRequest* out) {
  return ParseRequest(body, out);
}

TEST(A2aProtocol, ParsesARequestAndKeepsItsId) {
  RpcRequest r;
  EXPECT_FALSE(Parse(R"({"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"id":"t"}})", &r));
  EXPECT_EQ(r.id, 7);
  EXPECT_EQ(r.method, "tasks/get");
  EXPECT_EQ(r.params["id"], "t");
  EXPECT_FALSE(Parse(R"({"jsonrpc":"2.0","id":"abc","method":"tasks/get"})", &r));
  EXPECT_EQ(r.id, "abc");
  EXPECT_EQ(r.params, Json::object()) << "params default to {}";
}

TEST(A2aProtocol, EnvelopeErrorsHaveTheJsonRpcCodes) {
  RpcRequest r;
  auto e = Parse("{not json", &r);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code, kParseError);
  EXPECT_TRUE(r.id.is_null());
  e = Parse(R"([{"jsonrpc":"2.0","id":1,"method":"tasks/get"}])", &r);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code, kInvalidRequest) << "no batches";
  e = Parse(R"({"jsonrpc":"1.0","id":3,"method":"tasks/get"})", &r);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code, kInvalidRequest);
  EXPECT_EQ(r.id, 3) << "the id is kept for the error answer";
  e = Parse(R"({"jsonrpc":"2.0","method":"tasks/get"})", &r);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code, kInvalidRequest) << "a notification: A2A has none";
  e = Parse(R"({"jsonrpc":"2.0","id":{"x":1},"method":"tasks/get"})", &r);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code, kInvalidRequest);
  e = Parse(R"({"jsonrpc":"2.0","id":1,"method":5})", &r);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code, kInvalidRequest);
  e = Parse(R"({"jsonrpc":"2.0","id":1,"method":"tasks/get","params":[1]})", &r);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code, kInvalidParams);
  EXPECT_EQ(e->field, "params");
}

TEST(A2aProtocol, MethodTableAndStreamingMethods) {
  for (const char* name :
       {"message/send", "message/stream", "tasks/get", "tasks/cancel", "tasks/resubscribe",
        "tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get",
        "tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete"}) {
    EXPECT_TRUE(ParseMethod(name)) << name;
  }
  EXPECT_FALSE(ParseMethod("tasks/list"));
  EXPECT_FALSE(ParseMethod("message/Send"));
  EXPECT_TRUE(IsStreaming(*ParseMethod("message/stream")));
  EXPECT_TRUE(IsStreaming(*ParseMethod("tasks/resubscribe")));
  EXPECT_FALSE(IsStreaming(*ParseMethod("message/send")));
  EXPECT_FALSE(IsStreaming(*ParseMethod("tasks/get")));
}

TEST(A2aProtocol, ErrorJsonCarriesTheFieldAsData) {
  Json e = RpcErrorJson("x", {kInvalidParams, "invalid params: id is required", "id"});
  EXPECT_EQ(e["jsonrpc"], "2.0");
  EXPECT_EQ(e["id"], "x");
  EXPECT_EQ(e["error"]["code"], -32602);
  EXPECT_EQ(e["error"]["data"]["field"], "id");
  Json plain = RpcErrorJson(1, {kTaskNotFound, "no such task: t"});
  EXPECT_EQ(plain["error"]["code"], -32001);
  EXPECT_FALSE(plain["error"].contains("data"));
  EXPECT_EQ(RpcResult(2, {{"a", 1}})["result"]["a"], 1);
}

TEST(A2aProtocol, SendParamsTakeTheTextTaskChoicesAndConfiguration) {
  Json message = TextMessage("first");
  message["parts"].push_back({{"kind", "text"}, {"text", "second"}});
  message["metadata"] = {{"piece", "coding"}};
  Json params = {{"message", message},
                 {"metadata", {{"piece", "chat"}, {"space", "repo"}}},
                 {"configuration",
                  {{"blocking", false},
                   {"historyLength", 2},
                   {"acceptedOutputModes", {"text/plain"}},
                   {"pushNotificationConfig",
                    {{"url", "http://127.0.0.1:9/hook"},
                     {"token", "tk"},
                     {"authentication", {{"schemes", {"Bearer"}}, {"credentials", "c"}}}}}}}};
  SendParams p;
  ASSERT_FALSE(ParseSendParams(params, &p));
  EXPECT_EQ(p.text, "first\n\nsecond");
  EXPECT_EQ(p.message_id, "m-1");
  EXPECT_EQ(p.piece, "coding") << "the message's metadata wins over the params'";
  EXPECT_EQ(p.space, "repo");
  EXPECT_FALSE(p.blocking);
  EXPECT_EQ(p.history_length, 2);
  ASSERT_TRUE(p.push);
  EXPECT_EQ(p.push->url, "http://127.0.0.1:9/hook");
  EXPECT_EQ(p.push->token, "tk");
  EXPECT_EQ(p.push->auth_scheme, "Bearer");
  EXPECT_EQ(p.push->credentials, "c");

  SendParams defaults;
  ASSERT_FALSE(ParseSendParams({{"message", TextMessage("hi")}}, &defaults));
  EXPECT_TRUE(defaults.blocking) << "the spec's default";
  EXPECT_TRUE(defaults.task_id.empty());
  EXPECT_FALSE(defaults.push);
}

// Each bad input names its field.
TEST(A2aProtocol, SendParamsRefusalsNameTheField) {
  struct Case {
    Json params;
    int code;
    std::string field;
  };
  auto with = [](const char* key, Json value) {
    Json m = TextMessage("x");
    m[key] = std::move(value);
    return Json{{"message", m}};
  };
  std::vector<Case> cases = {
      {Json::object(), kInvalidParams, "message"},
      {{{"message", "text"}}, kInvalidParams, "message"},
      {with("role", "agent"), kInvalidParams, "message.role"},
      {with("kind", "task"), kInvalidParams, "message.kind"},
      {with("messageId", 5), kInvalidParams, "message.messageId"},
      {with("parts", Json::array()), kInvalidParams, "message.parts"},
      {with("parts", Json::array({{{"kind", "text"}, {"text", 3}}})), kInvalidParams,
       "message.parts[0].text"},
      {with("parts", Json::array({{{"kind", "text"}, {"text", "  "}}})), kInvalidParams,
       "message.parts[0].text"},
      {with("parts", Json::array({{{"kind", "file"}, {"file", {{"uri", "x"}}}}})),
       kContentTypeNotSupported, "message.parts[0].kind"},
      {with("taskId", 1), kInvalidParams, "message.taskId"},
      {with("metadata", {{"piece", 1}}), kInvalidParams, "message.metadata.piece"},
      {{{"message", TextMessage("x")}, {"configuration", {{"blocking", "yes"}}}},
       kInvalidParams,
       "configuration.blocking"},
      {{{"message", TextMessage("x")}, {"configuration", {{"historyLength", -1}}}},
       kInvalidParams,
       "configuration.historyLength"},
      {{{"message", TextMessage("x")}, {"configuration", {{"acceptedOutputModes", {"image/png"}}}}},
       kContentTypeNotSupported,
       "configuration.acceptedOutputModes"},
      {{{"message", TextMessage("x")},
        {"configuration", {{"pushNotificationConfig", {{"url", "ftp://x"}}}}}},
       kInvalidParams,
       "configuration.pushNotificationConfig.url"},
  };
  for (const auto& c : cases) {
    SendParams p;
    auto e = ParseSendParams(c.params, &p);
    ASSERT_TRUE(e) << c.params.dump();
    EXPECT_EQ(e->code, c.code) << c.params.dump();
    EXPECT_EQ(e->field, c.field) << c.params.dump();
    EXPECT_NE(e->message.find(c.field), std::string::npos) << e->message;
  }
}

TEST(A2aProtocol, TaskQueryAndPushConfigParams) {
  TaskQuery q;
  ASSERT_FALSE(ParseTaskQuery({{"id", "t1"}, {"historyLength", 3}}, true, &q));
  EXPECT_EQ(q.id, "t1");
  EXPECT_EQ(q.history_length, 3);
  auto missing = ParseTaskQuery(Json::object(), false, &q);
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->code, kInvalidParams);
  EXPECT_EQ(missing->field, "id");

  PushConfigParams set;
  ASSERT_FALSE(ParsePushConfigParams(
      Method::kPushConfigSet,
      {{"taskId", "t1"}, {"pushNotificationConfig", {{"id", "c1"}, {"url", "https://h/x"}}}},
      &set));
  EXPECT_EQ(set.task_id, "t1");
  EXPECT_EQ(set.config.id, "c1");
  auto no_config = ParsePushConfigParams(Method::kPushConfigSet, {{"taskId", "t1"}}, &set);
  ASSERT_TRUE(no_config);
  EXPECT_EQ(no_config->field, "pushNotificationConfig");
  PushConfigParams del;
  auto no_id = ParsePushConfigParams(Method::kPushConfigDelete, {{"id", "t1"}}, &del);
  ASSERT_TRUE(no_id);
  EXPECT_EQ(no_id->field, "pushNotificationConfigId");
  PushConfigParams get;
  EXPECT_FALSE(ParsePushConfigParams(Method::kPushConfigGet, {{"id", "t1"}}, &get))
      << "get without a config id: the task's first";

  Json shown = PushConfigJson("t1", {.id = "",
                                     .url = "http://h/x",
                                     .token = "tk",
                                     .auth_scheme = "Bearer",
                                     .credentials = "secret"});
  EXPECT_EQ(shown["taskId"], "t1");
  EXPECT_EQ(shown["pushNotificationConfig"]["id"], "t1") << "no id: the task's";
  EXPECT_EQ(shown["pushNotificationConfig"]["authentication"]["schemes"][0], "Bearer");
  EXPECT_EQ(shown.dump().find("secret"), std::string::npos) << "credentials are not shown";
}

}  // namespace
}  // namespace maestro::api::a2a
