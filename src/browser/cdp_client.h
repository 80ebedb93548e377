// CdpClient: one headless Chromium driven over the Chrome DevTools Protocol
// on --remote-debugging-pipe (the browser reads NUL-terminated JSON commands
// from its fd 3 and writes responses and events to its fd 4). A pipe, not a
// debugging port: no other process on the host can reach the browser, and
// the browser dies when the pipe closes.
//
// Where it sits: BrowserSession (browser_session.h) owns one per job and
// speaks page-level CDP through it; nothing else talks to Chromium.
//
// Thread safety: Call() and Send() may be used from any thread. Events are
// delivered on the reader thread: the handler must not Call() (it would wait
// for a response only the reader thread can deliver) but may Send().
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/env.h"
#include "core/json.h"
#include "core/mutex.h"
#include "core/status.h"

namespace maestro::browser {

struct LaunchSpec {
  // The command that starts Chromium (its flags are appended): the browser
  // binary, or a wrapper such as bubblewrap followed by the binary.
  std::vector<std::string> argv;
  std::vector<std::string> flags;  // chromium flags (BrowserFlags)
};

class CdpClient {
 public:
  using EventFn = std::function<void(const std::string& method, const Json& params,
                                     const std::string& session)>;

  // Starts the browser and waits until it answers Browser.getVersion.
  // kUnavailable when it cannot start or does not answer within `timeout`.
  static Result<std::unique_ptr<CdpClient>> Launch(Env& env, const LaunchSpec& spec,
                                                   EventFn on_event,
                                                   std::chrono::milliseconds timeout);
  ~CdpClient();
  CdpClient(const CdpClient&) = delete;
  CdpClient& operator=(const CdpClient&) = delete;

  // Sends a command and waits for its response: the `result` object, or the
  // protocol error as kInvalidArgument / kDeadlineExceeded / kUnavailable
  // (the browser is gone). `session` "" addresses the browser itself.
  Result<Json> Call(const std::string& method, Json params, const std::string& session,
                    std::chrono::milliseconds timeout);
  // Sends a command without waiting for its response.
  Status Send(const std::string& method, Json params, const std::string& session);

  // Closes the browser: Browser.close, then SIGKILL to its process group
  // after a grace period, and reaps it. Idempotent; the destructor calls it.
  void Close();
  bool alive() const { return !gone_.load(); }
  int pid() const { return pid_; }

 private:
  CdpClient() = default;
  Status Write(const std::string& message) EXCLUDES(write_mu_);
  void ReadLoop();
  void Deliver(std::string message);
  std::string StderrTail();  // the browser's last stderr lines, for a launch error

  EventFn on_event_;
  int pid_ = -1;
  int to_browser_ = -1;    // our end of the browser's fd 3
  int from_browser_ = -1;  // our end of the browser's fd 4 (the same socket)
  int stderr_ = -1;        // the browser's stderr, drained by the reader
  int wake_read_ = -1, wake_write_ = -1;
  std::thread reader_;
  std::atomic<bool> gone_{false};
  std::atomic<bool> closed_{false};
  std::atomic<int64_t> next_id_{1};

  Mutex write_mu_;

  struct Pending {
    bool done = false;
    Json response;
  };
  Mutex mu_;
  CondVar cv_;
  std::map<int64_t, std::shared_ptr<Pending>> pending_ GUARDED_BY(mu_);
  std::deque<std::string> stderr_tail_ GUARDED_BY(mu_);
};

}  // namespace maestro::browser
