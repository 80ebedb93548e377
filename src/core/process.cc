#include "core/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "core/output_cap.h"

extern char** environ;

namespace maestro {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Owns a file descriptor.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { Reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void Reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// "K=V" strings of a child's environment: `env`, or the parent's when unset.
std::vector<std::string> EnvStrings(const std::optional<std::map<std::string, std::string>>& env) {
  std::vector<std::string> out;
  if (!env) {
    for (char** e = environ; *e; ++e) out.emplace_back(*e);
  } else {
    for (const auto& [k, v] : *env) out.push_back(k + "=" + v);
  }
  return out;
}

Result<pid_t> Spawn(const ProcessSpec& spec, int out_fd) {
  std::vector<std::string> env = EnvStrings(spec.env);
  std::vector<char*> argv, envp;
  std::vector<std::string> args = spec.argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
  posix_spawn_file_actions_adddup2(&fa, out_fd, 2);
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, spec.cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attr, 0);  // a new group whose id is the child's pid
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return Internal("cannot start '" + spec.argv[0] + "': " + std::strerror(rc));
  }
  return pid;
}

int DecodeStatus(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Whether the child has exited, WITHOUT reaping it (WNOWAIT): while it is a
// zombie its pid, and so its group id, cannot be reused by another process,
// which keeps every kill(-pid) below aimed at our group.
bool HasExited(pid_t pid) {
  siginfo_t info{};
  int w = waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
  return (w == 0 && info.si_pid == pid) || (w < 0 && errno != EINTR);
}

// Kills the group once the deadline passes or the token fires.
struct Stopper {
  pid_t pid;
  const ProcessSpec& spec;
  SteadyClock::time_point deadline;
  ProcessResult& res;
  bool killed = false;
  SteadyClock::time_point kill_time;

  void Check() {
    if (killed) return;
    const bool cancel = spec.cancel && spec.cancel->IsCancelled();
    if (!cancel && SteadyClock::now() < deadline) return;
    res.cancelled = cancel;
    res.timed_out = !cancel;
    kill(-pid, SIGKILL);  // the whole group: shell, children, grandchildren
    killed = true;
    kill_time = SteadyClock::now();
  }
};

// Reads the merged output until EOF. Stops early when the child exited but
// something it left in the background still holds the pipe (250 ms grace to
// drain), or 2 s after a kill.
void Collect(int fd, Stopper& stop, HeadTailBuffer& buf) {
  bool exited = false;
  SteadyClock::time_point exit_time;
  char chunk[16384];
  for (;;) {
    stop.Check();
    const auto now = SteadyClock::now();
    if (!exited && HasExited(stop.pid)) {
      exited = true;
      exit_time = now;
    }
    if (stop.killed && now - stop.kill_time > std::chrono::seconds(2)) return;
    if (exited && now - exit_time > std::chrono::milliseconds(250)) return;
    pollfd p{fd, POLLIN, 0};
    int n = poll(&p, 1, 20);
    if (n < 0 && errno != EINTR) return;
    if (n <= 0) continue;
    ssize_t got = read(fd, chunk, sizeof(chunk));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return;  // EOF: every writer is gone
    buf.Append(std::string_view(chunk, static_cast<size_t>(got)));
  }
}

}  // namespace

Result<ProcessResult> RunPosixProcess(const ProcessSpec& spec) {
  if (spec.argv.empty()) return InvalidArgument("empty command", "argv");
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + std::strerror(errno));
  Fd read_end(fds[0]);
  Fd write_end(fds[1]);
  const auto start = SteadyClock::now();
  MAESTRO_ASSIGN_OR_RETURN(pid_t pid, Spawn(spec, write_end.get()));
  write_end.Reset();  // only the child holds the write end now

  ProcessResult res;
  HeadTailBuffer buf(spec.output_cap);
  Stopper stop{pid, spec, start + spec.timeout, res, false, {}};
  Collect(read_end.get(), stop, buf);
  // A child that closed its output but keeps running still meets the
  // deadline and the cancel token.
  while (!HasExited(pid)) {
    stop.Check();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(-pid, SIGKILL);  // background leftovers of the group, if any
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  res.exit_code = DecodeStatus(status);
  res.output = buf.Finish();
  res.output_bytes = buf.total_bytes();
  res.duration_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - start).count();
  return res;
}

namespace {

// fork + exec for what posix_spawn cannot do (PR_SET_PDEATHSIG). The exec
// errno comes back over a close-on-exec pipe, so a missing program is an
// error here as with posix_spawn. Only async-signal-safe calls in the child.
Result<int> ForkChild(const ChildSpec& spec, std::vector<char*>& argv, std::vector<char*>& envp) {
  int err_pipe[2];
  if (pipe2(err_pipe, O_CLOEXEC) != 0) return Internal("pipe failed");
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(err_pipe[0]);
    close(err_pipe[1]);
    return Internal("fork failed");
  }
  if (pid == 0) {
    close(err_pipe[0]);
    if (spec.die_with_parent) {
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (getppid() != parent) _exit(1);
    }
    if (spec.new_process_group) setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int s : {SIGPIPE, SIGTERM, SIGINT, SIGHUP}) signal(s, SIG_DFL);
    if (spec.stdin_fd >= 0) dup2(spec.stdin_fd, 0);
    if (spec.stdout_fd >= 0) dup2(spec.stdout_fd, 1);
    if (spec.stderr_fd >= 0) dup2(spec.stderr_fd, 2);
    for (const auto& [from, to] : spec.extra_fds) dup2(from, to);
    if (!spec.cwd.empty() && chdir(spec.cwd.c_str()) != 0) {
      int e = errno;
      (void)!write(err_pipe[1], &e, sizeof e);
      _exit(127);
    }
    execvpe(argv[0], argv.data(), envp.data());
    int e = errno;
    (void)!write(err_pipe[1], &e, sizeof e);
    _exit(127);
  }
  close(err_pipe[1]);
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(err_pipe[0], &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  close(err_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof child_errno)) {
    waitpid(pid, nullptr, 0);
    return Unavailable("cannot start '" + spec.argv[0] + "': " + std::strerror(child_errno));
  }
  return static_cast<int>(pid);
}

}  // namespace

Result<int> SpawnPosixChild(const ChildSpec& spec) {
  if (spec.argv.empty() || spec.argv[0].empty()) {
    return InvalidArgument("a child process needs a command", "argv");
  }
  std::vector<std::string> args = spec.argv, env = EnvStrings(spec.env);
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  if (spec.die_with_parent) return ForkChild(spec, argv, envp);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (spec.stdin_fd >= 0) posix_spawn_file_actions_adddup2(&fa, spec.stdin_fd, 0);
  if (spec.stdout_fd >= 0) posix_spawn_file_actions_adddup2(&fa, spec.stdout_fd, 1);
  if (spec.stderr_fd >= 0) posix_spawn_file_actions_adddup2(&fa, spec.stderr_fd, 2);
  for (const auto& [from, to] : spec.extra_fds) posix_spawn_file_actions_adddup2(&fa, from, to);
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, spec.cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (spec.new_process_group) flags |= POSIX_SPAWN_SETPGROUP;
  posix_spawnattr_setflags(&attr, flags);
  posix_spawnattr_setpgroup(&attr, 0);  // a new group whose id is the child's pid
  sigset_t none, defaults;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  // Ignored signals stay ignored across exec: a child must die of these.
  sigemptyset(&defaults);
  for (int s : {SIGPIPE, SIGTERM, SIGINT, SIGHUP}) sigaddset(&defaults, s);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return Unavailable("cannot start '" + spec.argv[0] + "': " + std::strerror(rc));
  return static_cast<int>(pid);
}

}  // namespace maestro
