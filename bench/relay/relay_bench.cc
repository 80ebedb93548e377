// relay_bench: the delta relay (notify/delta_relay.h) end to end — a job's
// live deltas from a worker process through PostgreSQL NOTIFY to `maestro
// serve --workers 0` and out to SSE clients — and what it costs PostgreSQL.
//
//  1. Latency publish → serve → SSE client, p50/p99, at 1, 100 and 1,000
//     concurrent streams (one running job per stream). The publishers are
//     child processes (publisher.h; one per `--jobs-per-worker` jobs, as
//     workers on several hosts: one process's JobStreamHub keeps 512 jobs)
//     using the real Notifier + DeltaRelay + PgStore as a worker does; the
//     jobs are tasks created through serve's
//     API by a bench user, claimed by the child (so they run and their
//     streams stay open), and read by that user's SSE clients (one Asio
//     thread, sse_clients.h). Delay = client receive − the delta's publish
//     time (CLOCK_REALTIME, one machine; `at`, the product's whole-ms stamp,
//     gives the same figure within 1 ms: its p50 is printed too). Every
//     stream must get every delta in order; LOSS is printed otherwise.
//  2. PostgreSQL load per 1,000 deltas/s: one publisher at `--load-rate`
//     deltas/s over `--load-jobs` jobs, windows of `--load-seconds` with the
//     relay and without (the baseline: the same deltas into a Notifier with
//     no relay), alternating; per window: pg_stat_database's committed and
//     rolled-back transactions of the database (read 10.5 s after the
//     window: PostgreSQL flushes an idle backend's counts that late), the
//     CPU time of the postmaster and its children (/proc/<pid>/stat
//     utime+stime, exited ones through cutime+cstime) and serve's. The
//     relay's own counters say how many deltas one NOTIFY carried and how
//     many sends (one round trip and one transaction each) it made.
//
// Figures are medians over the rounds. PostgreSQL is a throwaway server
// (tests/support/pg_server.h); serve is the release binary:
//   ./build/release/bench/relay/relay_bench [--maestro PATH] [--rounds 2]
//       [--seconds 5] [--load-rounds 3] [--load-seconds 5] [--levels 1:20,100:20,1000:5]
//       [--jobs-per-worker 250] [--load-jobs 100] [--load-rate 1000]
// The last line printed is the summary. Exit code 2 when a delta was lost.
#include <dirent.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "core/json.h"
#include "publisher.h"
#include "sse_clients.h"
#include "store/postgres/pg_conn.h"
#include "support/pg_server.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace maestro::bench {
namespace {

using namespace std::chrono_literals;

[[noreturn]] void Fail(const std::string& msg) { throw std::runtime_error(msg); }

struct Level {
  int streams;
  double rate;  // deltas/s per stream
};

struct Options {
  std::string maestro = MAESTRO_BIN;
  std::vector<Level> levels{{1, 20}, {100, 20}, {1000, 5}};
  int rounds = 2;
  double seconds = 5;
  int load_rounds = 3;
  double load_seconds = 5;
  int load_jobs = 100;
  double load_rate = 1000;  // deltas/s in all
  // Jobs per publisher process at the latency levels (a worker process runs
  // a few hundred jobs at most: its JobStreamHub keeps 512 jobs' rings).
  int jobs_per_worker = 250;
};

double Pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}
double Median(std::vector<double> v) { return Pct(std::move(v), 0.5); }

// ---- serve and its API ------------------------------------------------

struct Serve {
  testing::TempDir dir;
  std::unique_ptr<testing::Process> proc;
  int port = 0;
  std::string token;  // the bench user's
};

httplib::Client Api(int port, const std::string& token) {
  httplib::Client c("127.0.0.1", port);
  c.set_bearer_token_auth(token);
  c.set_read_timeout(30, 0);
  return c;
}

void StartServe(Serve& s, const Options& o, const std::string& url) {
  s.port = testing::FreePort();
  // `http:` caps raised for 1,000 streams of one token; the LLM is never
  // called (serve runs no job).
  std::ofstream(s.dir.File("maestro.yaml"))
      << "workers: 0\nlog:\n  level: warn\n"
      << "http:\n  max_streams_per_token: 5000\n  max_connections: 20000\n"
      << "llm:\n  base_url: http://127.0.0.1:9/v1\n  model: fake\n";
  s.proc = std::make_unique<testing::Process>(
      std::vector<std::string>{o.maestro, "--config", s.dir.File("maestro.yaml"), "serve"},
      std::map<std::string, std::string>{{"MAESTRO_DATA_DIR", s.dir.File("data")},
                                         {"MAESTRO_LISTEN", "127.0.0.1:" + std::to_string(s.port)},
                                         {"MAESTRO_ADMIN_TOKEN", "admin-tok"},
                                         {"MAESTRO_DATABASE_URL", url}},
      s.dir.File("serve.out"), s.dir.File("serve.err"));
  httplib::Client health("127.0.0.1", s.port);
  for (int i = 0; i < 3000; ++i) {
    auto r = health.Get("/api/health");
    if (r && r->status == 200) {
      auto admin = Api(s.port, "admin-tok");
      auto t = admin.Post("/api/local/tokens", R"({"user":"bench"})", "application/json");
      if (!t || t->status != 201) Fail("token: " + (t ? t->body : std::string("no reply")));
      s.token = Json::parse(t->body)["token"];
      return;
    }
    std::this_thread::sleep_for(10ms);
  }
  Fail("maestro serve did not start:\n" + s.proc->Stderr());
}

// `n` tasks of the bench user (4 client threads, all joined before return:
// the publisher is forked from a single-threaded process); their job ids.
std::vector<std::string> CreateTasks(const Serve& s, int n) {
  std::vector<std::string> jobs(static_cast<size_t>(n));
  std::atomic<int> next{0};
  std::string error;
  std::mutex mu;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      auto api = Api(s.port, s.token);
      for (int i; (i = next++) < n;) {
        auto r = api.Post("/api/local/tasks",
                          Json{{"instruction", "relay bench " + std::to_string(i)}}.dump(),
                          "application/json");
        if (!r || r->status != 201) {
          std::lock_guard<std::mutex> lock(mu);
          error = r ? r->body : "no reply";
          return;
        }
        jobs[static_cast<size_t>(i)] = Json::parse(r->body)["job"]["id"];
      }
    });
  }
  for (auto& t : threads) t.join();
  if (!error.empty()) Fail("create task: " + error);
  return jobs;
}

// ---- the publisher child ------------------------------------------------

class Publisher {
 public:
  explicit Publisher(const PublisherPlan& plan) {
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) Fail("pipe");
    std::fflush(nullptr);
    pid_ = fork();
    if (pid_ < 0) Fail("fork");
    if (pid_ == 0) {
      close(to_child[1]);
      close(from_child[0]);
      int rc = 1;
      try {
        rc = RunPublisher(plan, to_child[0], from_child[1]);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "publisher: %s\n", e.what());
      }
      std::fflush(nullptr);
      _exit(rc);  // not the parent's destructors (PgServer, serve)
    }
    close(to_child[0]);
    close(from_child[1]);
    in_ = from_child[0];
    out_ = to_child[1];
  }
  ~Publisher() {
    close(out_);
    close(in_);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  std::string Read() {
    std::string line;
    char c;
    while (read(in_, &c, 1) == 1) {
      if (c == '\n') break;
      line += c;
    }
    if (line.empty() || line.rfind("error", 0) == 0) Fail("publisher: " + line);
    return line;
  }
  void Expect(const std::string& prefix) {
    std::string line = Read();
    if (line.rfind(prefix, 0) != 0) Fail("publisher said '" + line + "', not " + prefix);
  }
  void Send(const std::string& line) {
    std::string s = line + "\n";
    if (write(out_, s.data(), s.size()) != static_cast<ssize_t>(s.size())) Fail("write");
  }

  struct Sent {
    int64_t total = 0, payloads = 0, relayed = 0, dropped = 0, send_errors = 0, sends = 0;
    std::map<std::string, int64_t> per_job;
  };
  // After "go": the "sent" line and the per-job counts.
  Sent ReadSent() {
    Sent s;
    std::istringstream head(Read());
    std::string word;
    head >> word >> s.total >> s.payloads >> s.relayed >> s.dropped >> s.send_errors >> s.sends;
    if (word != "sent") Fail("publisher: no sent line");
    for (std::string line; (line = Read()) != "done";) {
      std::istringstream job(line);
      std::string id;
      int64_t count = 0;
      job >> word >> id >> count;
      s.per_job[id] = count;
    }
    return s;
  }

 private:
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
};

// ---- 1. latency -----------------------------------------------------------

struct LatencyRound {
  int64_t sent = 0, received = 0;
  int64_t lost_streams = 0, disordered = 0, truncated = 0, not_connected = 0, not_ended = 0;
  double p50 = 0, p99 = 0, max = 0, at_p50 = 0;
  int64_t payloads = 0, relayed = 0, dropped = 0;
  double seconds = 0;
};

LatencyRound RunLevel(const Serve& s, const std::string& url, const Level& level, double seconds,
                      int jobs_per_worker) {
  LatencyRound out;
  out.seconds = seconds;
  std::vector<std::string> jobs = CreateTasks(s, level.streams);
  // One publisher process per `jobs_per_worker` jobs, each claiming its
  // share before the next is forked (the parent has no thread yet).
  std::vector<std::unique_ptr<Publisher>> pubs;
  for (int left = level.streams; left > 0; left -= jobs_per_worker) {
    const int n = std::min(left, jobs_per_worker);
    pubs.push_back(std::make_unique<Publisher>(PublisherPlan{url, n, level.rate, seconds, true}));
    pubs.back()->Expect("ready");
  }

  asio::io_context io;
  auto guard = asio::make_work_guard(io);
  SseTotals totals;
  totals.delay_ms.reserve(static_cast<size_t>(level.streams * level.rate * seconds * 1.1));
  totals.delay_at_ms.reserve(totals.delay_ms.capacity());
  std::vector<std::shared_ptr<SseClient>> clients;
  for (const std::string& id : jobs) {
    clients.push_back(
        std::make_shared<SseClient>(io, static_cast<uint16_t>(s.port), id, s.token, &totals));
  }
  asio::post(io, [&] {
    for (auto& c : clients) c->Start();
  });
  std::thread io_thread([&] { io.run(); });
  // A publisher that fails throws: the io thread still ends first.
  struct Joiner {
    asio::io_context& io;
    std::thread& thread;
    ~Joiner() {
      io.stop();
      if (thread.joinable()) thread.join();
    }
  } joiner{io, io_thread};
  const int n = level.streams;
  for (int i = 0; i < 6000 && totals.connected + totals.failed < n; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  for (auto& pub : pubs) pub->Send("go");
  Publisher::Sent sent;
  for (auto& pub : pubs) {
    Publisher::Sent one = pub->ReadSent();
    sent.total += one.total;
    sent.payloads += one.payloads;
    sent.relayed += one.relayed;
    sent.dropped += one.dropped;
    sent.per_job.insert(one.per_job.begin(), one.per_job.end());
  }
  for (auto& pub : pubs) pub->Send("finish");
  for (auto& pub : pubs) pub->Expect("finished");
  for (int i = 0; i < 3000 && totals.ended + totals.failed < n; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  asio::post(io, [&] {
    for (auto& c : clients) c->Close();
  });
  guard.reset();
  io.stop();
  io_thread.join();  // (Joiner then finds nothing left to do)

  out.sent = sent.total;
  out.payloads = sent.payloads;
  out.relayed = sent.relayed;
  out.dropped = sent.dropped;
  out.not_connected = n - totals.connected;
  for (const auto& c : clients) {
    out.received += c->received();
    if (c->received() != sent.per_job[c->job_id()]) ++out.lost_streams;
    if (!c->in_order()) ++out.disordered;
    if (!c->ended()) ++out.not_ended;
    out.truncated += c->truncated();
  }
  out.p50 = Pct(totals.delay_ms, 0.5);
  out.p99 = Pct(totals.delay_ms, 0.99);
  out.max = Pct(totals.delay_ms, 1.0);
  out.at_p50 = Pct(totals.delay_at_ms, 0.5);
  return out;
}

// ---- 2. PostgreSQL load ---------------------------------------------------

int64_t ClockTicks() { return sysconf(_SC_CLK_TCK); }

// utime, stime, cutime, cstime (fields 14-17) and ppid (field 4) of a pid.
struct ProcTimes {
  int64_t ppid = 0, self = 0, children = 0;
};
std::optional<ProcTimes> ReadProcTimes(int64_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  size_t close = all.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(all.substr(close + 2));
  std::vector<std::string> fields;  // from field 3 (state) on
  for (std::string w; rest >> w && fields.size() < 16;) fields.push_back(w);
  if (fields.size() < 15) return std::nullopt;
  ProcTimes t;
  t.ppid = std::stoll(fields[1]);
  t.self = std::stoll(fields[11]) + std::stoll(fields[12]);
  t.children = std::stoll(fields[13]) + std::stoll(fields[14]);
  return t;
}

// The CPU ms of the postmaster and all its children, live and exited.
double PostgresCpuMs(int64_t postmaster) {
  int64_t ticks = 0;
  if (auto pm = ReadProcTimes(postmaster)) ticks += pm->self + pm->children;
  if (DIR* d = opendir("/proc")) {
    while (dirent* e = readdir(d)) {
      char* end = nullptr;
      long pid = std::strtol(e->d_name, &end, 10);
      if (*end != '\0' || pid <= 0) continue;
      auto t = ReadProcTimes(pid);
      if (t && t->ppid == postmaster) ticks += t->self;
    }
    closedir(d);
  }
  return static_cast<double>(ticks) * 1000.0 / static_cast<double>(ClockTicks());
}

double ProcessCpuMs(int64_t pid) {
  auto t = ReadProcTimes(pid);
  return t ? static_cast<double>(t->self) * 1000.0 / static_cast<double>(ClockTicks()) : 0;
}

class PgProbe {
 public:
  explicit PgProbe(const std::string& url) {
    auto c = postgres::PgConn::Open(url);
    if (!c.ok()) Fail("probe connection: " + c.status().ToString());
    conn_ = std::move(c).value();
    backend_ = Int("SELECT pg_backend_pid()");
    postmaster_ = ReadProcTimes(backend_).value_or(ProcTimes{}).ppid;
    if (postmaster_ <= 1) Fail("postmaster not found");
  }
  struct Sample {
    std::chrono::steady_clock::time_point t;
    int64_t xacts = 0;
    double pg_cpu_ms = 0, serve_cpu_ms = 0;
  };
  Sample Take(int64_t serve_pid) {
    Sample s;
    s.t = std::chrono::steady_clock::now();
    s.xacts =
        Int("SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = "
            "current_database()");
    s.pg_cpu_ms = PostgresCpuMs(postmaster_);
    s.serve_cpu_ms = ProcessCpuMs(serve_pid);
    return s;
  }

 private:
  int64_t Int(const std::string& sql) {
    auto st = conn_->Prepare(sql);
    if (!st.ok()) Fail(sql + ": " + st.status().ToString());
    auto row = st->Step();
    if (!row.ok() || !*row) Fail(sql + ": no row");
    return st->Int(0);
  }
  std::unique_ptr<postgres::PgConn> conn_;
  int64_t backend_ = 0, postmaster_ = 0;
};

struct LoadRound {
  double deltas_per_s = 0, notifies_per_s = 0, sends_per_s = 0, xacts_per_s = 0;
  double pg_cpu_ms_per_s = 0, serve_cpu_ms_per_s = 0, deltas_per_notify = 0;
  int64_t dropped = 0;
};

// One publisher process holding `load_jobs` running jobs; windows of
// `load_seconds` with the relay and without, alternating (the first mode
// alternates by round). PostgreSQL flushes a backend's statistics at most
// once a second while it works and up to 10 s after it went idle
// (PGSTAT_IDLE_INTERVAL): so the first window waits `kSettle` after the
// claims, and each window's transactions are read `kSettle` after it ended
// (the CPU times at its end).
std::map<bool, std::vector<LoadRound>> RunLoad(const Serve& s, const std::string& url,
                                               PgProbe& probe, const Options& o) {
  constexpr auto kSettle = 10500ms;
  CreateTasks(s, o.load_jobs);
  Publisher pub(PublisherPlan{url, o.load_jobs, o.load_rate / o.load_jobs, o.load_seconds, true});
  pub.Expect("ready");
  std::this_thread::sleep_for(kSettle);
  std::map<bool, std::vector<LoadRound>> out;
  for (int r = 0; r < o.load_rounds; ++r) {
    for (bool relay : {r % 2 == 1, r % 2 == 0}) {
      PgProbe::Sample before = probe.Take(s.proc->pid());
      pub.Send(relay ? "go" : "go off");
      Publisher::Sent sent = pub.ReadSent();
      PgProbe::Sample end = probe.Take(s.proc->pid());
      std::this_thread::sleep_for(kSettle);
      PgProbe::Sample after = probe.Take(s.proc->pid());
      const double span = std::chrono::duration<double>(end.t - before.t).count();
      LoadRound lr;
      lr.deltas_per_s = static_cast<double>(sent.total) / span;
      lr.notifies_per_s = static_cast<double>(sent.payloads) / span;
      lr.sends_per_s = static_cast<double>(sent.sends) / span;
      lr.xacts_per_s = static_cast<double>(after.xacts - before.xacts) / span;
      lr.pg_cpu_ms_per_s = (end.pg_cpu_ms - before.pg_cpu_ms) / span;
      lr.serve_cpu_ms_per_s = (end.serve_cpu_ms - before.serve_cpu_ms) / span;
      lr.deltas_per_notify =
          sent.payloads > 0 ? static_cast<double>(sent.relayed) / static_cast<double>(sent.payloads)
                            : 0;
      lr.dropped = sent.dropped;
      out[relay].push_back(lr);
    }
  }
  pub.Send("finish");
  pub.Expect("finished");
  return out;
}

// ---- main -----------------------------------------------------------------

std::vector<Level> ParseLevels(const std::string& s) {
  std::vector<Level> out;
  std::istringstream in(s);
  for (std::string item; std::getline(in, item, ',');) {
    size_t colon = item.find(':');
    out.push_back(Level{std::stoi(item.substr(0, colon)),
                        colon == std::string::npos ? 20.0 : std::stod(item.substr(colon + 1))});
  }
  return out;
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--maestro")
      o.maestro = v;
    else if (k == "--levels")
      o.levels = ParseLevels(v);
    else if (k == "--rounds")
      o.rounds = std::stoi(v);
    else if (k == "--seconds")
      o.seconds = std::stod(v);
    else if (k == "--load-rounds")
      o.load_rounds = std::stoi(v);
    else if (k == "--load-seconds")
      o.load_seconds = std::stod(v);
    else if (k == "--load-jobs")
      o.load_jobs = std::stoi(v);
    else if (k == "--load-rate")
      o.load_rate = std::stod(v);
    else if (k == "--jobs-per-worker")
      o.jobs_per_worker = std::max(1, std::stoi(v));
    else
      Fail("unknown option " + k);
  }
  return o;
}

int Main(int argc, char** argv) {
  const Options o = ParseArgs(argc, argv);
  signal(SIGPIPE, SIG_IGN);
  auto server = testing::PgServer::Start();
  if (!server.ok()) Fail("start PostgreSQL: " + server.status().ToString());
  auto url = (*server)->CreateDatabase();
  if (!url.ok()) Fail("create database: " + url.status().ToString());
  Serve serve;
  StartServe(serve, o, *url);
  std::printf("relay_bench: maestro %s, PostgreSQL on 127.0.0.1:%d\n", o.maestro.c_str(),
              (*server)->port());

  bool lost = false;
  std::printf(
      "\n1. delta latency publish (worker process) -> PostgreSQL NOTIFY -> serve -> SSE client\n"
      "   %d round(s) of %.0f s per level; p50/p99 ms = median over rounds\n",
      o.rounds, o.seconds);
  std::printf("%8s %9s %9s %9s %8s %8s %8s %9s %8s  %s\n", "streams", "deltas/s", "sent",
              "received", "p50 ms", "p99 ms", "max ms", "at p50", "d/NOTIFY", "check");
  std::vector<std::string> summary;
  for (const Level& level : o.levels) {
    std::vector<double> p50, p99, mx, at50, dpn, rate;
    int64_t sent = 0, received = 0;
    std::string check = "ok";
    for (int r = 0; r < o.rounds; ++r) {
      LatencyRound lr = RunLevel(serve, *url, level, o.seconds, o.jobs_per_worker);
      p50.push_back(lr.p50);
      p99.push_back(lr.p99);
      mx.push_back(lr.max);
      at50.push_back(lr.at_p50);
      rate.push_back(static_cast<double>(lr.sent) / lr.seconds);
      dpn.push_back(lr.payloads ? static_cast<double>(lr.relayed) / lr.payloads : 0);
      sent += lr.sent;
      received += lr.received;
      if (lr.received != lr.sent || lr.lost_streams || lr.disordered || lr.truncated ||
          lr.not_connected || lr.not_ended || lr.dropped) {
        lost = true;
        check = "LOSS: round " + std::to_string(r + 1) + " received " +
                std::to_string(lr.received) + "/" + std::to_string(lr.sent) + ", " +
                std::to_string(lr.lost_streams) + " streams short, " +
                std::to_string(lr.disordered) + " out of order, " + std::to_string(lr.truncated) +
                " truncated, " + std::to_string(lr.not_connected) + " not connected, " +
                std::to_string(lr.not_ended) + " without end, " + std::to_string(lr.dropped) +
                " dropped by the relay";
      }
    }
    std::printf("%8d %9.0f %9lld %9lld %8.2f %8.2f %8.1f %9.2f %8.1f  %s\n", level.streams,
                Median(rate), static_cast<long long>(sent), static_cast<long long>(received),
                Median(p50), Median(p99), Median(mx), Median(at50), Median(dpn), check.c_str());
    std::fflush(stdout);
    char buf[160];
    std::snprintf(buf, sizeof(buf), "s%d_p50_ms=%.2f s%d_p99_ms=%.2f", level.streams, Median(p50),
                  level.streams, Median(p99));
    summary.push_back(buf);
  }

  std::printf(
      "\n2. PostgreSQL load: %.0f deltas/s over %d jobs for %.0f s, relay off/on alternating,"
      " %d round(s), medians\n",
      o.load_rate, o.load_jobs, o.load_seconds, o.load_rounds);
  PgProbe probe(*url);
  std::map<bool, std::vector<LoadRound>> by_mode = RunLoad(serve, *url, probe, o);
  auto med = [&](bool relay, double LoadRound::*field) {
    std::vector<double> v;
    for (const LoadRound& lr : by_mode[relay]) v.push_back(lr.*field);
    return Median(v);
  };
  std::printf("%-6s %9s %10s %10s %8s %13s %16s %9s\n", "relay", "deltas/s", "NOTIFY/s", "sends/s",
              "xact/s", "pg CPU ms/s", "serve CPU ms/s", "d/NOTIFY");
  for (bool relay : {false, true}) {
    std::printf("%-6s %9.0f %10.1f %10.1f %8.1f %13.1f %16.1f %9.1f\n", relay ? "on" : "off",
                med(relay, &LoadRound::deltas_per_s), med(relay, &LoadRound::notifies_per_s),
                med(relay, &LoadRound::sends_per_s), med(relay, &LoadRound::xacts_per_s),
                med(relay, &LoadRound::pg_cpu_ms_per_s), med(relay, &LoadRound::serve_cpu_ms_per_s),
                med(relay, &LoadRound::deltas_per_notify));
  }
  const double k = std::max(1e-9, med(true, &LoadRound::deltas_per_s) / 1000.0);
  const double d_xact = med(true, &LoadRound::xacts_per_s) - med(false, &LoadRound::xacts_per_s);
  const double d_cpu =
      med(true, &LoadRound::pg_cpu_ms_per_s) - med(false, &LoadRound::pg_cpu_ms_per_s);
  const double d_serve =
      med(true, &LoadRound::serve_cpu_ms_per_s) - med(false, &LoadRound::serve_cpu_ms_per_s);
  std::printf(
      "added per 1,000 deltas/s: %.1f NOTIFY/s in %.1f sends/s, %.1f transactions/s"
      " (pg_stat_database), %.1f ms/s PostgreSQL CPU (%.1f%% of a core), %.1f ms/s serve CPU\n",
      med(true, &LoadRound::notifies_per_s) / k, med(true, &LoadRound::sends_per_s) / k, d_xact / k,
      d_cpu / k, d_cpu / k / 10.0, d_serve / k);
  for (const LoadRound& lr : by_mode[true]) {
    if (lr.dropped) {
      lost = true;
      std::printf("LOSS: the relay dropped %lld deltas in a load round\n",
                  static_cast<long long>(lr.dropped));
    }
  }
  std::string line = "summary:";
  for (const auto& s : summary) line += " " + s;
  char buf[200];
  std::snprintf(buf, sizeof(buf),
                " notify_per_s_per_1k=%.1f xact_per_s_per_1k=%.1f pg_cpu_ms_per_s_per_1k=%.1f%s",
                med(true, &LoadRound::notifies_per_s) / k, d_xact / k, d_cpu / k,
                lost ? " LOSS" : "");
  std::printf("\n%s%s\n", line.c_str(), buf);
  return lost ? 2 : 0;
}

}  // namespace
}  // namespace maestro::bench

int main(int argc, char** argv) {
  try {
    return maestro::bench::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "relay_bench: %s\n", e.what());
    return 1;
  }
}
