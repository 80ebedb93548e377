// cli::WaitFor (cli/startup_wait.h) on a fake clock and sleeper: the backoff
// sequence and its log lines, the bound and its message, a non-retryable
// error failing at once, max_wait 0 as before; a real SIGTERM ending a real
// sleep; the retry predicate on libpq's real messages; the log's address
// without the password.
#include "cli/startup_wait.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <thread>
#include <vector>

#include "core/config.h"
#include "support/temp_dir.h"

namespace maestro::cli {
namespace {

using namespace std::chrono_literals;

const Status kRefused = Unavailable(
    "postgres connect: connection to server at \"127.0.0.1\", port 5999 failed: Connection "
    "refused\n\tIs the server running on that host and accepting TCP/IP connections?");

struct FakeWait {
  FakeClock clock{1'000'000};
  std::vector<int64_t> sleeps;  // ms
  std::vector<std::string> lines;
  int stop_at_sleep = -1;  // the sleep (0-based) a "signal" ends

  StartupWaitOptions Options(std::chrono::milliseconds max_wait) {
    StartupWaitOptions o;
    o.max_wait = max_wait;
    o.what = "the database at db:5432";
    o.clock = &clock;
    o.sleep = [this](std::chrono::milliseconds d) {
      if (static_cast<int>(sleeps.size()) == stop_at_sleep) return SIGTERM;
      sleeps.push_back(d.count());
      clock.Advance(d.count());
      return 0;
    };
    o.log = [this](const std::string& l) { lines.push_back(l); };
    return o;
  }
};

TEST(StartupWaitTest, BacksOffFrom250MsDoublingTo5sAndLogsEachAttemptOnce) {
  FakeWait w;
  int calls = 0;
  Status st = WaitFor([&] { return ++calls < 9 ? kRefused : Status::Ok(); }, IsDatabaseStarting,
                      w.Options(300s));
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(calls, 9);
  EXPECT_EQ(w.sleeps, (std::vector<int64_t>{250, 500, 1000, 2000, 4000, 5000, 5000, 5000}));
  ASSERT_EQ(w.lines.size(), 9u);  // 8 waits and the "there after" line
  EXPECT_EQ(w.lines[2].rfind("waiting for the database at db:5432 (attempt 3, next in 1 s): ", 0),
            0u)
      << w.lines[2];
  EXPECT_NE(w.lines[2].find("Connection refused"), std::string::npos) << w.lines[2];
  EXPECT_NE(w.lines[0].find("next in 250 ms"), std::string::npos) << w.lines[0];
  // libpq's two-line message is one log line.
  EXPECT_NE(w.lines[0].find("refused Is the server running"), std::string::npos) << w.lines[0];
  EXPECT_NE(w.lines[8].find("there after 9 attempts"), std::string::npos) << w.lines[8];
}

TEST(StartupWaitTest, TheBoundEndsItWithTheLastErrorAndHowLongItWaited) {
  FakeWait w;
  int calls = 0;
  Status st = WaitFor(
      [&] {
        ++calls;
        return kRefused;
      },
      IsDatabaseStarting, w.Options(12s));
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find("Connection refused"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("(waited 12 s for the database at db:5432; startup_wait_ms)"),
            std::string::npos)
      << st.message();
  // 250+500+1000+2000+4000 = 7750, then the last sleep is cut to the bound.
  EXPECT_EQ(w.sleeps, (std::vector<int64_t>{250, 500, 1000, 2000, 4000, 4250}));
  EXPECT_EQ(calls, 7);  // one attempt at the bound itself
}

TEST(StartupWaitTest, ANonRetryableErrorFailsAtOnceAsIs) {
  FakeWait w;
  int calls = 0;
  const Status auth = Unavailable(
      "postgres connect: connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  "
      "password authentication failed for user \"maestro\"");
  Status st = WaitFor(
      [&] {
        ++calls;
        return auth;
      },
      IsDatabaseStarting, w.Options(300s));
  EXPECT_EQ(st.message(), auth.message());
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(w.sleeps.empty());
  EXPECT_TRUE(w.lines.empty());
}

TEST(StartupWaitTest, ZeroMaxWaitIsOneAttemptAsBefore) {
  FakeWait w;
  int calls = 0;
  Status st = WaitFor(
      [&] {
        ++calls;
        return kRefused;
      },
      IsDatabaseStarting, w.Options(0ms));
  EXPECT_EQ(st.message(), kRefused.message());  // no "(waited ...)"
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(w.sleeps.empty());
}

TEST(StartupWaitTest, AStopSignalDuringASleepEndsTheWaitAsCancelled) {
  FakeWait w;
  w.stop_at_sleep = 2;
  int calls = 0;
  Status st = WaitFor(
      [&] {
        ++calls;
        return kRefused;
      },
      IsDatabaseStarting, w.Options(300s));
  EXPECT_EQ(st.code(), StatusCode::kCancelled);
  EXPECT_NE(st.message().find("signal 15 while waiting for the database at db:5432"),
            std::string::npos)
      << st.message();
  EXPECT_EQ(calls, 3);
}

// startup_wait_ms is any int64: the largest still waits (no overflow of
// the deadline under UBSan) until a signal ends it.
TEST(StartupWaitTest, TheLargestBoundDoesNotOverflow) {
  FakeWait w;
  w.stop_at_sleep = 3;
  Status st = WaitFor([] { return kRefused; }, IsDatabaseStarting,
                      w.Options(std::chrono::milliseconds::max()));
  EXPECT_EQ(st.code(), StatusCode::kCancelled);
  EXPECT_EQ(w.sleeps, (std::vector<int64_t>{250, 500, 1000}));
}

// The real sleeper: SIGTERM (blocked, as main() blocks it in every thread)
// sent by another thread ends a 10 s sleep at once and is consumed.
TEST(StartupWaitTest, SigtermEndsARealSleepPromptly) {
  sigset_t set, old;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &set, &old), 0);
  std::thread sender([] {
    std::this_thread::sleep_for(100ms);
    kill(getpid(), SIGTERM);
  });
  const auto t0 = std::chrono::steady_clock::now();
  const int sig = SleepUnlessStopSignal(10s);
  const auto took = std::chrono::steady_clock::now() - t0;
  sender.join();
  EXPECT_EQ(sig, SIGTERM);
  EXPECT_LT(took, 2s);
  EXPECT_EQ(SleepUnlessStopSignal(50ms), 0);  // consumed: nothing pending
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

TEST(StartupWaitTest, RetriesAServerNotUpYetNeverOneAnOperatorMustFix) {
  for (const char* m :
       {"postgres connect: connection to server at \"127.0.0.1\", port 5999 failed: Connection "
        "refused",
        "postgres connect: connection to server on socket \"/run/postgresql/.s.PGSQL.5432\" "
        "failed: No such file or directory",
        "postgres connect: could not translate host name \"db\" to address: Temporary failure "
        "in name resolution",
        "postgres connect: connection to server at \"10.0.0.5\", port 5432 failed: FATAL:  the "
        "database system is starting up",
        "postgres connect: connection to server at \"db\" (10.0.0.5), port 5432 failed: FATAL:  "
        "sorry, too many clients already",
        "postgres migrate: [57P01] FATAL:  terminating connection due to administrator command",
        "postgres query: [08006] server closed the connection unexpectedly"}) {
    EXPECT_TRUE(IsDatabaseStarting(Unavailable(m))) << m;
  }
  for (const char* m :
       {"postgres connect: connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  "
        "password authentication failed for user \"maestro\"",
        "postgres connect: connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  "
        "database \"maestro\" does not exist",
        "postgres connect: invalid URI query parameter: \"sslmod\"",
        "postgres connect: connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  no "
        "pg_hba.conf entry for host \"10.0.0.9\""}) {
    EXPECT_FALSE(IsDatabaseStarting(Unavailable(m))) << m;
  }
  // Only kUnavailable: a refused write or a bug is never waited on.
  EXPECT_FALSE(IsDatabaseStarting(Internal("postgres connect: Connection refused")));
  EXPECT_FALSE(IsDatabaseStarting(Conflict("[08006] x")));
}

TEST(StartupWaitTest, TheAddressInTheLogCarriesNoUserOrPassword) {
  EXPECT_EQ(DatabaseAddress("postgresql://maestro:s3cr@t@db:5433/maestro"), "db:5433");
  EXPECT_EQ(DatabaseAddress("postgres://u:pw@db/maestro?sslmode=require"), "db:5432");
  EXPECT_EQ(DatabaseAddress("postgresql://u@[::1]:6000/x"), "[::1]:6000");
  EXPECT_EQ(DatabaseAddress("postgresql:///maestro?host=/run/postgresql"), "/run/postgresql:5432");
  EXPECT_EQ(DatabaseAddress("postgresql://"), "localhost:5432");
  EXPECT_EQ(DatabaseAddress("postgresql://u:pw@h1:5432,h2:5433/db"), "h1:5432,h2:5433");
  for (const char* url : {"postgresql://maestro:hunter2@db:5433/m", "postgresql://a:hunter2@/m"}) {
    EXPECT_EQ(DatabaseAddress(url).find("hunter2"), std::string::npos) << url;
  }
}

TEST(StartupWaitTest, AConnectGivesUpAfterATimeoutUnlessTheUrlSetsOne) {
  EXPECT_EQ(WithConnectTimeout("postgresql://u@db/m", 10),
            "postgresql://u@db/m?connect_timeout=10");
  EXPECT_EQ(WithConnectTimeout("postgresql://u@db/m?sslmode=require", 10),
            "postgresql://u@db/m?sslmode=require&connect_timeout=10");
  EXPECT_EQ(WithConnectTimeout("postgresql://u@db/m?connect_timeout=3", 10),
            "postgresql://u@db/m?connect_timeout=3");
}

// The two settings: defaults, the variables, and bad values refused naming
// the variable or the file's position.
TEST(StartupWaitTest, TheSettingsAreCheckedWhereTheyAreRead) {
  auto defaults = LoadConfig(std::nullopt, {});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->startup_wait_ms, 300'000);
  EXPECT_EQ(defaults->health_listen, "");
  auto set = LoadConfig(
      std::nullopt, {{"MAESTRO_STARTUP_WAIT_MS", "0"}, {"MAESTRO_HEALTH_LISTEN", "0.0.0.0:9091"}});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(set->startup_wait_ms, 0);
  EXPECT_EQ(set->health_listen, "0.0.0.0:9091");
  auto negative = LoadConfig(std::nullopt, {{"MAESTRO_STARTUP_WAIT_MS", "-5"}});
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("MAESTRO_STARTUP_WAIT_MS"), std::string::npos)
      << negative.status().message();
  testing::TempDir dir;
  const std::string path = dir.path() + "/maestro.yaml";
  std::ofstream(path) << "workers: 1\nhealth_listen: nope\n";
  auto bad = LoadConfig(path, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("maestro.yaml:2:"), std::string::npos)
      << bad.status().message();
  EXPECT_NE(bad.status().message().find("host:port"), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace maestro::cli
