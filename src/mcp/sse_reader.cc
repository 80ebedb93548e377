#include "mcp/sse_reader.h"

namespace maestro::mcp {

void SseReader::Feed(std::string_view bytes, const std::function<void(const Event&)>& on_event) {
  for (char c : bytes) {
    if (c == '\n' && after_cr_) {  // the LF of a CRLF already ended the line
      after_cr_ = false;
      continue;
    }
    after_cr_ = c == '\r';
    if (c == '\n' || c == '\r') {
      Line(line_, on_event);
      line_.clear();
    } else {
      line_.push_back(c);
    }
  }
}

void SseReader::Line(std::string_view line, const std::function<void(const Event&)>& on_event) {
  if (line.empty()) {  // a blank line ends the event
    // An event whose data is empty (MCP's priming event) carries nothing to
    // parse; its id was kept above all the same.
    if (!data_.empty() && on_event) on_event(Event{type_, data_});
    data_.clear();
    type_.clear();
    data_lines_ = 0;
    return;
  }
  if (line.front() == ':') return;  // a comment: keep-alive
  std::string_view field = line, value;
  if (size_t colon = line.find(':'); colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (data_lines_++ > 0) data_.push_back('\n');
    data_.append(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) last_event_id_ = std::string(value);
  } else if (field == "event") {
    type_ = std::string(value);
  } else if (field == "retry") {
    int ms = 0;
    bool digits = !value.empty();
    for (char c : value) {
      if (c < '0' || c > '9' || ms > 100'000'000) {
        digits = false;
        break;
      }
      ms = ms * 10 + (c - '0');
    }
    if (digits) retry_ms_ = ms;
  }
}

}  // namespace maestro::mcp
