// The worker side of bench/relay: a child process (forked by relay_bench
// before it starts any thread) that holds N running jobs and publishes their
// live deltas exactly as a `maestro worker` does — a notify::Notifier bound
// to a PgStore, StartDeltaRelay with PgStore::Notify, BeginRun with each
// claim's fencing token, PublishDelta of StampDelta'd deltas — so the deltas
// reach `maestro serve` only through PostgreSQL.
//
// The parent drives it over two pipes, one line per message:
//   child → parent  "ready <claimed>"        the jobs are claimed and running
//   parent → child  "go"                     publish for `seconds` through
//                   the relay; "go off": into a Notifier without one (the
//                   baseline: the deltas stay in this process)
//   child → parent  "sent <n> <payloads> <relayed> <dropped> <send_errors>
//                   <sends>" (the window's), then "job <id> <count>" per job
//                   and "done" (the relay has sent everything)
//   … more "go" windows …
//   parent → child  "finish"                 finish the jobs (succeeded)
//   child → parent  "finished"
// Each delta is {"type":"text","text":" tok","n":<k>,"ns":<CLOCK_REALTIME
// ns>} plus the `at` of StampDelta; `n` counts from 0 per job, so the
// client checks order and loss without the server's numbering.
//
// Thread safety: RunPublisher runs on the child's only thread (the relay's
// sender thread is the Notifier's).
#pragma once

#include <string>

namespace maestro::bench {

struct PublisherPlan {
  std::string url;     // the PostgreSQL database
  int jobs = 1;        // jobs to claim (the parent queued exactly these)
  double rate = 20;    // deltas per second per job
  double seconds = 6;  // how long to publish
  bool relay = true;   // start the relay (without it every window is "go off")
};

// Runs the child's whole life; returns its exit code.
int RunPublisher(const PublisherPlan& plan, int in_fd, int out_fd);

// CLOCK_REALTIME in ns: one clock for both processes on this machine, the
// one `at` (ms) is read from too.
int64_t RealtimeNs();

}  // namespace maestro::bench
