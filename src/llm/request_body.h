// RequestBody: the chat-completion request body, produced from files while
// core's HttpClient sends it (an HttpBodySource pulls Read()).
//
// Seed 002 keeps the live conversation in current.jsonl (one OpenAI message
// object per line) and §7 forbids holding a whole conversation in memory, so
// the body is never built as a string. It is the concatenation of
//   {"model":..., <params...>, "stream":..., "tools": <tools file>, "messages":[
//   <line 1>,<line 2>,...]}
// copied through a fixed 64 KiB buffer (the tools array may instead come
// from memory: the engine holds it for the whole job). Blank lines are
// skipped, and a torn last line (no terminating newline: an append that
// crashed) is left out. The exact size is computed up front, so the request
// has a Content-Length and needs no chunked upload: from the writer's count
// when it gives one (messages_known_bytes; the agent loop's current.jsonl),
// else by one scan of the file — O(conversation) before every call, which the
// count avoids.
// Optionally every byte is also written to `request.json` (seed 002's
// transient request body).
//
// Memory is O(buffer) regardless of the file sizes. A RequestBody serves one
// attempt; a retry opens a new one.
//
// Thread safety: none; owned by the thread running the transfer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/env.h"
#include "core/json.h"
#include "core/status.h"
#include "llm/llm_body.h"
#include "llm/message_file.h"

namespace maestro::llm {

struct RequestBodySpec {
  std::string model;
  bool stream = true;
  Json params = Json::object();  // extra top-level fields (must be an object)
  std::string tools_path;        // JSON array file; empty = omit "tools"
  // The tools array itself, used instead of tools_path when not empty (the
  // engine holds it for the job; it must outlive the RequestBody).
  std::string_view tools_json;
  std::string messages_path;  // JSONL file of messages
  // > 0: its writer vouches that the first `messages_known_bytes` bytes are
  // whole non-empty lines without '\r' (llm::ChatRequest). The size is then
  // known without a scan, and the lines go straight into the caller's buffer
  // with each '\n' turned into the comma between messages.
  uint64_t messages_known_bytes = 0;
  std::string request_json_path;  // optional tee target
  Env* env = Env::Default();      // writes the tee (best effort: a debugging copy)
};

class RequestBody final : public LlmBody {
 public:
  // Opens the files and measures the body. Fails on a missing file or
  // non-object params.
  static Result<std::unique_ptr<RequestBody>> Open(const RequestBodySpec& spec);
  ~RequestBody() override;
  RequestBody(const RequestBody&) = delete;
  RequestBody& operator=(const RequestBody&) = delete;

  // Total body size in bytes.
  uint64_t size() const override { return size_; }

  // Copies up to `n` next bytes into `buf`; returns 0 at the end, or sets
  // error() and returns 0 on an I/O failure (the file shrank, a read failed).
  size_t Read(char* buf, size_t n) override;
  const Status& error() const override { return error_; }

  // Starts the body over from its first byte (libcurl resends a request on a
  // fresh connection when a kept-alive one turns out closed). The size stays
  // the one measured at Open; the tee is rewritten from the start.
  Status Rewind() override;

  // Convenience for tests and small bodies: the whole body as a string.
  Result<std::string> ReadAll();

 private:
  RequestBody() = default;
  enum class Part { kHead, kTools, kMid, kMessages, kTail, kEnd };
  size_t ReadMessages(char* buf, size_t n);
  size_t ReadKnownMessages(char* buf, size_t n);
  bool FillBuffer();
  bool HasTools() const { return tools_ != nullptr || !tools_json_.empty(); }

  std::string head_;  // JSON up to the tools value (or "messages":[)
  std::string mid_;   // between the tools value and the messages
  std::string tail_ = "]}";
  std::unique_ptr<ReadableFile> tools_;  // tools file, when the array is not in memory
  std::string_view tools_json_;          // the tools array in memory (spec.tools_json)
  uint64_t tools_off_ = 0;               // bytes of the tools part sent
  std::unique_ptr<ReadableFile> messages_;
  message_file::RequestTee tee_;
  std::string tee_path_;
  Env* env_ = nullptr;
  uint64_t messages_limit_ = 0;  // bytes of current.jsonl up to the last '\n'
  bool messages_known_ = false;  // spec.messages_known_bytes was given
  uint64_t messages_read_ = 0;
  uint64_t size_ = 0;
  Part part_ = Part::kHead;
  size_t part_off_ = 0;
  // Line-joining state for the messages file.
  std::unique_ptr<char[]> rbuf_;
  size_t rbuf_len_ = 0, rbuf_pos_ = 0;
  bool in_line_ = false;     // inside a non-blank line
  bool need_comma_ = false;  // a previous line was emitted
  Status error_;
};

}  // namespace maestro::llm
