#include "cli/startup_wait.h"

#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <string_view>

namespace maestro::cli {
namespace {

// "2 s", "250 ms": the next delay as an operator reads it.
std::string Human(std::chrono::milliseconds d) {
  if (d.count() < 1000) return fmt::format("{} ms", d.count());
  if (d.count() % 1000 == 0) return fmt::format("{} s", d.count() / 1000);
  return fmt::format("{:.1f} s", static_cast<double>(d.count()) / 1000.0);
}

// libpq's messages span lines ("...refused\n\tIs the server running..."):
// one line per attempt in the log.
std::string OneLine(const std::string& s) {
  std::string out;
  for (char c : s) {
    const bool space = c == '\n' || c == '\t' || c == '\r';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  return out;
}

bool Contains(const std::string& s, std::string_view part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

Status WaitFor(const std::function<Status()>& attempt,
               const std::function<bool(const Status&)>& retryable,
               const StartupWaitOptions& options) {
  const TimeMs start = options.clock->NowMs();
  // A year at most: startup_wait_ms may be any int64, the sum must not overflow.
  const TimeMs deadline =
      start + std::min<TimeMs>(options.max_wait.count(), TimeMs{365} * 24 * 3600 * 1000);
  std::chrono::milliseconds next = std::max(options.initial, std::chrono::milliseconds(1));
  for (int n = 1;; ++n) {
    Status st = attempt();
    if (st.ok() && n > 1) {
      const std::string line = fmt::format("{}: there after {} attempts ({} s)", options.what, n,
                                           (options.clock->NowMs() - start + 500) / 1000);
      if (options.log) {
        options.log(line);
      } else {
        spdlog::info("{}", line);
      }
    }
    if (st.ok() || !retryable(st) || options.max_wait.count() <= 0) return st;
    const TimeMs now = options.clock->NowMs();
    if (now >= deadline) {
      return Status(st.code(),
                    fmt::format("{} (waited {} s for {}; startup_wait_ms)", OneLine(st.message()),
                                (now - start + 500) / 1000, options.what),
                    st.field());
    }
    // The last sleep ends at the deadline, for one attempt there.
    const auto delay = std::min(next, std::chrono::milliseconds(deadline - now));
    const std::string line = fmt::format("waiting for {} (attempt {}, next in {}): {}",
                                         options.what, n, Human(delay), OneLine(st.message()));
    if (options.log) {
      options.log(line);
    } else {
      spdlog::warn("{}", line);
    }
    const int sig = options.sleep ? options.sleep(delay) : SleepUnlessStopSignal(delay);
    if (sig != 0) {
      return Status(StatusCode::kCancelled,
                    fmt::format("signal {} while waiting for {}", sig, options.what));
    }
    next = std::min(next * 2, options.max_backoff);
  }
}

int SleepUnlessStopSignal(std::chrono::milliseconds d) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  const auto end = std::chrono::steady_clock::now() + d;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(
        end - std::chrono::steady_clock::now());
    if (left.count() <= 0) return 0;
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(left.count() / 1'000'000'000);
    ts.tv_nsec = static_cast<long>(left.count() % 1'000'000'000);
    const int sig = sigtimedwait(&set, nullptr, &ts);
    if (sig > 0) return sig;
    if (errno == EAGAIN) return 0;
    // EINTR (another signal's handler ran): wait out the rest.
  }
}

bool IsDatabaseStarting(const Status& st) {
  if (st.code() != StatusCode::kUnavailable) return false;
  const std::string& m = st.message();
  // A query's error (PgConn::ErrorFrom): "postgres <what>: [SQLSTATE] ...".
  for (std::string_view state : {"[08", "[57P0", "[53300]"}) {
    if (Contains(m, state)) return true;
  }
  if (m.rfind("postgres connect: ", 0) != 0) return false;
  // libpq's connect errors carry no SQLSTATE: the server not there yet, or
  // not accepting connections yet. A name that does not resolve is retried
  // too: compose registers a container's name only once it runs (a typo
  // shows in every logged attempt and fails at the bound).
  for (std::string_view part :
       {"Connection refused", "No such file or directory", "could not translate host name",
        "Connection timed out", "timeout expired", "No route to host", "Network is unreachable",
        "Host is unreachable", "server closed the connection unexpectedly",
        "Connection reset by peer", "could not receive data from server",
        "the database system is starting up", "the database system is shutting down",
        "the database system is not yet accepting connections",
        "the database system is in recovery mode", "too many clients already"}) {
    if (Contains(m, part)) return true;
  }
  return false;
}

std::string DatabaseAddress(const std::string& url) {
  std::string rest = url;
  for (std::string_view scheme : {"postgresql://", "postgres://"}) {
    if (rest.rfind(scheme, 0) == 0) rest = rest.substr(scheme.size());
  }
  std::string query;
  if (auto q = rest.find('?'); q != std::string::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  std::string authority = rest.substr(0, rest.find('/'));
  // user:password@ goes (the last '@': a password may hold one).
  if (auto at = authority.rfind('@'); at != std::string::npos) authority = authority.substr(at + 1);
  // ?host=/run/postgresql (a socket dir) names the host in the query.
  const bool no_host = authority.empty() || authority.front() == ':';
  for (size_t pos = 0; no_host && pos < query.size();) {
    const size_t amp = std::min(query.find('&', pos), query.size());
    if (query.compare(pos, 5, "host=") == 0)
      authority = query.substr(pos + 5, amp - pos - 5) + authority;
    pos = amp + 1;
  }
  if (authority.empty() || authority.front() == ':') authority = "localhost" + authority;
  if (authority.find(',') != std::string::npos) return authority;  // several hosts: as written
  const bool has_port = authority.front() == '[' ? authority.find("]:") != std::string::npos
                                                 : authority.find(':') != std::string::npos;
  if (!has_port) authority += ":5432";
  return authority;
}

std::string WithConnectTimeout(const std::string& url, int seconds) {
  if (url.find("connect_timeout=") != std::string::npos) return url;
  return fmt::format("{}{}connect_timeout={}", url, url.find('?') == std::string::npos ? '?' : '&',
                     seconds);
}

}  // namespace maestro::cli
