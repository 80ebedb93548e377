// CanaryServer: a TCP listener on a given loopback address that accepts,
// counts and drops every connection — the host the browser must never
// reach. Any protocol (HTTP, WebSocket, TLS) counts: a connection is the
// leak, whatever it would have said.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

namespace maestro::testing {

class CanaryServer {
 public:
  explicit CanaryServer(const std::string& address) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    inet_pton(AF_INET, address.c_str(), &addr.sin_addr);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 64)) {
      return;
    }
    socklen_t len = sizeof addr;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    if (pipe(stop_) != 0) return;
    thread_ = std::thread([this] {
      while (true) {
        pollfd p[2] = {{fd_, POLLIN, 0}, {stop_[0], POLLIN, 0}};
        if (poll(p, 2, -1) < 0 || p[1].revents) return;
        int c = accept(fd_, nullptr, nullptr);
        if (c < 0) continue;
        ++connections_;
        ::close(c);
      }
    });
  }
  ~CanaryServer() {
    if (thread_.joinable()) {
      (void)!::write(stop_[1], "x", 1);
      thread_.join();
    }
    for (int fd : {fd_, stop_[0], stop_[1]}) {
      if (fd >= 0) ::close(fd);
    }
  }
  int port() const { return port_; }
  int connections() const { return connections_.load(); }

 private:
  int fd_ = -1;
  int stop_[2] = {-1, -1};
  int port_ = 0;
  std::atomic<int> connections_{0};
  std::thread thread_;
};

}  // namespace maestro::testing
