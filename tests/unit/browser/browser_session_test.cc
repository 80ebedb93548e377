// BrowserSession and its config against Debian's real Chromium (started
// under bubblewrap, as in production) and pages this test serves on
// 127.0.0.1: reading, numbered links, typing and selecting into a form, the
// allow-list on navigations and subresources, login detection, screenshots,
// and the process and the proxy's socket directory gone after Close.
#include "browser/browser_session.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <thread>

#include "browser/browser_service.h"
#include "support/temp_dir.h"

namespace maestro::browser {
namespace {

TEST(HostAllowedTest, ExactHostsAndWildcardSubdomainsOverHttpOnly) {
  std::vector<std::string> allowed = {"127.0.0.1", "*.example.com", "Docs.Test"};
  EXPECT_TRUE(HostAllowed(allowed, "http://127.0.0.1:8080/a"));
  EXPECT_TRUE(HostAllowed(allowed, "https://a.b.example.com/x?y#z"));
  EXPECT_TRUE(HostAllowed(allowed, "https://docs.test/"));
  EXPECT_TRUE(HostAllowed(allowed, "http://user:pw@127.0.0.1/"));
  EXPECT_FALSE(HostAllowed(allowed, "https://example.com/"));  // the wildcard needs a subdomain
  EXPECT_FALSE(HostAllowed(allowed, "http://localhost/"));
  EXPECT_FALSE(HostAllowed(allowed, "http://127.0.0.1.evil.net/"));
  EXPECT_FALSE(HostAllowed(allowed, "http://evil.net/?u=http://127.0.0.1/"));
  EXPECT_FALSE(HostAllowed(allowed, "file:///etc/passwd"));
  EXPECT_FALSE(HostAllowed(allowed, "javascript:alert(1)"));
  EXPECT_FALSE(HostAllowed({}, "http://127.0.0.1/"));
}

TEST(BrowserConfigTest, ErrorsNameTheKey) {
  auto ok = BrowserConfigFrom(
      Json::parse(R"({"allowed_hosts":["a.test"],"spaces":{"s":{"allowed_hosts":["b.test"]}},
                      "max_browsers":2,"sandbox":"none"})"),
      "m.yaml:3:1");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->max_browsers, 2);
  EXPECT_EQ(ok->space_hosts.at("s"), std::vector<std::string>{"b.test"});
  for (auto [json, key] : std::vector<std::pair<std::string, std::string>>{
           {R"({"allowed_hosts":"a.test"})", "browser.allowed_hosts"},
           {R"({"allowed_hosts":["http://a.test/"]})", "browser.allowed_hosts"},
           {R"({"max_browsers":0})", "browser.max_browsers"},
           {R"({"sandbox":"docker"})", "browser.sandbox"},
           {R"({"spaces":{"s":{"hosts":[]}}})", "browser.spaces.s"},
           {R"({"colour":"blue"})", "browser.colour"}}) {
    auto bad = BrowserConfigFrom(Json::parse(json), "m.yaml:3:1");
    ASSERT_FALSE(bad.ok()) << json;
    EXPECT_NE(bad.status().message().find("m.yaml:3:1: " + key), std::string::npos)
        << bad.status().message();
  }
}

class BrowserSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(
          "<html><head><title>Home</title></head><body><nav><a href=\"/nav\">Nav</a></nav>"
          "<main><p>Main text here.</p><a href=\"/one\">First link</a> <a "
          "href=\"/two\">Second link</a></main></body></html>",
          "text/html");
    });
    server_.Get("/two", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("<html><body><main>Page two</main></body></html>", "text/html");
    });
    server_.Get("/form", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(
          "<html><body><main><form action=\"/echo\"><input id=\"q\" name=\"q\"><select "
          "id=\"c\" name=\"c\"><option value=\"r\">Red</option><option "
          "value=\"g\">Green</option></select><button id=\"go\">Go</button></form></main>"
          "</body></html>",
          "text/html");
    });
    server_.Get("/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content("<html><body><main>q=" + req.get_param_value("q") +
                          " c=" + req.get_param_value("c") + "</main></body></html>",
                      "text/html");
    });
    server_.Get("/login", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("<html><body><input type=\"password\"></body></html>", "text/html");
    });
    server_.Get("/denied", [](const httplib::Request&, httplib::Response& res) {
      res.status = 401;
      res.set_content("<html><body>Who are you?</body></html>", "text/html");
    });
    server_.Get("/leaky", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content("<html><body><main>Leaky<img src=\"http://localhost:" +
                          std::to_string(port_) + "/pixel\"></main></body></html>",
                      "text/html");
    });
    server_.Get("/pixel", [this](const httplib::Request&, httplib::Response& res) {
      ++pixels_;
      res.set_content("", "image/png");
    });
    server_.Get("/redirect-out", [this](const httplib::Request&, httplib::Response& res) {
      res.set_redirect("http://localhost:" + std::to_string(port_) + "/two");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));

    SessionSpec spec;
    spec.profile_dir = dir_.File("profile");
    spec.command = CommandFor(BrowserConfig{}, spec.profile_dir);  // chromium in bubblewrap
    spec.allowed_hosts = {"127.0.0.1"};
    auto s = BrowserSession::Start(*Env::Default(), spec);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    session_ = std::move(s).value();
  }
  void TearDown() override {
    if (session_) session_->Close();
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  std::string Url(const std::string& path) {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

  testing::TempDir dir_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> pixels_{0};
  std::unique_ptr<BrowserSession> session_;
};

TEST_F(BrowserSessionTest, ReadsMainContentAndFollowsNumberedLinks) {
  auto home = session_->Open(Url("/"));
  ASSERT_TRUE(home.ok()) << home.status().ToString();
  EXPECT_EQ(home->title, "Home");
  EXPECT_EQ(home->status, 200);
  EXPECT_FALSE(home->login_required);
  EXPECT_NE(home->text.find("Main text here."), std::string::npos) << home->text;
  EXPECT_EQ(home->text.find("Nav\n"), std::string::npos) << "the nav is not main content";
  EXPECT_NE(home->text.find("[3] Second link -> " + Url("/two")), std::string::npos) << home->text;
  auto two = session_->ClickLink(3);
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  EXPECT_EQ(two->url, Url("/two"));
  EXPECT_NE(two->text.find("Page two"), std::string::npos);
  EXPECT_FALSE(session_->ClickLink(9).ok());
  auto back = session_->Back();
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->url, Url("/"));
}

TEST_F(BrowserSessionTest, TypesSelectsAndSubmitsAForm) {
  ASSERT_TRUE(session_->Open(Url("/form")).ok());
  ASSERT_TRUE(session_->Type("#q", "blue whale").ok());
  ASSERT_TRUE(session_->Select("#c", "Green").ok());
  EXPECT_FALSE(session_->Select("#c", "Purple").ok());
  EXPECT_FALSE(session_->Type("#nope", "x").ok());
  auto echoed = session_->ClickSelector("#go");
  ASSERT_TRUE(echoed.ok()) << echoed.status().ToString();
  EXPECT_NE(echoed->text.find("q=blue whale c=g"), std::string::npos) << echoed->text;
}

TEST_F(BrowserSessionTest, LiveViewKeysSubmitAndTheNextScreenshotShowsTheNewPage) {
  ASSERT_TRUE(session_->Open(Url("/form")).ok());
  ASSERT_TRUE(session_->Type("#q", "typed").ok());  // focuses the field
  ASSERT_TRUE(session_->InputText(" more").ok());
  ASSERT_TRUE(session_->InputKey("Enter").ok());  // returns once the result page loaded
  auto png = session_->Screenshot();
  ASSERT_TRUE(png.ok()) << png.status().ToString();
  auto page = session_->Read();
  ASSERT_TRUE(page.ok());
  EXPECT_NE(page->text.find("q=typed more"), std::string::npos) << page->text;
}

TEST_F(BrowserSessionTest, HostsOffTheAllowListAreRefusedSubresourcesAndRedirectsIncluded) {
  auto off = session_->Open("http://localhost:" + std::to_string(port_) + "/");
  ASSERT_FALSE(off.ok());
  EXPECT_NE(off.status().message().find("allow-list"), std::string::npos);
  EXPECT_FALSE(session_->Open("file:///etc/passwd").ok());
  auto leaky = session_->Open(Url("/leaky"));
  ASSERT_TRUE(leaky.ok()) << leaky.status().ToString();
  EXPECT_EQ(pixels_.load(), 0);
  EXPECT_GE(session_->blocked_requests(), 1);
  auto redirected = session_->Open(Url("/redirect-out"));
  EXPECT_FALSE(redirected.ok() && redirected->text.find("Page two") != std::string::npos);
}

TEST_F(BrowserSessionTest, LoginPagesAreDetectedAndScreenshotsArePng) {
  auto login = session_->Open(Url("/login"));
  ASSERT_TRUE(login.ok());
  EXPECT_TRUE(login->login_required);
  auto denied = session_->Open(Url("/denied"));
  ASSERT_TRUE(denied.ok());
  EXPECT_EQ(denied->status, 401);
  EXPECT_TRUE(denied->login_required);
  auto png = session_->Screenshot();
  ASSERT_TRUE(png.ok());
  EXPECT_EQ(png->substr(0, 4), "\x89PNG");
  EXPECT_TRUE(session_->InputClick(10, 10).ok());
  EXPECT_FALSE(session_->InputClick(5000, 10).ok());
  EXPECT_TRUE(session_->InputKey("Tab").ok());
  EXPECT_FALSE(session_->InputKey("F13").ok());
}

TEST_F(BrowserSessionTest, CloseLeavesNoProcessAndNoProxySocket) {
  const int pid = session_->pid();
  ASSERT_GT(pid, 0);
  // The sandbox's command: its own network namespace, and the host
  // directory of the proxy's socket bound in (the argument before it).
  std::ifstream f("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::vector<std::string> argv;
  for (std::string arg; std::getline(f, arg, '\0');) argv.push_back(arg);
  auto net = std::find(argv.begin(), argv.end(), kSandboxNetDir);
  ASSERT_TRUE(net != argv.end() && net != argv.begin()) << ::testing::PrintToString(argv);
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--unshare-net"), argv.end());
  const std::string socket_dir = *(net - 1);
  EXPECT_TRUE(std::filesystem::exists(socket_dir + "/proxy.sock")) << socket_dir;
  session_->Close();
  EXPECT_FALSE(session_->alive());
  EXPECT_EQ(::kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
  EXPECT_EQ(::kill(-pid, 0), -1) << "a process of the browser's group is left";
  EXPECT_FALSE(std::filesystem::exists(socket_dir)) << socket_dir;
}

}  // namespace
}  // namespace maestro::browser
