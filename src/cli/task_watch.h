// `maestro task watch <id>`: follows one task across all its jobs (follow-ups
// after an answer, continuations, retries, resumptions after a decision)
// until the task ends — its newest job terminal and no job open.
//
// Two streams of the server are read (docs/api.md "Streams"): the task's
// durable events (GET /api/local/tasks/:id/events, SSE, resumed with
// Last-Event-ID after a drop) on the calling thread, and the live deltas of
// each job in turn (GET /api/local/jobs/:id/stream) on one helper thread —
// a task's jobs run one after another, so one follower suffices. Assistant
// text is printed as it streams, a tool call as one line, a question or a
// pending request with the exact command that answers or decides it.
//
// A wait does not end the watch: an answer given from another shell resumes
// the same task and the watch prints on. WatchOptions::until_wait ends it at
// the first current wait (after the hints); follow=false prints what has
// happened so far and returns.
//
// With ClientOptions::json the task's events are printed as the server sent
// them, one JSON object a line (no text deltas, no hints); the end is the
// same.
//
// Exit codes: 0 the task succeeded (or until_wait hit a wait, or no-follow),
// 1 it failed or was cancelled or the stream was lost for good, 2 no server /
// refused, 130 interrupted (SIGINT).
#pragma once

#include <iosfwd>
#include <string>

#include "cli/api_client.h"

namespace maestro::cli {

struct WatchOptions {
  bool follow = true;
  bool until_wait = false;
};

int TaskWatch(const ClientOptions& o, const std::string& task_id, const WatchOptions& w,
              std::ostream& out);

}  // namespace maestro::cli
