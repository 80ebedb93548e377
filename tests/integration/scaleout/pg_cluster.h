// PgClusterTest: maestro scaled out on PostgreSQL, as an operator runs it —
// one throwaway PostgreSQL database (PgServer), one `maestro serve
// --workers 0` (the API only), K `maestro worker --workers N` processes and
// one `maestro-fakellm`, all on one maestro.yaml (with `database_url`) and
// one data_dir. serve starts first: it writes the data dir's database
// marker that every worker checks (src/cli/shared_data_dir.h).
//
// It is a ServeEngineTest (serve_fixture.h), so the HTTP helpers (Create,
// Post, Get, WaitJob, Events, FakeRequests...) are the same; this adds the
// database (SetUp: skips, or fails under TEST_REQUIRE_POSTGRES=1, when
// PostgreSQL cannot start) and the worker processes: start, kill -9,
// restart. Every process is killed and reaped by the fixture's members'
// destructors, also when a test fails half-way; when the test process
// itself dies (a sanitizer report, a fatal signal) no destructor runs, so a
// crash hook SIGKILLs serve, the workers and the fake first (the shared
// PostgreSQL server is PgServer's: it is not covered).
//
// Thread safety: one test thread (the crash hook only reads pids).
#pragma once

#include <signal.h>

#include <atomic>
#include <fstream>
#include <map>
#include <sstream>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

#include "serve_fixture.h"
#include "support/pg_server.h"

namespace maestro::testing {

class PgClusterTest : public ServeEngineTest {
 protected:
  void SetUp() override {
    InstallCrashHook();
    current_ = this;
    MAESTRO_PG_SERVER_OR_SKIP(pg);
    auto url = pg->CreateDatabase();
    ASSERT_TRUE(url.ok()) << url.status().ToString();
    url_ = *url;
    extra_config_ += "database_url: " + url_ + "\n";
  }
  void TearDown() override { current_ = nullptr; }

  // The fake with `replies` and serve (API only), then `workers` worker
  // processes of `threads` worker threads each. `jobs_config` adds keys of
  // the `jobs:` section (e.g. short leases).
  void StartCluster(const Json& replies, int workers, int threads,
                    const std::string& jobs_config = "") {
    extra_jobs_config_ = jobs_config;
    threads_ = threads;
    Start(replies, /*workers=*/0);  // serve: `workers: 0` in maestro.yaml
    if (HasFatalFailure()) return;
    for (int i = 0; i < workers; ++i) {
      workers_.emplace_back();
      runs_.push_back(0);
      StartWorker(i);
      if (HasFatalFailure()) return;
    }
  }

  // Starts worker `i` (again) and waits until it logged that it runs.
  void StartWorker(int i) {
    const std::string name = "worker" + std::to_string(i) + "-" + std::to_string(++runs_.at(i));
    workers_[i] = SpawnWorker(name, DataDir());
    const Process& w = *workers_[i];
    const auto end = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < end) {
      if (Contains(w.Stderr(), "maestro worker: data_dir=")) return;
      if (!w.running()) break;
      std::this_thread::sleep_for(10ms);
    }
    FAIL() << "worker " << i << " did not start:\n" << w.Stderr();
  }
  // kill -9, reaped at once (as a crashed host).
  void KillWorker(int i) {
    workers_[i]->Signal(SIGKILL);
    auto code = workers_[i]->Wait(10s);
    EXPECT_EQ(code.value_or(-1), 128 + SIGKILL) << "worker " << i;
  }
  void RestartWorker(int i) {
    KillWorker(i);
    StartWorker(i);
  }

  // A `maestro worker` process on `data_dir`, logging to `name`.out/.err
  // in the test's dir, `env` added to its environment. Not a cluster member
  // unless StartWorker made it.
  std::unique_ptr<Process> SpawnWorker(const std::string& name, const std::string& data_dir,
                                       const std::map<std::string, std::string>& env = {},
                                       const std::vector<std::string>& args = {}) {
    std::map<std::string, std::string> all = {{"MAESTRO_DATA_DIR", data_dir}};
    for (const auto& [k, v] : env) all[k] = v;
    std::vector<std::string> argv = {MAESTRO_BIN, "--config",  dir_.File("maestro.yaml"),
                                     "worker",    "--workers", std::to_string(threads_)};
    argv.insert(argv.end(), args.begin(), args.end());
    return std::make_unique<Process>(argv, all, dir_.File(name + ".out"), dir_.File(name + ".err"));
  }

  // All events of a task, each once, in id (= commit) order; keyed by the
  // integer id so a paging bug shows as a failed check, not a crash
  // (ScaleoutFlowsTest.TheTaskStreamIsInIdOrder checks the order itself).
  Json EventsInOrder(const std::string& task_id) const {
    std::map<int64_t, Json> by_id;
    for (auto& e : Events(task_id)) by_id[std::stoll(e["id"].get<std::string>())] = e;
    Json out = Json::array();
    for (auto& [id, e] : by_id) out.push_back(e);
    return out;
  }

  // serve's log tail and every worker run's, for a failed wait.
  std::string LogTail() const override {
    std::string out = "--- serve:\n" + ServeEngineTest::LogTail();
    for (size_t i = 0; i < runs_.size(); ++i) {
      for (int run = 1; run <= runs_[i]; ++run) {
        const std::string name = "worker" + std::to_string(i) + "-" + std::to_string(run);
        std::ifstream in(dir_.File(name + ".err"));
        std::string err((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (err.size() > 2000) err = err.substr(err.size() - 2000);
        out += "--- " + name + ":\n" + err;
      }
    }
    return out;
  }

  std::string url_;  // the cluster's database
  int threads_ = 2;
  std::vector<std::unique_ptr<Process>> workers_;
  std::vector<int> runs_;  // starts per worker (log names)

 private:
  // The crash hook: SIGKILL every process of the running test's cluster.
  // Only reads pids and calls kill(2): the process is dying.
  static void KillCluster() {
    PgClusterTest* t = current_.load();
    if (!t) return;
    auto kill_one = [](pid_t pid) {
      if (pid > 0) kill(pid, SIGKILL);
    };
    for (const auto& w : t->workers_) {
      if (w) kill_one(w->pid());
    }
    if (t->serve_) kill_one(t->serve_->pid());
    if (t->fake_) kill_one(t->fake_->pid());
  }
  static void OnFatalSignal(int sig) {
    KillCluster();
    signal(sig, SIG_DFL);
    raise(sig);
  }
  static void InstallCrashHook() {
    static const bool installed = [] {
#if defined(__SANITIZE_ADDRESS__)
      // The sanitizers report SEGV & co. themselves, then call this.
      __sanitizer_set_death_callback(&KillCluster);
      signal(SIGABRT, &OnFatalSignal);
#else
      for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) signal(sig, &OnFatalSignal);
#endif
      return true;
    }();
    (void)installed;
  }
  static inline std::atomic<PgClusterTest*> current_{nullptr};
};

// The frames of an SSE response, each with the wall-clock time (ms) it was
// read. Reads `path` until `stop(frame)` or `limit`.
struct SseFrame {
  std::string id, event, data;
  int64_t received_ms = 0;
};

inline int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline std::vector<SseFrame> ReadSse(int port, const std::string& path,
                                     const std::function<bool(const SseFrame&)>& stop,
                                     std::chrono::seconds limit = 30s) {
  httplib::Client cl("127.0.0.1", port);
  cl.set_bearer_token_auth("tok");
  cl.set_read_timeout(limit.count(), 0);
  std::vector<SseFrame> got;
  std::string buf;
  const auto end = std::chrono::steady_clock::now() + limit;
  cl.Get(path, httplib::Headers{{"Accept", "text/event-stream"}}, [&](const char* data, size_t n) {
    buf.append(data, n);
    for (size_t pos; (pos = buf.find("\n\n")) != std::string::npos;) {
      SseFrame f;
      f.received_ms = WallMs();
      std::istringstream lines(buf.substr(0, pos));
      buf.erase(0, pos + 2);
      for (std::string l; std::getline(lines, l);) {
        if (l.rfind("id: ", 0) == 0) f.id = l.substr(4);
        if (l.rfind("event: ", 0) == 0) f.event = l.substr(7);
        if (l.rfind("data: ", 0) == 0) f.data = l.substr(6);
      }
      if (f.event.empty() && f.data.empty()) continue;  // a keep-alive comment
      got.push_back(f);
      if (stop(got.back())) return false;
    }
    return std::chrono::steady_clock::now() < end;
  });
  return got;
}

}  // namespace maestro::testing
