// SseParser: incremental Server-Sent Events framing (WHATWG "event stream"
// interpretation), the bottom layer of the LLM client's streaming path.
//
// The HTTP layer (llm_client.cc) hands it raw response bytes exactly as they
// arrive — split anywhere, even inside a CRLF — and gets back whole events.
// It knows nothing of HTTP, JSON or OpenAI: `data:` lines of one event are
// joined with '\n', `:` comment lines (keep-alives) are reported separately,
// lines end in LF, CRLF or CR, and an event is dispatched by a blank line.
// The chunk JSON inside `data` is interpreted by StreamAssembler.
//
// Thread safety: none; one parser per stream, used by one thread.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace maestro::llm {

struct SseEvent {
  std::string event;  // the `event:` field, empty for the default "message"
  std::string data;   // `data:` lines joined with '\n'
  std::string id;     // the `id:` field, if any
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

  size_t events() const { return events_; }
  size_t comments() const { return comments_; }

 private:
  void ProcessLine(std::string_view line);
  void Dispatch();

  EventFn on_event_;
  CommentFn on_comment_;
  std::string line_;      // bytes of the current, unterminated line
  bool skip_lf_ = false;  // last byte was CR: a following LF belongs to it
  bool has_data_ = false;
  bool pending_ = false;  // any field seen since the last dispatch
  SseEvent cur_;
  size_t events_ = 0;
  size_t comments_ = 0;
};

}  // namespace maestro::llm
