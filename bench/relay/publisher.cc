#include "publisher.h"

#include <time.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/json.h"
#include "notify/delta_stamp.h"
#include "notify/notifier.h"
#include "store/postgres/pg_store.h"

namespace maestro::bench {
namespace {

bool WriteLine(int fd, const std::string& line) {
  std::string s = line + "\n";
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = write(fd, s.data() + off, s.size() - off);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// One line (without '\n'), or "" at EOF.
std::string ReadLine(int fd) {
  std::string line;
  char c;
  while (read(fd, &c, 1) == 1) {
    if (c == '\n') return line;
    line += c;
  }
  return line;
}

int ChildFail(int out_fd, const std::string& what) {
  std::fprintf(stderr, "publisher: %s\n", what.c_str());
  WriteLine(out_fd, "error " + what);
  return 1;
}

}  // namespace

int64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

int RunPublisher(const PublisherPlan& plan, int in_fd, int out_fd) {
  // As cli/runtime.cc's OpenRuntime and StartWorkers for `maestro worker`:
  // the Notifier first, the store's hooks bound to it, then the relay.
  notify::Notifier notifier;
  StoreOptions so;
  notifier.Bind(so);
  auto opened = PgStore::Open(PgStoreOptions{plan.url, 8, true}, so);
  if (!opened.ok()) return ChildFail(out_fd, "open store: " + opened.status().ToString());
  PgStore* pg = opened->get();
  if (plan.relay) {
    notifier.StartDeltaRelay([pg](const std::vector<std::string>& payloads) {
      return pg->Notify(notify::kDeltasChannel, payloads);
    });
  }
  ClaimFilter filter;
  filter.worker_id = "relay-bench-" + std::to_string(getpid());
  filter.process_id = getpid();
  std::vector<Job> jobs;
  while (static_cast<int>(jobs.size()) < plan.jobs) {
    auto claimed = pg->ClaimNextJob(filter, /*lease_ms=*/600'000);
    if (!claimed.ok()) return ChildFail(out_fd, "claim: " + claimed.status().ToString());
    if (!claimed->has_value()) return ChildFail(out_fd, "fewer queued jobs than planned");
    notifier.BeginRun((*claimed)->id, (*claimed)->fencing_token);
    jobs.push_back(std::move(**claimed));
  }
  WriteLine(out_fd, "ready " + std::to_string(jobs.size()));
  if (ReadLine(in_fd) != "go") return ChildFail(out_fd, "no go");

  // Each job's deltas at `rate`, the jobs' phases spread over one period so
  // the total is an even stream, not a burst per tick.
  const size_t n = jobs.size();
  std::vector<int64_t> sent(n, 0);
  int64_t total = 0;
  Clock* clock = SystemClock::Default();
  const int64_t start = RealtimeNs();
  const auto due_by = [&](double t, size_t i) {
    return static_cast<int64_t>(std::floor(t * plan.rate + static_cast<double>(i) / n));
  };
  for (;;) {
    const double t = static_cast<double>(RealtimeNs() - start) / 1e9;
    const bool last = t >= plan.seconds;
    const double until = last ? plan.seconds : t;
    for (size_t i = 0; i < n; ++i) {
      for (int64_t due = due_by(until, i); sent[i] < due; ++sent[i], ++total) {
        Json delta = {{"type", "text"}, {"text", " tok"}, {"n", sent[i]}, {"ns", RealtimeNs()}};
        notifier.PublishDelta(jobs[i].id, StampDelta(std::move(delta), clock->NowMs()));
      }
    }
    if (last) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // Sends what the relay still holds and ends its thread (as Runtime::Stop).
  notifier.StopDispatchers();
  const notify::DeltaRelay::Stats st = notifier.relay_stats();
  WriteLine(out_fd, "sent " + std::to_string(total) + " " + std::to_string(st.payloads) + " " +
                        std::to_string(st.deltas) + " " + std::to_string(st.dropped) + " " +
                        std::to_string(st.send_errors));
  for (size_t i = 0; i < n; ++i) {
    WriteLine(out_fd, "job " + jobs[i].id + " " + std::to_string(sent[i]));
  }
  WriteLine(out_fd, "done");
  if (ReadLine(in_fd) != "finish") return ChildFail(out_fd, "no finish");
  for (const Job& j : jobs) {
    Status fin =
        pg->FinishJob(Lease{j.id, j.worker_id, j.fencing_token}, JobOutcome::Succeeded(""));
    if (!fin.ok()) return ChildFail(out_fd, "finish: " + fin.ToString());
  }
  WriteLine(out_fd, "finished");
  return 0;
}

}  // namespace maestro::bench
