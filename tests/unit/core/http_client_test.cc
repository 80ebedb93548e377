// HttpClient against a real httplib server on 127.0.0.1: requests with
// headers and bodies, error statuses as replies, refused connections,
// stalled servers and streams stopped by the callback.
#include "core/http_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/json.h"

namespace maestro {
namespace {

using namespace std::chrono_literals;

class Loopback {
 public:
  Loopback() {
    auto echo = [](const httplib::Request& req, httplib::Response& res) {
      Json j = {{"method", req.method},
                {"path", req.path},
                {"query", req.get_param_value("q")},
                {"token", req.get_header_value("Authorization")},
                {"x_test", req.get_header_value("X-Test")},
                {"content_type", req.get_header_value("Content-Type")},
                {"body", req.body}};
      res.set_header("X-Reply", "yes");
      res.set_content(j.dump(), "application/json");
    };
    server_.Get("/echo", echo);
    server_.Post("/echo", echo);
    server_.Put("/echo", echo);
    server_.Delete("/echo", echo);
    server_.Get("/teapot", [](const httplib::Request&, httplib::Response& res) {
      res.status = 418;
      res.set_content(R"({"error":{"message":"short and stout"}})", "application/json");
    });
    // Answers nothing until released (or 10 s).
    server_.Get("/stall", [this](const httplib::Request&, httplib::Response& res) {
      Hold(10s);
      res.set_content("late", "text/plain");
    });
    // One chunk, then silence until released.
    server_.Get("/drip", [this](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("text/plain", [this](size_t, httplib::DataSink& sink) {
        sink.os << "first\n";
        Hold(10s);
        sink.done();
        return true;
      });
    });
    // "event N" every 5 ms until the client goes away (at most 2000).
    server_.Get("/stream", [this](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider(
          "text/event-stream", [this](size_t, httplib::DataSink& sink) {
            for (int i = 0; i < 2000 && !released(); ++i) {
              std::string ev = "data: event " + std::to_string(i) + "\n\n";
              if (!sink.write(ev.data(), ev.size())) {
                ++streams_cut_;
                return false;
              }
              std::this_thread::sleep_for(5ms);
            }
            sink.done();
            return true;
          });
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~Loopback() {
    Release();
    server_.stop();
    thread_.join();
  }

  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  void Release() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      released_ = true;
    }
    cv_.notify_all();
  }
  bool released() {
    std::lock_guard<std::mutex> lock(mu_);
    return released_;
  }
  int streams_cut() const { return streams_cut_.load(); }

 private:
  void Hold(std::chrono::milliseconds most) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, most, [&] { return released_; });
  }

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
  std::atomic<int> streams_cut_{0};
};

// A loopback port nobody listens on: bound once, then closed.
int ClosedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

HttpClientOptions Quick() {
  HttpClientOptions o;
  o.connect_timeout_ms = 2'000;
  o.total_timeout_ms = 10'000;
  return o;
}

TEST(HttpClientTest, GetSendsHeadersAndReturnsStatusHeadersAndBody) {
  Loopback srv;
  HttpClient client(Quick());
  auto r = client.Request("GET", srv.Url("/echo?q=" + UrlEncode("a b&c")),
                          {{"Authorization", "Bearer tok"}, {"X-Test", "1"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_FALSE(r->stopped);
  EXPECT_EQ(r->Header("x-reply"), "yes") << "header names match case-insensitively";
  EXPECT_EQ(r->Header("Content-Type"), "application/json");
  EXPECT_EQ(r->Header("X-Missing"), "");
  Json j = Json::parse(r->body);
  EXPECT_EQ(j["method"], "GET");
  EXPECT_EQ(j["query"], "a b&c");
  EXPECT_EQ(j["token"], "Bearer tok");
  EXPECT_EQ(j["x_test"], "1");
}

TEST(HttpClientTest, PostPutAndDeleteCarryTheirBodies) {
  Loopback srv;
  HttpClient client(Quick());
  auto post = client.Request("POST", srv.Url("/echo"), {{"Content-Type", "application/json"}},
                             R"({"a":1})");
  ASSERT_TRUE(post.ok()) << post.status().ToString();
  Json j = Json::parse(post->body);
  EXPECT_EQ(j["method"], "POST");
  EXPECT_EQ(j["content_type"], "application/json");
  EXPECT_EQ(j["body"], R"({"a":1})");

  // A body well over curl's 100-continue threshold goes in one round trip.
  std::string big(3 * 1024 * 1024, 'x');
  auto put = client.Request("put", srv.Url("/echo"), {{"Content-Type", "text/plain"}}, big);
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  j = Json::parse(put->body);
  EXPECT_EQ(j["method"], "PUT");
  EXPECT_EQ(j["body"].get<std::string>().size(), big.size());

  auto del = client.Request("DELETE", srv.Url("/echo"));
  ASSERT_TRUE(del.ok()) << del.status().ToString();
  EXPECT_EQ(Json::parse(del->body)["method"], "DELETE");

  auto empty_post = client.Request("POST", srv.Url("/echo"));
  ASSERT_TRUE(empty_post.ok()) << empty_post.status().ToString();
  EXPECT_EQ(Json::parse(empty_post->body)["body"], "");
}

TEST(HttpClientTest, AnErrorStatusIsAReplyNotAnError) {
  Loopback srv;
  auto r = HttpClient(Quick()).Request("GET", srv.Url("/teapot"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 418);
  EXPECT_EQ(Json::parse(r->body)["error"]["message"], "short and stout");
  auto missing = HttpClient(Quick()).Request("GET", srv.Url("/no/such/route"));
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);
}

TEST(HttpClientTest, ARefusedConnectionIsUnavailableNamingTheUrl) {
  const std::string url = "http://127.0.0.1:" + std::to_string(ClosedPort()) + "/x";
  auto r = HttpClient(Quick()).Request("GET", url);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.status().message().rfind("cannot reach " + url + ": ", 0), 0u)
      << r.status().message();
  EXPECT_GT(r.status().message().size(), ("cannot reach " + url + ": ").size())
      << "carries curl's error text";
}

TEST(HttpClientTest, CredentialsInTheUrlStayOutOfMessages) {
  const int port = ClosedPort();
  auto r = HttpClient(Quick()).Request(
      "GET", "http://user:s3cret@127.0.0.1:" + std::to_string(port) + "/x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().find("s3cret"), std::string::npos) << r.status().message();
  EXPECT_EQ(RedactUrl("https://u:p@host:1/a@b?c=d"), "https://host:1/a@b?c=d");
  EXPECT_EQ(RedactUrl("http://host/a@b"), "http://host/a@b");
}

TEST(HttpClientTest, AStalledServerTimesOut) {
  Loopback srv;
  HttpClientOptions idle = Quick();
  idle.idle_timeout_ms = 200;
  auto start = std::chrono::steady_clock::now();
  auto r = HttpClient(idle).Request("GET", srv.Url("/stall"));
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded) << r.status().ToString();
  EXPECT_LT(took, 3s);

  HttpClientOptions total = Quick();
  total.total_timeout_ms = 300;
  r = HttpClient(total).Request("GET", srv.Url("/stall"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded) << r.status().ToString();
}

TEST(HttpClientTest, AStreamThatGoesQuietTimesOutAfterItsFirstChunk) {
  Loopback srv;
  HttpClientOptions idle = Quick();
  idle.idle_timeout_ms = 300;
  std::string got;
  auto r =
      HttpClient(idle).Stream("GET", srv.Url("/drip"), {}, {}, {}, [&](std::string_view chunk) {
        got.append(chunk);
        return true;
      });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded) << r.status().ToString();
  EXPECT_EQ(got, "first\n");
}

TEST(HttpClientTest, TheChunkCallbackStopsAStream) {
  Loopback srv;
  int status = 0;
  std::string got;
  int calls_after_stop = 0;
  bool said_stop = false;
  auto r = HttpClient(Quick()).Stream(
      "GET", srv.Url("/stream"), {{"Accept", "text/event-stream"}}, {},
      [&](const HttpReply& head) {
        status = head.status;
        EXPECT_EQ(head.Header("Content-Type"), "text/event-stream");
        return true;
      },
      [&](std::string_view chunk) {
        if (said_stop) ++calls_after_stop;
        got.append(chunk);
        said_stop = got.find("event 3\n\n") != std::string::npos;
        return !said_stop;
      });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->stopped);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(status, 200);
  EXPECT_TRUE(r->body.empty());
  EXPECT_NE(got.find("data: event 0\n\n"), std::string::npos) << got;
  EXPECT_EQ(calls_after_stop, 0);
  // The server sees the client go away long before its 2000 events.
  for (int i = 0; i < 300 && srv.streams_cut() == 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(srv.streams_cut(), 1);
}

TEST(HttpClientTest, TheStopPredicateEndsASilentStream) {
  Loopback srv;
  std::string got;
  std::atomic<bool> stop{false};
  const auto start = std::chrono::steady_clock::now();
  std::thread stopper([&] {
    std::this_thread::sleep_for(200ms);
    stop = true;
  });
  auto r = HttpClient(Quick()).Stream(
      "GET", srv.Url("/drip"), {}, {}, {},
      [&](std::string_view chunk) {
        got.append(chunk);
        return true;
      },
      [&] { return stop.load(); });
  stopper.join();
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->stopped);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(got, "first\n");
  // Nothing arrives after "first": only the predicate can end the call.
  EXPECT_LT(took, 1s);
}

TEST(HttpClientTest, TheHeadCallbackCanRefuseTheBody) {
  Loopback srv;
  bool chunk_seen = false;
  auto r = HttpClient(Quick()).Stream(
      "GET", srv.Url("/teapot"), {}, {}, [](const HttpReply& head) { return head.status == 200; },
      [&](std::string_view) { return chunk_seen = true; });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->stopped);
  EXPECT_EQ(r->status, 418);
  EXPECT_FALSE(chunk_seen);
}

TEST(HttpClientTest, AnOversizedBodyAndABadUrlAreErrors) {
  Loopback srv;
  HttpClientOptions small = Quick();
  small.max_body_bytes = 10;
  auto r = HttpClient(small).Request("GET", srv.Url("/echo"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);

  auto ftp = HttpClient(Quick()).Request("GET", "ftp://127.0.0.1/file");
  ASSERT_FALSE(ftp.ok());
  EXPECT_EQ(ftp.status().code(), StatusCode::kInvalidArgument) << ftp.status().ToString();
}

TEST(HttpClientTest, OneClientServesManyThreadsAtOnce) {
  Loopback srv;
  const HttpClient client(Quick());
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        std::string body = std::to_string(t) + "/" + std::to_string(i);
        auto r = client.Request("POST", srv.Url("/echo"), {{"Content-Type", "text/plain"}}, body);
        if (r.ok() && Json::parse(r->body)["body"] == body) ++ok;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 40);
}

TEST(HttpClientTest, UrlEncodeEscapesAllButUnreservedBytes) {
  EXPECT_EQ(UrlEncode("abcXYZ019-._~"), "abcXYZ019-._~");
  EXPECT_EQ(UrlEncode("a b/c?d=e&f"), "a%20b%2Fc%3Fd%3De%26f");
  EXPECT_EQ(UrlEncode("\xC3\xA9"), "%C3%A9");
  EXPECT_EQ(UrlEncode(""), "");
}

}  // namespace
}  // namespace maestro
