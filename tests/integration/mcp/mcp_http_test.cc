// mcp::Client's Streamable HTTP transport against a fake MCP endpoint (an
// httplib::Server in the test) for what the reference servers cannot be made
// to do on demand: refuse the credentials (401/403), speak an older revision
// with plain JSON replies and pagination, cut an SSE reply before its
// response (resumed with GET + Last-Event-ID), ask the client for a ping in
// the middle of a call, and expire the session.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "mcp/mcp_client.h"
#include "support/process.h"

namespace maestro::mcp {
namespace {

using namespace std::chrono_literals;

std::string Rpc(const Json& id, Json result) {
  return DumpJson({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

Json TextResult(const std::string& text) {
  return {{"content", {{{"type", "text"}, {"text", text}}}}};
}

// One MCP endpoint at /mcp; records the headers of every exchange.
class FakeMcp {
 public:
  struct Seen {
    std::string what;  // the JSON-RPC method, "response", "GET" or "DELETE"
    std::string session, protocol, last_event_id;
    Json body;
  };

  explicit FakeMcp(std::string version = "2025-11-25", int refuse = 0)
      : version_(std::move(version)), refuse_(refuse) {
    server_.Post("/mcp",
                 [this](const httplib::Request& req, httplib::Response& res) { Post(req, res); });
    server_.Get("/mcp", [this](const httplib::Request& req, httplib::Response& res) {
      Record("GET", req);
      if (req.get_header_value("Last-Event-ID") != "e2") {
        res.status = 405;  // no standalone stream on offer
        return;
      }
      Json id;
      {
        std::lock_guard<std::mutex> lock(mu_);
        id = resume_id_;
      }
      Sse(res, "event: message\nid: e3\ndata: " + Rpc(id, TextResult("resumed")) + "\n\n");
    });
    server_.Delete("/mcp", [this](const httplib::Request& req, httplib::Response& res) {
      Record("DELETE", req);
      res.status = 200;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FakeMcp() {
    stopping_ = true;
    server_.stop();
    thread_.join();
  }

  std::string Url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/mcp"; }
  std::vector<Seen> seen() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }
  std::optional<Seen> Last(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = seen_.rbegin(); it != seen_.rend(); ++it) {
      if (it->what == what) return *it;
    }
    return std::nullopt;
  }

 private:
  void Record(const std::string& what, const httplib::Request& req, Json body = nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    seen_.push_back({what, req.get_header_value("Mcp-Session-Id"),
                     req.get_header_value("MCP-Protocol-Version"),
                     req.get_header_value("Last-Event-ID"), std::move(body)});
  }

  static void Sse(httplib::Response& res, std::string stream) {
    res.set_chunked_content_provider("text/event-stream",
                                     [stream](size_t, httplib::DataSink& sink) {
                                       sink.write(stream.data(), stream.size());
                                       sink.done();
                                       return true;
                                     });
  }

  void Post(const httplib::Request& req, httplib::Response& res) {
    if (refuse_) {
      res.status = refuse_;
      res.set_content(R"({"jsonrpc":"2.0","error":{"code":-32001,"message":"invalid token"}})",
                      "application/json");
      return;
    }
    Json m = Json::parse(req.body);
    const std::string method = m.value("method", "response");
    Record(method, req, m);
    const Json id = m.value("id", Json());
    if (method == "response") {
      {
        std::lock_guard<std::mutex> lock(mu_);
        ping_reply_ = m;
      }
      cv_.notify_all();
      res.status = 202;
    } else if (method.starts_with("notifications/")) {
      res.status = 202;
    } else if (method == "initialize") {
      res.set_header("Mcp-Session-Id", "sess-1");
      res.set_content(Rpc(id, {{"protocolVersion", version_},
                               {"capabilities", {{"tools", Json::object()}}},
                               {"serverInfo", {{"name", "fake"}, {"version", "1"}}}}),
                      "application/json");
    } else if (method == "ping") {
      res.set_content(Rpc(id, Json::object()), "application/json");
    } else if (method == "tools/list") {
      const bool second = m["params"].value("cursor", "") == "page-2";
      Json page = second ? Json{{"tools", {{{"name", "second"}}}}}
                         : Json{{"tools",
                                 {{{"name", "first"},
                                   {"inputSchema", {{"type", "object"}}},
                                   {"annotations", {{"title", "First!"}}}}}},
                                {"nextCursor", "page-2"}};
      res.set_content(Rpc(id, page), "application/json");
    } else if (method == "tools/call") {
      Call(m, res);
    }
  }

  void Call(const Json& m, httplib::Response& res) {
    const std::string tool = m["params"]["name"];
    const Json id = m["id"];
    if (tool == "cut") {
      // The server ends the stream after a progress event, before the
      // response — as MCP 2025-11-25 allows once an event id was sent.
      {
        std::lock_guard<std::mutex> lock(mu_);
        resume_id_ = id;
      }
      Json progress = {{"jsonrpc", "2.0"},
                       {"method", "notifications/progress"},
                       {"params",
                        {{"progressToken", m["params"]["_meta"]["progressToken"]},
                         {"progress", 1},
                         {"message", "half way"}}}};
      Sse(res, "id: e1\nretry: 50\ndata: \n\nevent: message\nid: e2\ndata: " + DumpJson(progress) +
                   "\n\n");
    } else if (tool == "asks-ping") {
      res.set_chunked_content_provider("text/event-stream", [this, id](size_t,
                                                                       httplib::DataSink& sink) {
        const std::string ask =
            "data: " + DumpJson({{"jsonrpc", "2.0"}, {"id", "srv-1"}, {"method", "ping"}}) + "\n\n";
        sink.write(ask.data(), ask.size());
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait_for(lock, 3s, [&] { return !ping_reply_.is_null(); });
        const std::string answer = "data: " + Rpc(id, TextResult(DumpJson(ping_reply_))) + "\n\n";
        lock.unlock();
        sink.write(answer.data(), answer.size());
        sink.done();
        return true;
      });
    } else if (tool == "gone") {
      res.status = 404;
      res.set_content(R"({"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"}})",
                      "application/json");
    } else if (tool == "hang") {
      // Primes the stream, then only keep-alive comments: no reply ever.
      res.set_chunked_content_provider("text/event-stream",
                                       [this](size_t, httplib::DataSink& sink) {
                                         const std::string prime = "id: h1\ndata: \n\n";
                                         bool alive = sink.write(prime.data(), prime.size());
                                         while (alive && !stopping_) {
                                           std::this_thread::sleep_for(20ms);
                                           alive = sink.write(": tick\n\n", 8);
                                         }
                                         hang_abandoned_ = !alive;
                                         return false;
                                       });
    } else if (tool == "structured-only") {
      res.set_content(Rpc(id, {{"content", Json::array()}, {"structuredContent", {{"n", 1}}}}),
                      "application/json");
    } else if (tool == "mixed") {
      Json content = {
          {{"type", "audio"}, {"mimeType", "audio/wav"}, {"data", "AAAAAA=="}},
          {{"type", "resource"}, {"resource", {{"uri", "file:///x.bin"}, {"blob", "AAAA"}}}},
          {{"type", "hologram"}}};
      res.set_content(Rpc(id, {{"content", content}, {"isError", true}}), "application/json");
    } else if (tool == "meta") {  // echoes the request's params._meta
      res.set_content(Rpc(id, TextResult(DumpJson(m["params"].value("_meta", Json::object())))),
                      "application/json");
    } else {
      res.set_content(Rpc(id, TextResult("ok")), "application/json");
    }
  }

  const std::string version_;
  const int refuse_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Seen> seen_;  // GUARDED_BY(mu_)
  Json ping_reply_;         // GUARDED_BY(mu_)
  Json resume_id_;          // GUARDED_BY(mu_)
  std::atomic<bool> stopping_{false};
  std::atomic<bool> hang_abandoned_{false};

 public:
  // The client went away from a "hang" call's stream.
  bool hang_abandoned() const { return hang_abandoned_.load(); }
};

Transport At(const std::string& url) {
  Transport t;
  t.url = url;
  t.headers["Authorization"] = "Bearer test-token";
  return t;
}

ClientOptions ShortTimeouts() {
  ClientOptions o;
  o.connect_timeout = 3s;
  o.request_timeout = 3s;
  return o;
}

TEST(McpHttp, RefusedCredentialsAreAnAuthError) {
  for (int code : {401, 403}) {
    FakeMcp server("2025-11-25", code);
    auto c = Client::Connect(At(server.Url()), ShortTimeouts());
    ASSERT_FALSE(c.ok());
    EXPECT_TRUE(IsAuthError(c.status())) << c.status().ToString();
    EXPECT_NE(c.status().message().find("HTTP " + std::to_string(code)), std::string::npos);
    EXPECT_NE(c.status().message().find("invalid token"), std::string::npos);
  }
}

TEST(McpHttp, AnUnreachableServerIsUnavailableNotAnAuthError) {
  const int port = testing::FreePort();  // nobody listens there
  auto c =
      Client::Connect(At("http://127.0.0.1:" + std::to_string(port) + "/mcp"), ShortTimeouts());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kUnavailable) << c.status().ToString();
  EXPECT_FALSE(IsAuthError(c.status()));
}

TEST(McpHttp, AnOlderRevisionWithJsonRepliesSessionAndPagination) {
  FakeMcp server("2025-06-18");
  auto c = Client::Connect(At(server.Url()), ShortTimeouts());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ((*c)->protocol_version(), "2025-06-18");
  EXPECT_EQ((*c)->server_info()["name"], "fake");

  auto tools = (*c)->ListTools();
  ASSERT_TRUE(tools.ok()) << tools.status().ToString();
  ASSERT_EQ(tools->size(), 2u);
  EXPECT_EQ((*tools)[0].name, "first");
  EXPECT_EQ((*tools)[0].title, "First!");  // from annotations.title
  EXPECT_EQ((*tools)[1].name, "second");
  EXPECT_EQ((*tools)[1].input_schema, Json({{"type", "object"}}));  // none sent
  EXPECT_TRUE((*c)->Ping().ok());
  auto r = (*c)->CallTool("plain", Json::object(), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->text, "ok");

  auto init = server.Last("initialize");
  ASSERT_TRUE(init);
  EXPECT_EQ(init->session, "");
  EXPECT_EQ(init->protocol, "");
  auto list = server.Last("tools/list");
  ASSERT_TRUE(list);
  EXPECT_EQ(list->session, "sess-1");
  EXPECT_EQ(list->protocol, "2025-06-18");
  auto initialized = server.Last("notifications/initialized");
  ASSERT_TRUE(initialized);
  EXPECT_EQ(initialized->protocol, "2025-06-18");
  ASSERT_TRUE(server.Last("GET"));  // the listener asked, got 405 and gave up

  (*c)->Close();
  auto del = server.Last("DELETE");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->session, "sess-1");
  int gets = 0;
  for (const auto& s : server.seen()) gets += s.what == "GET";
  EXPECT_EQ(gets, 1);
}

// The caller's execute_tool span continues in the server: W3C trace context
// in params._meta.traceparent (beside the progress token), only when given.
TEST(McpHttp, ATracedCallCarriesTraceparentInMeta) {
  FakeMcp server;
  auto c = Client::Connect(At(server.Url()), ShortTimeouts());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  CallOptions traced;
  traced.traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  auto r = (*c)->CallTool("meta", Json::object(), traced);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  Json meta = Json::parse(r->text);
  EXPECT_EQ(meta["traceparent"], traced.traceparent);
  EXPECT_TRUE(meta.contains("progressToken")) << meta.dump();
  auto plain = (*c)->CallTool("meta", Json::object(), {});
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(Json::parse(plain->text).contains("traceparent")) << plain->text;
}

TEST(McpHttp, ContentWithoutTextIsRenderedForTheModel) {
  FakeMcp server;
  auto c = Client::Connect(At(server.Url()), ShortTimeouts());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto structured = (*c)->CallTool("structured-only", Json::object(), {});
  ASSERT_TRUE(structured.ok()) << structured.status().ToString();
  EXPECT_EQ(structured->text, R"({"n":1})");
  EXPECT_EQ(structured->structured, Json({{"n", 1}}));
  auto mixed = (*c)->CallTool("mixed", Json::object(), {});
  ASSERT_TRUE(mixed.ok()) << mixed.status().ToString();
  EXPECT_TRUE(mixed->is_error);
  EXPECT_EQ(mixed->text,
            "[audio audio/wav, 4 bytes]\n[resource file:///x.bin, 3 bytes]\n[hologram content]");
  EXPECT_EQ(mixed->content.size(), 3u);
}

TEST(McpHttp, AnUnsupportedRevisionFailsTheConnect) {
  FakeMcp server("2024-11-05");
  auto c = Client::Connect(At(server.Url()), ShortTimeouts());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("2024-11-05"), std::string::npos) << c.status().message();
  EXPECT_FALSE(server.Last("notifications/initialized"));
}

TEST(McpHttp, AReplyStreamCutBeforeItsResponseIsResumed) {
  FakeMcp server;
  auto c = Client::Connect(At(server.Url()), ShortTimeouts());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  std::vector<std::string> progress;
  CallOptions opts;
  opts.on_progress = [&](double, std::optional<double>, const std::string& message) {
    progress.push_back(message);
  };
  auto r = (*c)->CallTool("cut", Json::object(), opts);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->text, "resumed");
  EXPECT_EQ(progress, std::vector<std::string>{"half way"});
  auto get = server.Last("GET");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->last_event_id, "e2");
  EXPECT_EQ(get->session, "sess-1");
}

TEST(McpHttp, TheClientAnswersAPingFromTheServerMidCall) {
  FakeMcp server;
  auto c = Client::Connect(At(server.Url()), ShortTimeouts());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto r = (*c)->CallTool("asks-ping", Json::object(), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  Json reply = Json::parse(r->text);
  EXPECT_EQ(reply["id"], "srv-1");
  EXPECT_EQ(reply["result"], Json::object());
}

TEST(McpHttp, CancelAndTimeoutTellTheServerAndLeaveTheStream) {
  FakeMcp server;
  auto c = Client::Connect(At(server.Url()), ShortTimeouts());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  CancelToken token;
  CallOptions opts;
  opts.cancel = &token;
  std::thread canceller([&] {
    std::this_thread::sleep_for(150ms);
    token.Cancel(CancelToken::Reason::kShutdown);
  });
  const auto start = std::chrono::steady_clock::now();
  auto r = (*c)->CallTool("hang", Json::object(), opts);
  canceller.join();
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled) << r.status().ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 400ms);
  auto call = server.Last("tools/call");
  auto cancelled = server.Last("notifications/cancelled");
  ASSERT_TRUE(call && cancelled);
  EXPECT_EQ(cancelled->body["params"]["requestId"], call->body["id"]);
  EXPECT_EQ(cancelled->body["params"]["reason"],
            "cancelled: " + std::string(CancelReasonName(CancelToken::Reason::kShutdown)));
  EXPECT_EQ(cancelled->session, "sess-1");
  for (int i = 0; i < 50 && !server.hang_abandoned(); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(server.hang_abandoned());  // the client hung up: no thread left reading it

  CallOptions quick;
  quick.timeout = 200ms;
  auto late = (*c)->CallTool("hang", Json::object(), quick);
  EXPECT_EQ(late.status().code(), StatusCode::kDeadlineExceeded) << late.status().ToString();
  auto timed_out = server.Last("notifications/cancelled");
  ASSERT_TRUE(timed_out);
  EXPECT_EQ(timed_out->body["params"]["reason"], "timed out");
  EXPECT_NE(timed_out->body["params"]["requestId"], cancelled->body["params"]["requestId"]);
}

TEST(McpHttp, AnExpiredSessionIsUnavailable) {
  FakeMcp server;
  auto c = Client::Connect(At(server.Url()), ShortTimeouts());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto r = (*c)->CallTool("gone", Json::object(), {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("expired"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace maestro::mcp
