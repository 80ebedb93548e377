// Queue benchmark: the durable job runtime on SQLite (WAL) with no LLM.
//
//  1. Throughput: a producer enqueues N jobs while a WorkerPool (2 threads,
//     in-process wake-up) claims and completes them; jobs/s from the first
//     enqueue to the last completion. Each job costs three write
//     transactions (enqueue, claim, finish), each with its status event.
//  2. Create-to-claimed latency: one job at a time into an idle pool, from
//     the EnqueueJob call to the executor starting it. Measured with the
//     in-process wake-up and, as a baseline in the same run, with polling
//     only (poll interval 10 ms, no wake-up).
//
// Prints the figures; the last line is the summary.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <spdlog/spdlog.h>

#include "store/sqlite/sqlite_store.h"
#include "worker/worker_pool.h"

namespace maestro {
namespace {

using Clock = std::chrono::steady_clock;

// Succeeds at once, recording when each job started.
class TimingExecutor : public JobExecutor {
 public:
  Result<JobOutcome> Execute(const Job& job, const Lease&, CancelToken&) override {
    auto now = Clock::now();
    {
      std::lock_guard<std::mutex> lock(mu_);
      started_[job.id] = now;
    }
    if (++done_ >= target_) {
      std::lock_guard<std::mutex> lock(mu_);
      done_cv_.notify_all();
    }
    return JobOutcome::Succeeded("");
  }
  // Blocks until `n` jobs have started (no polling: the machine has 2 cores).
  void WaitDone(int64_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    target_ = n;
    done_cv_.wait(lock, [&] { return done_ >= n; });
  }
  Clock::time_point StartedAt(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    return started_[id];
  }
  bool Started(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    return started_.count(id) > 0;
  }
  std::atomic<int64_t> done_{0};

 private:
  std::atomic<int64_t> target_{INT64_MAX};
  std::condition_variable done_cv_;
  std::mutex mu_;
  std::unordered_map<std::string, Clock::time_point> started_;
};

struct Harness {
  Harness(const std::string& dir, bool wakeup, int64_t poll_ms, int workers = 2) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    StoreOptions so;
    if (wakeup) {
      so.on_job_available = [this] {
        if (pool) pool->Notify();
      };
    }
    store = std::move(SqliteStore::Open(dir + "/maestro.db", so)).value();
    WorkerPoolOptions wo;
    wo.threads = workers;
    wo.worker_id_prefix = "bench";
    wo.jobs.poll_interval_ms = poll_ms;
    wo.jobs.heartbeat_ms = 5'000;
    wo.jobs.lease_ms = 30'000;
    pool = std::make_unique<WorkerPool>(*store, executor, wo);
    for (int i = 0; i < 256; ++i) {
      NewTask t;
      t.instruction = "bench";
      t.piece = "ok";
      tasks.push_back(store->CreateTask(t).value().task.id);
    }
  }
  ~Harness() { pool->Shutdown(); }

  std::unique_ptr<SqliteStore> store;
  TimingExecutor executor;
  std::unique_ptr<WorkerPool> pool;
  std::vector<std::string> tasks;
};

// `producers` threads stand for concurrent API clients submitting work.
double Throughput(const std::string& dir, int n, int producers, int workers) {
  Harness h(dir, /*wakeup=*/true, 1'000, workers);
  h.executor.done_ = 0;
  int64_t base = h.executor.done_;  // the tasks' own first jobs run too
  h.pool->Start();
  auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      for (int i = p; i < n; i += producers) {
        NewJob j;
        j.task_id = h.tasks[i % h.tasks.size()];
        j.piece = "ok";
        if (!h.store->EnqueueJob(j).ok()) std::abort();
      }
    });
  }
  for (auto& t : threads) t.join();
  int64_t target = base + n + static_cast<int64_t>(h.tasks.size());
  h.executor.WaitDone(target);
  // Completion is recorded after Execute returns; wait for the pool to idle.
  while (h.pool->running_jobs() > 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  return (n + static_cast<double>(h.tasks.size())) / secs;
}

std::pair<double, double> Latency(const std::string& dir, bool wakeup, int samples) {
  Harness h(dir, wakeup, wakeup ? 1'000 : 10);
  h.pool->Start();
  // Let the tasks' first jobs drain so the pool is idle.
  while (h.executor.done_ < static_cast<int64_t>(h.tasks.size())) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::vector<double> ms;
  for (int i = 0; i < samples; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // idle workers are waiting
    NewJob j;
    j.task_id = h.tasks[i % h.tasks.size()];
    j.piece = "ok";
    auto t0 = Clock::now();
    auto job = h.store->EnqueueJob(j);
    if (!job.ok()) std::abort();
    while (!h.executor.Started(job->id)) std::this_thread::yield();
    ms.push_back(std::chrono::duration<double, std::milli>(h.executor.StartedAt(job->id) - t0)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms[static_cast<size_t>(ms.size() * 0.99)]};
}

}  // namespace
}  // namespace maestro

int main(int argc, char** argv) {
  using namespace maestro;
  spdlog::set_level(spdlog::level::err);
  int n = argc > 1 ? std::atoi(argv[1]) : 20'000;
  int samples = argc > 2 ? std::atoi(argv[2]) : 1'000;
  int producers = argc > 3 ? std::atoi(argv[3]) : 1;
  int workers = argc > 4 ? std::atoi(argv[4]) : 2;
  std::string dir = (std::filesystem::temp_directory_path() / "maestro-queue-bench").string();

  // Three throughput runs; report the median.
  std::vector<double> tput;
  for (int r = 0; r < 3; ++r) {
    tput.push_back(Throughput(dir, n, producers, workers));
    std::printf("throughput run %d: %.0f jobs/s\n", r + 1, tput.back());
  }
  std::sort(tput.begin(), tput.end());
  auto [wake_p50, wake_p99] = Latency(dir, /*wakeup=*/true, samples);
  std::printf("create->claimed with wake-up: p50=%.3f ms p99=%.3f ms (%d samples)\n", wake_p50,
              wake_p99, samples);
  auto [poll_p50, poll_p99] = Latency(dir, /*wakeup=*/false, samples / 4);
  std::printf("create->claimed polling 10 ms (baseline): p50=%.3f ms p99=%.3f ms\n", poll_p50,
              poll_p99);
  std::filesystem::remove_all(dir);
  std::printf(
      "queue_bench sqlite-wal workers=2 jobs=%d: throughput=%.0f jobs/s (median of 3) "
      "create->claimed p50=%.3f ms p99=%.3f ms (wake-up) vs p50=%.3f ms p99=%.3f ms (poll 10 ms)\n",
      n, tput[1], wake_p50, wake_p99, poll_p50, poll_p99);
  return 0;
}
