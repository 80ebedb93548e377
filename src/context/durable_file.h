// Durable files: the crash-safety primitives every context file relies on.
//
// Where it sits: under every store of src/context. Append-only JSONL files
// (messages, tools, summaries, events) are written with AppendFile — one
// write(2) per record on an O_APPEND descriptor, so a crash can only leave a
// torn *last* line, which CutTornTail removes on open. Files that are
// rewritten as a whole (current.jsonl, transcript.jsonl, metadata.json) go
// through ReplaceFile: write a temp file in the same directory, fsync it,
// rename it over the target and fsync the directory, so a reader (or the next
// start after a crash) sees either the old file or the new one, never a mix.
//
// Thread safety: AppendFile is owned by one thread (one task = one writer,
// seed 002); the free functions are reentrant.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace maestro::context {

// An O_APPEND file descriptor. Move-only; the destructor closes it.
class AppendFile {
 public:
  AppendFile() = default;
  ~AppendFile();
  AppendFile(AppendFile&& o) noexcept;
  AppendFile& operator=(AppendFile&& o) noexcept;
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;

  // Opens (creating) `path` for appending.
  static Result<AppendFile> Open(const std::string& path);

  // Writes `data` with one write(2) (looping only on a short write). With
  // `sync` the data is fdatasync'ed before returning.
  Status Append(std::string_view data, bool sync = false);
  bool is_open() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

// Cuts bytes after the last '\n' of `path` (a torn line left by a crash in
// the middle of an append). Returns how many bytes were cut (0 = clean). A
// missing file is not an error (returns 0).
Result<uint64_t> CutTornTail(const std::string& path);

// Writes a new version of `path` atomically: `write` fills the temp file
// `path + ".tmp"` through the given sink, then fsync + rename + fsync(dir).
// If `write` fails the target is untouched and the temp file removed.
using ByteSink = std::function<Status(std::string_view)>;
Status ReplaceFile(const std::string& path, const std::function<Status(const ByteSink&)>& write);

// ReplaceFile with a whole (small) content.
Status ReplaceFileContent(const std::string& path, std::string_view content);

// fsync of a directory (makes a create / rename / unlink durable).
Status SyncDir(const std::string& dir);

// Reads a whole (small) file.
Result<std::string> ReadSmallFile(const std::string& path);

// Calls `fn(line, offset)` for every complete line of `path` (without the
// '\n'; bytes after the last '\n' are ignored), reading through a fixed
// buffer so memory is O(longest line). `fn` returning false stops the scan.
Status ForEachLine(const std::string& path,
                   const std::function<bool(std::string_view line, uint64_t offset)>& fn);

// Copies bytes [from, to) of `path` into `sink` through a fixed buffer.
Status CopyRange(const std::string& path, uint64_t from, uint64_t to, const ByteSink& sink);

Result<uint64_t> FileSize(const std::string& path);

}  // namespace maestro::context
