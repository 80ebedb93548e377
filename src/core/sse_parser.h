// SseParser: Server-Sent Events framing by the WHATWG "event stream"
// interpretation rules, the one reader for every stream maestro consumes —
// the LLM's chat-completion stream (src/llm), an MCP server's HTTP replies
// (src/mcp) and the CLI's `task watch` (src/cli).
//
// Raw bytes go in exactly as they arrive — split anywhere, even inside a
// CRLF — and whole events come out: `data:` lines of one event joined with
// "\n", lines ending in LF, CRLF or CR, an event dispatched by a blank line
// and only when its data is not empty (MCP's "priming" event, `id:` with an
// empty `data:`, is not an event but its id is kept), `:` comment lines
// (keep-alives) reported separately, `id:` kept as the stream's last event id
// (not when it holds a NUL), `retry:` kept as the reconnection delay. It
// knows nothing of HTTP or JSON.
//
// Thread safety: none; one parser per stream, fed from one thread.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace maestro {

struct SseEvent {
  std::string event;  // the `event:` field, empty for the default "message"
  std::string data;   // `data:` lines joined with '\n'
  std::string id;     // this event's own `id:` field, "" when it had none
};

class SseParser {
 public:
  using EventFn = std::function<void(const SseEvent&)>;
  // Called with the text after ':' of a comment line (e.g. " keep-alive").
  using CommentFn = std::function<void(std::string_view)>;

  explicit SseParser(EventFn on_event, CommentFn on_comment = nullptr)
      : on_event_(std::move(on_event)), on_comment_(std::move(on_comment)) {}

  // Consumes `bytes`; calls the callbacks for every complete line/event.
  void Feed(std::string_view bytes);

  // Ends the stream. An event without its terminating blank line is
  // discarded (as the SSE spec says); returns true when that happened, i.e.
  // the stream was cut in the middle of an event.
  bool Finish();

  // The id of the newest event that carried one, even one not yet complete
  // or without data (what a reconnect sends as Last-Event-ID); "" when none.
  const std::string& last_event_id() const { return last_event_id_; }
  // The server's `retry:` in milliseconds, when it sent one.
  std::optional<int> retry_ms() const { return retry_ms_; }

  size_t events() const { return events_; }
  size_t comments() const { return comments_; }

 private:
  void ProcessLine(std::string_view line);
  void Dispatch();
  void Reset();

  EventFn on_event_;
  CommentFn on_comment_;
  std::string line_;      // bytes of the current, unterminated line
  bool skip_lf_ = false;  // last byte was CR: a following LF belongs to it
  bool has_data_ = false;
  bool pending_ = false;  // any field seen since the last dispatch
  SseEvent cur_;
  std::string last_event_id_;
  std::optional<int> retry_ms_;
  size_t events_ = 0;
  size_t comments_ = 0;
};

}  // namespace maestro
