// TestSshd: Debian's OpenSSH server started by a test on 127.0.0.1, on a
// free port, with everything in the test's directory — its own config, host
// key (ssh-keygen), authorized_keys, pid file and log (-D -e: stays in the
// foreground, logs to stderr) — and stopped (SIGTERM, then SIGKILL) by the
// destructor. Two client keys are authorized for the user running the test:
// `key` runs commands normally; `recording_key` is bound to a forced command
// that only writes the command the client asked for ($SSH_ORIGINAL_COMMAND)
// to recorded_command_file(), byte for byte, and runs nothing.
//
// Thread safety: one test thread.
#pragma once

#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "support/process.h"
#include "support/temp_dir.h"

namespace maestro::testing {

class TestSshd {
 public:
  // `dir` must exist and outlive the server.
  explicit TestSshd(std::string dir) : dir_(std::move(dir)) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories("/run/sshd", ec);  // privilege separation dir, when run as root
    for (const char* name : {"host", "client", "recorder", "stranger"}) {
      auto [code, out] = RunCommand({"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C",
                                     "", "-f", dir_ + "/" + name},
                                    {}, dir_ + "/keygen");
      if (code != 0) {
        error_ = "ssh-keygen: " + out;
        return;
      }
    }
    const passwd* pw = getpwuid(getuid());
    user_ = pw ? pw->pw_name : "root";
    WriteFile(dir_ + "/authorized_keys",
              PublicKey("client") + "\n" +
                  "command=\"printf '%s' \\\"$SSH_ORIGINAL_COMMAND\\\" > " +
                  recorded_command_file() + "\" " + PublicKey("recorder") + "\n");
    port_ = FreePort();
    WriteFile(dir_ + "/sshd_config",
              "ListenAddress 127.0.0.1\nPort " + std::to_string(port_) + "\nHostKey " + dir_ +
                  "/host\nAuthorizedKeysFile " + dir_ +
                  "/authorized_keys\nStrictModes no\nUsePAM no\nPidFile " + dir_ +
                  "/sshd.pid\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                  "PermitRootLogin prohibit-password\nLogLevel VERBOSE\nMaxStartups 50\n");
    sshd_ = std::make_unique<Process>(
        std::vector<std::string>{"/usr/sbin/sshd", "-D", "-e", "-f", dir_ + "/sshd_config"},
        std::map<std::string, std::string>{}, dir_ + "/sshd.out", dir_ + "/sshd.log");
    for (int i = 0; i < 500; ++i) {
      if (Log().find("Server listening") != std::string::npos) return;
      if (!sshd_->running() || sshd_->Wait(std::chrono::milliseconds(10)).has_value()) break;
    }
    error_ = "sshd did not start: " + Log();
  }
  ~TestSshd() {
    if (sshd_ && sshd_->running()) {
      sshd_->Signal(SIGTERM);
      sshd_->Wait(std::chrono::seconds(5));
    }
  }
  TestSshd(const TestSshd&) = delete;
  TestSshd& operator=(const TestSshd&) = delete;

  // "" when the server runs.
  const std::string& error() const { return error_; }
  int port() const { return port_; }
  const std::string& user() const { return user_; }
  // "ssh-ed25519 AAAA…": the line to pin.
  std::string HostKeyLine() const { return PublicKey("host"); }
  // A well-formed key the server does not have (a wrong pin).
  std::string StrangerKeyLine() const { return PublicKey("stranger"); }
  std::string ClientKey() const { return ReadWholeFile(dir_ + "/client"); }
  std::string ClientKeyPath() const { return dir_ + "/client"; }
  std::string RecorderKey() const { return ReadWholeFile(dir_ + "/recorder"); }
  std::string recorded_command_file() const { return dir_ + "/recorded_command"; }
  std::string Log() const { return ReadWholeFile(dir_ + "/sshd.log"); }
  // TCP connections the server has accepted so far.
  int Connections() const { return Count(Log(), "Connection from "); }
  int Logins() const { return Count(Log(), "Accepted publickey"); }

 private:
  std::string PublicKey(const std::string& name) const {
    std::string k = ReadWholeFile(dir_ + "/" + name + ".pub");
    while (!k.empty() && (k.back() == '\n' || k.back() == ' ')) k.pop_back();
    return k;
  }
  static int Count(const std::string& hay, const std::string& needle) {
    int n = 0;
    for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
    return n;
  }

  std::string dir_, user_, error_;
  int port_ = 0;
  std::unique_ptr<Process> sshd_;
};

// ESTABLISHED TCP connections on 127.0.0.1 to or from `port` (/proc/net/tcp).
inline int EstablishedTcp(int port) {
  std::ifstream in("/proc/net/tcp");
  std::string line;
  std::getline(in, line);  // header
  int n = 0;
  char hex[8];
  snprintf(hex, sizeof hex, ":%04X", port);
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string sl, local, remote, state;
    f >> sl >> local >> remote >> state;
    if (state == "01" &&
        (local.find(hex) != std::string::npos || remote.find(hex) != std::string::npos)) {
      ++n;
    }
  }
  return n;
}

}  // namespace maestro::testing
