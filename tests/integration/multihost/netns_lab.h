// NetnsLab: a few "hosts" on this machine for the multi-host test — one
// network namespace per host, each with a veth into a private bridge, a
// private /24 and no route to anything else (issue 48 item 5).
//
// Layout, for the test process's pid P and a free N (10.231.N.0/24):
//   mh-P-sw     holds the bridge br0 and the switch ends of every veth;
//   mh-P-<h>    one namespace per host name h given to the constructor, its
//               veth end `eth0` at 10.231.N.<10+i> (hosts in the given order),
//               `lo` up, no default route;
//   the test process itself (the "client host") gets 10.231.N.1 on mhP, the
//   host end of one more veth into the bridge, so it reaches every host over
//   the wire; nothing in the namespaces has a route past the /24.
//
// Processes: Wrap(host, argv, bind) returns the argv that runs `argv` as
// `ip netns exec mh-P-<h> unshare --mount --uts -- sh -c …`: in its own mount
// and UTS namespace, hostname `mh-<h>`, and (when `bind` is given) a tmpfs on
// /srv with the real directory `bind.source` bind-mounted at `bind.target`
// (a path under /srv): every process of the test sees the shared data dir at
// the same path, none of it visible on the machine itself. `ip netns exec`,
// `unshare` (no --fork) and the script's `exec` each replace the process, so
// the spawned pid IS the program's: a SIGKILL to it kills the program.
//
// Teardown (destructor): every process still in one of the namespaces is
// SIGKILLed (`ip netns pids`), then each namespace is deleted (their veths
// go with them). A run that died before its destructor leaves namespaces
// named by its pid: SweepLeftovers (called by the constructor) removes those
// whose pid no longer runs, so at most one crashed run's namespaces outlive
// the next start.
//
// Needs root, iproute2 and util-linux (scripts/setup.sh). Thread safety: one
// owner thread.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/process.h"

namespace maestro::testing {

class NetnsLab {
 public:
  struct Bind {
    std::string source;  // a real directory on this machine
    std::string target;  // where the process sees it: /srv/<name>
  };

  // `scratch` is a directory for the commands' output; `hosts` the host
  // names ("api", "w1", ...). Check ok()/error() afterwards.
  NetnsLab(std::string scratch, const std::vector<std::string>& hosts)
      : scratch_(std::move(scratch)), prefix_("mh-" + std::to_string(getpid()) + "-") {
    if (geteuid() != 0) {
      error_ = "needs root (network namespaces, mounts)";
      return;
    }
    if (IpBin().empty() || access("/usr/bin/unshare", X_OK) != 0) {
      error_ = "needs iproute2's ip and util-linux's unshare (scripts/setup.sh --for-tests)";
      missing_tools_ = true;
      return;
    }
    SweepLeftovers();
    subnet_ = PickSubnet();
    if (subnet_.empty()) {
      error_ = "no free 10.231.N.0/24 on this machine";
      return;
    }
    const std::string sw = prefix_ + "sw";
    host_link_ = "mh" + std::to_string(getpid());
    if (!Ip({"netns", "add", sw})) return;
    made_.push_back(sw);
    if (!Ip({"-n", sw, "link", "set", "lo", "up"}) ||
        !Ip({"-n", sw, "link", "add", "br0", "type", "bridge"}) ||
        !Ip({"-n", sw, "link", "set", "br0", "up"})) {
      return;
    }
    // The client host: this process's end of a veth into the bridge.
    if (!Ip({"link", "add", host_link_, "type", "veth", "peer", "name", "p-client", "netns", sw}) ||
        !Ip({"addr", "add", subnet_ + "1/24", "dev", host_link_}) ||
        !Ip({"link", "set", host_link_, "up"}) ||
        !Ip({"-n", sw, "link", "set", "p-client", "master", "br0", "up"})) {
      return;
    }
    for (size_t i = 0; i < hosts.size(); ++i) {
      const std::string ns = prefix_ + hosts[i];
      const std::string addr = subnet_ + std::to_string(10 + i);
      if (!Ip({"netns", "add", ns})) return;
      made_.push_back(ns);
      const std::string port = "p-" + std::to_string(i);
      if (!Ip({"-n", ns, "link", "set", "lo", "up"}) ||
          !Ip({"-n", sw, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns",
               ns}) ||
          !Ip({"-n", sw, "link", "set", port, "master", "br0", "up"}) ||
          !Ip({"-n", ns, "addr", "add", addr + "/24", "dev", "eth0"}) ||
          !Ip({"-n", ns, "link", "set", "eth0", "up"})) {
        return;
      }
      addrs_[hosts[i]] = addr;
    }
    ok_ = true;
  }

  ~NetnsLab() {
    for (const auto& ns : made_) KillAllIn(ns);
    for (auto it = made_.rbegin(); it != made_.rend(); ++it) Ip({"netns", "del", *it});
    // The client veth went with the switch namespace; a failed start may
    // have made it before the namespace existed.
    RunCommand({IpBin(), "link", "del", host_link_}, {}, scratch_ + "/ip-cleanup");
  }
  NetnsLab(const NetnsLab&) = delete;
  NetnsLab& operator=(const NetnsLab&) = delete;

  // iproute2's `ip` ("" when it is not installed).
  static std::string IpBin() {
    for (const char* p : {"/usr/sbin/ip", "/sbin/ip", "/bin/ip", "/usr/bin/ip"}) {
      if (access(p, X_OK) == 0) return p;
    }
    return "";
  }

  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }
  // Not root or no ip/unshare: a machine that cannot run the lab, not a fault.
  bool unavailable() const { return missing_tools_ || geteuid() != 0; }
  // "mh-P-<host>" and the host's address on the /24.
  std::string Ns(const std::string& host) const { return prefix_ + host; }
  std::string Addr(const std::string& host) const {
    auto it = addrs_.find(host);
    return it == addrs_.end() ? "" : it->second;
  }
  std::string ClientAddr() const { return subnet_ + "1"; }
  std::string Subnet() const { return subnet_ + "0/24"; }
  const std::vector<std::string>& namespaces() const { return made_; }

  // argv that runs `argv` on `host` (see the header).
  std::vector<std::string> Wrap(const std::string& host, const std::vector<std::string>& argv,
                                const Bind& bind = {}) const {
    static const char kScript[] =
        "set -e\n"
        "h=$1; src=$2; dst=$3; shift 3\n"
        "hostname \"$h\"\n"
        "if [ -n \"$src\" ]; then\n"
        "  [ -d /srv ] || mkdir /srv\n"  // FHS; absent in some minimal images
        "  mount -t tmpfs -o size=64k,mode=0755 mh-srv /srv\n"
        "  mkdir \"$dst\"\n"
        "  mount --bind \"$src\" \"$dst\"\n"
        "fi\n"
        "exec \"$@\"\n";
    std::vector<std::string> out = {
        IpBin(), "netns",         "exec",       Ns(host),    "/usr/bin/unshare", "--mount",
        "--uts", "--propagation", "private",    "--",        "/bin/sh",          "-c",
        kScript, "mh-exec",       "mh-" + host, bind.source, bind.target};
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
  }

  // Runs `ip args` to completion; false (error() set) on failure.
  bool Ip(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {IpBin()};
    argv.insert(argv.end(), args.begin(), args.end());
    auto [code, out] = RunCommand(argv, {}, scratch_ + "/ip");
    if (code == 0) return true;
    std::string line;
    for (const auto& a : argv) line += a + " ";
    if (error_.empty()) error_ = line + "failed (" + std::to_string(code) + "): " + out;
    return false;
  }

  // Removes the namespaces of earlier runs whose process is gone (their
  // leftover processes first).
  void SweepLeftovers() {
    auto [code, list] = RunCommand({IpBin(), "netns", "list"}, {}, scratch_ + "/ip-list");
    if (code != 0) return;
    static const std::regex kName("^mh-([0-9]+)-[a-z0-9]+");
    std::istringstream lines(list);
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, kName)) continue;
      const pid_t owner = static_cast<pid_t>(std::stol(m[1].str()));
      if (owner == getpid() || (kill(owner, 0) == 0 || errno != ESRCH)) continue;
      KillAllIn(m[0].str());
      RunCommand({IpBin(), "netns", "del", m[0].str()}, {}, scratch_ + "/ip-sweep");
    }
  }

 private:
  // SIGKILL every process in namespace `ns`.
  void KillAllIn(const std::string& ns) {
    for (int round = 0; round < 3; ++round) {
      auto [code, pids] = RunCommand({IpBin(), "netns", "pids", ns}, {}, scratch_ + "/ip-pids");
      if (code != 0) return;
      std::istringstream in(pids);
      bool any = false;
      for (std::string p; in >> p;) {
        if (p.find_first_not_of("0123456789") != std::string::npos) continue;
        kill(static_cast<pid_t>(std::stol(p)), SIGKILL);
        any = true;
      }
      if (!any) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  // "10.231.N." with no address of this machine in 10.231.N.0/24.
  std::string PickSubnet() {
    auto [code, addrs] =
        RunCommand({IpBin(), "-4", "-o", "addr", "show"}, {}, scratch_ + "/ip-addrs");
    auto [rcode, routes] =
        RunCommand({IpBin(), "-4", "route", "show"}, {}, scratch_ + "/ip-routes");
    if (code != 0 || rcode != 0) return "";
    for (int i = 0; i < 200; ++i) {
      const int n = 20 + (getpid() + i) % 200;
      const std::string net = "10.231." + std::to_string(n) + ".";
      if (addrs.find(net) == std::string::npos && routes.find(net) == std::string::npos &&
          routes.find("10.231.0.0/16") == std::string::npos) {
        return net;
      }
    }
    return "";
  }

  std::string scratch_;
  std::string prefix_;  // "mh-P-"
  std::string subnet_;  // "10.231.N."
  std::string host_link_;
  std::vector<std::string> made_;  // namespaces, in creation order
  std::map<std::string, std::string> addrs_;
  bool ok_ = false;
  bool missing_tools_ = false;
  std::string error_;
};

}  // namespace maestro::testing
