// The plain types the routes speak: an HttpRequest in, an HttpResponse out, and a
// StreamSource for server-sent events. No HTTP library appears here; the one
// file that includes one is http_server.cc.
//
// Streams are pull-based: the server asks the source for frames when it has
// said (through `wake`) that it may have some, writes them, and asks again.
// A slow client therefore only delays its own pulls — the source reads its
// backlog from where it lives (the event log, the job's ring buffer) and no
// bytes pile up in memory for it. A source is destroyed as soon as its
// client goes away; its destructor ends its subscriptions.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/principal.h"
#include "core/json.h"
#include "core/status.h"

namespace maestro::api {

struct HttpRequest {
  std::string method;                                        // "GET", "POST", ...
  std::string path;                                          // without the query
  std::vector<std::pair<std::string, std::string>> query;    // decoded
  std::vector<std::pair<std::string, std::string>> headers;  // as sent
  std::string body;
  std::vector<std::string> params;  // the route's captures, in order
  std::string user;                 // set by the API once authenticated (= caller.user)
  Principal caller;                 // the same caller, with its scopes (api/principal.h)

  // The first header named `name` (case-insensitive) or "".
  std::string Header(std::string_view name) const;
  // The first query parameter `name` or "".
  std::string Query(std::string_view name) const;
};

class StreamSource {
 public:
  enum class Step {
    kMore,  // frames were written and more are ready now: pull again
    kIdle,  // nothing more until the next wake (or keep-alive tick)
    kEnd,   // the stream is over; `out` holds its last frames
  };
  virtual ~StreamSource() = default;
  // Called once, before the first pull. `wake` may be called from any
  // thread, any number of times, until the source is destroyed.
  virtual void Watch(std::function<void()> wake) = 0;
  // Appends ready SSE frames (SseFrame) to *out. Runs on the handler pool
  // (it may read the store) unless PullsInMemory(), never concurrently for
  // one source. `periodic`: the pull was caused by the keep-alive tick, not
  // a wake (a source that only hears about this process's commits re-reads
  // then).
  virtual Step Pull(bool periodic, std::string* out) = 0;
  // True when the next Pull(periodic) reads memory only: the server then
  // pulls on the I/O thread and saves two thread hand-offs per frame.
  virtual bool PullsInMemory(bool periodic) const {
    (void)periodic;
    return false;
  }
  // Pull this often without a wake too (0: only on the keep-alive tick), for
  // what no wake announces — e.g. a job finished by another process.
  virtual std::chrono::milliseconds poll_interval() const { return std::chrono::milliseconds(0); }
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // Set: the response is an SSE stream of this source (body is ignored).
  std::shared_ptr<StreamSource> stream;
  // Concurrent streams are limited per key (the caller's token).
  std::string stream_key;
};

// One SSE frame: optional `id:`, optional `event:`, and `data:` lines (a
// newline in `data` starts another data line), ended by a blank line.
std::string SseFrame(std::string_view id, std::string_view event, std::string_view data);
// A keep-alive comment frame.
inline constexpr std::string_view kSseKeepAlive = ": keep-alive\n\n";

}  // namespace maestro::api
