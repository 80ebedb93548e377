// A2A protocol (Agent2Agent v0.3) over JSON-RPC 2.0: the request envelope,
// the method names, the error codes and the typed parameters of each method
// maestro serves at `POST /a2a` (a2a_endpoint.h answers them).
//
// Where it sits: the first step of an A2A request. The endpoint hands the
// POST body to ParseRequest, the method's params to its Parse*Params, and
// answers with RpcResult / RpcErrorJson; nothing here reads the store.
// Every refusal names what was wrong: an invalid param is -32602 with the
// field's path (`message.parts[0].text`) in the message and in
// `error.data.field`.
//
// Thread safety: pure functions over values.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/json.h"

namespace maestro::api::a2a {

inline constexpr const char* kProtocolVersion = "0.3.0";

// JSON-RPC 2.0's codes and A2A's own (spec §8.2).
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kTaskNotFound = -32001;
inline constexpr int kTaskNotCancelable = -32002;
inline constexpr int kPushNotificationNotSupported = -32003;
inline constexpr int kUnsupportedOperation = -32004;
inline constexpr int kContentTypeNotSupported = -32005;

struct RpcError {
  RpcError(int c, std::string m, std::string f = "")
      : code(c), message(std::move(m)), field(std::move(f)) {}
  int code;
  std::string message;
  std::string field;  // the invalid param's path, sent as error.data.field
};

Json RpcResult(const Json& id, Json result);
Json RpcErrorJson(const Json& id, const RpcError& error);

enum class Method {
  kMessageSend,
  kMessageStream,
  kTasksGet,
  kTasksCancel,
  kTasksResubscribe,
  kPushConfigSet,
  kPushConfigGet,
  kPushConfigList,
  kPushConfigDelete,
};
std::optional<Method> ParseMethod(std::string_view name);
// message/stream and tasks/resubscribe answer with an SSE stream.
bool IsStreaming(Method m);

struct RpcRequest {
  Json id;  // string or integer
  std::string method;
  Json params = Json::object();
};
// One JSON-RPC request (no batches, no notifications: A2A has none). On
// success stores it in *out and returns nullopt; else returns the error to
// answer, and out->id is the request's id when one could be read (null
// otherwise).
std::optional<RpcError> ParseRequest(const std::string& body, RpcRequest* out);

// PushNotificationConfig: where to POST a task's updates.
struct PushConfig {
  std::string id;     // the client's id for it; "" → the task id
  std::string url;    // http(s)
  std::string token;  // sent back as X-A2A-Notification-Token
  // authentication: the scheme ("Bearer", "Basic") and credentials for the
  // Authorization header of each POST; empty: none.
  std::string auth_scheme;
  std::string credentials;
};
Json PushConfigJson(const std::string& task_id, const PushConfig& c);

// message/send and message/stream (MessageSendParams).
struct SendParams {
  std::string message_id;
  std::string text;     // the text parts, joined by blank lines
  std::string task_id;  // set: the message continues that task
  // metadata.piece / metadata.space of the message or of the params (the
  // message's win): the piece and space of a new task ("" = defaults).
  std::string piece;
  std::string space;
  bool blocking = true;  // configuration.blocking (the spec's default)
  std::optional<int> history_length;
  std::optional<PushConfig> push;  // configuration.pushNotificationConfig
};
std::optional<RpcError> ParseSendParams(const Json& params, SendParams* out);

// tasks/get (TaskQueryParams), tasks/cancel and tasks/resubscribe
// (TaskIdParams: history_length is refused there).
struct TaskQuery {
  std::string id;
  std::optional<int> history_length;
};
std::optional<RpcError> ParseTaskQuery(const Json& params, bool allow_history, TaskQuery* out);

// tasks/pushNotificationConfig/*: set {taskId, pushNotificationConfig};
// get {id, pushNotificationConfigId?}; list {id}; delete {id,
// pushNotificationConfigId}.
struct PushConfigParams {
  std::string task_id;
  std::string config_id;  // get (optional), delete (required)
  PushConfig config;      // set
};
std::optional<RpcError> ParsePushConfigParams(Method m, const Json& params, PushConfigParams* out);

}  // namespace maestro::api::a2a
