// Server-sent events as the CLI reads them (`task watch`): a byte stream cut
// into frames of `id:`, `event:` and `data:` lines, wherever the chunks of
// the transfer happen to split it. Comments (": keep-alive") and empty
// frames are dropped; several `data:` lines are joined with "\n"; CRLF
// line ends are accepted.
//
// Thread safety: one parser per stream, used by one thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace maestro::cli {

struct SseFrame {
  std::string id, event, data;
};

class SseParser {
 public:
  // Appends `chunk`; returns the frames it completed.
  std::vector<SseFrame> Feed(std::string_view chunk);

 private:
  std::string buf_;
};

}  // namespace maestro::cli
