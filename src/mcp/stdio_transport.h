// StdioTransport: an MCP server as a child process — newline-delimited
// JSON-RPC on its stdin/stdout, its stderr handed on line by line.
//
// Where it sits: under mcp::Client (see mcp_client.h) for a Transport with
// argv. The child is started with posix_spawnp (argv[0] looked up in
// maestro's PATH) in a process group of its own, with Transport::env as its
// whole environment and SIGPIPE/SIGTERM/SIGINT at their defaults. One reader
// thread poll()s stdout and stderr: complete stdout lines are parsed and go
// to Sink::on_message (a line that is not JSON is logged and skipped),
// stderr lines to `on_stderr`; EOF on stdout is Sink::on_lost with the exit
// code and the last stderr lines.
//
// Ownership: the transport owns the child. Close() (and the destructor)
// closes stdin and gives the server 100 ms to end by itself (as the MCP spec
// asks), then sends SIGTERM to the group, SIGKILL (to the group, whatever is
// left of it) after 500 ms more, and reaps the child — a server is gone
// within ~0.6 s and never left as a zombie. The
// child is reaped only there, never earlier: until then its pid, and so its
// group id, cannot be reused, which keeps kill(-pgid) aimed at our group.
//
// Thread safety: as Channel. `on_stderr` runs on the reader thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <deque>
#include <functional>
#include <string>
#include <thread>

#include "core/mutex.h"
#include "mcp/channel.h"
#include "mcp/mcp_client.h"

namespace maestro::mcp {

class StdioTransport final : public Channel {
 public:
  StdioTransport(Transport spec, std::function<void(const std::string&)> on_stderr, Env& env);
  ~StdioTransport() override;
  StdioTransport(const StdioTransport&) = delete;
  StdioTransport& operator=(const StdioTransport&) = delete;

  // kUnavailable when the program cannot be started (its message names it).
  Status Start(Sink sink) override;
  Status Send(const Json& message, const DoneFn& done) override;
  void Close() override;

 private:
  void ReadLoop();
  // Hands complete lines of `buf` to `fn`, keeping the unfinished rest.
  static void TakeLines(std::string& buf, const std::function<void(std::string)>& fn);
  void StderrLine(std::string line);
  Status LostStatus();

  const Transport spec_;
  Env& env_;
  const std::function<void(const std::string&)> on_stderr_;
  Sink sink_;
  pid_t pid_ = -1;  // set by Start only; reaped by Close
  std::atomic<bool> closing_{false};
  int stdout_fd_ = -1, stderr_fd_ = -1;   // read ends; the reader thread's
  int wake_read_ = -1, wake_write_ = -1;  // Close wakes the reader's poll()
  std::thread reader_;

  Mutex write_mu_;
  int stdin_fd_ GUARDED_BY(write_mu_) = -1;  // -1 once closed

  Mutex mu_;
  bool closed_ GUARDED_BY(mu_) = false;
  std::deque<std::string> err_tail_ GUARDED_BY(mu_);  // the newest stderr lines
};

}  // namespace maestro::mcp
