// edge_bench: load on the HTTP edge of the real `maestro serve`, for two (or
// more) server binaries side by side in one run, e.g. the cpp-httplib build
// (one pool thread per connection) against the event-driven Beast build.
//
// For each client count N and each binary (interleaved, so machine noise
// hits both alike) a fresh server is started — temp data dir, 127.0.0.1, a
// free port, 8 workers, a maestro-fakellm whose replies stream slowly — and:
//   1. live jobs     8 running jobs, N SSE clients on their delta streams:
//                    how many connect, server RSS per connection, delivered
//                    delta delay (now − the delta's `at`, stamped on publish)
//   2. health storm  200 sequential GET /api/health while the N are streaming
//   3. creates       200 concurrent POST /api/local/tasks
//   4. after storm   the N clients close: time to the first health answer,
//                    then 50 health requests
//   5. slowloris     1,000 connections sending one header byte a second;
//                    50 GET /api/local/tasks meanwhile; who closes them, when
//   6. flood         a server restarted with a 500-connection cap; 1,000
//                    idle connections: 503s, and health right after
// Every phase has a hard time bound; a server that stops answering shows as
// timeouts and "not sent" counts, never as a hang. The client is Boost.Asio
// with hand-written HTTP/SSE parsing (edge_http.h), on two threads: one for
// the load connections, one for the measured probes, so a probe's latency
// does not include queueing behind 10,000 streams in the client.
//
// Usage: edge_bench [--maestro LABEL=PATH ...] [--fakellm PATH]
//                   [--clients 1000,5000,10000] [--quick]
// Without --maestro: the build's own maestro (MAESTRO_BIN) labelled "this".
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/json.h"
#include "edge_client.h"
#include "fakellm_process.h"
#include "support/process.h"
#include "support/temp_dir.h"

extern char** environ;

namespace {

using edge::FetchResult;
using edge::Steady;
using maestro::Json;
using namespace std::chrono_literals;
namespace asio = edge::asio;

constexpr char kToken[] = "edge-bench-token";
constexpr int kJobs = 8;

std::string Str(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string Str(const char* format, ...) {
  va_list ap, again;
  va_start(ap, format);
  va_copy(again, ap);
  int n = std::vsnprintf(nullptr, 0, format, ap);
  va_end(ap);
  std::string out(static_cast<size_t>(std::max(n, 0)) + 1, '\0');
  std::vsnprintf(out.data(), out.size(), format, again);
  va_end(again);
  out.pop_back();
  return out;
}

void Log(const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); }

// ---------------------------------------------------------------- options

struct Options {
  std::vector<std::pair<std::string, std::string>> binaries;  // label, path
  std::string fakellm = MAESTRO_FAKELLM_BIN;
  std::vector<int> clients = {1000, 5000, 10000};
  bool quick = false;
};

// The hard bound of every phase. The default set keeps a full run of two
// binaries over 1000/5000/10000 clients under 15 minutes even when one
// binary times out everywhere.
struct Bounds {
  Steady::duration startup = 20s;       // until /api/health answers
  Steady::duration jobs_running = 20s;  // until the 8 jobs run
  Steady::duration connect = 20s;       // N SSE clients get their 200
  Steady::duration window = 10s;        // delta delays are recorded
  Steady::duration storm = 20s;         // the 200 sequential health requests
  Steady::duration first_answer = 15s;  // after the storm: first health answer
  Steady::duration after = 10s;         // after the storm: 50 health requests
  Steady::duration slow_requests = 20s;
  Steady::duration slow_close = 10s;  // from the slowloris connect: watch for closes
  Steady::duration flood_wait = 3s;   // for the 503s (and header-timeout closes)
  Steady::duration flood_health = 10s;
  int slow_connections = 1000, flood_connections = 1000, flood_cap = 500;
};

Bounds QuickBounds() {
  Bounds b;
  b.connect = 8s;
  b.window = 4s;
  b.storm = 6s;
  b.first_answer = 6s;
  b.after = 5s;
  b.slow_requests = 8s;
  b.slow_close = 6s;
  b.flood_health = 5s;
  return b;
}

std::vector<int> ParseCounts(const std::string& s) {
  std::vector<int> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoi(item));
  return out;
}

std::optional<Options> ParseArgs(int argc, char** argv) {
  Options o;
  bool clients_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool has_value = i + 1 < argc;
    if (a == "--maestro" && has_value) {
      std::string v = argv[++i];
      auto eq = v.find('=');
      if (eq == std::string::npos) return std::nullopt;
      o.binaries.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else if (a == "--fakellm" && has_value) {
      o.fakellm = argv[++i];
    } else if (a == "--clients" && has_value) {
      o.clients = ParseCounts(argv[++i]);
      clients_given = true;
    } else if (a == "--quick") {
      o.quick = true;
    } else {
      return std::nullopt;
    }
  }
  if (o.binaries.empty()) o.binaries.emplace_back("this", MAESTRO_BIN);
  if (o.quick && !clients_given) o.clients = {200};
  return o;
}

// 10,000 clients plus the server's side of them need far more than the
// usual 1024 descriptors; the servers inherit the raised limit.
void RaiseFdLimit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  getrlimit(RLIMIT_NOFILE, &rl);
  Log(Str("edge_bench: RLIMIT_NOFILE soft=%llu hard=%llu",
          static_cast<unsigned long long>(rl.rlim_cur),
          static_cast<unsigned long long>(rl.rlim_max)));
}

// ---------------------------------------------------------------- figures

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(rank, v.size() - 1)];
}

std::string Ms(double ms) { return ms < 10 ? Str("%.2f", ms) : Str("%.1f", ms); }

// One table per scenario: a row per figure, a column per run ("old@1000").
class Table {
 public:
  explicit Table(std::string title, std::string note = "")
      : title_(std::move(title)), note_(std::move(note)) {}
  void Set(const std::string& col, const std::string& row, const std::string& value) {
    if (std::find(cols_.begin(), cols_.end(), col) == cols_.end()) cols_.push_back(col);
    if (std::find(rows_.begin(), rows_.end(), row) == rows_.end()) rows_.push_back(row);
    cells_[{row, col}] = value;
  }
  std::string Get(const std::string& row, const std::string& col) const { return Cell(row, col); }
  void Print() const {
    size_t w0 = 8;
    for (const auto& r : rows_) w0 = std::max(w0, r.size());
    std::vector<size_t> w;
    for (const auto& c : cols_) {
      size_t cw = c.size();
      for (const auto& r : rows_) cw = std::max(cw, Cell(r, c).size());
      w.push_back(cw);
    }
    std::printf("\n== %s ==\n", title_.c_str());
    if (!note_.empty()) std::printf("%s\n", note_.c_str());
    std::printf("%-*s", static_cast<int>(w0), "");
    for (size_t i = 0; i < cols_.size(); ++i) {
      std::printf("  %*s", static_cast<int>(w[i]), cols_[i].c_str());
    }
    std::printf("\n");
    for (const auto& r : rows_) {
      std::printf("%-*s", static_cast<int>(w0), r.c_str());
      for (size_t i = 0; i < cols_.size(); ++i) {
        std::printf("  %*s", static_cast<int>(w[i]), Cell(r, cols_[i]).c_str());
      }
      std::printf("\n");
    }
  }

 private:
  std::string Cell(const std::string& row, const std::string& col) const {
    auto it = cells_.find({row, col});
    return it == cells_.end() ? "-" : it->second;
  }
  std::string title_, note_;
  std::vector<std::string> cols_, rows_;
  std::map<std::pair<std::string, std::string>, std::string> cells_;
};

struct Tables {
  Table live{"1. live jobs: N SSE clients on 8 streaming jobs (one delta per job every 100 ms)",
             "delay = client wall clock - the delta's `at` (whole ms, truncated: +0..1 ms); "
             "only deltas published after the client's subscription are timed"};
  Table storm{"2. health during the storm (200 sequential GET /api/health, 5 s timeout each)"};
  Table creates{"3. creates under load (200 concurrent POST /api/local/tasks, 10 s timeout)"};
  Table after{"4. after the storm (all SSE clients closed)"};
  Table slow{"5. slowloris (1,000 never-ending request heads, 1 byte/s)"};
  Table flood{"6. connection flood (server cap 500, 1,000 idle connections)"};
};

// Latencies of probes that got the wanted status, and what became of the rest.
struct Probes {
  std::vector<double> ok_ms;
  int timeouts = 0, errors = 0, unsent = 0;
  std::map<int, int> other_status;
  double wall_ms = 0;

  void Add(const FetchResult& r, int want) {
    if (r.kind == FetchResult::kTimeout) {
      ++timeouts;
    } else if (r.kind == FetchResult::kError) {
      ++errors;
    } else if (r.status == want) {
      ok_ms.push_back(r.ms);
    } else {
      ++other_status[r.status];
    }
  }
  std::string Others() const {
    std::string s;
    for (const auto& [status, n] : other_status)
      s += Str("%s%dx%d", s.empty() ? "" : " ", status, n);
    return s.empty() ? "0" : s;
  }
  std::string P(double p) const { return ok_ms.empty() ? "n/a" : Ms(Percentile(ok_ms, p)); }
};

void SetProbeRows(Table& t, const std::string& col, const std::string& what, const Probes& p,
                  int sent_of) {
  t.Set(col, what + " ok", Str("%zu/%d", p.ok_ms.size(), sent_of));
  t.Set(col, what + " p50 ms", p.P(0.5));
  t.Set(col, what + " p99 ms", p.P(0.99));
  t.Set(col, what + " max ms", p.P(1.0));
  t.Set(col, what + " timeouts", std::to_string(p.timeouts));
  t.Set(col, what + " conn errors", std::to_string(p.errors));
  t.Set(col, what + " other status", p.Others());
  t.Set(col, what + " not sent (phase bound)", std::to_string(p.unsent));
}

// ---------------------------------------------------------------- client threads

// Two io_contexts, one thread each: `load` carries the SSE / slowloris /
// flood connections, `probe` the requests whose latency is reported.
class ClientThreads {
 public:
  ClientThreads() {
    for (auto* io : {&load, &probe}) {
      guards_.emplace_back(asio::make_work_guard(*io));
      threads_.emplace_back([io] { io->run(); });
    }
  }
  ~ClientThreads() {
    guards_.clear();
    load.stop();
    probe.stop();
    for (auto& t : threads_) t.join();
  }
  asio::io_context load, probe;

  // CPU seconds the load thread has used: if it nears 100% of a window, the
  // client (not the server) limits the delivered-delta figures.
  double LoadCpuSeconds() {
    clockid_t id;
    timespec ts{};
    if (pthread_getcpuclockid(threads_[0].native_handle(), &id) != 0) return 0;
    clock_gettime(id, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
  }

 private:
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards_;
  std::vector<std::thread> threads_;
};

// n requests one after another, each on a new connection, until `bound`.
Probes SequentialProbes(asio::io_context& io, uint16_t port, const std::string& request, int n,
                        int want, Steady::duration timeout, Steady::duration bound) {
  Probes p;
  const auto t0 = Steady::now(), end = t0 + bound;
  for (int i = 0; i < n; ++i) {
    if (Steady::now() >= end) {
      p.unsent = n - i;
      break;
    }
    p.Add(edge::FetchSync(io, port, request, timeout), want);
  }
  p.wall_ms = edge::MsSince(t0);
  return p;
}

// n requests at once, each on its own connection; waits for all (each has
// its own deadline, so this ends by `timeout`).
Probes ConcurrentProbes(asio::io_context& io, uint16_t port, const std::string& request, int n,
                        int want, Steady::duration timeout) {
  auto results = std::make_shared<std::vector<FetchResult>>();
  auto all = std::make_shared<std::promise<void>>();
  auto done = all->get_future();
  const auto t0 = Steady::now();
  asio::post(io, [&io, port, request, n, timeout, results, all] {
    for (int i = 0; i < n; ++i) {
      edge::Fetch::Start(io, port, request, timeout, [n, results, all](const FetchResult& r) {
        results->push_back(r);
        if (static_cast<int>(results->size()) == n) all->set_value();
      });
    }
  });
  done.wait();
  Probes p;
  for (const auto& r : *results) p.Add(r, want);
  p.wall_ms = edge::MsSince(t0);
  return p;
}

// Polls `done` every 20 ms until it holds or `bound` passed; returns the
// seconds waited.
template <class Pred>
double WaitFor(Pred done, Steady::duration bound) {
  const auto t0 = Steady::now();
  while (!done() && Steady::now() - t0 < bound) std::this_thread::sleep_for(20ms);
  return edge::MsSince(t0) / 1000.0;
}

// ---------------------------------------------------------------- the server

// The fake model's only reply, for every request: a long text streamed two
// characters per delta, one delta every 100 ms (≈ 5 minutes), so every job is
// still streaming when the last phase that needs it ends. 100 ms (not less)
// keeps 10,000 clients at 100,000 deltas/s — what two cores can carry
// beside the server under test.
std::string FakeLlmScript() {
  std::string text;
  while (text.size() < 6000) text += "lorem ipsum dolor sit amet ";
  Json reply = {{"text", text}, {"chunk_chars", 2}, {"token_delay_ms", 100}, {"repeat", 0}};
  return Json{{"replies", Json::array({reply})}}.dump();
}

// maestro-fakellm plus `maestro serve` in a fresh temp dir; stopped (SIGTERM,
// then SIGKILL) by Stop() or the destructor.
class Server {
 public:
  Server(std::string binary, std::string fakellm)
      : binary_(std::move(binary)), fakellm_(std::move(fakellm)) {}
  ~Server() { Stop(); }
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Starts both and waits for /api/health; false (with `why`) on failure.
  bool Start(int max_connections, asio::io_context& probe, Steady::duration bound,
             std::string* why) {
    std::ofstream(dir_.File("script.json")) << FakeLlmScript();
    try {
      fake_ = std::make_unique<maestro::testing::FakeLlmProcess>(
          std::vector<std::string>{"--script", dir_.File("script.json"), "--log-level", "warn"},
          fakellm_);
    } catch (const std::exception& e) {
      *why = std::string("maestro-fakellm: ") + e.what();
      return false;
    }
    port_ = static_cast<uint16_t>(maestro::testing::FreePort());
    std::ofstream(dir_.File("maestro.yaml"))
        << "listen: 127.0.0.1:" << port_ << "\ndata_dir: " << dir_.File("data")
        << "\nworkers: " << kJobs << "\nadmin_token: " << kToken
        << "\nlog:\n  level: warn\njobs:\n  poll_interval_ms: 200\n  shutdown_grace_ms: 200\n"
        << "llm:\n  base_url: " << fake_->base_url()
        << "\n  model: fake\n  context_length: 1000000\n";
    if (!Spawn(max_connections)) {
      *why = "cannot spawn " + binary_;
      return false;
    }
    const auto t0 = Steady::now();
    while (Steady::now() - t0 < bound) {
      auto r = edge::FetchSync(probe, port_, edge::Request("GET", "/api/health"), 1s);
      if (r.kind == FetchResult::kOk && r.status == 200) return true;
      if (!Alive()) break;
      std::this_thread::sleep_for(50ms);
    }
    *why = "no /api/health answer; stderr: " + Tail(dir_.File("serve.err"));
    return false;
  }

  bool Alive() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) != pid_) return true;
    exit_ = WIFEXITED(status) ? Str("exit %d", WEXITSTATUS(status))
                              : Str("signal %d", WTERMSIG(status));
    pid_ = -1;
    return false;
  }
  std::string AliveText() { return Alive() ? "yes" : "NO (" + exit_ + ")"; }

  // SIGTERM, then SIGKILL after 4 s; says which one ended it.
  std::string Stop() {
    if (!Alive()) {
      fake_.reset();
      return exit_.empty() ? "not running" : "was dead (" + exit_ + ")";
    }
    const auto t0 = Steady::now();
    kill(pid_, SIGTERM);
    WaitFor([this] { return !Alive(); }, 4s);
    std::string how;
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
      how = "SIGKILL after 4 s";
    } else {
      how = Str("SIGTERM: %s in %.1f s", exit_.c_str(), edge::MsSince(t0) / 1000.0);
    }
    fake_.reset();
    return how;
  }

  // CPU seconds (user + system) the server has used, from /proc/<pid>/stat.
  double CpuSeconds() const {
    std::ifstream in("/proc/" + std::to_string(pid_) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t paren = stat.rfind(')');  // the command name may hold spaces
    if (paren == std::string::npos) return 0;
    std::istringstream fields(stat.substr(paren + 2));
    std::string f;
    double ticks = 0;
    for (int i = 3; fields >> f && i <= 15; ++i) {
      if (i == 14 || i == 15) ticks += std::strtod(f.c_str(), nullptr);  // utime, stime
    }
    return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
  }
  // VmRSS of the server in KiB (0 when unreadable).
  long RssKb() const {
    std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
    }
    return 0;
  }
  uint16_t port() const { return port_; }

 private:
  // The server's environment: ours without any MAESTRO_* (the config file
  // decides), plus the edge limits. The old build only warns about the
  // MAESTRO_HTTP_* names it does not know.
  bool Spawn(int max_connections) {
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
      if (std::string(*e).rfind("MAESTRO_", 0) != 0) env.emplace_back(*e);
    }
    env.push_back("MAESTRO_HTTP_MAX_CONNECTIONS=" + std::to_string(max_connections));
    env.push_back("MAESTRO_HTTP_MAX_STREAMS_PER_TOKEN=20000");
    env.push_back("MAESTRO_HTTP_HEADER_TIMEOUT_MS=2000");
    std::vector<std::string> args = {binary_, "--config", dir_.File("maestro.yaml"), "serve"};
    std::vector<char*> envp, argv;
    for (auto& s : env) envp.push_back(s.data());
    for (auto& s : args) argv.push_back(s.data());
    envp.push_back(nullptr);
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, dir_.File("serve.out").c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, dir_.File("serve.err").c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    bool ok = posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), envp.data()) == 0;
    posix_spawn_file_actions_destroy(&fa);
    if (!ok) pid_ = -1;
    return ok;
  }
  static std::string Tail(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string s = ss.str();
    return s.size() > 800 ? s.substr(s.size() - 800) : s;
  }

  maestro::testing::TempDir dir_;
  std::string binary_, fakellm_;
  std::unique_ptr<maestro::testing::FakeLlmProcess> fake_;
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  std::string exit_;
};

// ---------------------------------------------------------------- scenarios

struct Run {
  std::string col;  // "old@1000"
  int n;
  Bounds b;
  ClientThreads& io;
  Server& server;
  Tables& t;

  std::string AuthGet(const std::string& path) { return edge::Request("GET", path, kToken); }
  void Alive(Table& table, const std::string& phase) {
    std::string alive = server.AliveText();
    table.Set(col, "server alive after phase", alive);
    Log(Str("[%s] %s done; server alive: %s", col.c_str(), phase.c_str(), alive.c_str()));
  }
};

// `{"<what>":{"id":"…"}}` → the id, "" when the answer has another shape.
std::string IdOf(const std::string& body, const char* what) {
  Json j = Json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains(what) || !j[what].is_object()) return "";
  const Json& id = j[what]["id"];
  return id.is_string() ? id.get<std::string>() : "";
}

// `{"<what>":{"status":"…"}}` → the status, "" when the answer has another shape.
std::string StatusOf(const std::string& body, const char* what) {
  Json j = Json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains(what) || !j[what].is_object()) return "";
  const Json& st = j[what]["status"];
  return st.is_string() ? st.get<std::string>() : "";
}

// Creates kJobs tasks and waits until their jobs run (then 1 s more, for the
// first LLM deltas to flow). Returns the job ids that were created.
std::vector<std::string> StartJobs(Run& r) {
  std::vector<std::string> tasks, jobs;
  for (int i = 0; i < kJobs; ++i) {
    Json body = {{"instruction", Str("edge bench job %d: write a long text", i)}};
    auto res = edge::FetchSync(r.io.probe, r.server.port(),
                               edge::Request("POST", "/api/local/tasks", kToken, body.dump()), 10s);
    if (res.kind != FetchResult::kOk || res.status != 201) continue;
    auto task = IdOf(res.body, "task"), job = IdOf(res.body, "job");
    if (!task.empty() && !job.empty()) {
      tasks.push_back(task);
      jobs.push_back(job);
    }
  }
  auto all_running = [&] {
    for (const auto& task : tasks) {
      auto res =
          edge::FetchSync(r.io.probe, r.server.port(), r.AuthGet("/api/local/tasks/" + task), 5s);
      if (StatusOf(res.body, "latest_job") != "running") return false;
    }
    return true;
  };
  double waited = WaitFor(all_running, r.b.jobs_running);
  std::this_thread::sleep_for(1s);
  r.t.live.Set(r.col, "jobs created / running after s",
               Str("%zu / %s %.1f", jobs.size(), all_running() ? "all" : "NOT all", waited));
  return jobs;
}

using SseClients = std::vector<std::shared_ptr<edge::SseClient>>;

// Scenario 1; the clients stay open for scenarios 2 and 3.
SseClients LiveJobs(Run& r, const std::vector<std::string>& jobs, edge::SseStats& stats) {
  Table& t = r.t.live;
  const long rss_before = r.server.RssKb();
  SseClients clients;
  for (int i = 0; jobs.size() > 0 && i < r.n; ++i) {
    clients.push_back(std::make_shared<edge::SseClient>(r.io.load, r.server.port(),
                                                        jobs[i % jobs.size()], kToken, &stats));
  }
  asio::post(r.io.load, [clients] {
    for (auto& c : clients) c->Start();
  });
  const int n = static_cast<int>(clients.size());
  double took = WaitFor([&] { return stats.connected + stats.failed >= n; }, r.b.connect);
  const int connected = stats.connected;
  std::this_thread::sleep_for(1s);  // the last subscriptions settle before RSS is read
  const long rss_after = r.server.RssKb();
  t.Set(r.col, "SSE connected (200 + head)", Str("%d/%d", connected, r.n));
  t.Set(r.col, "time to connect s",
        connected == n ? Str("%.2f", took) : Str(">%.0f (bound)", took));
  t.Set(r.col, "SSE failed (error / non-200)", std::to_string(stats.failed.load()));
  t.Set(r.col, "server RSS before / after MB",
        Str("%.1f / %.1f", static_cast<double>(rss_before) / 1024.0,
            static_cast<double>(rss_after) / 1024.0));
  t.Set(r.col, "RSS KB per connection (all N)",
        n ? Str("%.1f", static_cast<double>(rss_after - rss_before) / n) : "n/a");

  const double server_cpu0 = r.server.CpuSeconds(), client_cpu0 = r.io.LoadCpuSeconds();
  stats.recording = true;
  const auto w0 = Steady::now();
  std::this_thread::sleep_for(r.b.window);
  stats.recording = false;
  const double window_s = edge::MsSince(w0) / 1000.0;
  const double server_cpu = r.server.CpuSeconds() - server_cpu0;
  const double client_cpu = r.io.LoadCpuSeconds() - client_cpu0;
  edge::Barrier(r.io.load);
  const auto& h = stats.delay;
  bool any = h.count() > 0;
  t.Set(r.col, "delta delay p50 ms", any ? Ms(h.Percentile(0.5)) : "n/a");
  t.Set(r.col, "delta delay p99 ms", any ? Ms(h.Percentile(0.99)) : "n/a");
  t.Set(r.col, "delta delay max ms", any ? Ms(h.max()) : "n/a");
  t.Set(r.col, "timed deltas received /s", Str("%.0f", static_cast<double>(h.count()) / window_s));
  t.Set(r.col, "deltas missed (id gaps)", std::to_string(stats.gaps));
  t.Set(r.col, "buffered deltas replayed (not timed)", std::to_string(stats.replayed));
  t.Set(r.col, "server CPU % in window", Str("%.0f", 100.0 * server_cpu / window_s));
  t.Set(r.col, "bench load thread CPU % in window", Str("%.0f", 100.0 * client_cpu / window_s));
  r.Alive(t, "1 live jobs");
  return clients;
}

void HealthStorm(Run& r) {
  Probes p = SequentialProbes(r.io.probe, r.server.port(), edge::Request("GET", "/api/health"), 200,
                              200, 5s, r.b.storm);
  SetProbeRows(r.t.storm, r.col, "health", p, 200);
  r.Alive(r.t.storm, "2 health storm");
}

void CreatesUnderLoad(Run& r, edge::SseStats& stats) {
  Json body = {{"instruction", "edge bench: a task created under load"}};
  Probes p = ConcurrentProbes(r.io.probe, r.server.port(),
                              edge::Request("POST", "/api/local/tasks", kToken, body.dump()), 200,
                              201, 10s);
  Table& t = r.t.creates;
  t.Set(r.col, "201 Created", Str("%zu/200", p.ok_ms.size()));
  t.Set(r.col, "timeouts", std::to_string(p.timeouts));
  t.Set(r.col, "conn errors", std::to_string(p.errors));
  t.Set(r.col, "other status", p.Others());
  t.Set(r.col, "wall time s", Str("%.2f", p.wall_ms / 1000.0));
  t.Set(r.col, "creates/s", Str("%.1f", static_cast<double>(p.ok_ms.size()) * 1000.0 / p.wall_ms));
  t.Set(r.col, "create p50 / p99 ms", p.P(0.5) + " / " + p.P(0.99));
  t.Set(r.col, "SSE still connected / ended by server",
        Str("%d / %d", stats.connected - stats.ended, stats.ended.load()));
  r.Alive(t, "3 creates");
}

// Scenario 4: close every SSE client, then how soon health answers again.
void AfterStorm(Run& r, SseClients& clients) {
  edge::Barrier(r.io.load, [&] {
    for (auto& c : clients) c->Close();
  });
  clients.clear();
  Table& t = r.t.after;
  const auto t0 = Steady::now();
  int attempts = 0;
  bool answered = false;
  while (!answered && Steady::now() - t0 < r.b.first_answer) {
    ++attempts;
    auto res =
        edge::FetchSync(r.io.probe, r.server.port(), edge::Request("GET", "/api/health"), 1s);
    answered = res.kind == FetchResult::kOk && res.status == 200;
  }
  double first_s = edge::MsSince(t0) / 1000.0;
  t.Set(r.col, "first health answer after close s",
        answered ? Str("%.3f", first_s) : Str("none in %.0f", first_s));
  t.Set(r.col, "attempts (1 s timeout each)", std::to_string(attempts));
  Probes p = SequentialProbes(r.io.probe, r.server.port(), edge::Request("GET", "/api/health"), 50,
                              200, 5s, r.b.after);
  SetProbeRows(t, r.col, "health", p, 50);
  r.Alive(t, "4 after storm");
}

void Slowloris(Run& r) {
  Table& t = r.t.slow;
  edge::SlowStats st;
  std::vector<std::shared_ptr<edge::SlowClient>> slow;
  for (int i = 0; i < r.b.slow_connections; ++i) {
    slow.push_back(std::make_shared<edge::SlowClient>(r.io.load, r.server.port(), &st));
  }
  asio::post(r.io.load, [slow] {
    for (auto& c : slow) c->Start();
  });
  const int total = r.b.slow_connections;
  WaitFor([&] { return st.connected + st.failed >= total; }, 5s);
  const auto t0 = Steady::now();
  Probes p = SequentialProbes(r.io.probe, r.server.port(), r.AuthGet("/api/local/tasks"), 50, 200,
                              5s, r.b.slow_requests);
  // Keep watching for closes until slow_close after the connects (the new
  // server's header timeout is 2 s; the old one may never close them).
  WaitFor([&] { return st.closed >= st.connected; }, r.b.slow_close - (Steady::now() - t0));
  const double watched_s = edge::MsSince(t0) / 1000.0;
  std::vector<double> close_s;
  edge::Barrier(r.io.load, [&] {
    close_s = st.close_s;
    for (auto& c : slow) c->Close();
  });
  t.Set(r.col, "slow connections open", Str("%d/%d", st.connected.load(), total));
  SetProbeRows(t, r.col, "GET tasks", p, 50);
  t.Set(r.col, "closed by server", Str("%d in %.1f s", st.closed.load(), watched_s));
  t.Set(r.col, "answered before close", std::to_string(st.answered.load()));
  t.Set(r.col, "close after s p50 / max",
        close_s.empty() ? "n/a"
                        : Str("%.2f / %.2f", Percentile(close_s, 0.5), Percentile(close_s, 1.0)));
  r.Alive(t, "5 slowloris");
}

// Scenarios 1–5 on one fresh server.
void MainRun(Run& r) {
  edge::SseStats stats;
  auto jobs = StartJobs(r);
  auto clients = LiveJobs(r, jobs, stats);
  HealthStorm(r);
  CreatesUnderLoad(r, stats);
  AfterStorm(r, clients);
  Slowloris(r);
  const std::string stop = r.server.Stop();
  r.t.slow.Set(r.col, "server stop", stop);
  Log(Str("[%s] stop: %s", r.col.c_str(), stop.c_str()));
}

// Scenario 6 on its own server with a 500-connection cap.
void FloodRun(Run& r) {
  Table& t = r.t.flood;
  edge::IdleStats st;
  std::vector<std::shared_ptr<edge::IdleClient>> idle;
  for (int i = 0; i < r.b.flood_connections; ++i) {
    idle.push_back(std::make_shared<edge::IdleClient>(r.io.load, r.server.port(), &st));
  }
  const auto t0 = Steady::now();
  asio::post(r.io.load, [idle] {
    for (auto& c : idle) c->Start();
  });
  std::this_thread::sleep_until(t0 + r.b.flood_wait);
  t.Set(r.col, "connected", Str("%d/%d", st.connected.load(), r.b.flood_connections));
  t.Set(r.col, "counted after s",
        Str("%.0f", std::chrono::duration<double>(r.b.flood_wait).count()));
  t.Set(r.col, "503 answers", std::to_string(st.got_503.load()));
  t.Set(r.col, "... with Retry-After", std::to_string(st.retry_after.load()));
  t.Set(r.col, "other answers", std::to_string(st.other_answer.load()));
  t.Set(r.col, "closed by server", std::to_string(st.closed.load()));
  t.Set(r.col, "connect errors", std::to_string(st.failed.load()));
  Probes p = SequentialProbes(r.io.probe, r.server.port(), edge::Request("GET", "/api/health"), 10,
                              200, 2s, r.b.flood_health);
  int fast = static_cast<int>(
      std::count_if(p.ok_ms.begin(), p.ok_ms.end(), [](double ms) { return ms <= 100.0; }));
  t.Set(r.col, "health 200 within 100 ms", Str("%d/10", fast));
  t.Set(r.col, "health p50 / max ms", p.P(0.5) + " / " + p.P(1.0));
  t.Set(r.col, "health timeouts / errors / other",
        Str("%d / %d / %s", p.timeouts, p.errors, p.Others().c_str()));
  edge::Barrier(r.io.load, [&] {
    for (auto& c : idle) c->Close();
  });
  r.Alive(t, "6 flood");
  t.Set(r.col, "server stop", r.server.Stop());
}

// The final line: the headline figures of every run, in run order.
std::string Summary(const std::vector<std::string>& cols, const Tables& t) {
  std::string out = "summary:";
  for (const auto& c : cols) {
    out +=
        Str(" %s{sse=%s delay_p99_ms=%s storm_health_ok=%s storm_p99_ms=%s creates=%s "
            "first_health_after_s=%s slowloris_tasks_ok=%s slowloris_closed=%s flood_503=%s}",
            c.c_str(), t.live.Get("SSE connected (200 + head)", c).c_str(),
            t.live.Get("delta delay p99 ms", c).c_str(), t.storm.Get("health ok", c).c_str(),
            t.storm.Get("health p99 ms", c).c_str(), t.creates.Get("201 Created", c).c_str(),
            t.after.Get("first health answer after close s", c).c_str(),
            t.slow.Get("GET tasks ok", c).c_str(), t.slow.Get("closed by server", c).c_str(),
            t.flood.Get("503 answers", c).c_str());
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<Options> opts;
  try {
    opts = ParseArgs(argc, argv);
  } catch (const std::exception&) {  // a --clients list that is not numbers
    opts.reset();
  }
  if (!opts) {
    std::fprintf(stderr,
                 "usage: edge_bench [--maestro LABEL=PATH ...] [--fakellm PATH] "
                 "[--clients 1000,5000,10000] [--quick]\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  RaiseFdLimit();
  const Bounds bounds = opts->quick ? QuickBounds() : Bounds{};
  // A run of one binary at one N takes ~100 s when every probe times out
  // (≤ ~170 s in the worst case of every bound); none starts after 11:40, so
  // the whole bench ends before 15 minutes.
  const auto bench_start = Steady::now();
  const auto last_start = bench_start + 700s;
  Tables tables;
  ClientThreads io;
  std::vector<std::string> cols;
  for (int n : opts->clients) {
    for (const auto& [label, path] : opts->binaries) {
      const std::string col = label + "@" + std::to_string(n);
      cols.push_back(col);
      if (Steady::now() > last_start) {
        tables.live.Set(col, "skipped", "time budget");
        continue;
      }
      {
        Server server(path, opts->fakellm);
        Run run{col, n, bounds, io, server, tables};
        std::string why;
        Log(Str("[%s] starting %s", col.c_str(), path.c_str()));
        if (server.Start(20000, io.probe, bounds.startup, &why)) {
          MainRun(run);
        } else {
          tables.live.Set(col, "server start", "FAILED");
          Log(Str("[%s] server did not start: %s", col.c_str(), why.c_str()));
        }
      }
      {
        Server server(path, opts->fakellm);
        Run run{col, n, bounds, io, server, tables};
        std::string why;
        if (server.Start(bounds.flood_cap, io.probe, bounds.startup, &why)) {
          FloodRun(run);
        } else {
          tables.flood.Set(col, "server start", "FAILED");
          Log(Str("[%s] flood server did not start: %s", col.c_str(), why.c_str()));
        }
      }
    }
  }
  for (Table* t :
       {&tables.live, &tables.storm, &tables.creates, &tables.after, &tables.slow, &tables.flood}) {
    t->Print();
  }
  std::printf("\nedge_bench: %.0f s in total\n%s\n", edge::MsSince(bench_start) / 1000.0,
              Summary(cols, tables).c_str());
  return 0;
}
