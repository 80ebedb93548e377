// BrowserProxy over real sockets: a site this test serves on 127.0.0.1, a
// canary on 127.0.0.2 (and one on another 127.0.0.1 port) that must never
// see a connection, and the proxy on a Unix socket as the browser's bridge
// reaches it. Covers CONNECT and absolute-form requests to allowed and
// refused hosts, other spellings of an address, userinfo tricks, a
// redirect passed back (not followed), port-limited entries, malformed and
// oversized heads, the connection cap, and Stop with a tunnel open.
#include "browser/browser_proxy.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "browser/allow_list.h"
#include "support/temp_dir.h"
#include "unit/browser/canary_server.h"

namespace maestro::browser {
namespace {

using std::chrono::milliseconds;

TEST(AllowListTest, EntriesWithPortsWildcardsAndAddresses) {
  for (const char* good : {"example.com", "*.example.com", "10.0.0.5", "127.0.0.1:8080", "[::1]",
                           "[::1]:443", "*.corp.local:8443", "Docs.Test"}) {
    EXPECT_TRUE(ValidAllowEntry(good)) << good;
  }
  for (const char* bad : {"", "http://a.test/", "a.test:0", "a.test:70000", "a.test:", "a b", "*.",
                          "a..b", ".a.test", "[::1", "a.test:80:80", "a.test/x"}) {
    EXPECT_FALSE(ValidAllowEntry(bad)) << bad;
  }
  const std::vector<std::string> allowed = {"127.0.0.1:8080", "*.example.com", "[::1]:443"};
  EXPECT_TRUE(EndpointAllowed(allowed, "127.0.0.1", 8080));
  EXPECT_FALSE(EndpointAllowed(allowed, "127.0.0.1", 8081));
  EXPECT_TRUE(EndpointAllowed(allowed, "A.Example.COM", 1));
  EXPECT_FALSE(EndpointAllowed(allowed, "example.com", 443));
  EXPECT_FALSE(EndpointAllowed(allowed, "a.example.com.", 443));
  EXPECT_TRUE(EndpointAllowed(allowed, "[::1]", 443));
  EXPECT_FALSE(EndpointAllowed(allowed, "[::1]", 80));
  EXPECT_TRUE(HostAllowed(allowed, "http://127.0.0.1:8080/x"));
  EXPECT_FALSE(HostAllowed(allowed, "http://127.0.0.1/x"));  // port 80
  EXPECT_TRUE(HostAllowed(allowed, "https://[::1]/"));
  std::string host;
  int port = 0;
  EXPECT_TRUE(SplitAuthority("[::1]:99", 80, &host, &port));
  EXPECT_EQ(host, "[::1]");
  EXPECT_EQ(port, 99);
  EXPECT_FALSE(SplitAuthority("a.test:99x", 80, &host, &port));
  EXPECT_FALSE(SplitAuthority("a.test@b.test", 80, &host, &port));
}

class BrowserProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    site_.Get("/page", [this](const httplib::Request& req, httplib::Response& res) {
      if (req.has_header("Proxy-Connection")) ++hop_headers_;
      res.set_content("allowed page body", "text/plain");
    });
    site_.Get("/redirect", [this](const httplib::Request&, httplib::Response& res) {
      res.set_redirect("http://127.0.0.2:" + std::to_string(canary_.port()) + "/stolen");
    });
    site_.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content("echo:" + req.body, "text/plain");
    });
    port_ = site_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { site_.listen_after_bind(); });
    while (!site_.is_running()) std::this_thread::sleep_for(milliseconds(1));
    ASSERT_GT(canary_.port(), 0);
    ASSERT_GT(canary_same_host_.port(), 0);
    StartProxy({"127.0.0.1"});
  }
  void TearDown() override {
    if (proxy_) proxy_->Stop();
    site_.stop();
    thread_.join();
  }
  void StartProxy(std::vector<std::string> allowed, int max_connections = 128) {
    if (proxy_) proxy_->Stop();
    ProxySpec spec;
    spec.allowed_hosts = std::move(allowed);
    spec.unix_path = dir_.File("proxy-" + std::to_string(++proxies_) + ".sock");
    spec.max_connections = max_connections;
    spec.header_timeout = milliseconds(3'000);
    auto p = BrowserProxy::Start(spec);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    proxy_ = std::move(p).value();
    path_ = spec.unix_path;
  }
  int Dial() {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path_.c_str());
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    return fd;
  }
  static void Send(int fd, const std::string& s) {
    ASSERT_EQ(::send(fd, s.data(), s.size(), MSG_NOSIGNAL), static_cast<ssize_t>(s.size()));
  }
  // Reads until EOF, `until` appears, or 5 s pass.
  static std::string Receive(int fd, const std::string& until = "") {
    std::string out;
    char buf[4096];
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      if (!until.empty() && out.find(until) != std::string::npos) break;
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }
  // One request on a fresh connection; the whole answer.
  std::string Exchange(const std::string& request) {
    int fd = Dial();
    Send(fd, request);
    std::string out = Receive(fd);
    ::close(fd);
    return out;
  }
  std::string Site() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string Canary() const { return "127.0.0.2:" + std::to_string(canary_.port()); }

  testing::TempDir dir_;
  httplib::Server site_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> hop_headers_{0};
  testing::CanaryServer canary_{"127.0.0.2"};
  testing::CanaryServer canary_same_host_{"127.0.0.1"};
  std::unique_ptr<BrowserProxy> proxy_;
  std::string path_;
  int proxies_ = 0;
};

TEST_F(BrowserProxyTest, AbsoluteFormRequestsToAnAllowedHostAreRelayedOnePerConnection) {
  std::string out = Exchange("GET http://" + Site() + "/page HTTP/1.1\r\nHost: " + Site() +
                             "\r\nProxy-Connection: keep-alive\r\nConnection: keep-alive\r\n\r\n");
  EXPECT_EQ(out.rfind("HTTP/1.1 200", 0), 0u) << out;
  EXPECT_NE(out.find("allowed page body"), std::string::npos) << out;
  EXPECT_NE(out.find("Connection: close\r\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("Keep-Alive"), std::string::npos) << out;
  EXPECT_EQ(hop_headers_.load(), 0) << "the proxy's own headers reached the site";
  std::string echoed = Exchange("POST http://" + Site() + "/echo HTTP/1.1\r\nHost: " + Site() +
                                "\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello");
  EXPECT_NE(echoed.find("echo:hello"), std::string::npos) << echoed;
  EXPECT_EQ(proxy_->admitted(), 2);
  EXPECT_EQ(proxy_->refused(), 0);
}

TEST_F(BrowserProxyTest, ConnectToAnAllowedHostOpensATunnel) {
  int fd = Dial();
  Send(fd, "CONNECT " + Site() + " HTTP/1.1\r\nHost: " + Site() + "\r\n\r\n");
  std::string established = Receive(fd, "\r\n\r\n");
  EXPECT_EQ(established, "HTTP/1.1 200 Connection established\r\n\r\n");
  Send(fd, "GET /page HTTP/1.1\r\nHost: " + Site() + "\r\nConnection: close\r\n\r\n");
  std::string out = Receive(fd);
  ::close(fd);
  EXPECT_NE(out.find("allowed page body"), std::string::npos) << out;
}

TEST_F(BrowserProxyTest, HostsOffTheListAreRefusedWithoutAConnectionInAnySpelling) {
  const std::string canary_port = std::to_string(canary_.port());
  const std::string same_host_port = std::to_string(canary_same_host_.port());
  // CONNECT (https, wss, ws) and absolute-form (http) to the canary.
  std::string connect =
      Exchange("CONNECT " + Canary() + " HTTP/1.1\r\nHost: " + Canary() + "\r\n\r\n");
  EXPECT_EQ(connect.rfind("HTTP/1.1 403", 0), 0u) << connect;
  EXPECT_NE(connect.find("not on this space's browser allow-list"), std::string::npos);
  std::string plain =
      Exchange("GET http://" + Canary() + "/x HTTP/1.1\r\nHost: " + Canary() + "\r\n\r\n");
  EXPECT_EQ(plain.rfind("HTTP/1.1 403", 0), 0u) << plain;
  // Other spellings of an allowed address, and names that resolve to it,
  // are not the entry "127.0.0.1".
  for (const char* host : {"localhost", "2130706433", "127.1", "0x7f000001", "0177.0.0.1",
                           "127.0.0.1.", "[::ffff:127.0.0.1]", "[::1]"}) {
    std::string out = Exchange("CONNECT " + std::string(host) + ":" + same_host_port +
                               " HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_TRUE(out.rfind("HTTP/1.1 403", 0) == 0 || out.rfind("HTTP/1.1 400", 0) == 0)
        << host << ": " << out;
  }
  // Userinfo that makes the allowed host look like the target.
  for (const std::string& target :
       {"http://127.0.0.1:" + std::to_string(port_) + "@" + Canary() + "/",
        "http://127.0.0.1@" + Canary() + "/", "http://" + Canary() + "#@127.0.0.1/"}) {
    std::string out = Exchange("GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    EXPECT_TRUE(out.rfind("HTTP/1.1 403", 0) == 0 || out.rfind("HTTP/1.1 400", 0) == 0)
        << target << ": " << out;
  }
  EXPECT_EQ(canary_.connections(), 0);
  EXPECT_EQ(canary_same_host_.connections(), 0);
  EXPECT_EQ(proxy_->admitted(), 0);
  EXPECT_GE(proxy_->refused(), 8);  // the 400s (malformed) are not counted
}

TEST_F(BrowserProxyTest, ARedirectToAnotherHostIsPassedBackNotFollowed) {
  std::string out =
      Exchange("GET http://" + Site() + "/redirect HTTP/1.1\r\nHost: " + Site() + "\r\n\r\n");
  EXPECT_EQ(out.rfind("HTTP/1.1 302", 0), 0u) << out;
  EXPECT_NE(out.find("Location: http://" + Canary() + "/stolen"), std::string::npos) << out;
  // The browser's next request is the redirect's target: refused.
  std::string next =
      Exchange("GET http://" + Canary() + "/stolen HTTP/1.1\r\nHost: " + Canary() + "\r\n\r\n");
  EXPECT_EQ(next.rfind("HTTP/1.1 403", 0), 0u) << next;
  EXPECT_EQ(canary_.connections(), 0);
}

TEST_F(BrowserProxyTest, AnEntryWithAPortAdmitsOnlyThatPort) {
  StartProxy({Site()});
  std::string ok = Exchange("GET http://" + Site() + "/page HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_NE(ok.find("allowed page body"), std::string::npos) << ok;
  const std::string other = "127.0.0.1:" + std::to_string(canary_same_host_.port());
  std::string refused = Exchange("CONNECT " + other + " HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(refused.rfind("HTTP/1.1 403", 0), 0u) << refused;
  std::string plain = Exchange("GET http://" + other + "/ HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(plain.rfind("HTTP/1.1 403", 0), 0u) << plain;
  EXPECT_EQ(canary_same_host_.connections(), 0);
}

TEST_F(BrowserProxyTest, AnAllowedNameIsResolvedByTheProxy) {
  // The browser sends the name; the proxy resolves "localhost" itself (to
  // ::1 or 127.0.0.1; the site listens on the latter) and connects there.
  StartProxy({"localhost:" + std::to_string(port_)});
  const std::string authority = "localhost:" + std::to_string(port_);
  std::string out =
      Exchange("GET http://" + authority + "/page HTTP/1.1\r\nHost: " + authority + "\r\n\r\n");
  EXPECT_NE(out.find("allowed page body"), std::string::npos) << out;
  std::string refused = Exchange("GET http://" + Site() + "/page HTTP/1.1\r\n\r\n");
  EXPECT_EQ(refused.rfind("HTTP/1.1 403", 0), 0u) << "the address is not the name: " << refused;
  std::string unknown =
      Exchange("CONNECT nothing.invalid:443 HTTP/1.1\r\n\r\n");  // not on the list either
  EXPECT_EQ(unknown.rfind("HTTP/1.1 403", 0), 0u) << unknown;
}

TEST_F(BrowserProxyTest, MalformedAndOversizedHeadsAreRefused) {
  const std::vector<std::string> bad_heads = {"HELLO\r\n\r\n",
                                              "GET /page HTTP/1.1\r\nHost: x\r\n\r\n",
                                              "GET https://" + Site() + "/page HTTP/1.1\r\n\r\n",
                                              "CONNECT " + Site() + "x HTTP/1.1\r\n\r\n",
                                              "CONNECT 127.0.0.1 HTTP/1.1\r\n\r\n",
                                              "GET ftp://127.0.0.1/ HTTP/1.1\r\n\r\n",
                                              "GET http://127.0.0.1:99999/ HTTP/1.1\r\n\r\n"};
  for (const std::string& bad : bad_heads) {
    std::string out = Exchange(bad);
    EXPECT_EQ(out.rfind("HTTP/1.1 400", 0), 0u) << bad << " -> " << out;
  }
  std::string huge =
      "GET http://" + Site() + "/page HTTP/1.1\r\nX-Pad: " + std::string(20'000, 'a') + "\r\n\r\n";
  std::string out = Exchange(huge);
  EXPECT_EQ(out.rfind("HTTP/1.1 431", 0), 0u) << out.substr(0, 200);
  EXPECT_EQ(proxy_->admitted(), 0);
}

TEST_F(BrowserProxyTest, ConnectionsOverTheCapAreAnswered503AndStopEndsOpenTunnels) {
  StartProxy({"127.0.0.1"}, /*max_connections=*/2);
  int tunnel = Dial();
  Send(tunnel, "CONNECT " + Site() + " HTTP/1.1\r\n\r\n");
  ASSERT_EQ(Receive(tunnel, "\r\n\r\n"), "HTTP/1.1 200 Connection established\r\n\r\n");
  int idle = Dial();  // sends nothing: it waits in the head's read
  std::this_thread::sleep_for(milliseconds(100));
  int over = Dial();  // answered at once: nothing to send
  std::string third = Receive(over);
  ::close(over);
  EXPECT_EQ(third.rfind("HTTP/1.1 503", 0), 0u) << third;
  const auto t0 = std::chrono::steady_clock::now();
  proxy_->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_EQ(Receive(tunnel), "") << "the tunnel ended with the proxy";
  ::close(tunnel);
  ::close(idle);
}

}  // namespace
}  // namespace maestro::browser
