#include "queue_bench_worker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <thread>

#include "store/postgres/pg_store.h"
#include "store/sqlite/sqlite_store.h"

namespace maestro::bench {

int64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

Result<OpenedStore> OpenStore(const Target& t, bool notify, int pool_size,
                              std::function<void()> on_available) {
  StoreOptions so;
  so.on_job_available = std::move(on_available);
  OpenedStore out;
  if (t.postgres) {
    PgStoreOptions pg{t.location, pool_size, notify};
    auto s = PgStore::Open(pg, so);
    if (!s.ok()) return s.status();
    out.pg = s->get();
    out.store = std::move(s).value();
  } else {
    auto s = SqliteStore::Open(t.location, so);
    if (!s.ok()) return s.status();
    out.store = std::move(s).value();
  }
  return out;
}

WorkerStats RunWorker(Store& store, Waker& waker, const WorkerConfig& cfg,
                      const std::atomic<bool>& stop) {
  constexpr int64_t kLeaseMs = 60'000;
  WorkerStats st;
  ClaimFilter filter;
  filter.worker_id = cfg.worker_id;
  filter.process_id = getpid();
  // The job "runs" for no time: its outcome carries the claim time when
  // the latency probe asks for it.
  auto outcome = [&](int64_t claimed_ns) {
    return JobOutcome::Succeeded(cfg.stamp ? std::to_string(claimed_ns) : std::string());
  };
  std::optional<Job> held;  // batch off: the job FinishAndClaimNext handed over
  int64_t held_ns = 0;
  while (!stop.load()) {
    if (cfg.batch <= 1) {
      Result<std::optional<Job>> next = std::optional<Job>();
      if (held) {
        next = store.FinishAndClaimNext(Lease{held->id, held->worker_id, held->fencing_token},
                                        outcome(held_ns), filter, kLeaseMs);
        ++st.jobs;
      } else {
        next = store.ClaimNextJob(filter, kLeaseMs);
      }
      ++st.claim_calls;
      if (!next.ok()) {
        // A busy database (SQLITE_BUSY past the timeout on a loaded
        // machine) is tried again with the job still held; a lost lease
        // means the finish went through (PostgreSQL runs it as its own
        // transaction) and only the claim failed.
        std::fprintf(stderr, "worker %s: %s\n", cfg.worker_id.c_str(),
                     next.status().ToString().c_str());
        if (next.status().code() == StatusCode::kLeaseLost) held.reset();
        if (held) --st.jobs;
        continue;
      }
      held.reset();
      if (next->has_value()) {
        held_ns = NowNs();
        held = std::move(*next);
        continue;
      }
    } else {
      auto got = store.ClaimJobs(filter, kLeaseMs, cfg.batch);
      ++st.claim_calls;
      if (!got.ok()) {
        ++st.errors;
        std::fprintf(stderr, "worker %s: %s\n", cfg.worker_id.c_str(),
                     got.status().ToString().c_str());
        continue;
      }
      if (!got->empty()) {
        int64_t claimed_ns = NowNs();
        std::vector<std::pair<Lease, JobOutcome>> done;
        for (const Job& j : *got) {
          done.emplace_back(Lease{j.id, j.worker_id, j.fencing_token}, outcome(claimed_ns));
        }
        // The jobs stay ours until finished: a failed transaction (nothing
        // applied) is tried again.
        auto res = store.FinishJobs(done);
        for (int attempt = 0; !res.ok() && attempt < 20; ++attempt) {
          std::fprintf(stderr, "worker %s: %s\n", cfg.worker_id.c_str(),
                       res.status().ToString().c_str());
          res = store.FinishJobs(done);
        }
        if (!res.ok()) {
          ++st.errors;
          continue;
        }
        for (const Status& s : *res) {
          if (s.ok()) {
            ++st.jobs;
          } else {
            ++st.errors;
          }
        }
        continue;
      }
    }
    ++st.empty_claims;
    waker.Wait(cfg.poll_ms);
  }
  if (held) {  // stopped while holding one: hand it back (never happens when all are done)
    store.FinishJob(Lease{held->id, held->worker_id, held->fencing_token}, JobOutcome::Released())
        .IgnoreError();
  }
  return st;
}

int WorkerMain(const std::vector<std::string>& args) {
  Target target;
  WorkerConfig cfg;
  bool notify = false;
  for (size_t i = 0; i + 1 < args.size(); i += 2) {
    const std::string& k = args[i];
    const std::string& v = args[i + 1];
    if (k == "--backend") target.postgres = v == "postgres";
    if (k == "--target") target.location = v;
    if (k == "--batch") cfg.batch = std::atoi(v.c_str());
    if (k == "--poll-ms") cfg.poll_ms = std::atoll(v.c_str());
    if (k == "--notify") notify = v == "1";
    if (k == "--stamp") cfg.stamp = v == "1";
    if (k == "--worker-id") cfg.worker_id = v;
  }
  Waker waker;
  auto opened = OpenStore(target, notify, 2, [&waker] { waker.Notify(); });
  if (!opened.ok()) {
    std::fprintf(stderr, "worker: open %s: %s\n", target.location.c_str(),
                 opened.status().ToString().c_str());
    return 1;
  }
  // Stop when the parent closes our stdin — or dies, which closes it too.
  std::atomic<bool> stop{false};
  std::thread watcher([&] {
    char c;
    while (read(0, &c, 1) > 0) {
    }
    stop = true;
    waker.Notify();
  });
  std::printf("ready\n");
  std::fflush(stdout);
  WorkerStats st = RunWorker(*opened->store, waker, cfg, stop);
  watcher.join();
  if (opened->pg) st.retries = opened->pg->Retries();
  std::printf("stats jobs=%lld claim_calls=%lld empty=%lld errors=%lld retries=%lld\n",
              static_cast<long long>(st.jobs), static_cast<long long>(st.claim_calls),
              static_cast<long long>(st.empty_claims), static_cast<long long>(st.errors),
              static_cast<long long>(st.retries));
  std::fflush(stdout);
  return 0;
}

std::unique_ptr<Child> Child::Spawn(const std::vector<std::string>& args) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) return nullptr;
  std::vector<char*> argv;
  static char self[] = "/proc/self/exe";
  argv.push_back(self);
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return nullptr;
  if (pid == 0) {
    dup2(in[0], 0);  // dup2 clears O_CLOEXEC on the copies
    dup2(out[1], 1);
    execv(self, argv.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  auto c = std::unique_ptr<Child>(new Child());
  c->pid_ = pid;
  c->in_fd_ = in[1];
  c->out_fd_ = out[0];
  return c;
}

std::string Child::ReadLine(int64_t timeout_ms) {
  const int64_t deadline = NowNs() + timeout_ms * 1'000'000;
  for (;;) {
    if (auto nl = buf_.find('\n'); nl != std::string::npos) {
      std::string line = buf_.substr(0, nl);
      buf_.erase(0, nl + 1);
      return line;
    }
    int64_t left_ms = (deadline - NowNs()) / 1'000'000;
    if (left_ms <= 0) return "";
    pollfd p{out_fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left_ms)) <= 0) return "";
    char chunk[512];
    ssize_t n = read(out_fd_, chunk, sizeof chunk);
    if (n <= 0) return "";
    buf_.append(chunk, static_cast<size_t>(n));
  }
}

void Child::Stop() {
  if (in_fd_ >= 0) close(in_fd_);
  in_fd_ = -1;
}

Child::~Child() {
  Stop();
  if (pid_ > 0) {
    // A worker ends within one claim call of its stdin closing; give it 10 s.
    for (int i = 0; i < 1000; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  if (out_fd_ >= 0) close(out_fd_);
}

}  // namespace maestro::bench
