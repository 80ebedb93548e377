// The HTTP edge's defences and stream mechanics, on the real HttpServer over
// loopback sockets with a raw client (so a test can send exactly the bytes a
// misbehaving client would): keep-alive, 413/431/400, header and idle
// timeouts, the connection cap (503 + Retry-After), the per-key stream cap
// (429), a closed client freeing its stream at once, keep-alive comments,
// graceful stop with a final frame, inline routes while the pool is busy,
// Expect: 100-continue, and handler exceptions that never leak.
#include "api/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "api/http_util.h"

namespace maestro::api {
namespace {

using namespace std::chrono_literals;

// A loopback connection that sends raw bytes and reads with a deadline.
class RawClient {
 public:
  explicit RawClient(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~RawClient() { Close(); }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  bool connected() const { return connected_; }
  bool Send(const std::string& bytes) {
    return send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }
  // Reads until `needle` was received, the peer closed, or `limit` passed.
  std::string ReadUntil(const std::string& needle, std::chrono::milliseconds limit = 5s) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (got_.find(needle) == std::string::npos && !eof_) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
      char buf[8192];
      ssize_t n = recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) {
        eof_ = true;
        break;
      }
      got_.append(buf, static_cast<size_t>(n));
    }
    return got_;
  }
  // True when the server closed the connection within `limit`.
  bool ClosedWithin(std::chrono::milliseconds limit) {
    ReadUntil(std::string(1, '\0') + "never", limit);
    return eof_;
  }
  const std::string& got() const { return got_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
  bool eof_ = false;
  std::string got_;
};

// A stream whose frames the test pushes; counts live instances.
class TestSource : public StreamSource {
 public:
  struct Shared {
    std::mutex mu;
    std::vector<std::string> pending;  // GUARDED_BY(mu)
    bool end = false;                  // GUARDED_BY(mu)
    std::function<void()> wake;        // GUARDED_BY(mu)
    std::atomic<int> alive{0};
    std::atomic<int> periodic_pulls{0};
    // The server has called Watch (read under mu: the server's thread writes it).
    bool Watched() {
      std::lock_guard<std::mutex> lock(mu);
      return static_cast<bool>(wake);
    }
    void Push(const std::string& data, bool last = false) {
      std::function<void()> w;
      {
        std::lock_guard<std::mutex> lock(mu);
        pending.push_back(SseFrame("", "msg", data));
        end = last;
        w = wake;
      }
      if (w) w();
    }
  };
  explicit TestSource(std::shared_ptr<Shared> s) : s_(std::move(s)) { ++s_->alive; }
  ~TestSource() override {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->wake = nullptr;
    --s_->alive;
  }
  void Watch(std::function<void()> wake) override {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->wake = std::move(wake);
  }
  Step Pull(bool periodic, std::string* out) override {
    if (periodic) ++s_->periodic_pulls;
    std::lock_guard<std::mutex> lock(s_->mu);
    for (auto& f : s_->pending) out->append(f);
    s_->pending.clear();
    return s_->end ? Step::kEnd : Step::kIdle;
  }

 private:
  std::shared_ptr<Shared> s_;
};

class HttpServerTest : public ::testing::Test {
 protected:
  void StartServer() {
    HttpApp app;
    app.handle = [this](HttpRequest& req) { return Handle(req); };
    app.runs_inline = [](const HttpRequest& req) { return req.path == "/inline"; };
    server_ = std::make_unique<HttpServer>(options_, std::move(app));
    auto port = server_->Start();
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    port_ = *port;
  }
  void TearDown() override {
    Release();
    if (server_) server_->Stop();
  }
  void Release() {
    {
      std::lock_guard<std::mutex> lock(block_mu_);
      released_ = true;
    }
    block_cv_.notify_all();
  }

  HttpResponse Handle(HttpRequest& req) {
    if (req.path == "/echo") {
      return Reply(200, {{"method", req.method},
                         {"body", req.body},
                         {"q", req.Query("q")},
                         {"h", req.Header("x-test")}});
    }
    if (req.path == "/inline") return Reply(200, {{"inline", true}});
    if (req.path == "/cookies") {
      HttpResponse res = Reply(200, {{"cookies", 3}});
      res.headers.emplace_back("Set-Cookie", "a=1; Path=/");
      res.headers.emplace_back("Set-Cookie", "b=2; Path=/; HttpOnly");
      res.headers.emplace_back("set-cookie", "c=; Max-Age=0");
      res.headers.emplace_back("X-One", "first");
      res.headers.emplace_back("X-One", "second");
      return res;
    }
    if (req.path == "/throw") throw std::runtime_error("secret detail /etc/passwd");
    if (req.path == "/block") {
      std::unique_lock<std::mutex> lock(block_mu_);
      block_cv_.wait(lock, [&] { return released_; });
      return Reply(200, {{"blocked", false}});
    }
    if (req.path == "/stream") {
      HttpResponse res;
      res.stream = std::make_shared<TestSource>(shared_);
      res.stream_key = req.Header("Authorization");
      return res;
    }
    return ReplyError(NotFound("no such route"));
  }

  static std::string Get(const std::string& path, const std::string& extra = "") {
    return "GET " + path + " HTTP/1.1\r\nHost: t\r\n" + extra + "\r\n";
  }

  HttpServerOptions options_ = [] {
    HttpServerOptions o;
    o.port = 0;
    return o;
  }();
  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
  std::shared_ptr<TestSource::Shared> shared_ = std::make_shared<TestSource::Shared>();
  std::mutex block_mu_;
  std::condition_variable block_cv_;
  bool released_ = false;  // GUARDED_BY(block_mu_)
};

TEST_F(HttpServerTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  StartServer();
  RawClient c(port_);
  ASSERT_TRUE(c.Send(Get("/echo?q=a%20b+c", "X-Test: yes\r\n")));
  c.ReadUntil("}");
  ASSERT_TRUE(c.Send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello"));
  std::string got = c.ReadUntil("hello");
  EXPECT_NE(got.find(R"("q":"a b c")"), std::string::npos) << got;
  EXPECT_NE(got.find(R"("h":"yes")"), std::string::npos) << got;
  EXPECT_NE(got.find(R"("body":"hello")"), std::string::npos) << got;
  EXPECT_EQ(server_->stats().connections, 1u);
}

// A reply that sets several cookies sends every one (a sign-in sets the
// session and CSRF cookies and expires the login cookie in one reply);
// other repeated names keep the last value.
TEST_F(HttpServerTest, EverySetCookieHeaderIsSent) {
  StartServer();
  RawClient c(port_);
  ASSERT_TRUE(c.Send(Get("/cookies")));
  std::string got = c.ReadUntil("}");
  EXPECT_NE(got.find("Set-Cookie: a=1; Path=/\r\n"), std::string::npos) << got;
  EXPECT_NE(got.find("Set-Cookie: b=2; Path=/; HttpOnly\r\n"), std::string::npos) << got;
  EXPECT_NE(got.find("c=; Max-Age=0\r\n"), std::string::npos) << got;
  EXPECT_EQ(got.find("X-One: first"), std::string::npos) << got;
  EXPECT_NE(got.find("X-One: second\r\n"), std::string::npos) << got;
}

TEST_F(HttpServerTest, OversizedBodyIs413AndTheClientReadsTheAnswer) {
  options_.max_body_bytes = 1000;
  StartServer();
  RawClient c(port_);
  ASSERT_TRUE(c.Send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 200000\r\n\r\n"));
  // The client keeps writing its body; the server lingers and drains it.
  EXPECT_TRUE(c.Send(std::string(200000, 'x')));
  std::string got = c.ReadUntil("}}");
  EXPECT_EQ(got.rfind("HTTP/1.1 413", 0), 0u) << got;
  EXPECT_NE(got.find("request body too large"), std::string::npos) << got;
}

TEST_F(HttpServerTest, OversizedOrTooManyHeadersAre431) {
  options_.max_header_bytes = 2048;
  options_.max_header_fields = 20;
  StartServer();
  RawClient big(port_);
  big.Send(Get("/echo", "X-Big: " + std::string(4000, 'a') + "\r\n"));
  EXPECT_EQ(big.ReadUntil("}}").rfind("HTTP/1.1 431", 0), 0u) << big.got();
  RawClient many(port_);
  std::string fields;
  for (int i = 0; i < 30; ++i) fields += "X-F" + std::to_string(i) + ": v\r\n";
  many.Send(Get("/echo", fields));
  EXPECT_EQ(many.ReadUntil("}}").rfind("HTTP/1.1 431", 0), 0u) << many.got();
  EXPECT_NE(many.got().find("too many request headers"), std::string::npos);
}

TEST_F(HttpServerTest, MalformedRequestIs400WithoutLibraryText) {
  StartServer();
  RawClient c(port_);
  c.Send("GARBAGE\x01\x02 / HTTP/9\r\n\r\n");
  std::string got = c.ReadUntil("}}");
  EXPECT_EQ(got.rfind("HTTP/1.1 400", 0), 0u) << got;
  EXPECT_EQ(got.find("beast"), std::string::npos) << got;
}

TEST_F(HttpServerTest, SlowHeadersAreClosedByTheHeaderTimeout) {
  options_.header_timeout = 300ms;
  StartServer();
  RawClient slow(port_);
  slow.Send("GET /echo HTTP/1.1\r\nHost: t\r\n");  // never finished
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(slow.ClosedWithin(3s));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_EQ(slow.got(), "");  // nothing to answer: just closed
  // Meanwhile a normal client is served at once.
  RawClient ok(port_);
  ok.Send(Get("/echo"));
  EXPECT_NE(ok.ReadUntil("}").find("200 OK"), std::string::npos);
}

TEST_F(HttpServerTest, IdleKeepAliveConnectionsAreClosed) {
  options_.idle_timeout = 300ms;
  StartServer();
  RawClient c(port_);
  c.Send(Get("/echo"));
  c.ReadUntil("}");
  EXPECT_TRUE(c.ClosedWithin(3s));
}

TEST_F(HttpServerTest, ConnectionsOverTheCapGet503WithRetryAfter) {
  options_.max_connections = 2;
  StartServer();
  RawClient a(port_), b(port_);
  a.Send(Get("/echo"));
  b.Send(Get("/echo"));
  a.ReadUntil("}");
  b.ReadUntil("}");
  RawClient c(port_);
  std::string got = c.ReadUntil("}}");
  EXPECT_EQ(got.rfind("HTTP/1.1 503", 0), 0u) << got;
  EXPECT_NE(got.find("Retry-After: 1"), std::string::npos) << got;
  a.Close();
  // A slot freed: the next connection is served.
  for (int i = 0; i < 100 && server_->stats().connections > 1; ++i)
    std::this_thread::sleep_for(10ms);
  RawClient d(port_);
  d.Send(Get("/echo"));
  EXPECT_NE(d.ReadUntil("}").find("200 OK"), std::string::npos) << d.got();
}

TEST_F(HttpServerTest, StreamDeliversFramesAndAClosedClientFreesItAtOnce) {
  StartServer();
  RawClient c(port_);
  c.Send(Get("/stream"));
  EXPECT_NE(c.ReadUntil("\r\n\r\n").find("text/event-stream"), std::string::npos) << c.got();
  for (int i = 0; i < 100 && !shared_->Watched(); ++i) std::this_thread::sleep_for(10ms);
  shared_->Push(R"({"n":1})");
  EXPECT_NE(c.ReadUntil(R"(data: {"n":1})").find("event: msg\ndata: {\"n\":1}\n\n"),
            std::string::npos)
      << c.got();
  EXPECT_EQ(shared_->alive.load(), 1);
  EXPECT_EQ(server_->stats().streams, 1u);
  c.Close();
  // Freed without any further event being published.
  for (int i = 0; i < 200 && shared_->alive.load() > 0; ++i) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(shared_->alive.load(), 0);
  EXPECT_EQ(server_->stats().streams, 0u);
}

TEST_F(HttpServerTest, StreamEndsWithTheTerminatingChunk) {
  StartServer();
  RawClient c(port_);
  c.Send(Get("/stream"));
  c.ReadUntil("\r\n\r\n");
  for (int i = 0; i < 100 && !shared_->Watched(); ++i) std::this_thread::sleep_for(10ms);
  shared_->Push(R"({"bye":true})", /*last=*/true);
  std::string got = c.ReadUntil("\r\n0\r\n\r\n");
  EXPECT_NE(got.find(R"(data: {"bye":true})"), std::string::npos) << got;
  EXPECT_NE(got.find("\r\n0\r\n\r\n"), std::string::npos) << got;
  EXPECT_TRUE(c.ClosedWithin(2s));
}

TEST_F(HttpServerTest, IdleStreamsGetKeepAliveCommentsAndPeriodicPulls) {
  options_.keepalive_interval = 100ms;
  StartServer();
  RawClient c(port_);
  c.Send(Get("/stream"));
  EXPECT_NE(c.ReadUntil(": keep-alive\n\n", 3s).find(": keep-alive"), std::string::npos);
  for (int i = 0; i < 100 && shared_->periodic_pulls.load() == 0; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_GT(shared_->periodic_pulls.load(), 0);
}

TEST_F(HttpServerTest, StreamsPerKeyAreCappedWith429) {
  options_.max_streams_per_key = 1;
  StartServer();
  RawClient first(port_);
  first.Send(Get("/stream", "Authorization: Bearer a\r\n"));
  first.ReadUntil("\r\n\r\n");
  RawClient second(port_);
  second.Send(Get("/stream", "Authorization: Bearer a\r\n"));
  std::string got = second.ReadUntil("}}");
  EXPECT_EQ(got.rfind("HTTP/1.1 429", 0), 0u) << got;
  EXPECT_NE(got.find("Retry-After"), std::string::npos) << got;
  RawClient other(port_);  // another token has its own allowance
  other.Send(Get("/stream", "Authorization: Bearer b\r\n"));
  EXPECT_NE(other.ReadUntil("\r\n\r\n").find("200 OK"), std::string::npos) << other.got();
}

TEST_F(HttpServerTest, StopEndsStreamsWithAFinalEventAndFinishesRequestsInFlight) {
  StartServer();
  RawClient stream(port_);
  stream.Send(Get("/stream"));
  stream.ReadUntil("\r\n\r\n");
  for (int i = 0; i < 100 && !shared_->Watched(); ++i) std::this_thread::sleep_for(10ms);
  RawClient busy(port_);
  busy.Send(Get("/block"));
  std::this_thread::sleep_for(100ms);
  std::thread stopper([&] { server_->Stop(); });
  std::this_thread::sleep_for(100ms);
  Release();
  stopper.join();
  std::string got = stream.ReadUntil("0\r\n\r\n");
  EXPECT_NE(got.find("event: shutdown\ndata: {\"reason\":\"server stopping\"}"), std::string::npos)
      << got;
  EXPECT_NE(busy.ReadUntil("}").find(R"("blocked":false)"), std::string::npos) << busy.got();
  EXPECT_NE(busy.got().find("Connection: close"), std::string::npos) << busy.got();
}

TEST_F(HttpServerTest, InlineRoutesAnswerWhileThePoolIsBusy) {
  options_.handler_threads = 1;
  StartServer();
  RawClient blocker(port_);
  blocker.Send(Get("/block"));
  std::this_thread::sleep_for(100ms);
  RawClient health(port_);
  health.Send(Get("/inline"));
  EXPECT_NE(health.ReadUntil("}", 2s).find(R"("inline":true)"), std::string::npos);
}

TEST_F(HttpServerTest, ExpectContinueIsHonoured) {
  StartServer();
  RawClient c(port_);
  c.Send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n");
  EXPECT_NE(c.ReadUntil("100 Continue\r\n\r\n").find("HTTP/1.1 100 Continue"), std::string::npos);
  c.Send("hi");
  EXPECT_NE(c.ReadUntil(R"("body":"hi")").find(R"("body":"hi")"), std::string::npos) << c.got();
}

TEST_F(HttpServerTest, HandlerExceptionsAre500WithoutDetail) {
  StartServer();
  RawClient c(port_);
  c.Send(Get("/throw"));
  std::string got = c.ReadUntil("}}");
  EXPECT_EQ(got.rfind("HTTP/1.1 500", 0), 0u) << got;
  EXPECT_EQ(got.find("secret"), std::string::npos) << got;
  EXPECT_EQ(got.find("EXCEPTION"), std::string::npos) << got;
  EXPECT_NE(got.find("internal error"), std::string::npos) << got;
  RawClient after(port_);
  after.Send(Get("/echo"));
  EXPECT_NE(after.ReadUntil("}").find("200 OK"), std::string::npos);
}

TEST_F(HttpServerTest, ABusyPortIsRefused) {
  StartServer();
  HttpServerOptions again = options_;
  again.port = port_;
  HttpServer second(again, HttpApp{});
  auto bound = second.Bind();
  ASSERT_FALSE(bound.ok());
  EXPECT_NE(bound.status().message().find("cannot listen on 127.0.0.1:" + std::to_string(port_)),
            std::string::npos)
      << bound.status().message();
}

}  // namespace
}  // namespace maestro::api
