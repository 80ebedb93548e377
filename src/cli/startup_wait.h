// StartupWait: bounded waiting, with backoff, for what a long-running
// maestro process needs before it can serve — its PostgreSQL accepting
// connections, and for a `maestro worker` the data dir's marker that
// `maestro serve` writes (cli/shared_data_dir.h). Compose and Kubernetes
// start every container at once, so the API, the workers and the database
// come up in any order and restart independently: a process waits for the
// others instead of exiting.
//
// Where it sits: called by OpenStore (cli/runtime.cc) around the store's
// open and the marker check, on the main thread, before anything serves.
// What is retried is decided by a predicate (IsDatabaseStarting,
// IsMarkerMissing): a bad URL, a refused password or a marker naming
// another database still fail at once with their message.
//
// Each retry is logged once (warn): what is awaited, the attempt, the next
// delay and the error. The backoff doubles from `initial` to `max_backoff`;
// after `max_wait` the last error is returned with how long was waited.
// SIGTERM/SIGINT end a wait at once (the sleep is a sigtimedwait on them:
// main() blocks both in every thread), as kCancelled.
//
// Thread safety: WaitFor runs on the calling thread only; the helpers are
// pure.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "core/clock.h"
#include "core/status.h"

namespace maestro::cli {

struct StartupWaitOptions {
  // 0: one attempt, its error returned as is (the behaviour before waiting).
  std::chrono::milliseconds max_wait{300'000};
  std::chrono::milliseconds initial{250};
  std::chrono::milliseconds max_backoff{5'000};
  // What is awaited, for the log: "the database at db:5432".
  std::string what;
  // Seams for tests. `sleep` sleeps `d` and returns 0, or the number of the
  // stop signal that ended the sleep early (the wait then ends).
  ::maestro::Clock* clock = ::maestro::SystemClock::Default();  // qualified: unity builds
  std::function<int(std::chrono::milliseconds d)> sleep;        // unset: SleepUnlessStopSignal
  std::function<void(const std::string& line)> log;             // unset: spdlog::warn
};

// Calls `attempt` until it succeeds (Ok), fails with an error `retryable`
// rejects (that error, as is), `max_wait` has passed since the first call
// (the last error, its code kept, its message ending "(waited N s for
// <what>; startup_wait_ms)"), or a stop signal arrives during a sleep
// (kCancelled "signal N while waiting for <what>").
Status WaitFor(const std::function<Status()>& attempt,
               const std::function<bool(const Status&)>& retryable,
               const StartupWaitOptions& options);

// Sleeps `d` in sigtimedwait on SIGTERM and SIGINT: 0 when the time passed,
// else the signal (consumed: the caller stops).
int SleepUnlessStopSignal(std::chrono::milliseconds d);

// True for a PostgreSQL that is not there yet or not accepting connections
// yet (refused, no socket, unresolvable or unreachable host, starting up,
// shutting down, too many clients, a dropped connection: SQLSTATE 08xxx,
// 57P0x, 53300). False for everything an operator must fix: a bad URL or
// option, a refused password or pg_hba entry, a missing database or role.
bool IsDatabaseStarting(const Status& st);

// "host:port" of a postgresql:// URL, without its user and password (for
// the log): "db:5432"; the port is 5432 when the URL names none, the host
// "localhost" when it names none (libpq's socket).
std::string DatabaseAddress(const std::string& url);

// `url` with `connect_timeout=<seconds>` unless it sets one: a connect to
// an address that drops packets would otherwise block an attempt (and a
// SIGTERM during it, and a readiness probe) for the kernel's ~2 minutes of
// SYN retries.
std::string WithConnectTimeout(const std::string& url, int seconds);

}  // namespace maestro::cli
