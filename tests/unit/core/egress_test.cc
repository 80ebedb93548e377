// The egress policy (core/egress.h) and HttpClient's pinning to what it
// checked: every loopback/private/metadata spelling refused, with a canary
// listening on every local address that must see zero connections; public
// literals accepted by the classifier (no connection made); the allow-list
// admitting exactly what it names; a redirect from an allowed server to the
// canary not followed; config errors with the section's file:line:col.
#include "core/egress.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "core/config.h"
#include "core/http_client.h"
#include "support/temp_dir.h"

namespace maestro {
namespace {

// Counts the TCP connections made to its port on every local address
// (a dual-stack socket on ::, or 0.0.0.0 where IPv6 is off); it accepts and
// closes at once.
class Canary {
 public:
  Canary() {
    fd_ = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int on = 1, off = 0;
    if (fd_ >= 0) {
      setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
      setsockopt(fd_, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_addr = in6addr_any;
      if (bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        close(fd_);
        fd_ = -1;
      }
    }
    if (fd_ < 0) {
      fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_ANY);
      EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    }
    EXPECT_EQ(listen(fd_, 64), 0);
    sockaddr_storage s{};
    socklen_t len = sizeof s;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&s), &len);
    port_ = ntohs(s.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&s)->sin6_port
                                          : reinterpret_cast<sockaddr_in*>(&s)->sin_port);
    thread_ = std::thread([this] {
      while (!stop_) {
        pollfd p{fd_, POLLIN, 0};
        if (poll(&p, 1, 20) <= 0) continue;
        int c = accept(fd_, nullptr, nullptr);
        if (c >= 0) {
          ++connections_;
          close(c);
        }
      }
    });
  }
  ~Canary() {
    stop_ = true;
    thread_.join();
    close(fd_);
  }
  int port() const { return port_; }
  int connections() const { return connections_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

std::string HostName() {
  char buf[256] = {0};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

std::shared_ptr<const EgressPolicy> Strict() { return std::make_shared<EgressPolicy>(); }

std::shared_ptr<const EgressPolicy> Allowing(const std::vector<std::string>& allow) {
  auto p = EgressPolicy::WithAllowList(allow);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return std::make_shared<EgressPolicy>(*p);
}

HttpClient ClientWith(std::shared_ptr<const EgressPolicy> policy) {
  HttpClientOptions o;
  o.connect_timeout_ms = 2'000;
  o.total_timeout_ms = 3'000;
  o.egress = std::move(policy);
  return HttpClient(o);
}

IpAddress Ip(const std::string& text) {
  auto a = IpAddress::Parse(text);
  EXPECT_TRUE(a.ok()) << text;
  return a.ok() ? *a : IpAddress{};
}

TEST(EgressRanges, InternalAddressesAreNamedPublicOnesAreNot) {
  for (const char* internal : {"127.0.0.1",
                               "127.255.255.254",
                               "0.0.0.0",
                               "0.1.2.3",
                               "10.0.0.1",
                               "172.16.0.1",
                               "172.31.255.255",
                               "192.168.1.1",
                               "100.64.0.1",
                               "100.127.255.255",
                               "169.254.169.254",
                               "169.254.1.1",
                               "224.0.0.1",
                               "239.255.255.250",
                               "240.0.0.1",
                               "255.255.255.255",
                               "::1",
                               "::",
                               "fc00::1",
                               "fd00:ec2::254",
                               "fe80::1",
                               "ff02::1",
                               "::ffff:127.0.0.1",
                               "::ffff:10.0.0.1",
                               "::ffff:169.254.169.254",
                               "::127.0.0.1",
                               "64:ff9b::7f00:1",
                               "64:ff9b::a9fe:a9fe",
                               "2002:7f00:1::",
                               "2002:c0a8:101::1"}) {
    EXPECT_NE(InternalRange(Ip(internal)), "") << internal;
  }
  for (const char* pub :
       {"93.184.216.34", "8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "11.0.0.1",
        "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"}) {
    EXPECT_EQ(InternalRange(Ip(pub)), "") << pub;
  }
  EXPECT_NE(InternalRange(Ip("169.254.169.254")).find("metadata"), std::string_view::npos);
  EXPECT_NE(InternalRange(Ip("fd00:ec2::254")).find("metadata"), std::string_view::npos);
  EXPECT_FALSE(IpAddress::Parse("127.1").ok()) << "only the strict form is an IP literal";
}

TEST(EgressCheck, EverySpellingOfAnInternalAddressIsRefusedAndTheCanarySeesNothing) {
  Canary canary;
  const std::string p = std::to_string(canary.port());
  std::vector<std::string> urls = {
      "http://127.0.0.1:" + p + "/",
      "http://localhost:" + p + "/",
      "http://LOCALHOST.:" + p + "/",
      "http://0.0.0.0:" + p + "/",
      "http://127.1:" + p + "/",
      "http://2130706433:" + p + "/",
      "http://0x7f000001:" + p + "/",
      "http://0177.0.0.1:" + p + "/",
      "http://0x7f.0.0.1:" + p + "/",
      "http://[::1]:" + p + "/",
      "http://[::ffff:127.0.0.1]:" + p + "/",
      "http://[::ffff:7f00:1]:" + p + "/",
      "http://[0:0:0:0:0:0:0:1]:" + p + "/",
      "http://user:pass@127.0.0.1:" + p + "/",
      "http://user:pass@93.184.216.34:" + p + "/",
      "http://" + HostName() + ":" + p + "/",
      "https://127.0.0.1:" + p + "/",
      "http://169.254.169.254/latest/meta-data/",
      "http://[fd00:ec2::254]/",
      "http://10.0.0.1:" + p + "/",
      "http://192.168.0.1/",
      "http://100.64.0.1/",
      "ftp://127.0.0.1:" + p + "/",
      "file:///etc/passwd",
      "gopher://127.0.0.1:" + p + "/",
      "dict://127.0.0.1:" + p + "/",
      "not a url",
  };
  const auto strict = Strict();
  const HttpClient client = ClientWith(strict);
  for (const auto& url : urls) {
    auto checked = strict->Check(url);
    EXPECT_FALSE(checked.ok()) << url << " checked as " << checked->address.ToString();
    auto sent = client.Request("POST", url, {{"Content-Type", "application/json"}}, "{}");
    EXPECT_FALSE(sent.ok()) << url;
    if (!sent.ok() && checked.status().code() == StatusCode::kInvalidArgument) {
      EXPECT_EQ(sent.status().code(), StatusCode::kInvalidArgument) << sent.status().ToString();
      EXPECT_EQ(sent.status().field(), "url");
    }
  }
  EXPECT_EQ(canary.connections(), 0);
  // The control: without a policy the same spellings do reach the canary.
  const HttpClient unchecked = ClientWith(nullptr);
  for (const char* host : {"127.1", "2130706433", "0x7f000001", "localhost", "[::1]"}) {
    (void)unchecked.Request("POST", "http://" + std::string(host) + ":" + p + "/", {}, "{}");
  }
  EXPECT_GE(canary.connections(), 4) << "the canary counts what reaches it";
  auto loop = strict->Check("http://127.1:" + p + "/");
  ASSERT_FALSE(loop.ok());
  EXPECT_NE(loop.status().message().find("127.0.0.1"), std::string::npos)
      << "the message names the resolved address: " << loop.status().message();
  EXPECT_NE(loop.status().message().find("loopback"), std::string::npos);
  auto cred = strict->Check("http://user:pass@93.184.216.34/");
  ASSERT_FALSE(cred.ok());
  EXPECT_EQ(cred.status().message().find("pass"), cred.status().message().find("password"))
      << "the password is not echoed: " << cred.status().message();
}

TEST(EgressCheck, PublicLiteralsAreAcceptedWithTheAddressToPin) {
  const auto strict = Strict();
  auto v4 = strict->Check("http://93.184.216.34/hook?x=1");
  ASSERT_TRUE(v4.ok()) << v4.status().ToString();
  EXPECT_EQ(v4->address.ToString(), "93.184.216.34");
  EXPECT_EQ(v4->port, 80);
  auto v6 = strict->Check("https://[2606:4700:4700::1111]:8443/a2a");
  ASSERT_TRUE(v6.ok()) << v6.status().ToString();
  EXPECT_EQ(v6->AddressLiteral(), "[2606:4700:4700::1111]");
  EXPECT_EQ(v6->port, 8443);
  EXPECT_EQ(v6->host, "2606:4700:4700::1111");
}

TEST(EgressCheck, TheAllowListAdmitsExactlyWhatItNames) {
  Canary canary;
  const std::string p = std::to_string(canary.port());
  auto by_ip = Allowing({"127.0.0.2"});
  EXPECT_TRUE(by_ip->Check("http://127.0.0.2:" + p + "/").ok());
  EXPECT_FALSE(by_ip->Check("http://127.0.0.1:" + p + "/").ok());
  EXPECT_FALSE(by_ip->Check("http://localhost:" + p + "/").ok());

  auto by_cidr = Allowing({"192.168.1.0/24", "fd12::/16"});
  EXPECT_TRUE(by_cidr->Check("http://192.168.1.7/").ok());
  EXPECT_FALSE(by_cidr->Check("http://192.168.2.1/").ok());
  EXPECT_TRUE(by_cidr->Check("http://[fd12:3::1]/").ok());
  EXPECT_FALSE(by_cidr->Check("http://[fd13::1]/").ok());
  EXPECT_FALSE(by_cidr->Check("http://127.0.0.1:" + p + "/").ok());

  auto by_host = Allowing({"LocalHost"});
  auto local = by_host->Check("http://localhost:" + p + "/");
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  EXPECT_NE(InternalRange(local->address), "");
  EXPECT_FALSE(by_host->Check("http://127.0.0.1:" + p + "/").ok())
      << "a host entry admits that name, not its addresses under another name";
  EXPECT_FALSE(by_host->Check("http://user:pw@localhost:" + p + "/").ok())
      << "the allow-list never admits credentials in a URL";
  EXPECT_FALSE(by_host->Check("gopher://localhost:" + p + "/").ok());
  EXPECT_EQ(canary.connections(), 0) << "checks alone connect nowhere";
}

// An allowed receiver on 127.0.0.2 answers; its redirect to the canary (on
// 127.0.0.1) comes back as the reply and is not followed.
TEST(EgressClient, AnAllowedServerIsReachedAndItsRedirectIsNotFollowed) {
  Canary canary;
  httplib::Server server;
  server.Post("/hook", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok", "text/plain");
  });
  const std::string to_canary = "http://127.0.0.1:" + std::to_string(canary.port()) + "/";
  server.Post("/redirect", [&](const httplib::Request&, httplib::Response& res) {
    res.status = 307;
    res.set_header("Location", to_canary);
  });
  const int port = server.bind_to_any_port("127.0.0.2");
  ASSERT_GT(port, 0);
  std::thread t([&] { server.listen_after_bind(); });
  const std::string base = "http://127.0.0.2:" + std::to_string(port);
  const HttpClient client = ClientWith(Allowing({"127.0.0.2"}));
  auto ok = client.Request("POST", base + "/hook", {}, "{}");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->body, "ok");
  auto moved = client.Request("POST", base + "/redirect", {}, "{}");
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_EQ(moved->status, 307) << "the redirect is the reply";
  EXPECT_FALSE(client.Request("POST", to_canary, {}, "{}").ok());
  EXPECT_FALSE(ClientWith(Strict()).Request("POST", base + "/hook", {}, "{}").ok());
  server.stop();
  t.join();
  EXPECT_EQ(canary.connections(), 0);
}

// The connection goes to the address Check returned, not to a second
// lookup: the policy's resolver says localhost is 127.0.0.2 (an allowed
// server), the system says 127.0.0.1 (the canary, on the same port), as a
// rebinding DNS server would answer the check and then the connect.
TEST(EgressClient, TheConnectionIsPinnedToTheCheckedAddress) {
  httplib::Server server;
  std::atomic<int> served{0};
  server.Post("/hook", [&](const httplib::Request&, httplib::Response& res) {
    ++served;
    res.set_content("pinned", "text/plain");
  });
  const int port = server.bind_to_any_port("127.0.0.2");
  ASSERT_GT(port, 0);
  std::thread t([&] { server.listen_after_bind(); });
  // The canary on 127.0.0.1 at the very same port.
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(fd, 16), 0);

  auto policy = EgressPolicy::WithAllowList({"127.0.0.2"});
  ASSERT_TRUE(policy.ok());
  policy->set_resolver([](const std::string&) -> Result<std::vector<IpAddress>> {
    return std::vector<IpAddress>{*IpAddress::Parse("127.0.0.2")};
  });
  const HttpClient client = ClientWith(std::make_shared<const EgressPolicy>(*policy));
  auto r = client.Request("POST", "http://localhost:" + std::to_string(port) + "/hook", {}, "{}");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->body, "pinned");
  EXPECT_EQ(served, 1);
  pollfd p{fd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 100), 0) << "nothing connected to the system's answer (127.0.0.1)";
  close(fd);
  server.stop();
  t.join();
}

TEST(EgressConfig, ErrorsNameTheKeyAndTheFilePosition) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/maestro.yaml";
  std::ofstream(path) << "workers: 1\negress:\n  allow: [hooks.internal, 10.0.0.0/33]\n";
  auto cfg = LoadConfig(path, {});
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  auto bad = EgressPolicyFrom(cfg->egress, cfg->egress_where);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "egress.allow[1]");
  EXPECT_NE(bad.status().message().find("maestro.yaml:2:1"), std::string::npos)
      << bad.status().message();

  std::ofstream(path) << "egress:\n  deny: [10.0.0.1]\n";
  cfg = LoadConfig(path, {});
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  bad = EgressPolicyFrom(cfg->egress, cfg->egress_where);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "egress.deny");
  EXPECT_NE(bad.status().message().find("maestro.yaml:1:1"), std::string::npos)
      << bad.status().message();

  for (const char* j : {R"({"allow": "10.0.0.1"})", R"({"allow": [7]})", R"({"allow": ["a b"]})",
                        R"({"allow": ["1.2.3.4/"]})", R"({"allow": ["::1/129"]})"}) {
    EXPECT_FALSE(EgressPolicyFrom(Json::parse(j), "f:1:1").ok()) << j;
  }
  auto good = EgressPolicyFrom(
      Json::parse(R"({"allow": ["hooks.internal", "127.0.0.1", "10.0.0.0/8", "::1"]})"), "");
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(good->allow().size(), 4u);
  auto none = EgressPolicyFrom(Json::object(), "");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->allow().empty());
}

}  // namespace
}  // namespace maestro
