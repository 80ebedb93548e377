// Start in any order (issue 47): the real `maestro worker` and `maestro
// serve` on a real PostgreSQL, started as compose and Kubernetes start them —
// the worker before serve, serve before its database.
//
// - A worker started first on an empty data dir waits for serve's marker
//   (its --health-listen /api/ready says so: 503 naming the marker; /api/live
//   200), then runs a task created on the API of a `serve` (workers: 0)
//   started later: the task can only have run on the worker.
// - SIGTERM ends a worker's wait at once, exit 0.
// - A marker naming another database fails at once (exit 1, naming it), and
//   `startup_wait_ms: 0` keeps the immediate failure on a missing marker; a
//   taken --health-listen port exits 1 naming it.
// - serve on a PostgreSQL port nothing listens on waits (logging the address
//   without the password), and starts once a forwarder (socat, in front of
//   the test's PostgreSQL) listens there; when the forwarder dies, /api/ready
//   is 503 "database" while /api/live still answers 200.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <map>

#include "pg_cluster.h"
#include "task_shapes.h"

namespace maestro::testing {
namespace {

namespace sh = shapes;

std::pair<int, Json> Probe(int port, const std::string& path) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(2, 0);
  c.set_read_timeout(10, 0);
  auto r = c.Get(path);
  if (!r) return {0, Json()};
  return {r->status, Json::parse(r->body, nullptr, false)};
}

// Polls `path` on `port` until it answers `status` (or `limit` passes).
std::pair<int, Json> ProbeUntil(int port, const std::string& path, int status,
                                std::chrono::milliseconds limit) {
  std::pair<int, Json> got;
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    got = Probe(port, path);
    if (got.first == status) return got;
    std::this_thread::sleep_for(50ms);
  }
  return got;
}

bool WaitForText(const Process& p, const std::string& text, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (Contains(p.Stderr(), text)) return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

class StartOrderTest : public PgClusterTest {
 protected:
  // What ServeEngineTest::Start writes — the fake with `replies`, maestro.yaml
  // (workers: 0, the database) — without starting serve.
  void WriteConfig(const Json& replies, const std::string& more = "") {
    std::ofstream(dir_.File("script.json"))
        << Json{{"replies", replies}, {"default", {{"text", "script exhausted"}}}}.dump();
    fake_ = std::make_unique<FakeLlmProcess>(
        std::vector<std::string>{"--script", dir_.File("script.json")});
    port_ = FreePort();
    threads_ = 1;
    std::ofstream(dir_.File("maestro.yaml"))
        << "workers: 0\nlog:\n  level: info\n"
        << "jobs:\n  poll_interval_ms: 50\n  heartbeat_ms: 200\n  shutdown_grace_ms: 1000\n"
        << "llm:\n  base_url: " << fake_->base_url()
        << "\n  model: fake\n  max_attempts: 1\n  context_length: 1000000\n"
        << more << extra_config_;
  }
  std::string Marker() const { return DataDir() + "/.maestro-database-id"; }
};

TEST_F(StartOrderTest, AWorkerStartedBeforeServeWaitsForTheMarkerThenRunsTasks) {
  WriteConfig(sh::Plain("<<S1>>", "answer-S1"));
  const int health = FreePort();
  auto worker = SpawnWorker("first", DataDir(), {},
                            {"--health-listen", "127.0.0.1:" + std::to_string(health)});
  auto [live, live_body] = ProbeUntil(health, "/api/live", 200, 20s);
  ASSERT_EQ(live, 200) << worker->Stderr();
  EXPECT_EQ(live_body, (Json{{"live", true}}));
  ASSERT_TRUE(WaitForText(*worker, "waiting for the data dir marker", 20s)) << worker->Stderr();
  auto [code, body] = Probe(health, "/api/ready");
  EXPECT_EQ(code, 503) << body.dump();
  EXPECT_EQ(body["waiting_for"], Json::array({"data_dir marker " + Marker()})) << body.dump();
  // Still waiting, not exited, a while later; nothing else on the port.
  std::this_thread::sleep_for(1200ms);
  EXPECT_TRUE(worker->running()) << worker->Stderr();
  EXPECT_EQ(Probe(health, "/api/ready").first, 503);
  EXPECT_EQ(Probe(health, "/api/local/tasks").first, 404);

  StartServe();  // API only (workers: 0): it writes the marker
  ASSERT_FALSE(HasFatalFailure());
  auto [ready, ready_body] = ProbeUntil(health, "/api/ready", 200, 20s);
  ASSERT_EQ(ready, 200) << ready_body.dump() << "\n" << worker->Stderr();
  EXPECT_EQ(ready_body["workers"], (Json{{"configured", 1}, {"running", true}}));
  EXPECT_TRUE(Contains(worker->Stderr(), "there after")) << worker->Stderr();
  // serve's own readiness: no pool needed with workers: 0.
  EXPECT_EQ(Probe(port_, "/api/ready").first, 200);

  Json c = Create("<<S1>> say hello");
  Json job = WaitStatus(c, "succeeded", 30s);
  EXPECT_EQ(job["result"], "answer-S1") << job.dump() << "\n" << worker->Stderr();
}

TEST_F(StartOrderTest, SigtermStopsAWaitingWorkerAtOnce) {
  WriteConfig(sh::Plain("<<S2>>", "unused"));
  auto worker = SpawnWorker("waiting", DataDir());
  ASSERT_TRUE(WaitForText(*worker, "waiting for the data dir marker", 20s)) << worker->Stderr();
  const auto t0 = std::chrono::steady_clock::now();
  worker->Signal(SIGTERM);
  auto code = worker->Wait(2s);
  ASSERT_TRUE(code.has_value()) << "a waiting worker ignored SIGTERM:\n" << worker->Stderr();
  EXPECT_EQ(*code, 0) << worker->Stderr();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  EXPECT_TRUE(Contains(worker->Stderr(), "signal 15 while waiting")) << worker->Stderr();
}

TEST_F(StartOrderTest, AnotherDatabasesMarkerOrNoWaitFailsAtOnce) {
  WriteConfig(sh::Plain("<<S3>>", "unused"));
  TempDir other;
  std::ofstream(other.File(".maestro-database-id")) << "another-database-id\n";
  const auto t0 = std::chrono::steady_clock::now();
  auto foreign = SpawnWorker("foreign", other.path());  // the default wait: 5 minutes
  auto code = foreign->Wait(20s);
  ASSERT_TRUE(code.has_value()) << "waited on another database's marker:\n" << foreign->Stderr();
  EXPECT_EQ(*code, 1);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  EXPECT_TRUE(Contains(foreign->Stderr(), ".maestro-database-id")) << foreign->Stderr();
  EXPECT_TRUE(Contains(foreign->Stderr(), "another-database-id")) << foreign->Stderr();
  EXPECT_FALSE(Contains(foreign->Stderr(), "waiting for")) << foreign->Stderr();

  TempDir empty;
  auto no_wait = SpawnWorker("nowait", empty.path(), {{"MAESTRO_STARTUP_WAIT_MS", "0"}});
  code = no_wait->Wait(20s);
  ASSERT_TRUE(code.has_value()) << no_wait->Stderr();
  EXPECT_EQ(*code, 1);
  EXPECT_TRUE(Contains(no_wait->Stderr(), "is missing")) << no_wait->Stderr();
  EXPECT_FALSE(Contains(no_wait->Stderr(), "waiting for")) << no_wait->Stderr();
}

// The probe port is taken: exit 1 naming the address and the setting,
// before any wait.
TEST_F(StartOrderTest, ATakenProbePortExitsOneNamingIt) {
  WriteConfig(sh::Plain("<<S5>>", "unused"));
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string taken = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  TempDir empty;  // no marker: it would wait, but the port check comes first
  auto worker = SpawnWorker("taken", empty.path(), {}, {"--health-listen", taken});
  auto code = worker->Wait(20s);
  close(fd);
  ASSERT_TRUE(code.has_value()) << worker->Stderr();
  EXPECT_EQ(*code, 1);
  EXPECT_TRUE(Contains(worker->Stderr(), taken)) << worker->Stderr();
  EXPECT_TRUE(Contains(worker->Stderr(), "--health-listen")) << worker->Stderr();
  EXPECT_FALSE(Contains(worker->Stderr(), "waiting for")) << worker->Stderr();
}

// serve before its database: the URL names a port nothing listens on yet
// (and a password, never logged); a forwarder to the real PostgreSQL
// starts there later.
TEST_F(StartOrderTest, ServeWaitsForADatabaseThatComesUpLater) {
  if (access("/usr/bin/socat", X_OK) != 0) {
    GTEST_SKIP() << "socat is missing (scripts/setup.sh installs it)";
  }
  MAESTRO_PG_SERVER_OR_SKIP(pg);
  const int proxy = FreePort();
  // postgresql://postgres@127.0.0.1:<pg>/<db> → a password and the proxy's port.
  std::string url = url_;
  const std::string from = "postgres@127.0.0.1:" + std::to_string(pg->port());
  ASSERT_NE(url.find(from), std::string::npos) << url;
  url.replace(url.find(from), from.size(), "postgres:hunter2@127.0.0.1:" + std::to_string(proxy));
  extra_config_.clear();
  WriteConfig(sh::Plain("<<S4>>", "answer-S4"), "database_url: " + url + "\n");
  StartServe({}, /*wait_healthy=*/false);
  const std::string address = "the database at 127.0.0.1:" + std::to_string(proxy);
  ASSERT_TRUE(WaitForText(*serve_, address + " (attempt 2", 20s)) << serve_->Stderr();
  EXPECT_TRUE(serve_->running());
  EXPECT_EQ(Probe(port_, "/api/health").first, 0);  // not listening while it waits

  // setsid: the forwarder and its forked connections are one process group.
  auto forwarder = std::make_unique<Process>(
      std::vector<std::string>{
          "/usr/bin/setsid", "/usr/bin/socat",
          "TCP-LISTEN:" + std::to_string(proxy) + ",bind=127.0.0.1,reuseaddr,fork",
          "TCP:127.0.0.1:" + std::to_string(pg->port())},
      std::map<std::string, std::string>{}, dir_.File("socat.out"), dir_.File("socat.err"));
  auto [health, health_body] = ProbeUntil(port_, "/api/health", 200, 20s);
  ASSERT_EQ(health, 200) << serve_->Stderr() << forwarder->Stderr();
  EXPECT_EQ(Probe(port_, "/api/ready").first, 200);
  const std::string log = serve_->Stderr();
  EXPECT_TRUE(Contains(log, address + ": there after")) << log;
  EXPECT_FALSE(Contains(log, "hunter2")) << log;

  // The database goes away: not ready, still live.
  kill(-forwarder->pid(), SIGKILL);
  forwarder->Wait(5s);
  auto [gone, gone_body] = ProbeUntil(port_, "/api/ready", 503, 20s);
  EXPECT_EQ(gone, 503) << gone_body.dump();
  EXPECT_EQ(gone_body["waiting_for"], Json::array({"database"})) << gone_body.dump();
  EXPECT_EQ(Probe(port_, "/api/live"), (std::pair<int, Json>{200, Json{{"live", true}}}));
  EXPECT_EQ(gone_body.dump().find("hunter2"), std::string::npos);
}

}  // namespace
}  // namespace maestro::testing
