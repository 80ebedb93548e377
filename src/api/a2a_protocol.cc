#include "api/a2a_protocol.h"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "api/http_util.h"

namespace maestro::api::a2a {

namespace {

constexpr std::array<std::pair<std::string_view, Method>, 9> kMethods = {{
    {"message/send", Method::kMessageSend},
    {"message/stream", Method::kMessageStream},
    {"tasks/get", Method::kTasksGet},
    {"tasks/cancel", Method::kTasksCancel},
    {"tasks/resubscribe", Method::kTasksResubscribe},
    {"tasks/pushNotificationConfig/set", Method::kPushConfigSet},
    {"tasks/pushNotificationConfig/get", Method::kPushConfigGet},
    {"tasks/pushNotificationConfig/list", Method::kPushConfigList},
    {"tasks/pushNotificationConfig/delete", Method::kPushConfigDelete},
}};

// Clients may send a history of any length; more than this is no history
// a reply could carry anyway.
constexpr int kMaxHistoryLength = 10000;

RpcError Invalid(const std::string& field, const std::string& what) {
  return {kInvalidParams, fmt::format("invalid params: {} {}", field, what), field};
}

bool Has(const Json& o, const char* key) { return o.contains(key) && !o[key].is_null(); }

// The string member `key` of object `o` at `path`: absent/null leaves *out
// unless `required`; another type (or a blank required one) is an error.
std::optional<RpcError> StringAt(const Json& o, const char* key, const std::string& path,
                                 bool required, std::string* out) {
  if (!Has(o, key)) {
    if (required) return Invalid(path, "is required");
    return std::nullopt;
  }
  if (!o[key].is_string()) return Invalid(path, "must be a string");
  *out = o[key].get<std::string>();
  if (required && out->find_first_not_of(" \t\r\n") == std::string::npos) {
    return Invalid(path, "must not be blank");
  }
  return std::nullopt;
}

std::optional<RpcError> ObjectAt(const Json& o, const char* key, const std::string& path,
                                 const Json** out) {
  *out = nullptr;
  if (!Has(o, key)) return std::nullopt;
  if (!o[key].is_object()) return Invalid(path, "must be an object");
  *out = &o[key];
  return std::nullopt;
}

std::optional<RpcError> HistoryLength(const Json& o, const std::string& path,
                                      std::optional<int>* out) {
  if (!Has(o, "historyLength")) return std::nullopt;
  const Json& v = o["historyLength"];
  if (!v.is_number_integer() ||
      (v.is_number_unsigned() ? v.get<uint64_t>() > kMaxHistoryLength
                              : v.get<int64_t>() < 0 || v.get<int64_t>() > kMaxHistoryLength)) {
    return Invalid(path, fmt::format("must be an integer from 0 to {}", kMaxHistoryLength));
  }
  *out = v.get<int>();
  return std::nullopt;
}

// A PushNotificationConfig object at `path`.
std::optional<RpcError> ParsePushConfig(const Json& o, const std::string& path, PushConfig* out) {
  if (!o.is_object()) return Invalid(path, "must be an object");
  if (auto e = StringAt(o, "url", path + ".url", true, &out->url)) return e;
  if (out->url.rfind("http://", 0) != 0 && out->url.rfind("https://", 0) != 0) {
    return Invalid(path + ".url", "must be an http or https URL");
  }
  if (auto e = StringAt(o, "id", path + ".id", false, &out->id)) return e;
  if (auto e = StringAt(o, "token", path + ".token", false, &out->token)) return e;
  const Json* auth = nullptr;
  if (auto e = ObjectAt(o, "authentication", path + ".authentication", &auth)) return e;
  if (!auth) return std::nullopt;
  const std::string schemes_path = path + ".authentication.schemes";
  if (!Has(*auth, "schemes") || !(*auth)["schemes"].is_array() || (*auth)["schemes"].empty() ||
      !(*auth)["schemes"][0].is_string()) {
    return Invalid(schemes_path, "must be a non-empty array of strings");
  }
  out->auth_scheme = (*auth)["schemes"][0].get<std::string>();
  return StringAt(*auth, "credentials", path + ".authentication.credentials", false,
                  &out->credentials);
}

// Message.parts: text parts only (maestro's agents read and write text).
std::optional<RpcError> MessageText(const Json& message, std::string* text) {
  if (!Has(message, "parts") || !message["parts"].is_array() || message["parts"].empty()) {
    return Invalid("message.parts", "must be a non-empty array");
  }
  for (size_t i = 0; i < message["parts"].size(); ++i) {
    const Json& part = message["parts"][i];
    const std::string path = fmt::format("message.parts[{}]", i);
    if (!part.is_object()) return Invalid(path, "must be an object");
    std::string kind;
    if (auto e = StringAt(part, "kind", path + ".kind", true, &kind)) return e;
    if (kind != "text") {
      return RpcError{kContentTypeNotSupported,
                      fmt::format("{}.kind '{}' is not supported: maestro takes text parts only",
                                  path, SafeEcho(kind)),
                      path + ".kind"};
    }
    std::string part_text;
    if (auto e = StringAt(part, "text", path + ".text", true, &part_text)) return e;
    if (!text->empty()) *text += "\n\n";
    *text += part_text;
  }
  return std::nullopt;
}

// metadata.piece and metadata.space of `metadata` (at `path`), when given.
std::optional<RpcError> TaskChoicesFrom(const Json* metadata, const std::string& path,
                                        SendParams* out) {
  if (!metadata) return std::nullopt;
  if (auto e = StringAt(*metadata, "piece", path + ".piece", false, &out->piece)) return e;
  return StringAt(*metadata, "space", path + ".space", false, &out->space);
}

}  // namespace

Json RpcResult(const Json& id, Json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

Json RpcErrorJson(const Json& id, const RpcError& error) {
  Json e = {{"code", error.code}, {"message", error.message}};
  if (!error.field.empty()) e["data"] = {{"field", error.field}};
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(e)}};
}

std::optional<Method> ParseMethod(std::string_view name) {
  for (const auto& [n, m] : kMethods) {
    if (n == name) return m;
  }
  return std::nullopt;
}

bool IsStreaming(Method m) { return m == Method::kMessageStream || m == Method::kTasksResubscribe; }

std::optional<RpcError> ParseRequest(const std::string& body, RpcRequest* out) {
  *out = RpcRequest{};
  const size_t first = body.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && body[first] == '[') {
    return RpcError{kInvalidRequest, "JSON-RPC batches are not supported: send one request"};
  }
  auto msg = ParseObject(body);  // valid UTF-8, bounded nesting; never the parser's own text
  if (!msg.ok()) return RpcError{kParseError, "parse error: " + msg.status().message()};
  if (msg->contains("id") && ((*msg)["id"].is_string() || (*msg)["id"].is_number_integer())) {
    out->id = (*msg)["id"];
  }
  if (!msg->contains("jsonrpc") || (*msg)["jsonrpc"] != "2.0") {
    return RpcError{kInvalidRequest, "jsonrpc must be \"2.0\""};
  }
  if (out->id.is_null()) {
    return RpcError{kInvalidRequest,
                    "id must be a string or an integer (A2A methods are requests)"};
  }
  if (!msg->contains("method") || !(*msg)["method"].is_string()) {
    return RpcError{kInvalidRequest, "method must be a string"};
  }
  out->method = (*msg)["method"].get<std::string>();
  if (msg->contains("params")) {
    if (!(*msg)["params"].is_object()) {
      return RpcError{kInvalidParams, "invalid params: params must be an object", "params"};
    }
    out->params = (*msg)["params"];
  }
  return std::nullopt;
}

Json PushConfigJson(const std::string& task_id, const PushConfig& c) {
  Json config = {{"id", c.id.empty() ? task_id : c.id}, {"url", c.url}};
  if (!c.token.empty()) config["token"] = c.token;
  // The credentials stay with the server: a reader of the config sees the
  // scheme only.
  if (!c.auth_scheme.empty()) config["authentication"] = {{"schemes", {c.auth_scheme}}};
  return {{"taskId", task_id}, {"pushNotificationConfig", std::move(config)}};
}

std::optional<RpcError> ParseSendParams(const Json& params, SendParams* out) {
  const Json* message = nullptr;
  if (auto e = ObjectAt(params, "message", "message", &message)) return e;
  if (!message) return Invalid("message", "is required");
  if (Has(*message, "kind") && (*message)["kind"] != "message") {
    return Invalid("message.kind", "must be \"message\"");
  }
  std::string role;
  if (auto e = StringAt(*message, "role", "message.role", true, &role)) return e;
  if (role != "user") return Invalid("message.role", "must be \"user\"");
  if (auto e = StringAt(*message, "messageId", "message.messageId", true, &out->message_id)) {
    return e;
  }
  if (auto e = MessageText(*message, &out->text)) return e;
  if (auto e = StringAt(*message, "taskId", "message.taskId", false, &out->task_id)) return e;
  const Json* params_metadata = nullptr;
  if (auto e = ObjectAt(params, "metadata", "metadata", &params_metadata)) return e;
  if (auto e = TaskChoicesFrom(params_metadata, "metadata", out)) return e;
  const Json* message_metadata = nullptr;
  if (auto e = ObjectAt(*message, "metadata", "message.metadata", &message_metadata)) return e;
  if (auto e = TaskChoicesFrom(message_metadata, "message.metadata", out)) return e;

  const Json* config = nullptr;
  if (auto e = ObjectAt(params, "configuration", "configuration", &config)) return e;
  if (!config) return std::nullopt;
  if (Has(*config, "blocking")) {
    if (!(*config)["blocking"].is_boolean()) {
      return Invalid("configuration.blocking", "must be a boolean");
    }
    out->blocking = (*config)["blocking"].get<bool>();
  }
  if (auto e = HistoryLength(*config, "configuration.historyLength", &out->history_length)) {
    return e;
  }
  if (Has(*config, "acceptedOutputModes")) {
    const Json& modes = (*config)["acceptedOutputModes"];
    if (!modes.is_array()) return Invalid("configuration.acceptedOutputModes", "must be an array");
    bool text = modes.empty();
    for (const auto& m : modes) text = text || m == "text/plain" || m == "text" || m == "*/*";
    if (!text) {
      return RpcError{kContentTypeNotSupported,
                      "configuration.acceptedOutputModes must include text/plain: maestro answers "
                      "in text",
                      "configuration.acceptedOutputModes"};
    }
  }
  if (Has(*config, "pushNotificationConfig")) {
    PushConfig push;
    if (auto e = ParsePushConfig((*config)["pushNotificationConfig"],
                                 "configuration.pushNotificationConfig", &push)) {
      return e;
    }
    out->push = std::move(push);
  }
  return std::nullopt;
}

std::optional<RpcError> ParseTaskQuery(const Json& params, bool allow_history, TaskQuery* out) {
  if (auto e = StringAt(params, "id", "id", true, &out->id)) return e;
  if (!allow_history) return std::nullopt;
  return HistoryLength(params, "historyLength", &out->history_length);
}

std::optional<RpcError> ParsePushConfigParams(Method m, const Json& params, PushConfigParams* out) {
  if (m == Method::kPushConfigSet) {
    if (auto e = StringAt(params, "taskId", "taskId", true, &out->task_id)) return e;
    if (!Has(params, "pushNotificationConfig")) {
      return Invalid("pushNotificationConfig", "is required");
    }
    return ParsePushConfig(params["pushNotificationConfig"], "pushNotificationConfig",
                           &out->config);
  }
  if (auto e = StringAt(params, "id", "id", true, &out->task_id)) return e;
  if (m == Method::kPushConfigList) return std::nullopt;
  return StringAt(params, "pushNotificationConfigId", "pushNotificationConfigId",
                  m == Method::kPushConfigDelete, &out->config_id);
}

}  // namespace maestro::api::a2a
