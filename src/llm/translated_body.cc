#include "llm/translated_body.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "llm/message_file.h"

namespace maestro::llm {
// A named inner namespace, not an anonymous one: the library is a unity
// build. The file reading itself is message_file's, shared with RequestBody.
namespace translated_body_io {

using message_file::ReadFull;

// The 1-based line number of the line that ends just before `end` (past its
// '\n'): only for an error message, so a scan is fine.
uint64_t LineNumberAt(ReadableFile& f, uint64_t end) {
  char buf[4096];
  uint64_t lines = 0;
  for (uint64_t off = 0; off < end;) {
    size_t len = static_cast<size_t>(std::min<uint64_t>(end - off, sizeof(buf)));
    size_t got = ReadFull(f, off, buf, len);
    if (got == 0) break;
    lines += static_cast<uint64_t>(std::count(buf, buf + got, '\n'));
    off += got;
  }
  return lines;
}

// One line of the messages file as a message object. `end`: the file offset
// just past the line (for the error's line number).
Result<Json> ParseMessageLine(ReadableFile& f, uint64_t end, const std::string& line) {
  Json msg = Json::parse(line, nullptr, false);
  if (msg.is_discarded() || !msg.is_object()) {
    return Internal(
        fmt::format("line {} of {} is not a JSON object", LineNumberAt(f, end), f.path()));
  }
  return msg;
}

bool IsBlank(const std::string& line) {
  return std::all_of(line.begin(), line.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

}  // namespace translated_body_io

namespace tbio = translated_body_io;

MessageRole RoleOf(const Json& message) {
  if (!message.is_object()) return MessageRole::kOther;
  auto it = message.find("role");
  if (it == message.end() || !it->is_string()) return MessageRole::kOther;
  const std::string& r = it->get_ref<const std::string&>();
  return r == "system"      ? MessageRole::kSystem
         : r == "user"      ? MessageRole::kUser
         : r == "assistant" ? MessageRole::kAssistant
         : r == "tool"      ? MessageRole::kTool
                            : MessageRole::kOther;
}

std::vector<size_t> MessageTranslator::Marks(const std::vector<MessageRole>&) const { return {}; }

Result<std::unique_ptr<TranslatedBody>> TranslatedBody::Open(
    const RequestBodySpec& spec, std::unique_ptr<MessageTranslator> translator) {
  std::unique_ptr<TranslatedBody> b(new TranslatedBody());
  b->tr_ = std::move(translator);
  b->env_ = spec.env;
  MAESTRO_ASSIGN_OR_RETURN(b->messages_,
                           message_file::OpenRead(*spec.env, spec.messages_path, "messages file"));
  MAESTRO_ASSIGN_OR_RETURN(b->limit_, message_file::MessagesLimit(*b->messages_, spec.messages_path,
                                                                  spec.messages_known_bytes));
  b->rbuf_.reset(new char[message_file::kBufSize]);

  // Pass one: measure with no line marked, and learn every line's role. The
  // tee is not open yet (tee_path_ is set after), so nothing is written.
  MAESTRO_RETURN_IF_ERROR(b->StartPass());
  std::vector<MessageRole> roles;
  std::string chunk, line;
  MAESTRO_RETURN_IF_ERROR(b->tr_->Head(&chunk));
  uint64_t measured = chunk.size();
  while (b->NextLine(&line)) {
    MAESTRO_ASSIGN_OR_RETURN(
        Json msg,
        tbio::ParseMessageLine(*b->messages_, b->offset_ - (b->rbuf_len_ - b->rbuf_pos_), line));
    roles.push_back(RoleOf(msg));
    chunk.clear();
    MAESTRO_RETURN_IF_ERROR(b->tr_->Message(msg, roles.size() - 1, false, &chunk));
    measured += chunk.size();
  }
  MAESTRO_RETURN_IF_ERROR(b->error_);
  chunk.clear();
  MAESTRO_RETURN_IF_ERROR(b->tr_->Finish(&chunk));
  measured += chunk.size();
  b->marks_ = b->tr_->Marks(roles);
  b->size_ = measured + b->marks_.size() * b->tr_->MarkBytes();

  // Pass two (Read) sends it.
  b->tee_path_ = spec.request_json_path;
  MAESTRO_RETURN_IF_ERROR(b->StartPass());
  return b;
}

TranslatedBody::~TranslatedBody() = default;

Status TranslatedBody::StartPass() {
  offset_ = 0;
  rbuf_len_ = rbuf_pos_ = 0;
  next_mark_ = 0;
  index_ = 0;
  head_done_ = finished_ = false;
  pending_.clear();
  pending_pos_ = 0;
  sent_ = 0;
  tr_->Reset();
  return tee_.Open(env_, tee_path_);
}

Status TranslatedBody::Rewind() {
  if (!error_.ok()) return error_;
  return StartPass();
}

bool TranslatedBody::NextLine(std::string* line) {
  for (;;) {
    line->clear();
    bool any = false;  // bytes of a line seen (it ends at '\n' or at limit_)
    for (;;) {
      if (rbuf_pos_ == rbuf_len_) {
        if (offset_ >= limit_) break;
        auto got = message_file::ReadBlock(*messages_, offset_, limit_, rbuf_.get());
        if (!got.ok()) {
          error_ = got.status();
          return false;
        }
        offset_ += *got;
        rbuf_len_ = *got;
        rbuf_pos_ = 0;
      }
      any = true;
      const char* start = rbuf_.get() + rbuf_pos_;
      size_t avail = rbuf_len_ - rbuf_pos_;
      const void* nl = std::memchr(start, '\n', avail);
      size_t run = nl ? static_cast<size_t>(static_cast<const char*>(nl) - start) : avail;
      line->append(start, run);
      rbuf_pos_ += run;
      if (nl) {
        ++rbuf_pos_;
        break;
      }
    }
    if (!any) return false;
    if (!tbio::IsBlank(*line)) return true;
  }
}

bool TranslatedBody::Refill() {
  pending_.clear();
  pending_pos_ = 0;
  Status st;
  if (!head_done_) {
    head_done_ = true;
    st = tr_->Head(&pending_);
  } else {
    std::string line;
    if (NextLine(&line)) {
      // A line that no longer parses means the file changed since it was
      // measured (Open checked every line).
      auto msg = tbio::ParseMessageLine(*messages_, offset_ - (rbuf_len_ - rbuf_pos_), line);
      if (!msg.ok()) {
        error_ = msg.status();
        return false;
      }
      bool mark = next_mark_ < marks_.size() && marks_[next_mark_] == index_;
      if (mark) ++next_mark_;
      st = tr_->Message(*msg, index_, mark, &pending_);
      ++index_;
    } else if (!error_.ok()) {
      return false;
    } else {
      finished_ = true;
      st = tr_->Finish(&pending_);
    }
  }
  if (!st.ok()) {
    error_ = std::move(st);
    return false;
  }
  return true;
}

size_t TranslatedBody::Read(char* buf, size_t n) {
  size_t out = 0;
  while (out < n && error_.ok()) {
    if (pending_pos_ < pending_.size()) {
      size_t k = std::min(n - out, pending_.size() - pending_pos_);
      if (sent_ + out + k > size_) {
        error_ = Internal(fmt::format(
            "request body outgrew its measured {} bytes (the messages file changed?)", size_));
        break;
      }
      std::memcpy(buf + out, pending_.data() + pending_pos_, k);
      out += k;
      pending_pos_ += k;
      continue;
    }
    if (finished_) break;
    if (!Refill()) break;
  }
  if (!error_.ok()) return 0;
  sent_ += out;
  if (out == 0 && finished_ && sent_ != size_) {
    error_ = Internal(
        fmt::format("request body came out at {} bytes, not the measured {}", sent_, size_));
    return 0;
  }
  tee_.Append(buf, out);
  if (finished_ && pending_pos_ == pending_.size()) tee_.Close();
  return out;
}

Result<std::string> TranslatedBody::ReadAll() { return message_file::ReadWholeBody(*this); }

Result<Json> ReadToolsArray(const RequestBodySpec& spec) {
  std::string text;
  if (!spec.tools_json.empty()) {
    text = std::string(spec.tools_json);
  } else if (!spec.tools_path.empty()) {
    auto read = ReadFileToString(*spec.env, spec.tools_path);
    if (!read.ok()) {
      return Status(read.status().code(), fmt::format("cannot read tools file {}: {}",
                                                      spec.tools_path, read.status().message()));
    }
    text = std::move(read).value();
  } else {
    return Json::array();
  }
  Json tools = Json::parse(text, nullptr, false);
  if (tools.is_discarded() || !tools.is_array()) {
    return InvalidArgument("the tools are not a JSON array", "tools");
  }
  return tools;
}

}  // namespace maestro::llm
