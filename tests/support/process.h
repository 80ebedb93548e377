// Process: a child process for integration tests, started with posix_spawn.
// Output goes to files so a test can read what the binary printed. The
// destructor kills (SIGKILL) and reaps a child that is still running.
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace maestro::testing {

class Process {
 public:
  // Starts `argv` with the parent's environment plus `env`; stdout and
  // stderr go to `out_path` and `err_path`.
  Process(std::vector<std::string> argv, const std::map<std::string, std::string>& env,
          std::string out_path, std::string err_path)
      : out_path_(std::move(out_path)), err_path_(std::move(err_path)) {
    std::map<std::string, std::string> merged;
    for (char** e = environ; *e; ++e) {
      std::string kv(*e);
      auto eq = kv.find('=');
      if (eq != std::string::npos) merged[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    for (const auto& [k, v] : env) merged[k] = v;
    std::vector<std::string> env_strings;
    for (const auto& [k, v] : merged) env_strings.push_back(k + "=" + v);
    std::vector<char*> envp, args;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    for (auto& s : argv) args.push_back(s.data());
    args.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (posix_spawn(&pid_, args[0], &fa, nullptr, args.data(), envp.data()) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
  }
  ~Process() {
    if (running()) {
      kill(pid_, SIGKILL);
      Wait(std::chrono::seconds(5));
    }
  }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0 && !exit_code_; }
  void Signal(int sig) { kill(pid_, sig); }

  // Waits for exit; returns the exit code (128+signal when killed), or
  // nullopt on timeout.
  std::optional<int> Wait(std::chrono::milliseconds limit) {
    if (exit_code_) return exit_code_;
    auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      int status = 0;
      pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return exit_code_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return std::nullopt;
  }

  std::string Stdout() const { return Slurp(out_path_); }
  std::string Stderr() const { return Slurp(err_path_); }

 private:
  static std::string Slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  pid_t pid_ = -1;
  std::optional<int> exit_code_;
  std::string out_path_, err_path_;
};

// Runs a command to completion and returns {exit code, stdout}.
inline std::pair<int, std::string> RunCommand(std::vector<std::string> argv,
                                              const std::map<std::string, std::string>& env,
                                              const std::string& scratch_prefix) {
  Process p(std::move(argv), env, scratch_prefix + ".out", scratch_prefix + ".err");
  auto code = p.Wait(std::chrono::seconds(60));
  return {code.value_or(-1), p.Stdout() + p.Stderr()};
}

// A TCP port on 127.0.0.1 that was free a moment ago.
inline int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace maestro::testing
