// BrowserProxy: the filter every connection of a job's Chromium passes.
// Chromium runs in its own network namespace (bubblewrap --unshare-net),
// where the only way out is a bridge (socat, started by the sandbox's
// command) from 127.0.0.1:3128 to this proxy's Unix socket, and Chromium
// is told to send everything there, loopback included. The proxy speaks
// the two forms a browser uses: CONNECT host:port (https, wss, ws) and
// absolute-form requests (http). It admits a connection only when its host
// and port are on the allow-list (allow_list.h), resolves the name itself,
// connects to the resolved address and from then on relays bytes; anything
// else gets a 403 and no connection is made. It follows nothing: a
// redirect goes back to the browser, whose next request is checked again.
// So a request class Chromium's own interception misses (WebSockets,
// workers, service workers, out-of-process frames, preconnects) is checked
// here or fails for want of a route.
//
// Where it sits: BrowserSession (browser_session.h) starts one per browser
// before Chromium and stops it after; with `sandbox: none` it listens on a
// free 127.0.0.1 port instead (no namespace: Chromium's proxy setting is
// then the only thing that sends it here).
//
// Thread safety: one thread accepts, one thread serves each connection (at
// most max_connections; more are answered 503). Stop() and the counters may
// be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/mutex.h"
#include "core/status.h"

namespace maestro::browser {

struct ProxySpec {
  std::vector<std::string> allowed_hosts;  // allow_list.h entries
  // The Unix socket to listen on (its directory must exist); "" listens on
  // 127.0.0.1 at a free port (port()).
  std::string unix_path;
  int max_connections = 128;
  std::chrono::milliseconds header_timeout{30'000};   // the request's head
  std::chrono::milliseconds connect_timeout{10'000};  // per resolved address
  std::chrono::milliseconds idle_timeout{300'000};    // a relay without a byte
};

class BrowserProxy {
 public:
  static Result<std::unique_ptr<BrowserProxy>> Start(ProxySpec spec);
  ~BrowserProxy();
  BrowserProxy(const BrowserProxy&) = delete;
  BrowserProxy& operator=(const BrowserProxy&) = delete;

  // Closes the listener and every connection and joins the threads.
  // Idempotent; the destructor calls it.
  void Stop() EXCLUDES(mu_);

  int port() const { return port_; }  // the TCP port when unix_path is ""
  int admitted() const { return admitted_.load(); }
  int refused() const { return refused_.load(); }

 private:
  explicit BrowserProxy(ProxySpec spec) : spec_(std::move(spec)) {}
  void AcceptLoop() EXCLUDES(mu_);
  // One client connection: its request head, the check, the upstream
  // connection and the relay; closes both descriptors.
  void Serve(int client) EXCLUDES(mu_);
  enum class HeadRead { kOk, kClosed, kTooLarge };
  // Reads into *buf until the head's "\r\n\r\n" (*head_end: just after
  // it); kClosed on EOF, an error, Stop() or header_timeout.
  HeadRead ReadHead(int fd, std::string* buf, size_t* head_end);
  // Resolves `host` and connects to its addresses in turn; -1 and *why when
  // none answers within connect_timeout.
  int Connect(const std::string& host, int port, std::string* why) EXCLUDES(mu_);
  // Relays both ways until both sides ended (a tunnel) or the upstream
  // ended (an http request); `http` rewrites the response's head so the
  // browser does not reuse the connection for another host.
  void Relay(int client, int upstream, bool http);
  // Descriptors are registered so Stop() can shut them down (a relay blocked
  // in send() returns); a registered descriptor is closed only under mu_, so
  // its number is never reused while Stop() may touch it. False: stopping
  // (the descriptor was closed).
  bool Track(int fd) EXCLUDES(mu_);
  void CloseTracked(int fd) EXCLUDES(mu_);

  const ProxySpec spec_;
  int listen_fd_ = -1;
  int wake_read_ = -1, wake_write_ = -1;  // readable once Stop() begins
  int port_ = 0;
  std::thread acceptor_;
  std::atomic<int> admitted_{0}, refused_{0};

  Mutex mu_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::set<int> open_fds_ GUARDED_BY(mu_);
  int64_t next_conn_ GUARDED_BY(mu_) = 0;
  std::map<int64_t, std::thread> conns_ GUARDED_BY(mu_);
  std::vector<int64_t> finished_ GUARDED_BY(mu_);
};

}  // namespace maestro::browser
