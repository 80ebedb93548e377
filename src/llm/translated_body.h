// TranslatedBody: a provider's request body produced from the engine's
// OpenAI-shaped conversation while it uploads (issue 50).
//
// Like RequestBody it never holds the conversation: current.jsonl is read
// line by line (one message per line, blank lines skipped, a torn last line
// left out), each line parsed and handed to a MessageTranslator that appends
// the provider's JSON for it. The body needs a Content-Length, so Open()
// runs the translation once to measure it and Read() runs it again to send
// it; memory is O(one message + buffer).
//
// Cache breakpoints (Anthropic's `cache_control`) go on messages chosen from
// every line's role, which is known only after the first pass. So the first
// pass translates with no message marked and records the roles; the
// translator then names the lines to mark (Marks) and promises that marking
// a line adds exactly MarkBytes() bytes; the second pass marks them. Read()
// checks that the body came out at the measured size (an error otherwise,
// never a short or long upload).
//
// Thread safety: none; one attempt's.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/json.h"
#include "core/status.h"
#include "llm/request_body.h"
#include "llm/wire.h"

namespace maestro::llm {

enum class MessageRole : uint8_t { kSystem, kUser, kAssistant, kTool, kOther };
MessageRole RoleOf(const Json& message);

// One provider's translation of the conversation. TranslatedBody calls, per
// pass: Reset(), Head(), Message() for every line in order, Finish(). Every
// pass must produce the same bytes for the same marks.
class MessageTranslator {
 public:
  virtual ~MessageTranslator() = default;
  // Forget the state of a previous pass.
  virtual void Reset() = 0;
  // The body before the first message (the opening brace, model, params,
  // tools...).
  virtual Status Head(std::string* out) = 0;
  // One line of current.jsonl (an OpenAI message object; `index` counts
  // non-blank lines from 0). `mark`: put a cache breakpoint on the last
  // block this message contributes, adding exactly MarkBytes() bytes. A line
  // that cannot be translated is an error (kInternal naming the line).
  virtual Status Message(const Json& message, size_t index, bool mark, std::string* out) = 0;
  // The rest of the body after the last line (closing any open message).
  virtual Status Finish(std::string* out) = 0;
  // The lines to mark, given every line's role; ascending. Default: none.
  virtual std::vector<size_t> Marks(const std::vector<MessageRole>& roles) const;
  virtual size_t MarkBytes() const { return 0; }
};

class TranslatedBody final : public LlmBody {
 public:
  // Opens the messages file (spec.messages_path, spec.messages_known_bytes
  // as RequestBody reads them; spec.request_json_path tees) and measures the
  // body with `translator`. Fails on a missing file or a line that is not a
  // JSON object.
  static Result<std::unique_ptr<TranslatedBody>> Open(
      const RequestBodySpec& spec, std::unique_ptr<MessageTranslator> translator);
  ~TranslatedBody() override;

  uint64_t size() const override { return size_; }
  size_t Read(char* buf, size_t n) override;
  const Status& error() const override { return error_; }
  Status Rewind() override;
  // Tests: the whole body.
  Result<std::string> ReadAll();

 private:
  TranslatedBody() = default;
  // Next non-blank line of the file into `line`; false at the end (or on an
  // error, then error_ is set).
  bool NextLine(std::string* line);
  bool Refill();  // more of the body into pending_
  Status StartPass();

  std::unique_ptr<MessageTranslator> tr_;
  std::unique_ptr<ReadableFile> messages_;
  uint64_t limit_ = 0;  // bytes of the file up to its last '\n'
  uint64_t offset_ = 0;
  std::unique_ptr<char[]> rbuf_;
  size_t rbuf_len_ = 0, rbuf_pos_ = 0;
  std::vector<size_t> marks_;
  size_t next_mark_ = 0;
  size_t index_ = 0;
  bool head_done_ = false, finished_ = false;
  std::string pending_;
  size_t pending_pos_ = 0;
  uint64_t size_ = 0, sent_ = 0;
  message_file::RequestTee tee_;
  std::string tee_path_;
  Env* env_ = nullptr;
  Status error_;
};

// The tools array of a spec (tools_json, or tools_path's file): parsed, or
// an empty array when there are none.
Result<Json> ReadToolsArray(const RequestBodySpec& spec);

}  // namespace maestro::llm
