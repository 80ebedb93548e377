// FakeLlmProcess: starts the real maestro-fakellm binary on 127.0.0.1 with a
// free port (--port 0; the port is read from its first stdout line) and
// stops it (SIGTERM, then SIGKILL) in the destructor, reaping the child.
// Shared by the LLM integration tests and the benchmark.
//
// Thread safety: one owner thread.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/json.h"

namespace maestro::testing {

// One scripted reply of the fake (fakellm/script.h): a call of `name`.
inline Json ToolCallReply(const std::string& name, const Json& args) {
  return {{"tool_calls", Json::array({{{"name", name}, {"arguments", args}}})}};
}
// A call of `complete` with `args`, and the common case of it: success.
inline Json CompleteReply(const Json& args) { return ToolCallReply("complete", args); }
inline Json SucceedReply(const std::string& result) {
  return CompleteReply({{"status", "success"}, {"result", result}});
}

class FakeLlmProcess {
 public:
  explicit FakeLlmProcess(std::vector<std::string> args,
                          const std::string& binary = MAESTRO_FAKELLM_BIN) {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
    args.insert(args.begin(), {binary, "--host", "127.0.0.1", "--port", "0"});
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], STDOUT_FILENO);
      close(fds[0]);
      close(fds[1]);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(binary.c_str(), argv.data());
      _exit(127);
    }
    close(fds[1]);
    out_ = fds[0];
    std::string line;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (line.find('\n') == std::string::npos) {
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error("fakellm did not start");
      pollfd p{out_, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      char buf[256];
      ssize_t n = read(out_, buf, sizeof(buf));
      if (n <= 0) throw std::runtime_error("fakellm exited: " + line);
      line.append(buf, static_cast<size_t>(n));
    }
    auto colon = line.rfind(':');
    port_ = std::stoi(line.substr(colon + 1));
  }
  ~FakeLlmProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      for (int i = 0; i < 100; ++i) {
        if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
          pid_ = -1;
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      if (pid_ > 0) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
      }
    }
    if (out_ >= 0) close(out_);
  }
  FakeLlmProcess(const FakeLlmProcess&) = delete;
  FakeLlmProcess& operator=(const FakeLlmProcess&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  int port_ = 0;
};

}  // namespace maestro::testing
