// mcp::Client over a Channel: the JSON-RPC half both transports share —
// request ids, the pending-request table, progress tokens, notification and
// server-request dispatch, the initialize handshake, and turning tool
// results into text for the model.
#include "mcp/mcp_client.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <set>

#include "core/mutex.h"
#include "mcp/channel.h"
#include "mcp/http_transport.h"
#include "mcp/stdio_transport.h"

namespace maestro::mcp {

const std::vector<std::string>& SupportedProtocols() {
  static const std::vector<std::string> kVersions = {kLatestProtocol, "2025-06-18", "2025-03-26"};
  return kVersions;
}

bool IsAuthError(const Status& st) {
  return st.code() == StatusCode::kInvalidArgument && st.field() == kAuthErrorField;
}

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr int kMethodNotFound = -32601;
constexpr auto kCancelPoll = 20ms;  // how often a waiting call looks at its CancelToken

std::string Str(const Json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

// Bytes a base64 text decodes to (padding and line breaks not counted).
size_t Base64Size(const std::string& b64) {
  size_t chars = std::count_if(b64.begin(), b64.end(), [](char c) {
    return c != '=' && c != '\n' && c != '\r' && c != ' ';
  });
  return chars * 3 / 4;
}

std::string Sized(const std::string& kind, const std::string& mime, const std::string& data) {
  return "[" + kind + (mime.empty() ? "" : " " + mime) + ", " + std::to_string(Base64Size(data)) +
         " bytes]";
}

// One content block as the model reads it (see CallResult::text).
std::string RenderBlock(const Json& block, bool* is_text) {
  const std::string type = Str(block, "type");
  *is_text = type == "text";
  if (type == "text") return Str(block, "text");
  if (type == "image" || type == "audio") {
    return Sized(type, Str(block, "mimeType"), Str(block, "data"));
  }
  if (type == "resource_link") {
    const std::string name = Str(block, "name");
    return "[resource " + Str(block, "uri") + (name.empty() ? "" : " " + name) + "]";
  }
  if (type == "resource") {
    const Json& res = block.contains("resource") ? block["resource"] : Json();
    if (res.is_object() && res.contains("text")) return Str(res, "text");
    return Sized("resource " + Str(res, "uri"), Str(res, "mimeType"), Str(res, "blob"));
  }
  return "[" + (type.empty() ? std::string("unknown") : type) + " content]";
}

CallResult ParseCallResult(Json result) {
  CallResult out;
  if (!result.is_object()) result = Json::object();
  out.is_error = result.value("isError", false);
  if (result.contains("content") && result["content"].is_array()) {
    out.content = std::move(result["content"]);
  }
  if (result.contains("structuredContent")) out.structured = std::move(result["structuredContent"]);
  std::string text;
  bool any_text = false;
  for (const Json& block : out.content) {
    bool is_text = false;
    std::string part = RenderBlock(block, &is_text);
    any_text = any_text || is_text;
    if (!text.empty()) text += "\n";
    text += part;
  }
  if (!out.structured.is_null() && !any_text) {
    if (!text.empty()) text += "\n";
    text += DumpJson(out.structured);
  }
  out.text = std::move(text);
  return out;
}

std::optional<Tool> ParseTool(const Json& t) {
  Tool tool;
  tool.name = Str(t, "name");
  if (tool.name.empty()) return std::nullopt;
  tool.description = Str(t, "description");
  if (t.contains("annotations") && t["annotations"].is_object()) {
    tool.annotations = t["annotations"];
    tool.read_only = tool.annotations.value("readOnlyHint", false);
  }
  tool.title = Str(t, "title");
  if (tool.title.empty()) tool.title = Str(tool.annotations, "title");
  if (t.contains("inputSchema") && t["inputSchema"].is_object())
    tool.input_schema = t["inputSchema"];
  if (!tool.input_schema.contains("type")) tool.input_schema["type"] = "object";
  if (t.contains("outputSchema") && t["outputSchema"].is_object()) {
    tool.output_schema = t["outputSchema"];
  }
  return tool;
}

class ClientImpl final : public Client {
 public:
  ClientImpl(std::unique_ptr<Channel> channel, ClientOptions options)
      : channel_(std::move(channel)), options_(std::move(options)) {}
  ~ClientImpl() override { Close(); }

  Status Handshake();

  const std::string& protocol_version() const override { return protocol_; }
  const Json& server_info() const override { return server_info_; }
  const Json& server_capabilities() const override { return capabilities_; }
  Result<std::vector<Tool>> ListTools() override;
  Result<CallResult> CallTool(const std::string& name, const Json& arguments,
                              const CallOptions& options) override;
  Status Ping() override { return Request("ping", nullptr, {}).status(); }
  bool tools_changed() const override { return tools_changed_.load(); }
  void Close() override;

 private:
  // The on_progress of one call. Deactivated (under mu) before the call
  // returns, so the callback never runs after its caller has gone.
  struct ProgressSink {
    Mutex mu;
    bool active GUARDED_BY(mu) = true;
    decltype(CallOptions::on_progress) fn;  // set before the sink is shared
  };
  struct Pending {
    std::atomic<bool> answered{false};  // polled by Channel::DoneFn without the lock
    Json reply;                         // written under mu_, read by the caller once `answered`
  };
  struct RequestSpec {
    std::chrono::milliseconds timeout{0};  // 0: options_.request_timeout
    const CancelToken* cancel = nullptr;
    std::shared_ptr<ProgressSink> progress;
    bool cancellable = true;  // initialize must never be cancelled (MCP lifecycle)
  };

  Result<Json> Request(const std::string& method, Json params, const RequestSpec& spec);
  Status Notify(const std::string& method, Json params);
  void OnMessage(Json message);
  void OnNotification(const std::string& method, const Json& params);
  void OnLost(Status why);
  void AnswerServerRequest(const Json& request);

  const std::unique_ptr<Channel> channel_;
  const ClientOptions options_;
  // Written by Handshake only, before the Client is handed out.
  std::string protocol_;
  Json server_info_ = Json::object();
  Json capabilities_ = Json::object();

  std::atomic<bool> tools_changed_{false};
  std::atomic<bool> closed_{false};
  std::atomic<bool> lost_flag_{false};  // lost_ is set; for DoneFn without the lock

  Mutex mu_;
  CondVar cv_;
  int64_t next_id_ GUARDED_BY(mu_) = 1;
  std::map<int64_t, std::shared_ptr<Pending>> pending_ GUARDED_BY(mu_);
  std::map<int64_t, std::shared_ptr<ProgressSink>> progress_ GUARDED_BY(mu_);
  std::optional<Status> lost_ GUARDED_BY(mu_);
};

Status ClientImpl::Handshake() {
  Channel::Sink sink;
  sink.on_message = [this](Json m) { OnMessage(std::move(m)); };
  sink.on_lost = [this](Status why) { OnLost(std::move(why)); };
  MAESTRO_RETURN_IF_ERROR(channel_->Start(std::move(sink)));
  Json params = {
      {"protocolVersion", kLatestProtocol},
      {"capabilities", Json::object()},  // no roots, sampling or elicitation
      {"clientInfo", {{"name", options_.client_name}, {"version", options_.client_version}}}};
  RequestSpec spec;
  spec.timeout = options_.connect_timeout;
  spec.cancellable = false;
  MAESTRO_ASSIGN_OR_RETURN(Json result, Request("initialize", std::move(params), spec));
  const std::string version = Str(result, "protocolVersion");
  const auto& ok = SupportedProtocols();
  if (std::find(ok.begin(), ok.end(), version) == ok.end()) {
    std::string list;
    for (const auto& v : ok) list += (list.empty() ? "" : ", ") + v;
    return InvalidArgument("MCP server answered initialize with protocol version '" + version +
                           "'; maestro speaks " + list);
  }
  protocol_ = version;
  if (result.contains("serverInfo") && result["serverInfo"].is_object()) {
    server_info_ = result["serverInfo"];
  }
  if (result.contains("capabilities") && result["capabilities"].is_object()) {
    capabilities_ = result["capabilities"];
  }
  channel_->Initialized(protocol_);
  return Notify("notifications/initialized", nullptr);
}

Result<Json> ClientImpl::Request(const std::string& method, Json params, const RequestSpec& spec) {
  auto pending = std::make_shared<Pending>();
  int64_t id = 0;
  {
    MutexLock lock(&mu_);
    if (closed_) return Unavailable("the MCP session is closed");
    if (lost_) return *lost_;
    id = next_id_++;
    pending_[id] = pending;
    if (spec.progress) {
      progress_[id] = spec.progress;
      params["_meta"]["progressToken"] = id;  // the request id doubles as its token
    }
  }
  const auto timeout = spec.timeout.count() > 0 ? spec.timeout : options_.request_timeout;
  const auto deadline = Clock::now() + timeout;
  auto cancelled = [&] { return spec.cancel && spec.cancel->IsCancelled(); };
  auto gave_up = [&] {
    return closed_.load() || lost_flag_.load() || cancelled() || Clock::now() >= deadline;
  };
  Json message = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) message["params"] = std::move(params);
  Status sent = channel_->Send(message, [&] { return pending->answered.load() || gave_up(); });

  std::optional<Status> lost;
  {
    MutexLock lock(&mu_);
    while (sent.ok() && !pending->answered && !gave_up()) cv_.WaitFor(&mu_, kCancelPoll);
    pending_.erase(id);
    progress_.erase(id);
    lost = lost_;
  }
  if (spec.progress) {
    MutexLock lock(&spec.progress->mu);  // waits out a running callback
    spec.progress->active = false;
  }
  if (pending->answered) {
    Json& reply = pending->reply;
    if (reply.contains("error")) {
      const Json& e = reply["error"];
      std::string code = e.is_object() && e.contains("code") ? e["code"].dump() : "?";
      return InvalidArgument(method + ": " + Str(e, "message") + " (JSON-RPC error " + code + ")");
    }
    return reply.contains("result") ? std::move(reply["result"]) : Json::object();
  }
  if (cancelled()) {
    if (spec.cancellable) {
      const std::string why(CancelReasonName(spec.cancel->reason()));
      Notify("notifications/cancelled", {{"requestId", id}, {"reason", "cancelled: " + why}})
          .IgnoreError();
    }
    return Status(StatusCode::kCancelled, method + " cancelled");
  }
  if (closed_) return Unavailable(method + ": the MCP session was closed");
  if (lost) return *lost;
  if (!sent.ok()) return sent;
  if (spec.cancellable) {
    Notify("notifications/cancelled", {{"requestId", id}, {"reason", "timed out"}}).IgnoreError();
  }
  return Status(StatusCode::kDeadlineExceeded,
                "no reply to " + method + " within " + std::to_string(timeout.count()) + " ms");
}

Status ClientImpl::Notify(const std::string& method, Json params) {
  Json message = {{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.is_null()) message["params"] = std::move(params);
  return channel_->Send(message, nullptr);
}

void ClientImpl::OnMessage(Json message) {
  if (!message.is_object()) return;
  if (message.contains("method")) {
    if (message.contains("id")) {
      AnswerServerRequest(message);
    } else {
      OnNotification(Str(message, "method"),
                     message.contains("params") ? message["params"] : Json::object());
    }
    return;
  }
  auto id = message.find("id");
  if (id == message.end() || !id->is_number_integer()) return;  // not one of ours
  MutexLock lock(&mu_);
  auto it = pending_.find(id->get<int64_t>());
  if (it == pending_.end()) return;  // cancelled or timed out meanwhile
  it->second->reply = std::move(message);
  it->second->answered = true;
  cv_.SignalAll();
}

void ClientImpl::OnNotification(const std::string& method, const Json& params) {
  if (method == "notifications/tools/list_changed") {
    tools_changed_ = true;  // applied by the caller at the next job, never mid-job
    return;
  }
  if (method != "notifications/progress" || !params.is_object()) return;
  auto token = params.find("progressToken");
  if (token == params.end() || !token->is_number_integer()) return;
  std::shared_ptr<ProgressSink> sink;
  {
    MutexLock lock(&mu_);
    auto it = progress_.find(token->get<int64_t>());
    if (it != progress_.end()) sink = it->second;
  }
  if (!sink) return;
  const double progress = params.value("progress", 0.0);
  std::optional<double> total;
  if (params.contains("total") && params["total"].is_number())
    total = params["total"].get<double>();
  const std::string text = Str(params, "message");
  MutexLock lock(&sink->mu);
  if (sink->active && sink->fn) sink->fn(progress, total, text);
}

void ClientImpl::AnswerServerRequest(const Json& request) {
  const std::string method = Str(request, "method");
  Json reply = {{"jsonrpc", "2.0"}, {"id", request["id"]}};
  if (method == "ping") {
    reply["result"] = Json::object();
  } else {  // we offer no roots, sampling or elicitation
    reply["error"] = {{"code", kMethodNotFound}, {"message", "method not found: " + method}};
  }
  Status st = channel_->Send(reply, nullptr);
  if (!st.ok()) spdlog::debug("mcp: answering the server's {}: {}", method, st.message());
}

void ClientImpl::OnLost(Status why) {
  {
    MutexLock lock(&mu_);
    if (!lost_) lost_ = std::move(why);
    lost_flag_ = true;
  }
  cv_.SignalAll();
}

Result<std::vector<Tool>> ClientImpl::ListTools() {
  std::vector<Tool> tools;
  std::set<std::string> seen_cursors;
  Json params = Json::object();
  for (;;) {
    MAESTRO_ASSIGN_OR_RETURN(Json page, Request("tools/list", params, {}));
    if (page.contains("tools") && page["tools"].is_array()) {
      for (const Json& t : page["tools"]) {
        if (auto tool = ParseTool(t)) tools.push_back(std::move(*tool));
      }
    }
    const std::string cursor = Str(page, "nextCursor");
    if (cursor.empty()) return tools;
    if (!seen_cursors.insert(cursor).second) {
      return Unavailable("tools/list: the MCP server repeats the cursor '" + cursor + "'");
    }
    params["cursor"] = cursor;
  }
}

Result<CallResult> ClientImpl::CallTool(const std::string& name, const Json& arguments,
                                        const CallOptions& options) {
  Json args = arguments.is_null() ? Json::object() : arguments;
  if (!args.is_object())
    return InvalidArgument("tool arguments must be a JSON object", "arguments");
  RequestSpec spec;
  spec.timeout = options.timeout;
  spec.cancel = options.cancel;
  spec.progress = std::make_shared<ProgressSink>();
  spec.progress->fn = options.on_progress;
  Json params = {{"name", name}, {"arguments", std::move(args)}};
  if (!options.traceparent.empty()) params["_meta"]["traceparent"] = options.traceparent;
  MAESTRO_ASSIGN_OR_RETURN(Json result, Request("tools/call", std::move(params), spec));
  return ParseCallResult(std::move(result));
}

void ClientImpl::Close() {
  if (closed_.exchange(true)) return;
  { MutexLock lock(&mu_); }  // a waiter between its check and its wait sees it
  cv_.SignalAll();
  channel_->Close();
}

}  // namespace

Result<std::unique_ptr<Client>> Client::Connect(const Transport& transport, ClientOptions options) {
  std::unique_ptr<Channel> channel;
  if (!transport.argv.empty()) {
    channel = std::make_unique<StdioTransport>(transport, options.on_stderr, *options.env);
  } else if (!transport.url.empty()) {
    channel = std::make_unique<HttpTransport>(transport, options.connect_timeout, options.egress);
  } else {
    return InvalidArgument("an MCP server needs argv (stdio) or url (Streamable HTTP)",
                           "transport");
  }
  auto client = std::make_unique<ClientImpl>(std::move(channel), std::move(options));
  // On failure the client's destructor closes the channel: a started
  // server process is killed and reaped before Connect returns.
  MAESTRO_RETURN_IF_ERROR(client->Handshake());
  return std::unique_ptr<Client>(std::move(client));
}

}  // namespace maestro::mcp
