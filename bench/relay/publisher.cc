#include "publisher.h"

#include <time.h>
#include <unistd.h>

#include <atomic>
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
  // the Notifier first, the store's hooks bound to it, then the relay —
  // whose sends are counted here (each is one round trip and one implicit
  // transaction: PgEngine::Notify runs its NOTIFYs as one script).
  notify::Notifier relayed;
  StoreOptions so;
  relayed.Bind(so);
  auto opened = PgStore::Open(PgStoreOptions{plan.url, 8, true}, so);
  if (!opened.ok()) return ChildFail(out_fd, "open store: " + opened.status().ToString());
  PgStore* pg = opened->get();
  std::atomic<int64_t> sends{0};
  if (plan.relay) {
    relayed.StartDeltaRelay([pg, &sends](const std::vector<std::string>& payloads) {
      ++sends;
      return pg->Notify(notify::kDeltasChannel, payloads);
    });
  }
  // The baseline ("go off"): the same deltas into a Notifier with no relay,
  // as in a process whose deltas stay in its own hub.
  notify::Notifier local;
  ClaimFilter filter;
  filter.worker_id = "relay-bench-" + std::to_string(getpid());
  filter.process_id = getpid();
  std::vector<Job> jobs;
  while (static_cast<int>(jobs.size()) < plan.jobs) {
    auto claimed = pg->ClaimNextJob(filter, /*lease_ms=*/600'000);
    if (!claimed.ok()) return ChildFail(out_fd, "claim: " + claimed.status().ToString());
    if (!claimed->has_value()) return ChildFail(out_fd, "fewer queued jobs than planned");
    relayed.BeginRun((*claimed)->id, (*claimed)->fencing_token);
    local.BeginRun((*claimed)->id, (*claimed)->fencing_token);
    jobs.push_back(std::move(**claimed));
  }
  WriteLine(out_fd, "ready " + std::to_string(jobs.size()));

  const size_t n = jobs.size();
  std::vector<int64_t> sent(n, 0);  // per job, over all windows (`n` of the deltas)
  int64_t published_relayed = 0;
  notify::DeltaRelay::Stats last_stats;
  int64_t last_sends = 0;
  Clock* clock = SystemClock::Default();
  for (std::string cmd; (cmd = ReadLine(in_fd)) != "finish";) {
    if (cmd != "go" && cmd != "go off") return ChildFail(out_fd, "unknown command " + cmd);
    notify::Notifier& to = cmd == "go" ? relayed : local;
    // Each job's deltas at `rate`, the jobs' phases spread over one period
    // so the total is an even stream, not a burst per tick.
    std::vector<int64_t> window(n, 0);
    int64_t total = 0;
    const int64_t start = RealtimeNs();
    const auto due_by = [&](double t, size_t i) {
      return static_cast<int64_t>(std::floor(t * plan.rate + static_cast<double>(i) / n));
    };
    for (;;) {
      const double t = static_cast<double>(RealtimeNs() - start) / 1e9;
      const bool last = t >= plan.seconds;
      const double until = last ? plan.seconds : t;
      for (size_t i = 0; i < n; ++i) {
        for (int64_t due = due_by(until, i); window[i] < due; ++window[i], ++sent[i], ++total) {
          Json delta = {{"type", "text"}, {"text", " tok"}, {"n", sent[i]}, {"ns", RealtimeNs()}};
          to.PublishDelta(jobs[i].id, StampDelta(std::move(delta), clock->NowMs()));
        }
      }
      if (last) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    // The relay has sent (or dropped) every delta of the window.
    if (&to == &relayed && plan.relay) {
      published_relayed += total;
      for (int i = 0; i < 5000; ++i) {
        notify::DeltaRelay::Stats now = relayed.relay_stats();
        if (static_cast<int64_t>(now.deltas + now.dropped) >= published_relayed) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    const notify::DeltaRelay::Stats st = relayed.relay_stats();
    const int64_t s = sends.load();
    WriteLine(out_fd, "sent " + std::to_string(total) + " " +
                          std::to_string(st.payloads - last_stats.payloads) + " " +
                          std::to_string(st.deltas - last_stats.deltas) + " " +
                          std::to_string(st.dropped - last_stats.dropped) + " " +
                          std::to_string(st.send_errors - last_stats.send_errors) + " " +
                          std::to_string(s - last_sends));
    last_stats = st;
    last_sends = s;
    for (size_t i = 0; i < n; ++i) {
      WriteLine(out_fd, "job " + jobs[i].id + " " + std::to_string(window[i]));
    }
    WriteLine(out_fd, "done");
  }
  // Sends what the relay still holds and ends its thread (as Runtime::Stop).
  relayed.StopDispatchers();
  for (const Job& j : jobs) {
    Status fin =
        pg->FinishJob(Lease{j.id, j.worker_id, j.fencing_token}, JobOutcome::Succeeded(""));
    if (!fin.ok()) return ChildFail(out_fd, "finish: " + fin.ToString());
  }
  WriteLine(out_fd, "finished");
  return 0;
}

}  // namespace maestro::bench
