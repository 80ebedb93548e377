#include "llm/request_body.h"

#include <fmt/format.h>

#include <cstring>

#include "llm/message_file.h"

namespace maestro::llm {
namespace {

using message_file::FileSize;
using message_file::kBufSize;
using message_file::ReadFull;

// Bytes the messages part emits for the first `limit` bytes of `f`: each
// non-blank line's bytes (CR removed) plus one comma between lines. This runs
// over the whole conversation before every request, so it goes line by line
// with memchr (lines are long: whole messages) rather than byte by byte.
uint64_t MeasureMessages(ReadableFile& f, uint64_t limit) {
  std::unique_ptr<char[]> buf(new char[kBufSize]);
  uint64_t total = 0, lines = 0, left = limit;
  bool in_line = false;
  while (left > 0) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(left, kBufSize));
    size_t got = ReadFull(f, limit - left, buf.get(), want);
    if (got == 0) break;
    left -= got;
    const char* p = buf.get();
    const char* end = p + got;
    while (p < end) {
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', end - p));
      const char* seg_end = nl ? nl : end;
      size_t crs = 0;
      for (const char* q = p; (q = static_cast<const char*>(std::memchr(q, '\r', seg_end - q)));
           ++q) {
        ++crs;
      }
      size_t kept = static_cast<size_t>(seg_end - p) - crs;
      total += kept;
      if (kept > 0 && !in_line) {
        in_line = true;
        ++lines;
      }
      if (nl) in_line = false;
      p = nl ? nl + 1 : end;
    }
  }
  return total + (lines > 0 ? lines - 1 : 0);
}

}  // namespace

Result<std::unique_ptr<RequestBody>> RequestBody::Open(const RequestBodySpec& spec) {
  if (!spec.params.is_object()) return InvalidArgument("params must be a JSON object", "params");
  std::unique_ptr<RequestBody> b(new RequestBody());
  Json head = Json::object();
  head["model"] = spec.model;
  for (auto it = spec.params.begin(); it != spec.params.end(); ++it) {
    if (it.key() == "messages" || it.key() == "tools") continue;
    head[it.key()] = it.value();
  }
  head["stream"] = spec.stream;
  if (spec.stream) head["stream_options"] = {{"include_usage", true}};
  std::string h = head.dump();
  h.pop_back();  // drop the closing '}' and continue the object by hand
  h += head.size() > 0 ? "," : "";

  uint64_t tools_size = 0;
  if (!spec.tools_json.empty()) {
    b->tools_json_ = spec.tools_json;
    tools_size = spec.tools_json.size();
    b->head_ = h + "\"tools\":";
    b->mid_ = ",\"messages\":[";
  } else if (!spec.tools_path.empty()) {
    MAESTRO_ASSIGN_OR_RETURN(b->tools_,
                             message_file::OpenRead(*spec.env, spec.tools_path, "tools file"));
    tools_size = FileSize(*b->tools_);
    if (tools_size == 0) return InvalidArgument("tools file is empty: " + spec.tools_path);
    b->head_ = h + "\"tools\":";
    b->mid_ = ",\"messages\":[";
  } else {
    b->head_ = h + "\"messages\":[";
  }
  MAESTRO_ASSIGN_OR_RETURN(b->messages_,
                           message_file::OpenRead(*spec.env, spec.messages_path, "messages file"));
  MAESTRO_ASSIGN_OR_RETURN(
      b->messages_limit_,
      message_file::MessagesLimit(*b->messages_, spec.messages_path, spec.messages_known_bytes));
  b->messages_known_ = spec.messages_known_bytes > 0;
  uint64_t msg_bytes = b->messages_known_
                           ? b->messages_limit_ - 1  // each '\n' a comma, the last one dropped
                           : MeasureMessages(*b->messages_, b->messages_limit_);
  b->size_ = b->head_.size() + tools_size + b->mid_.size() + msg_bytes + b->tail_.size();
  if (!b->messages_known_) b->rbuf_.reset(new char[kBufSize]);  // the scan path's line joiner
  b->env_ = spec.env;
  b->tee_path_ = spec.request_json_path;
  MAESTRO_RETURN_IF_ERROR(b->tee_.Open(b->env_, b->tee_path_));
  return b;
}

Status RequestBody::Rewind() {
  if (!error_.ok()) return error_;
  part_ = Part::kHead;
  part_off_ = 0;
  tools_off_ = 0;
  messages_read_ = 0;
  rbuf_len_ = rbuf_pos_ = 0;
  in_line_ = need_comma_ = false;
  return tee_.Open(env_, tee_path_);
}

RequestBody::~RequestBody() = default;

bool RequestBody::FillBuffer() {
  if (messages_read_ == messages_limit_) return false;
  auto got = message_file::ReadBlock(*messages_, messages_read_, messages_limit_, rbuf_.get());
  if (!got.ok()) {
    error_ = got.status();
    return false;
  }
  messages_read_ += *got;
  rbuf_len_ = *got;
  rbuf_pos_ = 0;
  return true;
}

size_t RequestBody::ReadKnownMessages(char* buf, size_t n) {
  uint64_t left = messages_limit_ - 1 - messages_read_;  // the last '\n' is not sent
  size_t want = static_cast<size_t>(std::min<uint64_t>(left, n));
  if (want == 0) return 0;
  size_t got = ReadFull(*messages_, messages_read_, buf, want);
  if (got == 0) {
    error_ = Internal("messages file shrank or could not be read while sending");
    return 0;
  }
  messages_read_ += got;
  for (char* p = buf; (p = static_cast<char*>(std::memchr(p, '\n', buf + got - p))); ++p) *p = ',';
  return got;
}

size_t RequestBody::ReadMessages(char* buf, size_t n) {
  if (messages_known_) return ReadKnownMessages(buf, n);
  size_t out = 0;
  while (out < n) {
    if (rbuf_pos_ == rbuf_len_ && !FillBuffer()) break;
    char c = rbuf_[rbuf_pos_];
    if (c == '\n') {
      if (in_line_) need_comma_ = true;
      in_line_ = false;
      ++rbuf_pos_;
      continue;
    }
    if (c == '\r') {
      ++rbuf_pos_;
      continue;
    }
    if (!in_line_) {
      if (need_comma_) {
        buf[out++] = ',';
        need_comma_ = false;
        in_line_ = true;  // the comma is out; the line starts next round
        continue;
      }
      in_line_ = true;
    }
    // Copy the run up to the next line end in one go.
    const char* start = rbuf_.get() + rbuf_pos_;
    size_t avail = std::min(rbuf_len_ - rbuf_pos_, n - out);
    const void* nl = std::memchr(start, '\n', avail);
    const void* cr = std::memchr(start, '\r', avail);
    size_t run = avail;
    if (nl) run = static_cast<size_t>(static_cast<const char*>(nl) - start);
    if (cr) run = std::min(run, static_cast<size_t>(static_cast<const char*>(cr) - start));
    std::memcpy(buf + out, start, run);
    out += run;
    rbuf_pos_ += run;
  }
  return out;
}

size_t RequestBody::Read(char* buf, size_t n) {
  size_t out = 0;
  while (out < n && part_ != Part::kEnd && error_.ok()) {
    switch (part_) {
      case Part::kHead:
      case Part::kMid:
      case Part::kTail: {
        const std::string& s = part_ == Part::kHead ? head_ : part_ == Part::kMid ? mid_ : tail_;
        size_t k = std::min(n - out, s.size() - part_off_);
        std::memcpy(buf + out, s.data() + part_off_, k);
        out += k;
        part_off_ += k;
        if (part_off_ == s.size()) {
          part_off_ = 0;
          part_ = part_ == Part::kHead  ? (HasTools() ? Part::kTools : Part::kMessages)
                  : part_ == Part::kMid ? Part::kMessages
                                        : Part::kEnd;
        }
        break;
      }
      case Part::kTools: {
        size_t k = 0;
        if (tools_) {
          k = ReadFull(*tools_, tools_off_, buf + out, n - out);
        } else {
          k = std::min(n - out, tools_json_.size() - tools_off_);
          std::memcpy(buf + out, tools_json_.data() + tools_off_, k);
        }
        tools_off_ += k;
        out += k;
        if (k == 0) part_ = Part::kMid;
        break;
      }
      case Part::kMessages: {
        size_t k = ReadMessages(buf + out, n - out);
        out += k;
        if (k == 0 && error_.ok()) part_ = Part::kTail;
        break;
      }
      case Part::kEnd:
        break;
    }
  }
  tee_.Append(buf, out);
  if (part_ == Part::kEnd) tee_.Close();
  return out;
}

Result<std::string> RequestBody::ReadAll() { return message_file::ReadWholeBody(*this); }

}  // namespace maestro::llm
