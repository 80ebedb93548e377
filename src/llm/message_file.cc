#include "llm/message_file.h"

#include <fmt/format.h>

#include <algorithm>

namespace maestro::llm::message_file {

// Files through the Env's positional reads (no stdio): the body is read in
// large blocks straight into libcurl's buffer, so a FILE's own buffer would
// only add a copy (and its fstat a syscall) to every request.
Result<std::unique_ptr<ReadableFile>> OpenRead(Env& env, const std::string& path,
                                               const char* what) {
  auto f = env.NewReadableFile(path);
  if (!f.ok()) {
    return Status(
        f.status().code() == StatusCode::kNotFound ? StatusCode::kNotFound : StatusCode::kInternal,
        fmt::format("cannot open {} {}: {}", what, path, f.status().message()));
  }
  return std::move(f).value();
}

uint64_t FileSize(ReadableFile& f) {
  auto size = f.Size();
  return size.ok() ? *size : 0;
}

size_t ReadFull(ReadableFile& f, uint64_t offset, char* buf, size_t len) {
  size_t got = 0;
  while (got < len) {
    auto k = f.ReadAt(offset + got, buf + got, len - got);
    if (!k.ok() || *k == 0) break;
    got += *k;
  }
  return got;
}

uint64_t CompleteLinesEnd(ReadableFile& f, uint64_t size) {
  char buf[4096];
  uint64_t end = size;
  while (end > 0) {
    uint64_t start = end > sizeof(buf) ? end - sizeof(buf) : 0;
    size_t len = static_cast<size_t>(end - start);
    if (ReadFull(f, start, buf, len) != len) return 0;
    for (size_t i = len; i > 0; --i) {
      if (buf[i - 1] == '\n') return start + i;
    }
    end = start;
  }
  return 0;
}

Result<size_t> ReadBlock(ReadableFile& f, uint64_t offset, uint64_t limit, char* buf) {
  size_t want = static_cast<size_t>(std::min<uint64_t>(limit - offset, kBufSize));
  size_t got = ReadFull(f, offset, buf, want);
  if (got == 0) return Internal("messages file shrank or could not be read while sending");
  return got;
}

Result<uint64_t> MessagesLimit(ReadableFile& f, const std::string& path, uint64_t known_bytes) {
  if (known_bytes == 0) return CompleteLinesEnd(f, FileSize(f));
  if (FileSize(f) < known_bytes) {
    return Internal(fmt::format("messages file {} is shorter than the {} bytes its writer counted",
                                path, known_bytes));
  }
  return known_bytes;
}

Status RequestTee::Open(Env* env, const std::string& path) {
  file_.reset();
  if (path.empty()) return Status::Ok();
  auto f = env->NewWritableFile(path);
  if (!f.ok()) return Internal("cannot write " + f.status().message());
  file_ = std::move(f).value();
  return Status::Ok();
}

void RequestTee::Append(const char* p, size_t n) {
  if (file_ && n > 0) file_->Append(std::string_view(p, n)).IgnoreError();
}

void RequestTee::Close() {
  if (!file_) return;
  file_->Close().IgnoreError();
  file_.reset();
}

Result<std::string> ReadWholeBody(LlmBody& body) {
  std::string out;
  char buf[4096];
  while (size_t k = body.Read(buf, sizeof(buf))) out.append(buf, k);
  if (!body.error().ok()) return body.error();
  return out;
}

}  // namespace maestro::llm::message_file
