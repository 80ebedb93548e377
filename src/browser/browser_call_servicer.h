// BrowserCallServicer: the worker-process half of the store-routed live
// view (issue 48 item 2). When the API that a person talks to runs in
// another process (`serve --workers 0` + `maestro worker`), it cannot reach
// a parked job's browser directly; it writes a call addressed to the holder
// (store/browser_call_records.h) and this servicer, in the process whose
// BrowserService holds the browser, runs it on the session and writes the
// answer. Workers need no listening port and no new credential: they only
// reach the database, as they already do.
//
// One round (Tick), every `poll` (~120 ms) on its own thread:
//   - nothing open in the BrowserService: nothing is read or written (no
//     polling of the store while this process holds no browser);
//   - each open browser's job is checked against the job row, every round:
//     it must have last run on a worker of this process (Job::worker_id starts with
//     `worker_id_prefix` + ":"); a job that since ran elsewhere has its
//     browser closed here, so two Chromiums never keep one task's profile;
//   - the holder rows are refreshed every `heartbeat` (~1 s), a closed
//     browser's row dropped;
//   - the calls pending for each held job AND addressed to the worker id that
//     holds it are run: screenshot, click/text/key (ParseLiveInput again on
//     the row's request: a row is untrusted), done (the login is handed
//     over: BrowserService::MarkLoginHandedOver), release (the browser
//     closes: the job goes on elsewhere). A call for a job this process does
//     not hold is never read.
//
// Before this process launches a job's Chromium (BrowserService's
// before-launch hook, on the job's worker thread), a browser that another
// process still holds for the job (a fresh holder row under a worker id not
// of this process) is released first: a `release` call, waited for up to
// `release_wait`. So a job resumed other than through the live view's Done
// (a comment) and claimed here never opens the task's profile beside the
// holder's Chromium.
//
// Thread safety: Start/Stop from the owning thread; Tick runs on the
// servicer's thread (or a test's, when not started).
#pragma once

#include <chrono>
#include <map>
#include <string>

#include "browser/browser_service.h"
#include "core/clock.h"
#include "core/periodic_task.h"
#include "store/store.h"

namespace maestro::browser {

// What the holder answers when its session is gone (the API says 404).
inline constexpr const char* kNoLiveBrowser = "has no live browser";

struct BrowserCallServicerOptions {
  std::chrono::milliseconds poll{120};
  std::chrono::milliseconds heartbeat{1000};
  int calls_per_round = 8;  // per job
  std::chrono::milliseconds holder_fresh{5'000};
  Clock* clock = SystemClock::Default();  // what the store stamps seen_at with
  std::chrono::milliseconds release_wait{5'000};
};

class BrowserCallServicer {
 public:
  // `worker_id_prefix`: "host:pid", the prefix of this process's worker ids
  // (WorkerPoolOptions::worker_id_prefix).
  BrowserCallServicer(Store& store, BrowserService& browsers, std::string worker_id_prefix,
                      BrowserCallServicerOptions options = {});
  ~BrowserCallServicer();
  BrowserCallServicer(const BrowserCallServicer&) = delete;
  BrowserCallServicer& operator=(const BrowserCallServicer&) = delete;

  // Start also sets the BrowserService's before-launch hook; Stop clears it.
  void Start();
  void Stop();  // also drops this process's holder rows

  // Before a launch here: a browser another process holds for the job is
  // released (see above). Any thread.
  void ReleaseElsewhere(const std::string& job_id);

  // One round (see above).
  void Tick();

 private:
  void RunCall(const BrowserCall& call);
  Result<std::string> Answer(const BrowserCall& call);
  void Forget(const std::string& job_id);

  Store& store_;
  BrowserService& browsers_;
  const std::string prefix_;
  const BrowserCallServicerOptions options_;
  // The jobs whose browser this process holds, and the worker id each is
  // addressed to. Touched by the tick thread only (Stop joins it first).
  std::map<std::string, std::string> held_;
  std::chrono::steady_clock::time_point last_beat_{};
  PeriodicTask loop_;
};

}  // namespace maestro::browser
