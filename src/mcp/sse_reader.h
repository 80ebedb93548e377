// SseReader: turns the bytes of a text/event-stream reply into events, by the
// WHATWG rules an MCP client needs: `data:` lines joined by "\n", `id:` kept
// as the stream's last event id (also from an event without data — MCP's
// "priming" event is `id: X` + an empty `data:`, sent so the client can
// resume), `retry:` kept as the reconnection delay, comments (keep-alives)
// skipped, and LF, CR or CRLF line ends, split anywhere between chunks.
//
// Private to src/mcp (the HTTP transport). src/llm has its own parser for
// chat-completion streams; this one is small and needs nothing above core.
//
// Thread safety: none; one reader per stream, fed from one thread.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace maestro::mcp {

class SseReader {
 public:
  struct Event {
    std::string type;  // `event:`, "" for the default ("message")
    std::string data;  // the data lines joined by "\n"
  };

  // Feeds the next bytes; calls `on_event` for each event they complete.
  // Events whose data is empty are not dispatched.
  void Feed(std::string_view bytes, const std::function<void(const Event&)>& on_event);

  // The id of the newest event that carried one; "" when none did.
  const std::string& last_event_id() const { return last_event_id_; }
  // The server's `retry:` in milliseconds, when it sent one.
  std::optional<int> retry_ms() const { return retry_ms_; }

 private:
  void Line(std::string_view line, const std::function<void(const Event&)>& on_event);

  std::string line_;
  bool after_cr_ = false;  // the previous byte ended a line with CR: skip an LF
  std::string data_;
  std::string type_;
  int data_lines_ = 0;
  std::string last_event_id_;
  std::optional<int> retry_ms_;
};

}  // namespace maestro::mcp
