#include "browser/browser_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "browser/allow_list.h"
#include "core/utf8.h"

namespace maestro::browser {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr size_t kMaxHead = 16 * 1024;  // a request's or a response's head
constexpr size_t kChunk = 64 * 1024;
constexpr int kLoggedRefusals = 20;  // then only the count grows

bool SendAll(int fd, const char* data, size_t n) {
  size_t off = 0;
  while (off < n) {
    ssize_t w = ::send(fd, data + off, n - off, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    off += static_cast<size_t>(w);
  }
  return true;
}
bool SendAll(int fd, const std::string& s) { return SendAll(fd, s.data(), s.size()); }

// A complete answer of the proxy itself; the connection closes after it.
std::string Answer(int code, const char* reason, const std::string& body) {
  return fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n"
      "Cache-Control: no-store\r\nConnection: close\r\nProxy-Connection: close\r\n\r\n{}",
      code, reason, body.size(), body);
}

bool IEquals(const std::string& a, const char* b) {
  return a.size() == std::strlen(b) &&
         std::equal(a.begin(), a.end(), b, [](char x, char y) { return ::tolower(x) == y; });
}

struct Head {
  std::string method, target, version;
  std::vector<std::pair<std::string, std::string>> headers;  // as sent
};

bool ParseHead(const std::string& head, Head* h) {
  size_t eol = head.find("\r\n");
  std::string line = head.substr(0, eol);
  size_t s1 = line.find(' '), s2 = line.rfind(' ');
  if (s1 == std::string::npos || s2 == s1) return false;
  h->method = line.substr(0, s1);
  h->target = line.substr(s1 + 1, s2 - s1 - 1);
  h->version = line.substr(s2 + 1);
  if (h->target.empty() || h->version.rfind("HTTP/1.", 0) != 0) return false;
  for (size_t pos = eol + 2; pos < head.size();) {
    size_t end = head.find("\r\n", pos);
    if (end == std::string::npos) end = head.size();
    if (end == pos) break;  // the blank line
    std::string l = head.substr(pos, end - pos);
    size_t colon = l.find(':');
    if (colon == std::string::npos || colon == 0) return false;
    std::string value = l.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    h->headers.emplace_back(l.substr(0, colon), value);
    pos = end + 2;
  }
  return true;
}

bool HopByHop(const std::string& name) {
  return IEquals(name, "connection") || IEquals(name, "proxy-connection") ||
         IEquals(name, "keep-alive") || IEquals(name, "proxy-authorization");
}

// A response head with "Connection: close" instead of its own connection
// headers; interim (1xx) heads, 101 included, pass as they are.
std::string CloseResponseHead(const std::string& head) {
  if (head.size() < 12 || head.rfind("HTTP/1.", 0) != 0) return head;
  if (head[9] == '1') return head;
  std::string out;
  size_t pos = 0;
  for (bool first = true; pos < head.size(); first = false) {
    size_t end = head.find("\r\n", pos);
    if (end == std::string::npos || end == pos) break;
    std::string line = head.substr(pos, end - pos);
    size_t colon = line.find(':');
    if (first || colon == std::string::npos || !HopByHop(line.substr(0, colon))) {
      out += line + "\r\n";
    }
    pos = end + 2;
  }
  return out + "Connection: close\r\nProxy-Connection: close\r\n" + head.substr(pos);
}

int64_t MsLeft(SteadyClock::time_point deadline) {
  return std::max<int64_t>(
      0, std::chrono::duration_cast<milliseconds>(deadline - SteadyClock::now()).count());
}

}  // namespace

Result<std::unique_ptr<BrowserProxy>> BrowserProxy::Start(ProxySpec spec) {
  std::unique_ptr<BrowserProxy> p(new BrowserProxy(std::move(spec)));
  int wake[2];
  if (pipe2(wake, O_CLOEXEC) != 0) return Internal(std::string("proxy pipe: ") + strerror(errno));
  p->wake_read_ = wake[0];
  p->wake_write_ = wake[1];
  const bool unix_socket = !p->spec_.unix_path.empty();
  int fd = ::socket(unix_socket ? AF_UNIX : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Internal(std::string("proxy socket: ") + strerror(errno));
  p->listen_fd_ = fd;
  int rc;
  if (unix_socket) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (p->spec_.unix_path.size() >= sizeof addr.sun_path) {
      return InvalidArgument("the proxy's socket path is too long: " + p->spec_.unix_path);
    }
    std::memcpy(addr.sun_path, p->spec_.unix_path.c_str(), p->spec_.unix_path.size() + 1);
    rc = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  } else {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    rc = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    if (rc == 0 && getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      p->port_ = ntohs(addr.sin_port);
    }
  }
  if (rc != 0 || ::listen(fd, 128) != 0) {
    return Unavailable(fmt::format("the browser's proxy cannot listen on {}: {}",
                                   unix_socket ? p->spec_.unix_path : "127.0.0.1",
                                   strerror(errno)));
  }
  p->acceptor_ = std::thread([raw = p.get()] { raw->AcceptLoop(); });
  return p;
}

BrowserProxy::~BrowserProxy() { Stop(); }

void BrowserProxy::Stop() {
  {
    MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  if (wake_write_ >= 0) (void)!::write(wake_write_, "x", 1);
  if (acceptor_.joinable()) acceptor_.join();
  std::map<int64_t, std::thread> all;
  {
    MutexLock lock(&mu_);
    all.swap(conns_);
  }
  for (auto& [id, t] : all) t.join();
  for (int* fd : {&listen_fd_, &wake_read_, &wake_write_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

bool BrowserProxy::Track(int fd) {
  MutexLock lock(&mu_);
  if (stopping_) {
    ::close(fd);
    return false;
  }
  open_fds_.insert(fd);
  return true;
}

void BrowserProxy::CloseTracked(int fd) {
  if (fd < 0) return;
  MutexLock lock(&mu_);
  open_fds_.erase(fd);
  ::close(fd);
}

void BrowserProxy::AcceptLoop() {
  while (true) {
    pollfd p[2] = {{listen_fd_, POLLIN, 0}, {wake_read_, POLLIN, 0}};
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (p[1].revents) return;  // Stop()
    int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) {
      if (errno == EMFILE || errno == ENFILE) std::this_thread::sleep_for(milliseconds(50));
      continue;
    }
    std::vector<std::thread> done;
    bool full = false;
    {
      MutexLock lock(&mu_);
      for (int64_t id : finished_) {
        if (auto it = conns_.find(id); it != conns_.end()) {
          done.push_back(std::move(it->second));
          conns_.erase(it);
        }
      }
      finished_.clear();
      if (stopping_) {
        ::close(client);
        client = -1;
      } else if (static_cast<int>(conns_.size()) >= spec_.max_connections) {
        full = true;
      } else {
        const int64_t id = next_conn_++;
        open_fds_.insert(client);
        conns_[id] = std::thread([this, client, id] {
          Serve(client);
          MutexLock l(&mu_);
          finished_.push_back(id);
        });
      }
    }
    for (auto& t : done) t.join();
    if (full) {
      (void)SendAll(client, Answer(503, "Service Unavailable",
                                   "maestro: too many connections from this browser\n"));
      ::close(client);
    }
    if (client < 0) return;
  }
}

BrowserProxy::HeadRead BrowserProxy::ReadHead(int fd, std::string* buf, size_t* head_end) {
  const auto deadline = SteadyClock::now() + spec_.header_timeout;
  char chunk[4096];
  while (true) {
    if (size_t end = buf->find("\r\n\r\n"); end != std::string::npos) {
      *head_end = end + 4;
      return *head_end > kMaxHead ? HeadRead::kTooLarge : HeadRead::kOk;
    }
    if (buf->size() > kMaxHead) return HeadRead::kTooLarge;
    pollfd p[2] = {{fd, POLLIN, 0}, {wake_read_, POLLIN, 0}};
    int n = poll(p, 2, static_cast<int>(MsLeft(deadline)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || p[1].revents) return HeadRead::kClosed;
    ssize_t r = ::recv(fd, chunk, sizeof chunk, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return HeadRead::kClosed;
    buf->append(chunk, static_cast<size_t>(r));
  }
}

int BrowserProxy::Connect(const std::string& host, int port, std::string* why) {
  std::string name = host;
  if (!name.empty() && name.front() == '[') name = name.substr(1, name.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* res = nullptr;
  int gai = getaddrinfo(name.c_str(), std::to_string(port).c_str(), &hints, &res);
  if (gai != 0) {
    *why = fmt::format("cannot resolve {}: {}", host, gai_strerror(gai));
    return -1;
  }
  *why = fmt::format("{} has no address", host);
  int connected = -1;
  for (addrinfo* ai = res; ai && connected < 0; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || !Track(fd)) break;
    bool ok = ::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0;
    if (!ok && errno == EINPROGRESS) {
      pollfd p[2] = {{fd, POLLOUT, 0}, {wake_read_, POLLIN, 0}};
      int n;
      do {
        n = poll(p, 2, static_cast<int>(spec_.connect_timeout.count()));
      } while (n < 0 && errno == EINTR);
      int err = ETIMEDOUT;
      socklen_t len = sizeof err;
      if (n > 0 && !p[1].revents) (void)getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      ok = n > 0 && !p[1].revents && err == 0;
      if (!ok) errno = err;
    }
    if (ok) {
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      connected = fd;
    } else {
      *why = fmt::format("cannot connect to {} port {}: {}", host, port, strerror(errno));
      CloseTracked(fd);
    }
  }
  freeaddrinfo(res);
  return connected;
}

void BrowserProxy::Serve(int client) {
  std::string buf;
  size_t head_end = 0;
  HeadRead read = ReadHead(client, &buf, &head_end);
  Head h;
  std::string reply;
  std::string host, path;
  int port = 0;
  const bool parsed = read == HeadRead::kOk && ParseHead(buf.substr(0, head_end), &h);
  const bool tunnel = parsed && h.method == "CONNECT";
  if (read == HeadRead::kTooLarge) {
    reply =
        Answer(431, "Request Header Fields Too Large", "maestro: the request head is too large\n");
  } else if (read == HeadRead::kClosed) {
    CloseTracked(client);
    return;
  } else if (!parsed) {
    reply = Answer(400, "Bad Request", "maestro: not an HTTP request\n");
  } else if (tunnel) {
    if (!SplitAuthority(h.target, 0, &host, &port) || port == 0) {
      reply = Answer(400, "Bad Request", "maestro: CONNECT needs host:port\n");
    }
  } else {
    // Absolute form only (http://host[:port]/path): the proxy is never an
    // origin server, and https goes through CONNECT.
    std::string t = h.target;
    size_t start = t.size() > 7 && IEquals(t.substr(0, 7), "http://") ? 7 : std::string::npos;
    size_t end = start == std::string::npos ? start : t.find_first_of("/?#", start);
    std::string authority =
        start == std::string::npos ? "" : t.substr(start, end == t.npos ? t.npos : end - start);
    path = end == std::string::npos ? "/" : t.substr(end);
    if (!path.empty() && path[0] != '/') path = "/" + path;
    if (authority.empty() || authority.find('@') != std::string::npos ||
        !SplitAuthority(authority, 80, &host, &port)) {
      reply = Answer(400, "Bad Request",
                     "maestro: the browser's proxy takes CONNECT host:port or an absolute "
                     "http:// URL\n");
    }
  }
  if (reply.empty() && !EndpointAllowed(spec_.allowed_hosts, host, port)) {
    const int n = ++refused_;
    const std::string what = ValidUtf8(Utf8Prefix(host, 200)) + ":" + std::to_string(port);
    if (n <= kLoggedRefusals) {
      spdlog::info("browser: refused a connection to {} (not on the allow-list){}", what,
                   n == kLoggedRefusals ? "; further refusals of this browser are not logged" : "");
    }
    reply = Answer(403, "Forbidden",
                   "maestro: " + what + " is not on this space's browser allow-list\n");
  }
  int upstream = -1;
  if (reply.empty()) {
    std::string why;
    upstream = Connect(host, port, &why);
    if (upstream < 0) reply = Answer(502, "Bad Gateway", "maestro: " + why + "\n");
  }
  if (!reply.empty()) {
    (void)SendAll(client, reply);
    CloseTracked(client);
    return;
  }
  ++admitted_;
  const std::string rest = buf.substr(head_end);
  bool ok;
  bool upgrade = false;
  if (tunnel) {
    ok = SendAll(client, std::string("HTTP/1.1 200 Connection established\r\n\r\n")) &&
         SendAll(upstream, rest);
  } else {
    // The request in origin form, without the hop-by-hop headers meant for
    // the proxy; one request per connection.
    std::string out = h.method + " " + path + " " + h.version + "\r\n";
    for (const auto& [name, value] : h.headers) {
      if (IEquals(name, "upgrade")) upgrade = true;
      if (!HopByHop(name)) out += name + ": " + value + "\r\n";
    }
    out += upgrade ? "Connection: upgrade\r\n\r\n" : "Connection: close\r\n\r\n";
    ok = SendAll(upstream, out + rest);
  }
  if (ok) Relay(client, upstream, !tunnel && !upgrade);
  CloseTracked(upstream);
  CloseTracked(client);
}

void BrowserProxy::Relay(int client, int upstream, bool http) {
  bool client_open = true, upstream_open = true;
  bool rewriting = http;
  std::string head;
  std::vector<char> chunk(kChunk);
  while (client_open || upstream_open) {
    pollfd p[3] = {{client_open ? client : -1, POLLIN, 0},
                   {upstream_open ? upstream : -1, POLLIN, 0},
                   {wake_read_, POLLIN, 0}};
    int n = poll(p, 3, static_cast<int>(spec_.idle_timeout.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || p[2].revents) return;  // idle, or Stop()
    if (p[0].revents) {
      ssize_t r = ::recv(client, chunk.data(), chunk.size(), 0);
      if (r < 0 && errno == EINTR) continue;
      if (r > 0) {
        if (!SendAll(upstream, chunk.data(), static_cast<size_t>(r))) return;
      } else if (r == 0) {
        client_open = false;
        ::shutdown(upstream, SHUT_WR);
      } else {
        return;
      }
    }
    if (p[1].revents) {
      ssize_t r = ::recv(upstream, chunk.data(), chunk.size(), 0);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return;
      if (r == 0) {
        if (!head.empty()) (void)SendAll(client, head);
        if (http) return;  // the response is complete
        upstream_open = false;
        ::shutdown(client, SHUT_WR);
        continue;
      }
      if (!rewriting) {
        if (!SendAll(client, chunk.data(), static_cast<size_t>(r))) return;
        continue;
      }
      head.append(chunk.data(), static_cast<size_t>(r));
      size_t end = head.find("\r\n\r\n");
      if (end == std::string::npos && head.size() <= kMaxHead) continue;
      std::string out = end == std::string::npos
                            ? head
                            : CloseResponseHead(head.substr(0, end + 4)) + head.substr(end + 4);
      rewriting = false;
      head.clear();
      if (!SendAll(client, out)) return;
    }
  }
}

}  // namespace maestro::browser
