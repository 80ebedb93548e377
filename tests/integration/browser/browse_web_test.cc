// BrowseWeb end to end (issue 22) against the real `maestro serve`, the
// scripted `maestro-fakellm` and Debian's Chromium, on pages this test
// serves on 127.0.0.1: a research task reads two pages and cites them; a
// login page parks the job, a person logs in through the live-view API
// (clicks and keys into the real page) and Done resumes it with the
// session cookie; one CAPTCHA resolve requeues the two jobs waiting on the
// screen; a host off the allow-list is refused, subresources included; and
// no browser process outlives its job.
#include <dirent.h>
#include <fmt/format.h>

#include <atomic>
#include <cstdio>

#include "../api_engine/serve_fixture.h"
#include "login_site.h"

namespace maestro::testing {
namespace {

Json Complete(const std::string& result) {
  return ToolCallReply("complete", {{"status", "success"}, {"result", result}});
}
Json Browse(const Json& args) { return ToolCallReply("BrowseWeb", args); }
// A reply for every request of one task (`any` is in its instruction),
// optionally only when the last message contains `last`.
Json MatchingAny(Json reply, const std::string& any, const std::string& last = "") {
  reply["match"] = {{"any_message_contains", any}};
  if (!last.empty()) reply["match"]["last_message_contains"] = last;
  reply["repeat"] = 0;
  return reply;
}

// The pages: two facts linked to each other, a login-protected page, and a
// page whose image is on a host off the allow-list (localhost).
class Site {
 public:
  Site() {
    server_.Get("/alpha", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(
          "<html><head><title>Alpha</title></head><body><main><h1>Alpha</h1><p>Alpha fact: the "
          "reactor runs at 42 kelvin.</p><a href=\"/beta\">Beta notes</a></main></body></html>",
          "text/html");
    });
    server_.Get("/beta", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(
          "<html><head><title>Beta</title></head><body><main><p>Beta fact: the coolant is "
          "neon.</p></main></body></html>",
          "text/html");
    });
    AddLoginPages(server_, logins_);
    server_.Get("/tracked", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("<html><body><main>Tracked page</main></body></html>", "text/html");
    });
    server_.Get("/leaky", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(fmt::format("<html><body><main>Leaky page<img src=\"http://localhost:{}"
                                  "/pixel\"></main></body></html>",
                                  port_),
                      "text/html");
    });
    server_.Get("/pixel", [this](const httplib::Request&, httplib::Response& res) {
      pixels_++;
      res.set_content("", "image/png");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~Site() {
    server_.stop();
    thread_.join();
  }
  std::string Url(const std::string& path) const {
    return fmt::format("http://127.0.0.1:{}{}", port_, path);
  }
  int port() const { return port_; }
  int logins() const { return logins_.load(); }
  int pixels() const { return pixels_.load(); }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> logins_{0}, pixels_{0};
};

// Processes whose command line mentions `needle` (a task's browser profile).
int ProcessesWith(const std::string& needle) {
  int n = 0;
  DIR* d = opendir("/proc");
  if (!d) return -1;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::ifstream f(std::string("/proc/") + e->d_name + "/cmdline", std::ios::binary);
    std::string cmd((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (cmd.find(needle) != std::string::npos) ++n;
  }
  closedir(d);
  return n;
}

class BrowseWebTest : public ServeEngineTest {
 protected:
  void StartBrowsing(const Json& replies, int workers = 2) {
    extra_config_ = "browser:\n  allowed_hosts: [\"127.0.0.1\"]\n  page_timeout_ms: 20000\n";
    Start(replies, workers);
  }
  std::string ProfileOf(const Json& created) const {
    return DataDir() + "/tasks/" + created["task"]["id"].get<std::string>() + "/browser";
  }
  // The tool results the model was sent, joined.
  std::string ToolResults() const {
    std::string out;
    for (const auto& r : FakeRequests()) {
      const Json body = r.contains("body") && r["body"].is_object() ? r["body"] : Json::object();
      for (const auto& m : body.value("messages", Json::array())) {
        const Json& content = m.contains("content") ? m["content"] : Json();
        if (m.value("role", "") == "tool" && content.is_string()) {
          out += content.get<std::string>() + "\n";
        }
      }
    }
    return out;
  }
  Json LatestJob(const Json& created) { return Get(TaskPath(created))["latest_job"]; }
  Site site_;
};

TEST_F(BrowseWebTest, AResearchTaskReadsTwoLocalPagesAndCitesThem) {
  const std::string alpha = site_.Url("/alpha"), beta = site_.Url("/beta");
  StartBrowsing(
      Json::array({Browse({{"action", "open"}, {"url", alpha}}),
                   Browse({{"action", "click"}, {"link", 1}}), Browse({{"action", "screenshot"}}),
                   Complete(fmt::format("The reactor runs at 42 K [{}]; the coolant is neon [{}].",
                                        alpha, beta))}));
  Json created = Create("Find the reactor temperature and its coolant on the web", "research");
  Json done = WaitStatus(created, "succeeded");
  const std::string results = ToolResults();
  EXPECT_TRUE(Contains(results, "Alpha fact: the reactor runs at 42 kelvin")) << results;
  EXPECT_TRUE(Contains(results, "[1] Beta notes -> " + beta)) << results;
  EXPECT_TRUE(Contains(results, "Beta fact: the coolant is neon")) << results;
  EXPECT_TRUE(Contains(results, "Screenshot of the page saved to screenshots/")) << results;
  Json task = Get(TaskPath(created));
  const std::string result = task["latest_job"].value("result", "");
  EXPECT_TRUE(Contains(result, alpha) && Contains(result, beta)) << task.dump();
  // The browser ended with the job: no process runs on the task's profile.
  EXPECT_EQ(ProcessesWith(ProfileOf(created)), 0);
}

TEST_F(BrowseWebTest, ALoginPageParksAndThePersonsLoginResumesWithTheSession) {
  const std::string priv = site_.Url("/private");
  StartBrowsing(Json::array(
      {Browse({{"action", "open"}, {"url", priv}}), Browse({{"action", "open"}, {"url", priv}}),
       Matching(Complete("The report says SECRET-REPORT-42"), "SECRET-REPORT-42")}));
  Json created = Create("Read the private report", "research");
  Json parked = WaitStatus(created, "waiting_human");
  Json job = LatestJob(created);
  ASSERT_EQ(job.value("wait_reason", ""), "browser_login") << job.dump();
  const std::string base = "/api/local/jobs/" + job["id"].get<std::string>() + "/browser";

  // The live view: the page as a PNG, and a person's clicks and keys.
  auto shot = Client().Get(base + "/screenshot");
  ASSERT_TRUE(shot);
  ASSERT_EQ(shot->status, 200) << shot->body;
  EXPECT_EQ(shot->get_header_value("Content-Type"), "image/png");
  EXPECT_EQ(shot->body.substr(0, 4), "\x89PNG");
  auto input = [&](const Json& body) {
    auto [code, out] = Post(base + "/input", body);
    EXPECT_EQ(code, 200) << out.dump();
  };
  input({{"type", "click"}, {"x", 50}, {"y", 25}});
  input({{"type", "text"}, {"text", "alice"}});
  input({{"type", "click"}, {"x", 50}, {"y", 75}});
  input({{"type", "text"}, {"text", "pw"}});
  input({{"type", "key"}, {"key", "Enter"}});
  auto [bad, why] = Post(base + "/input", {{"type", "key"}, {"key", "F13"}});
  EXPECT_EQ(bad, 400) << why.dump();
  for (int i = 0; i < 200 && site_.logins() == 0; ++i) std::this_thread::sleep_for(50ms);
  ASSERT_EQ(site_.logins(), 1);

  auto [code, out] = Post(base + "/done", Json::object());
  ASSERT_EQ(code, 200) << out.dump();
  WaitStatus(created, "succeeded");
  EXPECT_TRUE(Contains(ToolResults(), "Welcome alice, SECRET-REPORT-42"));
  // Done again: the job is no longer waiting on a login.
  auto [again, body] = Post(base + "/done", Json::object());
  EXPECT_TRUE(again == 409 || again == 404) << again << " " << body.dump();
  EXPECT_EQ(ProcessesWith(ProfileOf(created)), 0);
}

TEST_F(BrowseWebTest, OneCaptchaResolveRequeuesBothWaitingJobs) {
  const std::string screen = site_.Url("/tracked");
  Json ask = ToolCallReply("RequestCaptchaHelp", {{"screen", screen}});
  StartBrowsing(Json::array({MatchingAny(Complete("CAPTCHA-A done"), "CAPTCHA-A", "solved the"),
                             MatchingAny(Complete("CAPTCHA-B done"), "CAPTCHA-B", "solved the"),
                             // Before the park and again after the resume (the
                             // re-issued call then answers "solved").
                             MatchingAny(ask, "CAPTCHA-A"), MatchingAny(ask, "CAPTCHA-B")}));
  Json a = Create("CAPTCHA-A search the web", "research");
  Json b = Create("CAPTCHA-B search the web", "research");
  WaitStatus(a, "waiting_human");
  WaitStatus(b, "waiting_human");
  for (const Json* t : {&a, &b}) {
    Json job = LatestJob(*t);
    EXPECT_EQ(job.value("wait_reason", ""), "captcha") << job.dump();
    EXPECT_EQ(job.value("captcha_screen", ""), screen) << job.dump();
    EXPECT_EQ(job.value("captcha_space_id", ""), "personal") << job.dump();
  }
  auto [bad, why] = Post("/api/local/captcha-pool/resolve", {{"space_id", "personal"}});
  EXPECT_EQ(bad, 400);
  EXPECT_TRUE(Contains(why.dump(), "screen")) << why.dump();
  auto [code, out] =
      Post("/api/local/captcha-pool/resolve", {{"space_id", "personal"}, {"screen", screen}});
  ASSERT_EQ(code, 200) << out.dump();
  EXPECT_EQ(out.value("resumed", -1), 2);
  WaitStatus(a, "succeeded");
  WaitStatus(b, "succeeded");
  EXPECT_EQ(LatestJob(a).value("result", ""), "CAPTCHA-A done");
  EXPECT_EQ(LatestJob(b).value("result", ""), "CAPTCHA-B done");
}

TEST_F(BrowseWebTest, AHostOffTheAllowListIsRefusedSubresourcesIncluded) {
  const std::string off = fmt::format("http://localhost:{}/alpha", site_.port());
  StartBrowsing(
      Json::array({Browse({{"action", "open"}, {"url", off}}),
                   Browse({{"action", "open"}, {"url", site_.Url("/leaky")}}), Complete("done")}));
  Json created = Create("Open the pages", "research");
  WaitStatus(created, "succeeded");
  const std::string results = ToolResults();
  EXPECT_TRUE(Contains(results, "Error: " + off + " is not on this space's browser allow-list"))
      << results;
  EXPECT_TRUE(Contains(results, "Leaky page")) << results;
  EXPECT_EQ(site_.pixels(), 0) << "the image on localhost was fetched";
}

}  // namespace
}  // namespace maestro::testing
