// Internal to src/llm: reading current.jsonl (and the tools file) through the
// Env's positional reads, shared by RequestBody (the OpenAI body) and
// TranslatedBody (the provider bodies) so both see the same lines: the same
// open errors, the same torn-line rule and the same trust in the writer's
// byte count. Also the two bodies' common ends: the request.json tee and
// ReadAll.
//
// Thread safety: none needed (free functions over a caller-owned file).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/env.h"
#include "core/status.h"
#include "llm/llm_body.h"

namespace maestro::llm::message_file {

// The read buffer of both bodies: large blocks straight from the file.
constexpr size_t kBufSize = 64 * 1024;

// Opens `path` for reading; the error names `what` ("messages file") and
// keeps NotFound, anything else is Internal.
Result<std::unique_ptr<ReadableFile>> OpenRead(Env& env, const std::string& path, const char* what);

// The file's size (0 when it cannot be had).
uint64_t FileSize(ReadableFile& f);

// Up to `len` bytes at `offset`, fewer only at the end of the file or on an
// error (then 0 for a failed first read).
size_t ReadFull(ReadableFile& f, uint64_t offset, char* buf, size_t len);

// Offset just past the last '\n' of the first `size` bytes: the bytes after
// it are a torn line (an append that crashed, or one still being written).
uint64_t CompleteLinesEnd(ReadableFile& f, uint64_t size);

// The next block of the messages file while a body sends it: up to
// kBufSize bytes at `offset`, not past `limit` (> offset). 0 bytes is an
// error: the file shrank or could not be read since it was measured.
Result<size_t> ReadBlock(ReadableFile& f, uint64_t offset, uint64_t limit, char* buf);

// The bytes of the messages file a body reads: `known_bytes` when its writer
// counted them (> 0; fails when the file is shorter), else up to the last
// '\n'.
Result<uint64_t> MessagesLimit(ReadableFile& f, const std::string& path, uint64_t known_bytes);

// A body's optional copy of the bytes it sends (seed 002's request.json):
// best effort, a failed append is ignored, as it is a debugging copy.
class RequestTee {
 public:
  // (Re)creates `path` through `env` and tees into it from its first byte;
  // an empty path tees nothing.
  Status Open(Env* env, const std::string& path);
  void Append(const char* p, size_t n);
  // The body has been sent whole: closes the file (nothing when none is open).
  void Close();

 private:
  std::unique_ptr<WritableFile> file_;
};

// The whole of `body` from where it stands (tests and small bodies), or its
// error.
Result<std::string> ReadWholeBody(LlmBody& body);

}  // namespace maestro::llm::message_file
