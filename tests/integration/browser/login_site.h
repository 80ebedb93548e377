// LoginSite: a login-protected page on 127.0.0.1 for the live-view tests
// (browser/remote_live_view_test.cc, browse_web_test.cc,
// scaleout/browser_live_view_pg_test.cc, multihost/multihost_test.cc):
// GET /private shows a form (user at 10,10; password at 10,60; 300x30 each)
// until the session cookie is set; POST /login with alice/pw sets it and
// counts the login.
//
// Thread safety: logins() may be read from any thread.
#pragma once

#include <fmt/format.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <utility>

namespace maestro::testing {

// The login pages on `server`: GET /private shows the form until the session
// cookie is set; POST /login with alice/pw sets it and counts in `logins`
// (which must outlive the server). Also used by sites with more pages.
inline void AddLoginPages(httplib::Server& server, std::atomic<int>& logins) {
  server.Get("/private", [](const httplib::Request& req, httplib::Response& res) {
    if (req.get_header_value("Cookie").find("session=ok") != std::string::npos) {
      res.set_content("<html><body><main>Welcome alice, SECRET-REPORT-42</main></body></html>",
                      "text/html");
      return;
    }
    res.set_content(
        "<html><body style=\"margin:0\"><form method=\"post\" action=\"/login\">"
        "<input name=\"user\" style=\"position:absolute;left:10px;top:10px;width:300px;"
        "height:30px\">"
        "<input name=\"pass\" type=\"password\" style=\"position:absolute;left:10px;top:60px;"
        "width:300px;height:30px\">"
        "<button style=\"position:absolute;left:10px;top:110px\">Log in</button>"
        "</form></body></html>",
        "text/html");
  });
  server.Post("/login", [&logins](const httplib::Request& req, httplib::Response& res) {
    if (req.get_param_value("user") == "alice" && req.get_param_value("pass") == "pw") {
      logins++;
      res.set_header("Set-Cookie", "session=ok; Path=/");
    }
    res.set_redirect("/private");
  });
}

// A login-protected page on `host` (127.0.0.1, or a test network's address).
class LoginSite {
 public:
  explicit LoginSite(std::string host = "127.0.0.1") : host_(std::move(host)) {
    AddLoginPages(server_, logins_);
    port_ = server_.bind_to_any_port(host_);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~LoginSite() {
    server_.stop();
    thread_.join();
  }
  std::string Url(const std::string& path) const {
    return fmt::format("http://{}:{}{}", host_, port_, path);
  }
  int logins() const { return logins_.load(); }

 private:
  const std::string host_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> logins_{0};
};

}  // namespace maestro::testing
