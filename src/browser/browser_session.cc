#include "browser/browser_session.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>

#include "core/base64.h"
#include "core/utf8.h"

namespace maestro::browser {
namespace {

using std::chrono::milliseconds;

constexpr int kViewportWidth = 1280, kViewportHeight = 800;
constexpr size_t kMaxLinks = 100;

// The page as data: main content text, the visible http(s) links (numbered
// in this order; kept on the page for nothing else), the document's HTTP
// status and whether a password field is visible.
constexpr const char* kViewScript = R"JS((() => {
  const vis = (e) => !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length);
  const root = document.querySelector('main, article, [role=main]') || document.body;
  const text = root ? root.innerText : '';
  const links = [];
  for (const a of document.querySelectorAll('a[href]')) {
    if (links.length >= 100) break;
    if (!vis(a) || !/^https?:/.test(a.href)) continue;
    const label = (a.innerText || a.title || a.getAttribute('aria-label') || '').trim().replace(/\s+/g, ' ');
    links.push([label.slice(0, 80), a.href]);
  }
  const nav = performance.getEntriesByType('navigation')[0];
  const status = nav && nav.responseStatus ? nav.responseStatus : 0;
  const pw = [...document.querySelectorAll('input[type=password]')].some(vis);
  return JSON.stringify({url: location.href, title: document.title, status, text, links, pw});
})())JS";

// A JS string literal of untrusted text (JSON strings are JS strings).
std::string JsString(const std::string& s) { return Json(ValidUtf8(s)).dump(); }

// The sandbox's command before Chromium (argv: sh -c <this> chromium
// <flags>): the bridge from 127.0.0.1:kBridgePort in the namespace to the
// proxy's socket, without the DevTools pipe (fds 3 and 4: the browser's
// end must close with the browser), then Chromium once the bridge listens.
// The bridge cannot outlive the sandbox: it is in its pid namespace.
std::string BridgeScript() {
  return fmt::format(
      "command -v socat >/dev/null 2>&1 || {{ echo 'maestro: socat is not installed (the "
      "browser network bridge)' >&2; exit 127; }}\n"
      "socat TCP-LISTEN:{port},bind=127.0.0.1,fork,reuseaddr,backlog=128 "
      "UNIX-CONNECT:{dir}/proxy.sock </dev/null 3<&- 4<&- &\n"
      "i=0; until grep -q ' 0100007F:{hex:04X} 00000000:0000 0A' /proc/net/tcp; do\n"
      "  i=$((i+1)); if [ $i -gt 500 ]; then echo 'maestro: the browser network bridge did "
      "not start' >&2; exit 1; fi; sleep 0.01\n"
      "done\n"
      "exec \"$0\" \"$@\"\n",
      fmt::arg("port", kBridgePort), fmt::arg("dir", kSandboxNetDir), fmt::arg("hex", kBridgePort));
}

}  // namespace

std::vector<std::string> BrowserFlags(const SessionSpec& spec) {
  return {
      "--headless",
      // Chromium's own sandbox needs an unprivileged user or user
      // namespaces; the outer sandbox (bubblewrap, BrowserConfig) confines it.
      "--no-sandbox",
      "--disable-gpu",
      "--disable-dev-shm-usage",
      "--no-first-run",
      "--no-default-browser-check",
      "--disable-extensions",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-default-apps",
      "--disable-sync",
      "--disable-breakpad",
      "--mute-audio",
      "--block-new-web-contents",
      // A page restored from the back-forward cache fires no load event;
      // `back` waits for one.
      "--disable-features=BackForwardCache",
      "--password-store=basic",
      "--use-mock-keychain",
      fmt::format("--window-size={},{}", kViewportWidth, kViewportHeight),
      fmt::format("--js-flags=--max-old-space-size={}", spec.js_heap_mb),
      "--user-data-dir=" + spec.profile_dir,
  };
}

std::vector<std::string> NetworkFlags(int port) {
  return {
      fmt::format("--proxy-server=http://127.0.0.1:{}", port),
      // Without this Chromium reaches loopback directly: in the namespace
      // that is nothing, but a page would get a confusing error.
      "--proxy-bypass-list=<-loopback>",
      // WebRTC over the proxy's TCP only (Debian's Chromium knows the first
      // spelling; the second is the older one).
      "--webrtc-ip-handling-policy=disable_non_proxied_udp",
      "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
      "--disable-quic",
  };
}

Result<LaunchSpec> BrowserSession::StartNetwork() {
  ProxySpec proxy;
  proxy.allowed_hosts = spec_.allowed_hosts;
  const BrowserCommand& cmd = spec_.command;
  LaunchSpec launch;
  if (!cmd.bwrap.empty()) {
    // A short host path (a Unix socket's path has ~107 bytes), private
    // (0700), bound into the sandbox at kSandboxNetDir.
    std::error_code ec;
    std::string tmp = std::filesystem::temp_directory_path(ec).string();
    MAESTRO_ASSIGN_OR_RETURN(
        proxy_dir_, env_.CreateTempDir(ec || tmp.empty() ? "/tmp" : tmp, "maestro-browser-"));
    proxy.unix_path = proxy_dir_ + "/proxy.sock";
    launch.argv = cmd.bwrap;
    launch.argv.insert(launch.argv.end(), {"--unshare-net", "--bind", proxy_dir_, kSandboxNetDir,
                                           "--", "sh", "-c", BridgeScript(), cmd.chromium});
  } else {
    launch.argv = {cmd.chromium};
  }
  MAESTRO_ASSIGN_OR_RETURN(proxy_, BrowserProxy::Start(std::move(proxy)));
  launch.flags = BrowserFlags(spec_);
  for (std::string& f : NetworkFlags(cmd.bwrap.empty() ? proxy_->port() : kBridgePort)) {
    launch.flags.push_back(std::move(f));
  }
  return launch;
}

Result<std::unique_ptr<BrowserSession>> BrowserSession::Start(Env& env, SessionSpec spec) {
  MAESTRO_RETURN_IF_ERROR(env.CreateDirs(spec.profile_dir));
  std::unique_ptr<BrowserSession> s(new BrowserSession(env, std::move(spec)));
  MAESTRO_ASSIGN_OR_RETURN(LaunchSpec launch, s->StartNetwork());
  BrowserSession* raw = s.get();
  MAESTRO_ASSIGN_OR_RETURN(s->cdp_, CdpClient::Launch(
                                        env, launch,
                                        [raw](const std::string& m, const Json& p,
                                              const std::string& sid) { raw->OnEvent(m, p, sid); },
                                        s->spec_.page_timeout));
  const milliseconds t = s->spec_.page_timeout;
  MAESTRO_ASSIGN_OR_RETURN(Json target,
                           s->cdp_->Call("Target.createTarget", {{"url", "about:blank"}}, "", t));
  s->target_id_ = target.value("targetId", "");
  MAESTRO_ASSIGN_OR_RETURN(Json attached,
                           s->cdp_->Call("Target.attachToTarget",
                                         {{"targetId", s->target_id_}, {"flatten", true}}, "", t));
  s->session_id_ = attached.value("sessionId", "");
  if (s->target_id_.empty() || s->session_id_.empty()) {
    return Unavailable("the browser gave no page to drive");
  }
  MAESTRO_RETURN_IF_ERROR(s->Page("Page.enable", Json::object()).status());
  MAESTRO_RETURN_IF_ERROR(
      s->Page("Emulation.setDeviceMetricsOverride", {{"width", kViewportWidth},
                                                     {"height", kViewportHeight},
                                                     {"deviceScaleFactor", 1},
                                                     {"mobile", false}})
          .status());
  // Every request of the page pauses here first: a request the proxy would
  // refuse fails early and is counted. The proxy is the enforcement.
  MAESTRO_RETURN_IF_ERROR(
      s->Page("Fetch.enable", {{"patterns", Json::array({{{"urlPattern", "*"}}})}}).status());
  // The page's requests skip service workers (a worker's own fetches still
  // meet the proxy).
  // (The bypass holds only while the Network domain is enabled.)
  // Small buffers: nothing reads response bodies through CDP, and the
  // defaults keep up to 200 MB of them in the renderer.
  MAESTRO_RETURN_IF_ERROR(s->Page("Network.enable", {{"maxTotalBufferSize", 1 << 20},
                                                     {"maxResourceBufferSize", 256 << 10}})
                              .status());
  MAESTRO_RETURN_IF_ERROR(s->Page("Network.setBypassServiceWorker", {{"bypass", true}}).status());
  return s;
}

BrowserSession::~BrowserSession() { Close(); }

void BrowserSession::Close() {
  if (cdp_) cdp_->Close();
  if (closed_.exchange(true)) return;
  if (proxy_) proxy_->Stop();  // after the browser: no connection is left to serve
  if (!proxy_dir_.empty()) {
    if (Status st = env_.RemoveAll(proxy_dir_); !st.ok()) {
      spdlog::warn("browser: cannot remove {}: {}", proxy_dir_, st.ToString());
    }
  }
}

void BrowserSession::OnEvent(const std::string& method, const Json& params,
                             const std::string& session) {
  if (session != session_id_) return;
  if (method == "Fetch.requestPaused") {
    const std::string id = params.value("requestId", "");
    const std::string url = params.contains("request") ? params["request"].value("url", "") : "";
    if (HostAllowed(spec_.allowed_hosts, url) || url.rfind("data:", 0) == 0) {
      (void)cdp_->Send("Fetch.continueRequest", {{"requestId", id}}, session_id_);
    } else {
      ++blocked_;
      spdlog::info("browser: blocked a request to a host not on the allow-list: {}",
                   ValidUtf8(Utf8Prefix(url, 200)));
      (void)cdp_->Send("Fetch.failRequest", {{"requestId", id}, {"errorReason", "BlockedByClient"}},
                       session_id_);
    }
    return;
  }
  bool main_frame = params.value("frameId", "") == target_id_ ||
                    (params.contains("frame") && params["frame"].value("id", "") == target_id_ &&
                     !params["frame"].contains("parentId"));
  if ((method == "Page.frameStartedLoading" || method == "Page.frameStartedNavigating" ||
       method == "Page.frameRequestedNavigation" || method == "Page.frameNavigated") &&
      main_frame) {
    MutexLock lock(&nav_mu_);
    ++loads_started_;
    nav_cv_.SignalAll();
  } else if (method == "Page.loadEventFired") {
    MutexLock lock(&nav_mu_);
    ++loads_finished_;
    nav_cv_.SignalAll();
  }
}

Result<Json> BrowserSession::Page(const std::string& method, Json params) {
  if (!cdp_ || !cdp_->alive()) return Unavailable("the browser is gone");
  return cdp_->Call(method, std::move(params), session_id_, spec_.page_timeout);
}

Result<Json> BrowserSession::Eval(const std::string& expression) {
  MAESTRO_ASSIGN_OR_RETURN(
      Json r, Page("Runtime.evaluate",
                   {{"expression", expression}, {"returnByValue", true}, {"awaitPromise", true}}));
  if (r.contains("exceptionDetails")) {
    const Json& ex = r["exceptionDetails"];
    std::string what = ex.contains("exception") ? ex["exception"].value("description", "")
                                                : ex.value("text", "exception");
    return InvalidArgument("the page script failed: " + ValidUtf8(Utf8Prefix(what, 300)));
  }
  return r.contains("result") ? r["result"].value("value", Json()) : Json();
}

BrowserSession::NavMark BrowserSession::Mark() {
  MutexLock lock(&nav_mu_);
  return {loads_started_, loads_finished_};
}

void BrowserSession::AwaitNavigation(NavMark mark, milliseconds start) {
  MutexLock lock(&nav_mu_);
  if (!nav_cv_.WaitFor(&nav_mu_, start,
                       [&]() REQUIRES(nav_mu_) { return loads_started_ > mark.started; })) {
    return;
  }
  nav_cv_.WaitFor(&nav_mu_, spec_.page_timeout,
                  [&]() REQUIRES(nav_mu_) { return loads_finished_ > mark.finished; });
}

Result<PageView> BrowserSession::View() {
  MAESTRO_ASSIGN_OR_RETURN(Json raw, Eval(kViewScript));
  Json v = raw.is_string() ? Json::parse(raw.get<std::string>(), nullptr, false) : Json();
  if (!v.is_object()) return Internal("the page view was not readable");
  PageView p;
  p.url = v.value("url", "");
  p.title = v.value("title", "");
  p.status = v.value("status", 0);
  p.login_required = v.value("pw", false) || p.status == 401;
  std::string text = v.value("text", "");
  std::string links;
  int n = 0;
  for (const auto& l : v.value("links", Json::array())) {
    if (!l.is_array() || l.size() != 2 || ++n > static_cast<int>(kMaxLinks)) continue;
    links += fmt::format("[{}] {} -> {}\n", n, l[0].get<std::string>(), l[1].get<std::string>());
  }
  // The text gets what the links leave of the budget, so links always show.
  size_t budget = spec_.max_text_bytes > links.size() ? spec_.max_text_bytes - links.size() : 0;
  if (text.size() > budget) text = std::string(Utf8Prefix(text, budget)) + "\n[… page text cut]";
  p.text = text + (links.empty() ? "" : "\n\nLinks:\n" + links);
  return p;
}

Result<PageView> BrowserSession::Navigate(const std::string& url) {
  if (!HostAllowed(spec_.allowed_hosts, url)) {
    return InvalidArgument(
        fmt::format("{} is not on this space's browser allow-list (browser.allowed_hosts)",
                    ValidUtf8(Utf8Prefix(url, 200))));
  }
  int64_t finished;
  {
    MutexLock lock(&nav_mu_);
    finished = loads_finished_;
  }
  MAESTRO_ASSIGN_OR_RETURN(Json r, Page("Page.navigate", {{"url", url}}));
  if (r.contains("errorText") && r["errorText"].is_string() &&
      !r["errorText"].get<std::string>().empty()) {
    return InvalidArgument(fmt::format("could not open {}: {}", ValidUtf8(Utf8Prefix(url, 200)),
                                       r["errorText"].get<std::string>()));
  }
  if (r.contains("loaderId")) {  // a new document: wait for its load event
    MutexLock lock(&nav_mu_);
    if (!nav_cv_.WaitFor(&nav_mu_, spec_.page_timeout,
                         [&]() REQUIRES(nav_mu_) { return loads_finished_ > finished; })) {
      spdlog::info("browser: {} did not finish loading in {} ms; reading it as it is", url,
                   spec_.page_timeout.count());
    }
  }
  return View();
}

Result<PageView> BrowserSession::Open(const std::string& url) {
  MutexLock lock(&act_mu_);
  return Navigate(url);
}

Result<PageView> BrowserSession::Read() {
  MutexLock lock(&act_mu_);
  return View();
}

Result<PageView> BrowserSession::ClickLink(int number) {
  MutexLock lock(&act_mu_);
  MAESTRO_ASSIGN_OR_RETURN(
      Json href, Eval(fmt::format(
                     "(() => {{ const l = [...document.querySelectorAll('a[href]')].filter((a) => "
                     "!!(a.offsetWidth || a.offsetHeight || a.getClientRects().length) && "
                     "/^https?:/.test(a.href)); const a = l[{}]; return a ? a.href : ''; }})()",
                     number - 1)));
  if (number < 1 || !href.is_string() || href.get<std::string>().empty()) {
    return InvalidArgument(
        fmt::format("there is no link [{}] on this page; read it again", number));
  }
  return Navigate(href.get<std::string>());
}

Result<PageView> BrowserSession::ClickSelector(const std::string& selector) {
  MutexLock lock(&act_mu_);
  const NavMark mark = Mark();
  MAESTRO_ASSIGN_OR_RETURN(
      Json r, Eval(fmt::format("(() => {{ const e = document.querySelector({}); if (!e) return "
                               "false; e.scrollIntoView({{block: 'center'}}); e.click(); return "
                               "true; }})()",
                               JsString(selector))));
  if (r != Json(true)) {
    return InvalidArgument(fmt::format("no element matches the selector {}",
                                       JsString(std::string(Utf8Prefix(selector, 200)))));
  }
  AwaitNavigation(mark, milliseconds(500));
  return View();
}

Result<PageView> BrowserSession::Type(const std::string& selector, const std::string& text) {
  MutexLock lock(&act_mu_);
  MAESTRO_ASSIGN_OR_RETURN(
      Json r, Eval(fmt::format("(() => {{ const e = document.querySelector({}); if (!e) return "
                               "false; e.scrollIntoView({{block: 'center'}}); e.focus(); if "
                               "('value' in e) e.value = ''; return true; }})()",
                               JsString(selector))));
  if (r != Json(true)) {
    return InvalidArgument(fmt::format("no element matches the selector {}",
                                       JsString(std::string(Utf8Prefix(selector, 200)))));
  }
  MAESTRO_RETURN_IF_ERROR(Page("Input.insertText", {{"text", ValidUtf8(text)}}).status());
  return View();
}

Result<PageView> BrowserSession::Select(const std::string& selector, const std::string& value) {
  MutexLock lock(&act_mu_);
  const NavMark mark = Mark();
  MAESTRO_ASSIGN_OR_RETURN(
      Json r,
      Eval(fmt::format(
          "(() => {{ const e = document.querySelector({}); if (!e || e.tagName !== 'SELECT') "
          "return 'none'; const o = [...e.options].find((o) => o.value === {v} || o.text.trim() "
          "=== {v}); if (!o) return 'nooption'; e.value = o.value; e.dispatchEvent(new "
          "Event('input', {{bubbles: true}})); e.dispatchEvent(new Event('change', {{bubbles: "
          "true}})); return 'ok'; }})()",
          JsString(selector), fmt::arg("v", JsString(value)))));
  if (r == Json("none")) {
    return InvalidArgument(fmt::format("no <select> matches the selector {}",
                                       JsString(std::string(Utf8Prefix(selector, 200)))));
  }
  if (r == Json("nooption")) {
    return InvalidArgument(fmt::format("the <select> has no option {}",
                                       JsString(std::string(Utf8Prefix(value, 200)))));
  }
  AwaitNavigation(mark, milliseconds(300));
  return View();
}

Result<PageView> BrowserSession::Scroll() {
  MutexLock lock(&act_mu_);
  MAESTRO_RETURN_IF_ERROR(Eval("window.scrollBy(0, Math.round(innerHeight * 0.8))").status());
  return View();
}

Result<PageView> BrowserSession::Back() {
  MutexLock lock(&act_mu_);
  const NavMark mark = Mark();
  MAESTRO_RETURN_IF_ERROR(Eval("history.back()").status());
  AwaitNavigation(mark, milliseconds(1000));
  return View();
}

Result<std::string> BrowserSession::Screenshot() {
  MutexLock lock(&act_mu_);
  // A capture sent while a navigation swaps the page's renderer can go
  // unanswered: a short wait, then one more try on the new page.
  Result<Json> r = Status(StatusCode::kDeadlineExceeded, "no screenshot");
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!cdp_ || !cdp_->alive()) return Unavailable("the browser is gone");
    r = cdp_->Call("Page.captureScreenshot", {{"format", "png"}}, session_id_,
                   std::min(spec_.page_timeout, milliseconds(4'000)));
    if (r.ok() || r.status().code() != StatusCode::kDeadlineExceeded) break;
  }
  if (!r.ok()) return r.status();
  auto png = Base64Decode(r->value("data", ""));
  if (!png) return Internal("the browser sent a screenshot that is not base64");
  return *png;
}

Status BrowserSession::InputClick(int x, int y) {
  MutexLock lock(&act_mu_);
  const NavMark mark = Mark();
  if (x < 0 || y < 0 || x >= kViewportWidth || y >= kViewportHeight) {
    return InvalidArgument(
        fmt::format("x/y must be inside the {}x{} viewport", kViewportWidth, kViewportHeight), "x");
  }
  for (const char* type : {"mousePressed", "mouseReleased"}) {
    MAESTRO_RETURN_IF_ERROR(
        Page("Input.dispatchMouseEvent",
             {{"type", type}, {"x", x}, {"y", y}, {"button", "left"}, {"clickCount", 1}})
            .status());
  }
  AwaitNavigation(mark, milliseconds(300));  // a click on a link or a submit button
  return Status::Ok();
}

Status BrowserSession::InputText(const std::string& text) {
  MutexLock lock(&act_mu_);
  return Page("Input.insertText", {{"text", ValidUtf8(text)}}).status();
}

Status BrowserSession::InputKey(const std::string& key) {
  struct KeyInfo {
    const char* key;
    int code;
    const char* text;
  };
  static const KeyInfo kKeys[] = {{"Enter", 13, "\r"}, {"Tab", 9, ""}, {"Backspace", 8, ""}};
  const KeyInfo* k = nullptr;
  for (const auto& info : kKeys) {
    if (key == info.key) k = &info;
  }
  if (!k) return InvalidArgument("key must be Enter, Tab or Backspace", "key");
  MutexLock lock(&act_mu_);
  const NavMark mark = Mark();
  Json down = {{"type", *k->text ? "keyDown" : "rawKeyDown"},
               {"key", k->key},
               {"code", k->key},
               {"windowsVirtualKeyCode", k->code},
               {"nativeVirtualKeyCode", k->code}};
  if (*k->text) down["text"] = k->text;
  MAESTRO_RETURN_IF_ERROR(Page("Input.dispatchKeyEvent", down).status());
  MAESTRO_RETURN_IF_ERROR(Page("Input.dispatchKeyEvent", {{"type", "keyUp"},
                                                          {"key", k->key},
                                                          {"code", k->key},
                                                          {"windowsVirtualKeyCode", k->code},
                                                          {"nativeVirtualKeyCode", k->code}})
                              .status());
  AwaitNavigation(mark, milliseconds(300));  // Enter submits a form
  return Status::Ok();
}

}  // namespace maestro::browser
