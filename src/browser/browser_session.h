// BrowserSession: one job's browser — a headless Chromium (CdpClient) with
// one page, its own profile directory (cookies and storage survive a park
// and a restart), a host allow-list, and the page actions BrowseWeb offers
// the agent and the live view offers a person.
//
// The allow-list is enforced below the page: the session starts its own
// filtering proxy (browser_proxy.h) and, under bubblewrap, gives Chromium a
// network namespace of its own whose only way out is a bridge to that proxy
// (socat on 127.0.0.1:3128 to the proxy's Unix socket, started by the
// sandbox's command before Chromium). Chromium sends everything to the
// proxy, loopback included, with QUIC and non-proxied WebRTC off; what it
// would not send there has no route. CDP Fetch interception of the page's
// own requests stays, for a clear error (BlockedByClient) and the count;
// service workers are bypassed for the page's requests
// (Network.setBypassServiceWorker), their own fetches meet the proxy.
//
// Where it sits: BrowserService (browser_service.h) starts one per job on
// the first BrowseWeb call and closes it when the job ends; the BrowseWeb
// tool (browse_web_tool.h) and the API's live-view routes act on it.
//
// Thread safety: every public method may be called from any thread; actions
// are serialized by the session's lock (one page, one actor at a time).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "browser/allow_list.h"
#include "browser/browser_proxy.h"
#include "browser/cdp_client.h"
#include "core/env.h"
#include "core/json.h"
#include "core/mutex.h"
#include "core/status.h"

namespace maestro::browser {

// How Chromium is started: the binary, and the bubblewrap command around it
// ("bwrap" and its options, without "--"; empty: Chromium runs as the
// server's user on the host's network, the proxy on a 127.0.0.1 port).
struct BrowserCommand {
  std::string chromium = "chromium";
  std::vector<std::string> bwrap;
};

struct SessionSpec {
  BrowserCommand command;                          // Start adds the network and BrowserFlags
  std::string profile_dir;                         // --user-data-dir
  std::vector<std::string> allowed_hosts;          // exact hosts, or "*.example.com"
  std::chrono::milliseconds page_timeout{15'000};  // one navigation or action
  size_t max_text_bytes = 24 * 1024;               // the page text an action returns
  int js_heap_mb = 256;
};

// What an action shows the agent: the page as readable text.
struct PageView {
  std::string url;
  std::string title;
  int status = 0;    // HTTP status of the document (0 = unknown, e.g. about:blank)
  std::string text;  // main content, then the numbered links
  // A visible password field or HTTP 401: a person must log in.
  bool login_required = false;
};

// The Chromium flags of a session (headless, the profile, the viewport, the
// JS heap limit, no first-run or background traffic, no popups).
std::vector<std::string> BrowserFlags(const SessionSpec& spec);

// The flags that send every connection to the proxy at 127.0.0.1:`port`:
// loopback included, no QUIC, no WebRTC UDP outside the proxy.
std::vector<std::string> NetworkFlags(int port);

// Inside the sandbox: the bridge's port and where the proxy's socket
// directory is bound.
inline constexpr int kBridgePort = 3128;
inline constexpr const char* kSandboxNetDir = "/tmp/.maestro-net";

class BrowserSession {
 public:
  static Result<std::unique_ptr<BrowserSession>> Start(Env& env, SessionSpec spec);
  ~BrowserSession();

  // Agent actions. Errors are kInvalidArgument with a message for the model
  // (no such element, host not allowed, navigation failed).
  Result<PageView> Open(const std::string& url);
  Result<PageView> Read();
  Result<PageView> ClickLink(int number);  // a number from the last Read's links
  Result<PageView> ClickSelector(const std::string& selector);
  Result<PageView> Type(const std::string& selector, const std::string& text);
  Result<PageView> Select(const std::string& selector, const std::string& value);
  Result<PageView> Scroll();
  Result<PageView> Back();
  Result<std::string> Screenshot();  // PNG bytes of the viewport

  // Live view input (viewport CSS pixels; keys: Enter, Tab, Backspace).
  Status InputClick(int x, int y);
  Status InputText(const std::string& text);
  Status InputKey(const std::string& key);

  // Page requests refused by the Fetch check; connections refused by the
  // proxy (workers, WebSockets, frames, preconnects and the page's own).
  int blocked_requests() const { return blocked_.load(); }
  int proxy_refusals() const { return proxy_ ? proxy_->refused() : 0; }
  int pid() const { return cdp_ ? cdp_->pid() : -1; }
  bool alive() const { return cdp_ && cdp_->alive(); }
  void Close();

 private:
  BrowserSession(Env& env, SessionSpec spec) : env_(env), spec_(std::move(spec)) {}
  // Starts the proxy (and its socket directory under bubblewrap); returns
  // how to launch Chromium behind it.
  Result<LaunchSpec> StartNetwork();
  void OnEvent(const std::string& method, const Json& params, const std::string& session);
  Result<Json> Page(const std::string& method, Json params);
  Result<Json> Eval(const std::string& expression);
  // The navigation counters before a step that may navigate; then waits for
  // a navigation started since `mark` (up to `start`) to reach its load event
  // (up to the page timeout).
  struct NavMark {
    int64_t started = 0, finished = 0;
  };
  NavMark Mark();
  void AwaitNavigation(NavMark mark, std::chrono::milliseconds start);
  Result<PageView> View();
  Result<PageView> Navigate(const std::string& url) REQUIRES(act_mu_);

  Env& env_;
  SessionSpec spec_;
  std::unique_ptr<BrowserProxy> proxy_;
  std::string proxy_dir_;  // the host directory of the proxy's socket ("" without bwrap)
  std::atomic<bool> closed_{false};
  std::unique_ptr<CdpClient> cdp_;
  std::string target_id_, session_id_;
  std::atomic<int> blocked_{0};

  Mutex act_mu_;  // one action at a time

  Mutex nav_mu_;
  CondVar nav_cv_;
  int64_t loads_started_ GUARDED_BY(nav_mu_) = 0;
  int64_t loads_finished_ GUARDED_BY(nav_mu_) = 0;
};

}  // namespace maestro::browser
