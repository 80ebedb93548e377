#include "core/sse_parser.h"

namespace maestro {

void SseParser::Feed(std::string_view bytes) {
  const char* p = bytes.data();
  const char* end = p + bytes.size();
  while (p < end) {
    if (skip_lf_) {
      skip_lf_ = false;
      if (*p == '\n') {
        ++p;
        continue;
      }
    }
    // Find the next line terminator (LF or CR).
    const char* q = p;
    while (q < end && *q != '\n' && *q != '\r') ++q;
    if (q == end) {
      line_.append(p, static_cast<size_t>(end - p));
      return;
    }
    if (line_.empty()) {
      ProcessLine(std::string_view(p, static_cast<size_t>(q - p)));
    } else {
      line_.append(p, static_cast<size_t>(q - p));
      ProcessLine(line_);
      line_.clear();
    }
    skip_lf_ = (*q == '\r');
    p = q + 1;
  }
}

void SseParser::ProcessLine(std::string_view line) {
  if (line.empty()) {
    Dispatch();
    return;
  }
  if (line.front() == ':') {
    ++comments_;
    if (on_comment_) on_comment_(line.substr(1));
    return;
  }
  std::string_view field = line;
  std::string_view value;
  size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  pending_ = true;
  if (field == "data") {
    if (has_data_) cur_.data.push_back('\n');
    cur_.data.append(value);
    has_data_ = true;
  } else if (field == "event") {
    cur_.event.assign(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) {
      cur_.id.assign(value);
      last_event_id_.assign(value);
    }
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
  // Unknown fields are ignored, as the spec says.
}

void SseParser::Dispatch() {
  if (has_data_ && !cur_.data.empty()) {
    ++events_;
    if (on_event_) on_event_(cur_);
  }
  Reset();
}

void SseParser::Reset() {
  cur_ = SseEvent{};
  has_data_ = false;
  pending_ = false;
}

bool SseParser::Finish() {
  // An unterminated last line, or fields without their blank line: the
  // event they belong to never completed.
  bool cut = !line_.empty() || pending_;
  line_.clear();
  skip_lf_ = false;
  Reset();
  return cut;
}

}  // namespace maestro
