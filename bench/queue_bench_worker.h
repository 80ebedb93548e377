// The worker side of queue_bench: a claim→finish loop over one Store, run
// either in a worker PROCESS (queue_bench re-executes itself with the
// hidden `--role worker` flag) or, for SQLite's in-process wake-up, on a
// thread of the bench itself.
//
// Parent and worker process talk over two pipes: the worker prints "ready"
// once its store is open, the parent closes the worker's stdin to stop it
// (so a worker also stops when the bench dies), and the worker prints one
// "stats ..." line before it exits.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/status.h"
#include "store/sql/sql_store.h"

namespace maestro {
class PgStore;
}

namespace maestro::bench {

// Where a round's store lives: a SQLite file or a PostgreSQL database URL.
struct Target {
  bool postgres = false;
  std::string location;
};

// A wake-up that is never lost: Notify before Wait makes Wait return at once.
class Waker {
 public:
  void Notify() {
    std::lock_guard<std::mutex> lock(mu_);
    pending_ = true;
    cv_.notify_all();
  }
  void Wait(int64_t ms) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(ms), [&] { return pending_; });
    pending_ = false;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool pending_ = false;
};

struct OpenedStore {
  std::unique_ptr<SqlStore> store;
  PgStore* pg = nullptr;  // the same store when it is on PostgreSQL
};

// Opens a store on `t`; `on_available` (may be empty) becomes
// StoreOptions::on_job_available. `notify` = LISTEN (PostgreSQL only).
Result<OpenedStore> OpenStore(const Target& t, bool notify, int pool_size,
                              std::function<void()> on_available);

struct WorkerConfig {
  std::string worker_id = "bench";
  int batch = 1;        // 1: ClaimNextJob + FinishAndClaimNext, as WorkerPool does
  int64_t poll_ms = 5;  // idle wait when no wake-up comes
  bool stamp = false;   // result = steady-clock ns at which the claim returned
};

struct WorkerStats {
  int64_t jobs = 0;
  int64_t claim_calls = 0;  // ClaimNextJob / ClaimJobs / FinishAndClaimNext calls
  int64_t empty_claims = 0;
  int64_t errors = 0;
  int64_t retries = 0;  // PostgreSQL write attempts rolled back and rerun
};

// Claims and finishes (succeeded) jobs until `stop`; idles on `waker`.
WorkerStats RunWorker(Store& store, Waker& waker, const WorkerConfig& cfg,
                      const std::atomic<bool>& stop);

// main() of `queue_bench --role worker ...`.
int WorkerMain(const std::vector<std::string>& args);

// Monotonic nanoseconds (CLOCK_MONOTONIC: one clock for all processes).
int64_t NowNs();

// A worker process started by the parent.
class Child {
 public:
  // Re-executes this binary with `args`; the child's stdin and stdout are pipes.
  static std::unique_ptr<Child> Spawn(const std::vector<std::string>& args);
  // Stops the child (closes its stdin) and reaps it; kills it if it lingers.
  ~Child();
  // The next line the child printed ("" at EOF or after `timeout_ms`).
  std::string ReadLine(int64_t timeout_ms);
  // Closes the child's stdin: it finishes its current call and exits.
  void Stop();

 private:
  pid_t pid_ = -1;
  int in_fd_ = -1;   // our end of its stdin
  int out_fd_ = -1;  // our end of its stdout
  std::string buf_;
};

}  // namespace maestro::bench
