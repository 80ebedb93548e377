// edge_http.h: the small hand-written HTTP/1.1 and SSE parsing edge_bench
// needs (response head, chunked transfer decoding, `id:`/`event:`/`data:`
// frames, one integer field of a JSON object).
//
// No HTTP library on purpose: the bench compares two server implementations
// (cpp-httplib and Boost.Beast) and must share neither's parser, nor its
// bugs. Everything here is incremental: bytes are fed as they arrive, in
// pieces of any size.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace edge {

struct ResponseHead {
  int status = 0;
  bool chunked = false;
  int64_t content_length = -1;  // -1: not given (the body ends at EOF unless chunked)
  std::string retry_after;      // empty when absent
};

inline bool EqualsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    char y = b[i] >= 'A' && b[i] <= 'Z' ? static_cast<char>(b[i] - 'A' + 'a') : b[i];
    if (x != y) return false;
  }
  return true;
}

inline std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// Parses the status line and headers at the start of `buf`. Returns the
// number of bytes of the head (blank line included), 0 while it is
// incomplete, -1 when it is not an HTTP/1.x response.
inline long ParseHead(std::string_view buf, ResponseHead* head) {
  const size_t end = buf.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    bool plausible = buf.size() < 5 || buf.substr(0, 5) == "HTTP/";
    return plausible && buf.size() < 64 * 1024 ? 0 : -1;
  }
  std::string_view lines = buf.substr(0, end + 2);
  size_t eol = lines.find("\r\n");
  std::string_view status_line = lines.substr(0, eol);
  if (status_line.substr(0, 7) != "HTTP/1." || status_line.size() < 12) return -1;
  auto code = status_line.substr(9, 3);
  if (std::from_chars(code.data(), code.data() + 3, head->status).ec != std::errc()) return -1;
  lines.remove_prefix(eol + 2);
  while (!lines.empty()) {
    eol = lines.find("\r\n");
    std::string_view line = lines.substr(0, eol);
    lines.remove_prefix(eol + 2);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view name = Trim(line.substr(0, colon)), value = Trim(line.substr(colon + 1));
    if (EqualsNoCase(name, "transfer-encoding")) {
      head->chunked = value.find("chunked") != std::string_view::npos;
    } else if (EqualsNoCase(name, "content-length")) {
      std::from_chars(value.data(), value.data() + value.size(), head->content_length);
    } else if (EqualsNoCase(name, "retry-after")) {
      head->retry_after = std::string(value);
    }
  }
  return static_cast<long>(end + 4);
}

// Decodes `Transfer-Encoding: chunked` (chunk extensions and trailers are
// accepted and dropped).
class ChunkedDecoder {
 public:
  // Appends the payload carried by `in` to `out`; false on a malformed stream.
  bool Feed(std::string_view in, std::string* out) {
    while (!in.empty() && state_ != kDone) {
      if (state_ == kData) {
        size_t take = static_cast<size_t>(std::min<uint64_t>(left_, in.size()));
        out->append(in.data(), take);
        in.remove_prefix(take);
        left_ -= take;
        if (left_ == 0) state_ = kDataEnd;
        continue;
      }
      // The other states read a line: a size, the CRLF after data, a trailer.
      size_t nl = in.find('\n');
      line_.append(in.data(), nl == std::string_view::npos ? in.size() : nl);
      if (line_.size() > 4096) return false;
      if (nl == std::string_view::npos) return true;
      in.remove_prefix(nl + 1);
      std::string_view line = Trim(line_);
      if (state_ == kSize) {
        line = line.substr(0, line.find(';'));
        auto r = std::from_chars(line.data(), line.data() + line.size(), left_, 16);
        if (r.ec != std::errc() || line.empty()) return false;
        state_ = left_ == 0 ? kTrailer : kData;
      } else if (state_ == kDataEnd) {
        if (!line.empty()) return false;
        state_ = kSize;
      } else if (line.empty()) {  // kTrailer: the blank line ends the body
        state_ = kDone;
      }
      line_.clear();
    }
    return true;
  }
  bool done() const { return state_ == kDone; }

 private:
  enum State { kSize, kData, kDataEnd, kTrailer, kDone };
  State state_ = kSize;
  std::string line_;
  uint64_t left_ = 0;
};

struct SseEvent {
  std::string id, event, data;
};

// Splits an event stream into events (a blank line ends one; `:` lines are
// comments such as keep-alives).
class SseParser {
 public:
  template <class OnEvent>
  void Feed(std::string_view in, OnEvent&& on_event) {
    while (!in.empty()) {
      size_t nl = in.find('\n');
      if (nl == std::string_view::npos) {
        line_.append(in.data(), in.size());
        return;
      }
      line_.append(in.data(), nl);
      in.remove_prefix(nl + 1);
      Line(on_event);
      line_.clear();
    }
  }

 private:
  template <class OnEvent>
  void Line(OnEvent& on_event) {
    std::string_view line = line_;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) {
      if (!cur_.data.empty() || !cur_.event.empty()) on_event(cur_);
      cur_ = SseEvent{};
      return;
    }
    if (line.front() == ':') return;
    size_t colon = line.find(':');
    std::string_view field = line.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (field == "id") {
      cur_.id = std::string(value);
    } else if (field == "event") {
      cur_.event = std::string(value);
    } else if (field == "data") {
      if (!cur_.data.empty()) cur_.data += '\n';
      cur_.data.append(value.data(), value.size());
    }
  }

  std::string line_;
  SseEvent cur_;
};

// The integer after `needle` (e.g. `"at":`) in a compact JSON object,
// without parsing the whole document: the bench reads `at` from every delta
// of every client, and the JSON parse would cost more than the server's send.
inline std::optional<int64_t> JsonInt(std::string_view json, std::string_view needle) {
  size_t at = json.find(needle);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = Trim(json.substr(at + needle.size()));
  int64_t v = 0;
  if (std::from_chars(rest.data(), rest.data() + rest.size(), v).ec != std::errc()) {
    return std::nullopt;
  }
  return v;
}

}  // namespace edge
