#include "browser/cdp_client.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>

namespace maestro::browser {
namespace {

constexpr size_t kMaxMessageBytes = 64u << 20;  // a full-page screenshot is a few MB
constexpr size_t kStderrTailLines = 20;

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// A close-on-exec descriptor above 9, so dup2 onto the child's 3/4 never
// collides with a descriptor the child also receives.
int Above9(int fd) {
  if (fd < 0 || fd > 9) return fd;
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, 10);
  ::close(fd);
  return moved;
}

std::string StatusText(int status) {
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

}  // namespace

Result<std::unique_ptr<CdpClient>> CdpClient::Launch(Env& env, const LaunchSpec& spec,
                                                     EventFn on_event,
                                                     std::chrono::milliseconds timeout) {
  if (spec.argv.empty() || spec.argv[0].empty()) {
    return InvalidArgument("the browser needs a command", "browser.chromium");
  }
  // One socket pair for both directions: the browser reads its fd 3 and
  // writes its fd 4, both the same socket; our end writes with
  // MSG_NOSIGNAL, so a browser that died is an error, not a SIGPIPE.
  int sv[2] = {-1, -1}, err[2] = {-1, -1}, wake[2] = {-1, -1};
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 || pipe2(err, O_CLOEXEC) != 0 ||
      pipe2(wake, O_CLOEXEC) != 0) {
    for (int* p : {sv, err, wake}) {
      CloseFd(p[0]);
      CloseFd(p[1]);
    }
    return Internal(std::string("browser pipes: ") + std::strerror(errno));
  }
  for (int* p : {sv, err, wake}) {
    p[0] = Above9(p[0]);
    p[1] = Above9(p[1]);
  }
  std::unique_ptr<CdpClient> c(new CdpClient());
  c->on_event_ = std::move(on_event);
  ChildSpec child;
  child.argv = spec.argv;
  child.argv.insert(child.argv.end(), spec.flags.begin(), spec.flags.end());
  child.argv.push_back("--remote-debugging-pipe");
  // stdout and stderr into the drained pipe (never into the server's log).
  child.stdout_fd = err[1];
  child.stderr_fd = err[1];
  child.extra_fds = {{sv[1], 3}, {sv[1], 4}};
  auto pid = env.SpawnChild(child);
  ::close(sv[1]);
  ::close(err[1]);
  c->to_browser_ = sv[0];
  c->from_browser_ = sv[0];
  c->stderr_ = err[0];
  c->wake_read_ = wake[0];
  c->wake_write_ = wake[1];
  if (!pid.ok()) {
    c->closed_ = true;
    c->gone_ = true;
    CloseFd(c->to_browser_);
    c->from_browser_ = -1;
    CloseFd(c->stderr_);
    CloseFd(c->wake_read_);
    CloseFd(c->wake_write_);
    return Unavailable("cannot start the browser: " + pid.status().message());
  }
  c->pid_ = *pid;
  c->reader_ = std::thread([raw = c.get()] { raw->ReadLoop(); });
  auto version = c->Call("Browser.getVersion", Json::object(), "", timeout);
  if (!version.ok()) {
    std::string tail = c->StderrTail();
    c->Close();
    return Unavailable("the browser did not start: " + version.status().message() +
                       (tail.empty() ? "" : " (its last words: " + tail + ")"));
  }
  spdlog::debug("browser: {} started, pid {}", version->value("product", "chromium"), c->pid_);
  return c;
}

CdpClient::~CdpClient() { Close(); }

Status CdpClient::Write(const std::string& message) {
  MutexLock lock(&write_mu_);
  if (gone_.load() || to_browser_ < 0) return Unavailable("the browser is gone");
  std::string framed = message;
  framed.push_back('\0');
  size_t off = 0;
  while (off < framed.size()) {
    ssize_t n = ::send(to_browser_, framed.data() + off, framed.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Unavailable(std::string("the browser is gone: ") + std::strerror(errno));
    off += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status CdpClient::Send(const std::string& method, Json params, const std::string& session) {
  Json msg = {{"id", next_id_.fetch_add(1)}, {"method", method}, {"params", std::move(params)}};
  if (!session.empty()) msg["sessionId"] = session;
  return Write(msg.dump());
}

Result<Json> CdpClient::Call(const std::string& method, Json params, const std::string& session,
                             std::chrono::milliseconds timeout) {
  const int64_t id = next_id_.fetch_add(1);
  auto pending = std::make_shared<Pending>();
  {
    MutexLock lock(&mu_);
    pending_[id] = pending;
  }
  Json msg = {{"id", id}, {"method", method}, {"params", std::move(params)}};
  if (!session.empty()) msg["sessionId"] = session;
  Status st = Write(msg.dump());
  MutexLock lock(&mu_);
  if (st.ok()) {
    cv_.WaitFor(&mu_, timeout, [&] { return pending->done || gone_.load(); });
  }
  pending_.erase(id);
  if (!st.ok()) return st;
  if (!pending->done) {
    if (gone_.load()) return Unavailable("the browser is gone (" + method + ")");
    return Status(StatusCode::kDeadlineExceeded, method + ": no answer from the browser within " +
                                                     std::to_string(timeout.count()) + " ms");
  }
  const Json& r = pending->response;
  if (r.contains("error")) {
    return InvalidArgument(method + ": " + r["error"].value("message", std::string("error")));
  }
  return r.value("result", Json::object());
}

void CdpClient::Deliver(std::string message) {
  Json msg = Json::parse(message, nullptr, /*allow_exceptions=*/false);
  if (msg.is_discarded() || !msg.is_object()) return;  // not ours to crash on
  if (msg.contains("id") && msg["id"].is_number_integer()) {
    MutexLock lock(&mu_);
    auto it = pending_.find(msg["id"].get<int64_t>());
    if (it == pending_.end()) return;  // a Send() or a call that timed out
    it->second->response = std::move(msg);
    it->second->done = true;
    cv_.SignalAll();
    return;
  }
  if (!on_event_ || !msg.contains("method") || !msg["method"].is_string()) return;
  on_event_(msg["method"].get<std::string>(), msg.value("params", Json::object()),
            msg.value("sessionId", std::string()));
}

std::string CdpClient::StderrTail() {
  MutexLock lock(&mu_);
  std::string out;
  for (const auto& l : stderr_tail_) out += (out.empty() ? "" : " | ") + l;
  return out;
}

void CdpClient::ReadLoop() {
  std::string buf, err;
  char chunk[65536];
  int in = from_browser_, errfd = stderr_;
  while (in >= 0) {
    pollfd p[3] = {{in, POLLIN, 0}, {errfd, POLLIN, 0}, {wake_read_, POLLIN, 0}};
    if (poll(p, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (p[2].revents) break;  // Close()
    if (p[1].revents) {
      ssize_t n = ::read(errfd, chunk, sizeof chunk);
      if (n > 0) {
        err.append(chunk, static_cast<size_t>(n));
        size_t nl;
        while ((nl = err.find('\n')) != std::string::npos) {
          std::string line = err.substr(0, std::min<size_t>(nl, 300));
          err.erase(0, nl + 1);
          if (line.empty()) continue;
          MutexLock lock(&mu_);
          stderr_tail_.push_back(std::move(line));
          if (stderr_tail_.size() > kStderrTailLines) stderr_tail_.pop_front();
        }
        if (err.size() > 4096) err.clear();
      } else if (n == 0 || errno != EINTR) {
        errfd = -1;
      }
    }
    if (p[0].revents) {
      ssize_t n = ::read(in, chunk, sizeof chunk);
      if (n > 0) {
        buf.append(chunk, static_cast<size_t>(n));
        size_t start = 0;
        for (size_t z; (z = buf.find('\0', start)) != std::string::npos; start = z + 1) {
          Deliver(buf.substr(start, z - start));
        }
        buf.erase(0, start);
        if (buf.size() > kMaxMessageBytes) {
          spdlog::warn("browser: a message over {} bytes; closing the browser", kMaxMessageBytes);
          break;
        }
      } else if (n == 0 || errno != EINTR) {
        break;  // EOF: the browser is gone
      }
    }
  }
  gone_ = true;
  MutexLock lock(&mu_);
  cv_.SignalAll();
}

void CdpClient::Close() {
  if (closed_.exchange(true)) return;
  if (!gone_.load()) (void)Send("Browser.close", Json::object(), "");
  // Up to 2 s for an orderly exit (the profile is flushed), then the group.
  int status = 0;
  bool reaped = pid_ <= 0;
  for (int i = 0; i < 100 && !reaped; ++i) {
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno == ECHILD)) {
      reaped = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (pid_ > 0) ::kill(-pid_, SIGKILL);  // renderers and helpers: the whole group
  if (!reaped) {
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  // The group's other processes die with a delay after the SIGKILL: wait
  // (up to 2 s) until none is left, so a closed browser leaves nothing.
  for (int i = 0; pid_ > 0 && i < 200 && ::kill(-pid_, 0) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (pid_ > 0) spdlog::debug("browser: pid {} ended ({})", pid_, StatusText(status));
  if (wake_write_ >= 0) (void)!::write(wake_write_, "x", 1);
  if (reader_.joinable()) reader_.join();
  gone_ = true;
  {
    MutexLock lock(&write_mu_);
    CloseFd(to_browser_);
  }
  from_browser_ = -1;
  CloseFd(stderr_);
  CloseFd(wake_read_);
  CloseFd(wake_write_);
  MutexLock lock(&mu_);
  cv_.SignalAll();
}

}  // namespace maestro::browser
