// Queue benchmark: the durable job runtime with no LLM, on SQLite and on
// PostgreSQL side by side, with several worker PROCESSES (and, as the
// "sqlite thr" column, SQLite with worker threads on the bench's own store,
// the way `maestro serve` runs its WorkerPool).
//
//  1. Throughput: the bench (the producer, `--producers` threads) enqueues N
//     jobs spread over 256 tasks while W worker processes (this binary
//     re-executed with `--role worker`, each with its own store on the same
//     database or file) loop claim→finish. jobs/s = N over the span from the
//     first job's created_at to the last one's finished_at, read back from
//     the database after the round, which also checks that every job
//     succeeded on its first claim. Batch off = EnqueueJob per job, and
//     ClaimNextJob, then FinishAndClaimNext per job (what WorkerPool does);
//     batch on = EnqueueJobs(max) by the producers, ClaimJobs(max) +
//     FinishJobs by the workers: one transaction for a whole batch
//     (`--batch 16,64`: the sizes measured).
//  2. Create→claimed latency: one job at a time into an idle worker, from
//     the EnqueueJob call to the worker's claim returning (CLOCK_MONOTONIC,
//     one clock for all processes). With a wake-up — PostgreSQL: a worker
//     process woken by LISTEN/NOTIFY; SQLite has no cross-process wake-up, so
//     a worker thread in the bench woken in-process — and with polling only
//     (10 ms) as the baseline.
//
// Every round uses a fresh database. PostgreSQL is a throwaway server started
// by the bench (tests/support/pg_server.h) on 127.0.0.1. Figures are medians
// over `--rounds`; the backends alternate within a round so drift hits both.
// The last line printed is the summary.
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>

#include "queue_bench_worker.h"
#include "store/postgres/pg_store.h"
#include "support/pg_server.h"

namespace maestro::bench {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void Fail(const std::string& msg) { throw std::runtime_error(msg); }

template <typename T>
T Must(Result<T> r, const char* what) {
  if (!r.ok()) Fail(std::string(what) + ": " + r.status().ToString());
  return std::move(r).value();
}

struct Options {
  std::vector<std::string> backends{"sqlite", "sqlite-threads", "postgres"};
  int jobs = 10'000;     // per SQLite throughput round
  int pg_jobs = 10'000;  // per PostgreSQL round (2,000 gave spans of ~0.6 s, too noisy)
  int rounds = 3;
  int samples = 150;
  // Batch sizes of the batched rounds. 64 claims a quarter of the 256 tasks
  // at once; with four workers that is all of them, so larger sizes only
  // shorten the batches (a task runs one job at a time).
  std::vector<int> batches{16, 64};
  int producers = 2;
  std::vector<int> workers{1, 2, 4};
  bool durable = true;  // also PostgreSQL with fsync + synchronous_commit on
  int durable_jobs = 600;
  bool listen = true;         // throughput workers LISTEN (PostgreSQL); 0 = poll only
  bool batch_enqueue = true;  // batch on: producers enqueue in batches too
  bool batch_off = true;      // also the rounds with batching off (0: batch on only, to profile)
};

// One database engine under test; hands out a fresh database per round.
struct Backend {
  std::string name;  // column title
  bool postgres = false;
  // SQLite only: the workers are threads of the bench on its one store, as
  // in `maestro serve` (WorkerPool threads share one SqliteStore, whose
  // group commit puts their writes and the producers' into shared commits).
  bool in_process = false;
  int jobs = 0;  // per throughput round
  std::unique_ptr<testing::PgServer> server;
  std::string dir;  // SQLite: the rounds' files
  int next = 0;

  Target NewTarget() {
    if (postgres) return {true, Must(server->CreateDatabase(), "create database")};
    std::string d = dir + "/r" + std::to_string(next++);
    fs::create_directories(d);
    return {false, d + "/maestro.db"};
  }
  void Drop(const Target& t) {
    if (!t.postgres) fs::remove_all(fs::path(t.location).parent_path());
  }
  ~Backend() {
    if (!dir.empty()) fs::remove_all(dir);
  }
};

std::unique_ptr<Backend> StartBackend(const std::string& kind, const Options& o) {
  auto b = std::make_unique<Backend>();
  b->jobs = o.jobs;
  if (kind == "sqlite" || kind == "sqlite-threads") {
    b->name = kind == "sqlite" ? "sqlite" : "sqlite thr";
    b->in_process = kind == "sqlite-threads";
    b->dir =
        (fs::temp_directory_path() / ("maestro-queue-bench-" + std::to_string(getpid()))).string();
    fs::create_directories(b->dir);
    return b;
  }
  b->postgres = true;
  b->jobs = o.pg_jobs;
  b->name = kind == "postgres" ? "postgres" : "pg durable";
  // The durable server turns back on what the test server turns off.
  std::string extra = kind == "postgres" ? ""
                                         : "-c fsync=on -c synchronous_commit=on"
                                           " -c full_page_writes=on";
  if (kind != "postgres") b->jobs = o.durable_jobs;
  b->server = Must(testing::PgServer::Start(extra), "start PostgreSQL");
  return b;
}

// Creates `n` tasks and completes their first jobs, so that a round starts
// with an empty queue and every task free to run a job.
std::vector<std::string> SeedTasks(Store& store, int n, std::set<std::string>* seed_jobs) {
  std::vector<std::string> tasks;
  for (int i = 0; i < n; ++i) {
    NewTask t;
    t.instruction = "bench";
    t.piece = "ok";
    auto c = Must(store.CreateTask(t), "create task");
    tasks.push_back(c.task.id);
    seed_jobs->insert(c.job.id);
  }
  ClaimFilter f;
  f.worker_id = "seed";
  for (;;) {
    auto got = Must(store.ClaimJobs(f, 60'000, 64), "seed claim");
    if (got.empty()) break;
    std::vector<std::pair<Lease, JobOutcome>> done;
    for (const Job& j : got) {
      done.emplace_back(Lease{j.id, j.worker_id, j.fencing_token}, JobOutcome::Succeeded(""));
    }
    Must(store.FinishJobs(done), "seed finish");
  }
  return tasks;
}

int64_t Succeeded(Store& store) {
  auto counts = Must(store.CountJobsByStatus(), "count jobs");
  return counts["succeeded"];
}

// Polls the database until `target` jobs have succeeded. It first waits
// for the `newest` jobs (the last of each producer, among the last to run)
// by id, a cheap lookup, and only then counts every job with a GROUP BY over
// them all, which would take CPU from the workers if it polled all along.
void WaitSucceeded(Store& store, const std::vector<std::string>& newest, int64_t target,
                   int64_t timeout_s) {
  const int64_t deadline = NowNs() + timeout_s * 1'000'000'000;
  auto wait = [&] {
    if (NowNs() > deadline) Fail("timed out waiting for the workers");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  };
  for (const std::string& id : newest) {
    while (!id.empty() && Must(store.GetJob(id), "get job").status != JobStatus::kSucceeded) {
      wait();
    }
  }
  while (Succeeded(store) < target) wait();
}

std::vector<std::unique_ptr<Child>> SpawnWorkers(const Target& t, int n, int batch, bool notify,
                                                 int64_t poll_ms, bool stamp) {
  std::vector<std::unique_ptr<Child>> kids;
  for (int i = 0; i < n; ++i) {
    auto c = Child::Spawn({"--role", "worker", "--backend", t.postgres ? "postgres" : "sqlite",
                           "--target", t.location, "--batch", std::to_string(batch), "--notify",
                           notify ? "1" : "0", "--poll-ms", std::to_string(poll_ms), "--stamp",
                           stamp ? "1" : "0", "--worker-id", "w" + std::to_string(i)});
    if (!c) Fail("spawn worker");
    kids.push_back(std::move(c));
  }
  // Timing starts only when every worker has its store open.
  for (auto& c : kids) {
    if (c->ReadLine(60'000) != "ready") Fail("a worker did not start");
  }
  return kids;
}

// Stops the workers and sums their "stats" lines.
WorkerStats StopWorkers(std::vector<std::unique_ptr<Child>>& kids) {
  WorkerStats sum;
  for (auto& c : kids) c->Stop();
  for (auto& c : kids) {
    std::string line = c->ReadLine(30'000);
    long long jobs = 0, calls = 0, empty = 0, errors = 0, retries = 0;
    if (std::sscanf(line.c_str(),
                    "stats jobs=%lld claim_calls=%lld empty=%lld errors=%lld retries=%lld", &jobs,
                    &calls, &empty, &errors, &retries) != 5) {
      Fail("a worker ended without stats");
    }
    sum.jobs += jobs;
    sum.claim_calls += calls;
    sum.empty_claims += empty;
    sum.errors += errors;
    sum.retries += retries;
  }
  kids.clear();  // reaps them
  return sum;
}

struct Tput {
  double jobs_per_s = 0;
  double retries_per_1k = 0;  // PostgreSQL transactions rerun per 1,000 jobs
  double enqueue_s = 0;       // the producer's part of the span
  double total_s = 0;
};

Tput Throughput(Backend& b, int workers, int batch, int producers, bool listen,
                bool batch_enqueue) {
  const int n = b.jobs;
  Target t = b.NewTarget();
  Tput out;
  {
    Waker waker;  // in-process workers: woken by the store on each enqueue
    auto opened = Must(OpenStore(t, /*notify=*/false, producers,
                                 [&] {
                                   if (b.in_process) waker.Notify();
                                 }),
                       "open store");
    Store& store = *opened.store;
    std::set<std::string> seed;
    std::vector<std::string> tasks = SeedTasks(store, 256, &seed);
    std::vector<std::unique_ptr<Child>> kids;
    std::atomic<bool> stop{false};
    std::vector<std::thread> local;
    std::vector<WorkerStats> local_stats(b.in_process ? workers : 0);
    // Stops and joins the in-process workers however this scope is left.
    struct Joiner {
      std::vector<std::thread>& threads;
      std::atomic<bool>& stop;
      Waker& waker;
      void Join() {
        stop = true;
        for (auto& th : threads) {
          waker.Notify();  // one Notify wakes one waiting worker
          th.join();
        }
        threads.clear();
      }
      ~Joiner() { Join(); }
    } joiner{local, stop, waker};
    if (b.in_process) {
      for (int i = 0; i < workers; ++i) {
        WorkerConfig cfg;
        cfg.worker_id = "t" + std::to_string(i);
        cfg.batch = batch;
        local.emplace_back([&, i, cfg] { local_stats[i] = RunWorker(store, waker, cfg, stop); });
      }
    } else {
      // On SQLite a worker process has no wake-up from another process: it
      // polls (5 ms). On PostgreSQL NOTIFY wakes it; the poll is a fallback.
      kids = SpawnWorkers(t, workers, batch, listen, t.postgres && listen ? 1'000 : 5,
                          /*stamp=*/false);
    }
    std::vector<std::thread> threads;
    const int64_t t_enqueue = NowNs();
    // Batch on: the producers enqueue `batch` jobs per EnqueueJobs call too.
    const int enqueue_batch = batch_enqueue ? batch : 1;
    std::vector<std::string> last_ids(producers);  // each producer's newest job
    for (int p = 0; p < producers; ++p) {
      threads.emplace_back([&, p] {
        std::vector<NewJob> pending;
        for (int i = p; i < n; i += producers) {
          NewJob j;
          j.task_id = tasks[i % tasks.size()];
          j.piece = "ok";
          if (enqueue_batch <= 1) {
            auto job = store.EnqueueJob(j);
            if (!job.ok()) std::abort();
            last_ids[p] = job->id;
            continue;
          }
          pending.push_back(std::move(j));
          if (static_cast<int>(pending.size()) == enqueue_batch || i + producers >= n) {
            auto jobs = store.EnqueueJobs(pending);
            if (!jobs.ok()) std::abort();
            last_ids[p] = jobs->back().id;
            pending.clear();
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    // When the producer is done long before the workers, they are the
    // bottleneck; when it ends near the last completion, the producer is.
    out.enqueue_s = static_cast<double>(NowNs() - t_enqueue) / 1e9;
    WaitSucceeded(store, last_ids, static_cast<int64_t>(seed.size()) + n, 300);
    WorkerStats ws = StopWorkers(kids);
    joiner.Join();  // the threads' stats are final once they are joined
    for (const WorkerStats& st : local_stats) ws.errors += st.errors;
    if (ws.errors > 0) Fail("workers reported errors");

    // The span, and the check, from the database.
    TimeMs first = INT64_MAX, last = 0;
    int64_t counted = 0;
    for (const auto& task : tasks) {
      for (const Job& j : Must(store.ListJobs(task), "list jobs")) {
        if (seed.count(j.id)) continue;
        if (j.status != JobStatus::kSucceeded || j.attempt != 1)
          Fail("job " + j.id + " not done once");
        first = std::min(first, j.created_at);
        last = std::max(last, j.finished_at);
        ++counted;
      }
    }
    if (counted != n) Fail("job count mismatch");
    out.jobs_per_s = n / (std::max<TimeMs>(last - first, 1) / 1000.0);
    out.total_s = static_cast<double>(last - first) / 1000.0;
    int64_t retries = ws.retries + (opened.pg ? opened.pg->Retries() : 0);
    out.retries_per_1k = 1000.0 * static_cast<double>(retries) / n;
  }
  b.Drop(t);
  return out;
}

struct Lat {
  double p50 = 0, p99 = 0;
};

Lat Latency(Backend& b, bool wake, int samples) {
  Target t = b.NewTarget();
  Lat out;
  {
    // SQLite's wake-up is in-process: the worker is a thread of the bench on
    // the same store. Everything else runs in a worker process.
    Waker waker;
    const bool in_process = wake && !t.postgres;
    auto opened = Must(OpenStore(t, false, 2,
                                 [&] {
                                   if (in_process) waker.Notify();
                                 }),
                       "open store");
    Store& store = *opened.store;
    std::set<std::string> seed;
    std::vector<std::string> tasks = SeedTasks(store, 16, &seed);
    const int64_t poll_ms = wake ? 1'000 : 10;
    std::atomic<bool> stop{false};
    std::thread local;
    // Joins the in-process worker however this scope is left.
    struct Joiner {
      std::thread& t;
      std::atomic<bool>& stop;
      Waker& waker;
      ~Joiner() {
        stop = true;
        waker.Notify();
        if (t.joinable()) t.join();
      }
    } joiner{local, stop, waker};
    std::vector<std::unique_ptr<Child>> kids;
    if (in_process) {
      WorkerConfig cfg;
      cfg.poll_ms = poll_ms;
      cfg.stamp = true;
      local = std::thread([&, cfg] { RunWorker(store, waker, cfg, stop); });
    } else {
      kids = SpawnWorkers(t, 1, 1, /*notify=*/wake, poll_ms, /*stamp=*/true);
    }
    // Jobs arrive 12–20 ms apart (longer than the poll interval, so each
    // finds the worker idle) at random phases of the poll.
    std::mt19937 rng(42);
    std::uniform_int_distribution<int> gap_us(12'000, 20'000);
    std::vector<std::pair<std::string, int64_t>> sent;
    for (int i = 0; i < samples; ++i) {
      std::this_thread::sleep_for(std::chrono::microseconds(gap_us(rng)));
      NewJob j;
      j.task_id = tasks[i % tasks.size()];
      j.piece = "ok";
      int64_t t0 = NowNs();
      sent.emplace_back(Must(store.EnqueueJob(j), "enqueue").id, t0);
    }
    WaitSucceeded(store, {sent.back().first}, static_cast<int64_t>(seed.size()) + samples, 120);
    if (!kids.empty()) StopWorkers(kids);
    std::vector<double> ms;
    for (const auto& [id, t0] : sent) {
      Job j = Must(store.GetJob(id), "get job");
      ms.push_back(static_cast<double>(std::stoll(j.result) - t0) / 1e6);
    }
    std::sort(ms.begin(), ms.end());
    out.p50 = ms[ms.size() / 2];
    out.p99 = ms[std::min(ms.size() - 1, static_cast<size_t>(ms.size() * 0.99))];
  }
  b.Drop(t);
  return out;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::vector<int> ParseList(const std::string& s) {
  std::vector<int> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    out.push_back(std::atoi(s.substr(pos, comma - pos).c_str()));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--backend") {
      o.backends = v == "both" ? std::vector<std::string>{"sqlite", "sqlite-threads", "postgres"}
                               : std::vector<std::string>{v};
    } else if (k == "--jobs") {
      o.jobs = std::atoi(v.c_str());
    } else if (k == "--rounds") {
      o.rounds = std::atoi(v.c_str());
    } else if (k == "--samples") {
      o.samples = std::atoi(v.c_str());
    } else if (k == "--batch") {
      o.batches = ParseList(v);
    } else if (k == "--producers") {
      o.producers = std::atoi(v.c_str());
    } else if (k == "--workers") {
      o.workers = ParseList(v);
    } else if (k == "--durable") {
      o.durable = v == "1";
    } else if (k == "--pg-jobs") {
      o.pg_jobs = std::atoi(v.c_str());
    } else if (k == "--listen") {
      o.listen = v == "1";
    } else if (k == "--batch-enqueue") {
      o.batch_enqueue = v == "1";
    } else if (k == "--batch-off") {
      o.batch_off = v == "1";
    } else if (k == "--durable-jobs") {
      o.durable_jobs = std::atoi(v.c_str());
    } else {
      Fail("unknown option " + k +
           " (--backend sqlite|sqlite-threads|postgres|both --jobs N --pg-jobs N --rounds R "
           "--samples S --batch 16,64 "
           "--producers P --workers 1,2,4 --durable 0|1 --durable-jobs N --listen 0|1 "
           "--batch-enqueue 0|1 --batch-off 0|1)");
    }
  }
  bool pg = std::find(o.backends.begin(), o.backends.end(), "postgres") != o.backends.end();
  if (pg && o.durable) o.backends.push_back("durable");
  return o;
}

int Run(int argc, char** argv) {
  Options o = ParseOptions(argc, argv);
  std::vector<std::unique_ptr<Backend>> backends;
  for (const auto& kind : o.backends) backends.push_back(StartBackend(kind, o));
  std::printf(
      "queue_bench: enqueue->claim->complete, 256 tasks, %d producer threads, %d rounds "
      "(median), %u cores\n",
      o.producers, o.rounds, std::thread::hardware_concurrency());
  for (const auto& b : backends) {
    std::printf("  %-10s %d jobs/round; %s\n", b->name.c_str(), b->jobs,
                !b->postgres ? "SQLite WAL, synchronous=NORMAL (no fsync per commit)"
                : b->name == "postgres"
                    ? "PostgreSQL test server: fsync=off synchronous_commit=off "
                      "full_page_writes=off (NOT durable)"
                    : "PostgreSQL with fsync=on synchronous_commit=on full_page_writes=on");
  }
  std::fflush(stdout);

  // The batch sizes of the throughput rounds: 1 is batching off.
  std::vector<int> batches = o.batches;
  if (o.batch_off) batches.insert(batches.begin(), 1);
  // results[backend][config] = per-round figures
  std::map<std::string, std::map<std::string, std::vector<double>>> tput, retries, p50, p99;
  auto key = [](int w, int batch) { return std::to_string(w) + "/" + std::to_string(batch); };
  for (int r = 1; r <= o.rounds; ++r) {
    for (int w : o.workers) {
      for (int batch : batches) {
        for (auto& b : backends) {
          Tput t = Throughput(*b, w, batch, o.producers, o.listen, o.batch_enqueue);
          tput[b->name][key(w, batch)].push_back(t.jobs_per_s);
          retries[b->name][key(w, batch)].push_back(t.retries_per_1k);
          std::printf(
              "round %d %-10s workers=%d batch=%-3d %8.0f jobs/s  enqueue %.1f s of %.1f s  "
              "retries %.1f/1k jobs\n",
              r, b->name.c_str(), w, batch, t.jobs_per_s, t.enqueue_s, t.total_s, t.retries_per_1k);
          std::fflush(stdout);
        }
      }
    }
    for (bool wake : {true, false}) {
      for (auto& b : backends) {
        if (b->in_process) continue;  // the sqlite column's wake-up is in-process already
        Lat l = Latency(*b, wake, o.samples);
        p50[b->name][wake ? "wake" : "poll"].push_back(l.p50);
        p99[b->name][wake ? "wake" : "poll"].push_back(l.p99);
        std::printf("round %d %-10s create->claimed %s: p50=%.2f ms p99=%.2f ms\n", r,
                    b->name.c_str(), wake ? "wake-up " : "poll 10ms", l.p50, l.p99);
        std::fflush(stdout);
      }
    }
  }

  // The table: medians, and the ratio to SQLite where both ran.
  std::printf("\nthroughput, jobs/s (median of %d rounds)\n", o.rounds);
  std::printf("%-12s %-6s", "workers", "batch");
  for (auto& b : backends) std::printf(" %11s", b->name.c_str());
  if (tput.count("sqlite") && tput.count("postgres")) std::printf(" %9s", "pg/sqlite");
  if (tput.count("postgres")) std::printf(" %16s", "pg retries/1k");
  std::printf("\n");
  for (int w : o.workers) {
    for (int batch : batches) {
      std::printf("%-12d %-6s", w, batch == 1 ? "off" : std::to_string(batch).c_str());
      for (auto& b : backends) std::printf(" %11.0f", Median(tput[b->name][key(w, batch)]));
      if (tput.count("sqlite") && tput.count("postgres")) {
        std::printf(" %8.2fx", Median(tput["postgres"][key(w, batch)]) /
                                   Median(tput["sqlite"][key(w, batch)]));
      }
      if (tput.count("postgres")) {
        std::printf(" %16.1f", Median(retries["postgres"][key(w, batch)]));
      }
      std::printf("\n");
    }
  }
  std::printf("\ncreate->claimed, ms (median over rounds of each round's p50 / p99, %d samples)\n",
              o.samples);
  std::printf("%-34s", "mode");
  for (auto& b : backends) {
    if (!b->in_process) std::printf(" %17s", (b->name + " p50/p99").c_str());
  }
  std::printf("\n");
  for (const char* mode : {"wake", "poll"}) {
    std::printf("%-34s", std::string(mode) == "wake" ? "wake-up (pg: NOTIFY; sqlite: in-proc)"
                                                     : "polling every 10 ms");
    for (auto& b : backends) {
      if (b->in_process) continue;
      std::printf("   %6.2f / %6.2f", Median(p50[b->name][mode]), Median(p99[b->name][mode]));
    }
    std::printf("\n");
  }

  std::string summary = "queue_bench";
  const int first = o.workers.front(), last = o.workers.back();
  for (auto& b : backends) {
    summary += fmt::format(
        " | {}: {:.0f}/{:.0f} jobs/s at 1/{} {}", b->name, Median(tput[b->name][key(first, 1)]),
        Median(tput[b->name][key(last, 1)]), last, b->in_process ? "threads" : "procs");
    for (int batch : o.batches) {
      summary +=
          fmt::format(" (batch {}: {:.0f}/{:.0f})", batch, Median(tput[b->name][key(first, batch)]),
                      Median(tput[b->name][key(last, batch)]));
    }
    if (!b->in_process) {
      summary += fmt::format(", create->claimed p50 {:.2f} ms wake vs {:.2f} ms poll",
                             Median(p50[b->name]["wake"]), Median(p50[b->name]["poll"]));
    }
  }
  std::printf("\n%s\n", summary.c_str());
  return 0;
}

}  // namespace
}  // namespace maestro::bench

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::err);
  if (argc > 2 && std::string(argv[1]) == "--role" && std::string(argv[2]) == "worker") {
    return maestro::bench::WorkerMain(std::vector<std::string>(argv + 3, argv + argc));
  }
  try {
    return maestro::bench::Run(argc, argv);
  } catch (const std::exception& e) {
    // The backends (and with them the PostgreSQL server) are gone by now.
    std::fprintf(stderr, "queue_bench: %s\n", e.what());
    return 1;
  }
}
