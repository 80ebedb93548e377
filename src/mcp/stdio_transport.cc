#include "mcp/stdio_transport.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

namespace maestro::mcp {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr size_t kMaxLineBytes = 64 << 20;  // one stdout message
constexpr size_t kMaxStderrLine = 4096;     // longer stderr lines are cut
constexpr size_t kStderrTailLines = 5;      // quoted when the server dies
constexpr auto kStdinGrace = 100ms;         // stdin closed → SIGTERM: time to end by itself
constexpr auto kTermGrace = 500ms;          // SIGTERM → SIGKILL

std::string ErrnoText(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// A close-on-exec pipe whose ends are both above stdio's 0-2: dup2 onto the
// child's 0/1/2 then clears close-on-exec on the copy only (dup2(fd, fd)
// would keep it, and the child would lose that fd at exec).
bool MakePipe(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  for (int i = 0; i < 2; ++i) {
    if (fds[i] > 2) continue;
    int moved = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
    ::close(fds[i]);
    fds[i] = moved;
  }
  return fds[0] >= 0 && fds[1] >= 0;
}

// The child's exit as waitid reports it, WITHOUT reaping it (WNOWAIT).
bool PeekExit(pid_t pid, siginfo_t* info) {
  *info = siginfo_t{};
  int w = waitid(P_PID, static_cast<id_t>(pid), info, WEXITED | WNOHANG | WNOWAIT);
  return w == 0 && info->si_pid == pid;
}

bool WaitExit(pid_t pid, std::chrono::milliseconds most, siginfo_t* info) {
  const auto end = Clock::now() + most;
  while (!PeekExit(pid, info)) {
    if (Clock::now() >= end) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

// Writes all of `data` to the non-blocking pipe `fd`. SIGPIPE (the child is
// gone) is blocked in this thread for the write and a pending one consumed
// — a write's SIGPIPE goes to the writing thread — so it becomes EPIPE
// instead of killing maestro. `stop` ends a wait for a full pipe.
Status WriteAll(int fd, std::string_view data, const std::function<bool()>& stop) {
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  int err = 0;
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n >= 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN) {
      err = errno;
      break;
    }
    if (stop()) {
      err = ECANCELED;
      break;
    }
    pollfd p{fd, POLLOUT, 0};
    poll(&p, 1, 20);  // the server is slow to read its stdin
  }
  if (err == EPIPE && !sigismember(&old, SIGPIPE)) {
    sigset_t pending;
    sigpending(&pending);
    timespec zero{0, 0};
    if (sigismember(&pending, SIGPIPE)) sigtimedwait(&pipe_set, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (err == 0) return Status::Ok();
  if (err == ECANCELED) return Status(StatusCode::kCancelled, "write to the MCP server abandoned");
  errno = err;
  return Unavailable(ErrnoText("cannot write to the MCP server"));
}

}  // namespace

StdioTransport::StdioTransport(Transport spec, std::function<void(const std::string&)> on_stderr,
                               Env& env)
    : spec_(std::move(spec)), env_(env), on_stderr_(std::move(on_stderr)) {}

StdioTransport::~StdioTransport() { Close(); }

Status StdioTransport::Start(Sink sink) {
  if (spec_.argv.empty() || spec_.argv[0].empty()) {
    return InvalidArgument("an MCP stdio server needs a command", "argv");
  }
  sink_ = std::move(sink);
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, wake[2] = {-1, -1};
  if (!MakePipe(in) || !MakePipe(out) || !MakePipe(err) || !MakePipe(wake)) {
    Status st = Internal(ErrnoText("pipe"));
    for (int* p : {in, out, err, wake}) {
      CloseFd(p[0]);
      CloseFd(p[1]);
    }
    return st;
  }
  ChildSpec child;
  child.argv = spec_.argv;
  child.cwd = spec_.cwd;
  child.env = std::map<std::string, std::string>(spec_.env.begin(), spec_.env.end());
  child.stdin_fd = in[0];
  child.stdout_fd = out[1];
  child.stderr_fd = err[1];
  auto pid = env_.SpawnChild(child);
  ::close(in[0]);  // the child's ends: only the child holds them now
  ::close(out[1]);
  ::close(err[1]);
  stdout_fd_ = out[0];
  stderr_fd_ = err[0];
  wake_read_ = wake[0];
  wake_write_ = wake[1];
  {
    MutexLock lock(&write_mu_);
    stdin_fd_ = in[1];
    fcntl(stdin_fd_, F_SETFL, fcntl(stdin_fd_, F_GETFL) | O_NONBLOCK);
  }
  if (!pid.ok()) return Unavailable("MCP server: " + pid.status().message());
  pid_ = *pid;
  reader_ = std::thread([this] { ReadLoop(); });
  return Status::Ok();
}

Status StdioTransport::Send(const Json& message, const DoneFn& done) {
  std::string line = DumpJson(message);  // compact: no newline inside
  line.push_back('\n');
  MutexLock lock(&write_mu_);
  if (stdin_fd_ < 0) return Unavailable("the MCP server's session is closed");
  auto stop = [&] { return closing_.load() || (done && done()); };
  return WriteAll(stdin_fd_, line, stop);
}

void StdioTransport::TakeLines(std::string& buf, const std::function<void(std::string)>& fn) {
  size_t start = 0;
  for (size_t nl; (nl = buf.find('\n', start)) != std::string::npos; start = nl + 1) {
    size_t end = nl;
    if (end > start && buf[end - 1] == '\r') --end;
    if (end > start) fn(buf.substr(start, end - start));
  }
  buf.erase(0, start);
}

void StdioTransport::StderrLine(std::string line) {
  if (line.size() > kMaxStderrLine) line.resize(kMaxStderrLine);
  {
    MutexLock lock(&mu_);
    err_tail_.push_back(line);
    if (err_tail_.size() > kStderrTailLines) err_tail_.pop_front();
  }
  if (on_stderr_) on_stderr_(line);
}

void StdioTransport::ReadLoop() {
  std::string out, err;
  auto message = [this](std::string line) {
    auto parsed = ParseJson(line);
    if (!parsed.ok()) {
      spdlog::warn("mcp: server '{}' wrote a line that is not JSON ({}), skipped", spec_.argv[0],
                   parsed.status().message());
      return;
    }
    if (sink_.on_message) sink_.on_message(std::move(parsed).value());
  };
  auto err_line = [this](std::string line) { StderrLine(std::move(line)); };
  int out_fd = stdout_fd_, err_fd = stderr_fd_;
  char chunk[65536];
  bool overflow = false;
  while (out_fd >= 0) {
    pollfd p[3] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}, {wake_read_, POLLIN, 0}};
    if (poll(p, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (p[2].revents) return;  // Close(): nobody waits for anything any more
    if (p[1].revents) {
      ssize_t n = ::read(err_fd, chunk, sizeof chunk);
      if (n > 0) {
        err.append(chunk, static_cast<size_t>(n));
        TakeLines(err, err_line);
        if (err.size() > kMaxStderrLine) err.clear();  // a runaway unterminated line
      } else if (n == 0 || errno != EINTR) {
        err_fd = -1;  // poll() skips a negative fd
      }
    }
    if (p[0].revents) {
      ssize_t n = ::read(out_fd, chunk, sizeof chunk);
      if (n > 0) {
        out.append(chunk, static_cast<size_t>(n));
        TakeLines(out, message);
        overflow = out.size() > kMaxLineBytes;
        if (overflow) break;
      } else if (n == 0 || errno != EINTR) {
        out_fd = -1;  // EOF: the server is gone (or closed its stdout)
      }
    }
  }
  // Drain what the server said on stderr as it went (its last words explain
  // the exit), up to 200 ms.
  const auto end = Clock::now() + 200ms;
  while (err_fd >= 0 && Clock::now() < end) {
    pollfd p[2] = {{err_fd, POLLIN, 0}, {wake_read_, POLLIN, 0}};
    if (poll(p, 2, 50) <= 0) continue;
    if (p[1].revents) return;
    ssize_t n = ::read(err_fd, chunk, sizeof chunk);
    if (n <= 0) break;
    err.append(chunk, static_cast<size_t>(n));
    TakeLines(err, err_line);
  }
  if (!err.empty()) StderrLine(err);
  Status why = overflow ? Unavailable("MCP server '" + spec_.argv[0] + "' sent a line over " +
                                      std::to_string(kMaxLineBytes >> 20) + " MiB")
                        : LostStatus();
  if (sink_.on_lost) sink_.on_lost(why);
}

Status StdioTransport::LostStatus() {
  siginfo_t info;
  std::string what = "MCP server '" + spec_.argv[0] + "' ";
  if (!WaitExit(pid_, 200ms, &info)) {
    what += "closed its stdout";
  } else if (info.si_code == CLD_EXITED) {
    what += "exited with code " + std::to_string(info.si_status);
  } else {
    what += "was killed by signal " + std::to_string(info.si_status);
  }
  MutexLock lock(&mu_);
  if (!err_tail_.empty()) {
    what += "; stderr:";
    for (const auto& l : err_tail_) what += " " + l;
  }
  return Unavailable(what);
}

void StdioTransport::Close() {
  {
    MutexLock lock(&mu_);
    if (closed_) return;
    closed_ = true;
  }
  closing_ = true;  // a Send waiting for a full pipe gives up within 20 ms
  {
    MutexLock lock(&write_mu_);
    CloseFd(stdin_fd_);  // EOF on its stdin: a polite server ends here
  }
  if (pid_ > 0) {
    siginfo_t info;
    if (!WaitExit(pid_, kStdinGrace, &info)) {
      kill(-pid_, SIGTERM);  // the whole group: a wrapper's children too
      WaitExit(pid_, kTermGrace, &info);
    }
    // Still running after the grace, or leftovers of its group: SIGKILL.
    // The leader is not reaped yet, so -pid_ is still our group.
    kill(-pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (wake_write_ >= 0) {
    char x = 'x';
    while (::write(wake_write_, &x, 1) < 0 && errno == EINTR) {
    }
  }
  if (reader_.joinable()) reader_.join();
  CloseFd(stdout_fd_);
  CloseFd(stderr_fd_);
  CloseFd(wake_read_);
  CloseFd(wake_write_);
}

}  // namespace maestro::mcp
