// HttpClient::Exchange against a raw HTTP/1.1 server on a real 127.0.0.1
// socket (so the test decides what each connection does, byte by byte): a
// request body pulled from a callback, kept connections reused across calls
// (and never with an egress policy), a kept connection the server closed
// replaced with the body rewound, and how an exchange ends (idle and total
// timeouts, a cut reply, a refused connection, a stop, a failing body).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/http_client.h"

namespace maestro {
namespace http_exchange_test {  // beside http_client_test in one unity file
namespace {

using namespace std::chrono_literals;

struct RawRequest {
  std::string method, path, head;
  std::string body;
};

// One request off `fd`: false when the peer closed or sent garbage.
bool ReadRequest(int fd, std::string* pending, RawRequest* out) {
  char buf[16384];
  size_t end;
  while ((end = pending->find("\r\n\r\n")) == std::string::npos) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return false;
    pending->append(buf, static_cast<size_t>(n));
  }
  out->head = pending->substr(0, end);
  size_t sp = out->head.find(' ');
  out->method = out->head.substr(0, sp);
  out->path = out->head.substr(sp + 1, out->head.find(' ', sp + 1) - sp - 1);
  size_t length = 0;
  size_t cl = out->head.find("Content-Length: ");
  if (cl != std::string::npos) length = std::strtoul(out->head.c_str() + cl + 16, nullptr, 10);
  pending->erase(0, end + 4);
  while (pending->size() < length) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return false;
    pending->append(buf, static_cast<size_t>(n));
  }
  out->body = pending->substr(0, length);
  pending->erase(0, length);
  return true;
}

void WriteAll(int fd, const std::string& bytes) {
  for (size_t off = 0; off < bytes.size();) {
    ssize_t n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

std::string Reply(int status, const std::string& body, const std::string& extra = "") {
  return "HTTP/1.1 " + std::to_string(status) +
         " X\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra + "\r\n" + body;
}

// Accepts connections on 127.0.0.1 and hands each request to `handler`
// with its connection's number (0, 1, ... in accept order) and its index on
// that connection; the handler writes the reply itself, and returning false
// closes the connection.
class RawServer {
 public:
  using Handler = std::function<bool(int fd, const RawRequest&, int conn, int nth)>;
  explicit RawServer(Handler handler) : handler_(std::move(handler)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(listen_fd_, 16), 0);
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { Accept(); });
  }
  ~RawServer() {
    stopping_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    acceptor_.join();
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (int fd : open_) ::shutdown(fd, SHUT_RDWR);
    }
    for (auto& t : workers_) t.join();
    for (int fd : open_) ::close(fd);
    ::close(listen_fd_);
  }
  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  int connections() const { return connections_.load(); }
  bool stopping() const { return stopping_.load(); }

 private:
  void Accept() {
    for (int conn = 0;; ++conn) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0 || stopping_) {
        if (fd >= 0) ::close(fd);
        return;
      }
      ++connections_;
      std::lock_guard<std::mutex> lock(mu_);
      open_.push_back(fd);
      workers_.emplace_back([this, fd, conn] {
        std::string pending;
        RawRequest req;
        for (int nth = 0; ReadRequest(fd, &pending, &req); ++nth) {
          if (!handler_(fd, req, conn, nth)) break;
        }
        ::shutdown(fd, SHUT_RDWR);
      });
    }
  }

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<std::thread> workers_;
  std::vector<int> open_;  // closed when the server goes (threads are joined first)
  std::atomic<int> connections_{0};
  std::atomic<bool> stopping_{false};
};

// The body of the tests' uploads: byte i is 'a' + i % 23.
std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + i % 23);
  return s;
}

// An HttpBodySource over Pattern(size), handing out at most `piece` bytes a
// call and counting its reads and rewinds.
struct PatternSource {
  explicit PatternSource(size_t size, size_t piece = 1000) : piece(piece), bytes(Pattern(size)) {
    source.size = size;
    source.read = [this](char* buf, size_t n) -> Result<size_t> {
      ++reads;
      size_t k = std::min({n, this->piece, bytes.size() - offset});
      std::copy_n(bytes.data() + offset, k, buf);
      offset += k;
      return k;
    };
    source.rewind = [this] {
      ++rewinds;
      offset = 0;
      return Status::Ok();
    };
  }
  size_t piece;
  std::string bytes;
  size_t offset = 0;
  int reads = 0, rewinds = 0;
  HttpBodySource source;
};

HttpClientOptions Quick() {
  HttpClientOptions o;
  o.connect_timeout_ms = 2'000;
  o.total_timeout_ms = 10'000;
  return o;
}

HttpCall Post(const std::string& url, const HttpBodySource* source) {
  HttpCall call;
  call.method = "POST";
  call.url = url;
  call.headers = {{"Content-Type", "application/octet-stream"}};
  call.body_source = source;
  return call;
}

// Each reply says which connection served it and whether the body was the pattern.
bool EchoConnection(int fd, const RawRequest& req, int conn, int) {
  const bool intact = req.body == Pattern(req.body.size());
  WriteAll(fd, Reply(200, std::to_string(conn) + " " + std::to_string(req.body.size()) + " " +
                              (intact ? "intact" : "garbled")));
  return true;
}

TEST(HttpExchangeTest, ABodyFromACallbackIsSentWholeWithItsLength) {
  RawServer srv(EchoConnection);
  PatternSource body(300 * 1024 + 7);
  HttpOutcome x = HttpClient(Quick()).Exchange(Post(srv.Url("/up"), &body.source));
  ASSERT_TRUE(x.status.ok()) << x.status.ToString();
  EXPECT_EQ(x.end, HttpEnd::kComplete);
  EXPECT_EQ(x.reply.status, 200);
  EXPECT_EQ(x.reply.body, "0 307207 intact");
  EXPECT_GE(body.reads, 307);  // pulled piece by piece, never all at once
  EXPECT_EQ(body.rewinds, 0);
  EXPECT_TRUE(x.transport_error.empty());
}

TEST(HttpExchangeTest, AKeepingClientReusesItsConnectionAndOthersDoNot) {
  RawServer srv(EchoConnection);
  HttpClientOptions keep = Quick();
  keep.keep_connections = true;
  const HttpClient kept(keep);
  for (int i = 0; i < 5; ++i) {
    PatternSource body(4096);
    HttpOutcome x = kept.Exchange(Post(srv.Url("/up"), &body.source));
    ASSERT_TRUE(x.status.ok()) << x.status.ToString();
    EXPECT_EQ(x.reply.body, "0 4096 intact") << "call " << i;
  }
  EXPECT_EQ(srv.connections(), 1);

  const HttpClient plain(Quick());  // the default: a connection per call
  for (int i = 0; i < 3; ++i) {
    auto r = plain.Request("GET", srv.Url("/get"));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->body, std::to_string(1 + i) + " 0 intact");
  }
  EXPECT_EQ(srv.connections(), 4);
}

// Pinned connections (an egress policy) are never kept, even when asked.
TEST(HttpExchangeTest, AnEgressPolicyMakesEveryCallConnectAfresh) {
  RawServer srv(EchoConnection);
  auto policy = EgressPolicy::WithAllowList({"127.0.0.1"});
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  HttpClientOptions o = Quick();
  o.keep_connections = true;
  o.egress = std::make_shared<const EgressPolicy>(std::move(policy).value());
  const HttpClient client(o);
  for (int i = 0; i < 3; ++i) {
    auto r = client.Request("GET", srv.Url("/get"));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->body, std::to_string(i) + " 0 intact");
  }
  EXPECT_EQ(srv.connections(), 3);
}

// The server serves one request per connection, then reads the next one in
// full and hangs up without a word: the kept connection is dead only once
// the request went out. curl resends on a fresh connection, which needs the
// body from its first byte again.
bool OneThenHangUp(int fd, const RawRequest& req, int conn, int nth) {
  if (nth > 0) return false;
  return EchoConnection(fd, req, conn, nth);
}

TEST(HttpExchangeTest, AKeptConnectionTheServerDroppedIsReplacedAndTheBodyRewound) {
  RawServer srv(OneThenHangUp);
  HttpClientOptions keep = Quick();
  keep.keep_connections = true;
  const HttpClient client(keep);
  PatternSource first(70 * 1024);
  HttpOutcome a = client.Exchange(Post(srv.Url("/up"), &first.source));
  ASSERT_TRUE(a.status.ok()) << a.status.ToString();
  EXPECT_EQ(a.reply.body, "0 71680 intact");

  PatternSource second(70 * 1024);
  HttpOutcome b = client.Exchange(Post(srv.Url("/up"), &second.source));
  ASSERT_TRUE(b.status.ok()) << b.status.ToString();
  EXPECT_EQ(b.end, HttpEnd::kComplete);
  EXPECT_EQ(b.reply.body, "1 71680 intact");  // the fresh connection got the whole body
  EXPECT_EQ(second.rewinds, 1);
  EXPECT_EQ(srv.connections(), 2);

  // A body that cannot start over makes that resend fail, saying so.
  PatternSource third(70 * 1024);
  third.source.rewind = nullptr;
  HttpOutcome c = client.Exchange(Post(srv.Url("/up"), &third.source));
  EXPECT_EQ(c.end, HttpEnd::kFailed);
  EXPECT_FALSE(c.status.ok());
  EXPECT_FALSE(c.transport_error.empty());
  EXPECT_EQ(c.reply.status, 0);
}

TEST(HttpExchangeTest, ABodySourceErrorEndsTheCallWithThatError) {
  std::atomic<int> replies{0};
  RawServer srv([&](int fd, const RawRequest& req, int conn, int nth) {
    ++replies;
    return EchoConnection(fd, req, conn, nth);
  });
  PatternSource body(1 << 20);
  body.source.read = [&](char* buf, size_t n) -> Result<size_t> {
    if (body.offset >= 100 * 1000) return Status(StatusCode::kInternal, "the file shrank");
    size_t k = std::min<size_t>(n, 1000);
    std::fill_n(buf, k, 'x');
    body.offset += k;
    return k;
  };
  HttpOutcome x = HttpClient(Quick()).Exchange(Post(srv.Url("/up"), &body.source));
  EXPECT_EQ(x.end, HttpEnd::kFailed);
  EXPECT_EQ(x.status.code(), StatusCode::kInternal) << x.status.ToString();
  EXPECT_EQ(x.status.message(), "the file shrank");
  EXPECT_EQ(x.reply.status, 0);
  EXPECT_EQ(replies.load(), 0);  // the server never saw a whole request
}

// Answers per path: /stall says nothing; /drip sends a head and one byte,
// then nothing; /cut promises 100 bytes and hangs up after 3; /busy is a
// 429 with its waits.
bool ByPath(const RawServer* srv, int fd, const RawRequest& req) {
  if (req.path == "/stall" || req.path == "/drip") {
    if (req.path == "/drip") {
      WriteAll(fd,
               "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 50\r\n\r\n:");
    }
    for (int i = 0; i < 500 && !srv->stopping(); ++i) std::this_thread::sleep_for(10ms);
    return false;
  }
  if (req.path == "/cut") {
    WriteAll(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc");
    return false;
  }
  WriteAll(fd, Reply(429, "slow down", "Retry-After: 3\r\nRetry-After-Ms: 2500\r\n"));
  return true;
}

// A loopback port nobody listens on: bound once, then closed.
int ClosedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

TEST(HttpExchangeTest, TheOutcomeSaysHowTheExchangeEnded) {
  RawServer* self = nullptr;
  RawServer srv([&](int fd, const RawRequest& req, int, int) { return ByPath(self, fd, req); });
  self = &srv;
  auto get = [&](const HttpClientOptions& o, const std::string& path) {
    HttpCall call;
    call.url = srv.Url(path);
    return HttpClient(o).Exchange(call);
  };

  HttpClientOptions idle = Quick();
  idle.idle_timeout_ms = 200;
  auto t0 = std::chrono::steady_clock::now();
  HttpOutcome stalled = get(idle, "/stall");
  EXPECT_EQ(stalled.end, HttpEnd::kIdleTimeout);
  EXPECT_EQ(stalled.status.code(), StatusCode::kDeadlineExceeded) << stalled.status.ToString();
  EXPECT_EQ(stalled.reply.status, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);

  HttpOutcome dripped = get(idle, "/drip");  // idle after the head: the head is in the outcome
  EXPECT_EQ(dripped.end, HttpEnd::kIdleTimeout);
  EXPECT_EQ(dripped.reply.status, 200);
  EXPECT_EQ(dripped.reply.Header("content-type"), "text/event-stream");
  EXPECT_EQ(dripped.reply.body, ":");

  HttpClientOptions total = Quick();
  total.total_timeout_ms = 300;
  HttpOutcome late = get(total, "/stall");
  EXPECT_EQ(late.end, HttpEnd::kTotalTimeout);
  EXPECT_EQ(late.status.code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(late.transport_error, "Timeout was reached");

  HttpOutcome cut = get(Quick(), "/cut");
  EXPECT_EQ(cut.end, HttpEnd::kFailed);
  EXPECT_EQ(cut.status.code(), StatusCode::kUnavailable) << cut.status.ToString();
  EXPECT_NE(cut.status.message().find("cut short"), std::string::npos);
  EXPECT_EQ(cut.reply.status, 200);
  EXPECT_EQ(cut.reply.body, "abc");
  EXPECT_FALSE(cut.transport_error.empty());

  HttpCall refused;
  refused.url = "http://127.0.0.1:" + std::to_string(ClosedPort()) + "/x";
  HttpOutcome nobody = HttpClient(Quick()).Exchange(refused);
  EXPECT_EQ(nobody.end, HttpEnd::kFailed);
  EXPECT_EQ(nobody.status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(nobody.transport_error, "Couldn't connect to server");
  EXPECT_EQ(nobody.reply.status, 0);

  HttpOutcome busy = get(Quick(), "/busy");  // a 429 is a reply, its waits in the headers
  EXPECT_EQ(busy.end, HttpEnd::kComplete);
  EXPECT_TRUE(busy.status.ok());
  EXPECT_EQ(busy.reply.status, 429);
  EXPECT_EQ(busy.reply.Header("Retry-After"), "3");
  EXPECT_EQ(busy.reply.Header("retry-after-ms"), "2500");
  EXPECT_EQ(busy.reply.body, "slow down");
}

// A cancel while the server is silent: should_stop is polled every poll_ms.
TEST(HttpExchangeTest, AStopEndsASilentExchangeWithinItsPollPeriod) {
  RawServer* self = nullptr;
  RawServer srv([&](int fd, const RawRequest& req, int, int) { return ByPath(self, fd, req); });
  self = &srv;
  HttpClientOptions o = Quick();
  o.poll_ms = 25;
  std::atomic<int64_t> stop_at_ns{0};
  HttpCall call;
  call.url = srv.Url("/stall");
  call.should_stop = [&] { return stop_at_ns.load() != 0; };
  std::thread stopper([&] {
    std::this_thread::sleep_for(200ms);
    stop_at_ns = std::chrono::steady_clock::now().time_since_epoch().count();
  });
  HttpOutcome x = HttpClient(o).Exchange(call);
  const int64_t latency_ms =
      (std::chrono::steady_clock::now().time_since_epoch().count() - stop_at_ns.load()) / 1'000'000;
  stopper.join();
  EXPECT_EQ(x.end, HttpEnd::kStopped);
  EXPECT_TRUE(x.status.ok());
  EXPECT_TRUE(x.reply.stopped);
  EXPECT_LT(latency_ms, 150);
}

// Threads at once on one keeping client: each call gets a pair of its own,
// and the pairs come back for the next calls.
TEST(HttpExchangeTest, AKeepingClientServesManyThreadsAtOnce) {
  RawServer srv(EchoConnection);
  HttpClientOptions keep = Quick();
  keep.keep_connections = true;
  const HttpClient client(keep);
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        PatternSource body(2000 + static_cast<size_t>(i));
        HttpOutcome x = client.Exchange(Post(srv.Url("/up"), &body.source));
        if (x.status.ok() && x.reply.body.ends_with(" " + std::to_string(2000 + i) + " intact")) {
          ++ok;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 40);
  EXPECT_LE(srv.connections(), 8);  // reused, not one per call
}

}  // namespace
}  // namespace http_exchange_test
}  // namespace maestro
