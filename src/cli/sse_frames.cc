#include "cli/sse_frames.h"

namespace maestro::cli {

std::vector<SseFrame> SseParser::Feed(std::string_view chunk) {
  // CRLF line ends count as LF; a lone CR (which no maestro server sends)
  // is dropped rather than treated as a line end.
  for (char c : chunk) {
    if (c != '\r') buf_.push_back(c);
  }
  std::vector<SseFrame> out;
  for (size_t end; (end = buf_.find("\n\n")) != std::string::npos;) {
    std::string frame = buf_.substr(0, end);
    buf_.erase(0, end + 2);
    SseFrame f;
    bool any = false;
    for (size_t pos = 0; pos < frame.size();) {
      size_t nl = frame.find('\n', pos);
      std::string l = frame.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      pos = nl == std::string::npos ? frame.size() : nl + 1;
      auto field = [&](const char* name, std::string* to, bool join) {
        std::string p = std::string(name) + ":";
        if (l.rfind(p, 0) != 0) return;
        std::string v = l.substr(p.size());
        if (!v.empty() && v[0] == ' ') v.erase(0, 1);
        *to = join && !to->empty() ? *to + "\n" + v : v;
        any = true;
      };
      field("id", &f.id, false);
      field("event", &f.event, false);
      field("data", &f.data, true);
    }
    if (any) out.push_back(std::move(f));
  }
  return out;
}

}  // namespace maestro::cli
