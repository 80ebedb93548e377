// Durable files: the crash-safety recipes every durable file relies on,
// built on the Env's file primitives (core/env.h) so that a fault injected
// there (tests/support/fault_injection_env.h) reaches each of them.
//
// Where it sits: under every store of src/context, the tools ledger and the
// data dir's identity file. Append-only JSONL files (messages, tools,
// summaries, events) are written with AppendFile — one write(2) per record on
// an O_APPEND descriptor, so a crash can only leave a torn *last* line, which
// CutTornTail removes on open. An append is durable against a process crash
// when it returns; against an OS crash or power loss only when it was synced
// (`sync`): summaries, tools ledger records and each seed's last archive
// line are; a plain message append is not (the archive rebuilds the live
// files on open, so what survives stays consistent). Files that are
// rewritten as a whole (metadata.json, handoffs, and the live current.jsonl
// and transcript.jsonl) go through ReplaceFile: write a temp file in the same
// directory, fsync it, rename it over the target and fsync the directory, so
// a reader (or the next start after a crash) sees either the old file or the
// new one, never a mix, and the new one survives power loss once ReplaceFile
// returned. The live files skip both fsyncs (ReplaceOptions::durable): the
// archive they are rebuilt from was synced first.
//
// Thread safety: AppendFile is owned by one thread (one task = one writer,
// seed 002); the free functions are reentrant.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/env.h"
#include "core/status.h"

namespace maestro {

// An appendable WritableFile (Env::NewAppendableFile). Move-only; the
// destructor closes it.
class AppendFile {
 public:
  AppendFile() = default;

  // Opens `path` for appending. A missing file is created by the first
  // Append, not here: a new task's context has logs that most tasks never
  // write (summaries, the tools ledger), and on ext4 a file creation costs
  // 0.2-0.3 ms, the largest part of a task's setup. A file it creates has
  // its directory fsync'ed at its first synced append, so that append
  // survives power loss with the file's name. Not before: a file that is
  // never synced holds nothing promised to survive power loss, and the fsync
  // of a new task's directory per file was most of its setup time.
  static Result<AppendFile> Open(Env& env, const std::string& path);

  // Writes `data` with one write(2) (looping only on a short write). With
  // `sync` the data is fdatasync'ed before returning. After a failed append
  // (a full disk, an I/O error) part of `data` may be on disk: every later
  // append fails too, so no record is glued onto the torn one; reopening
  // (CutTornTail) repairs the file.
  Status Append(std::string_view data, bool sync = false);
  bool is_open() const { return env_ != nullptr; }
  const std::string& path() const { return path_; }

 private:
  std::unique_ptr<WritableFile> file_;
  std::string path_;
  Env* env_ = nullptr;
  bool dir_unsynced_ = false;  // created by Append; its name not yet durable
  Status failed_;              // the first failed append's error
};

// Cuts bytes after the last '\n' of `path` (a torn line left by a crash in
// the middle of an append). Returns how many bytes were cut (0 = clean). A
// missing file is not an error (returns 0).
Result<uint64_t> CutTornTail(Env& env, const std::string& path);

// Writes a new version of `path` atomically: `write` fills the temp file
// `path + ".tmp"` through the given sink, then fsync + rename + fsync(dir).
// If `write` fails the target is untouched and the temp file removed.
using ByteSink = std::function<Status(std::string_view)>;
struct ReplaceOptions {
  std::string temp_suffix = ".tmp";
  // false for files an agent names (workspace paths): a symlink planted at
  // the temp file's name is refused instead of written through (the rename
  // itself replaces a symlink at `path`, never its target).
  bool follow_symlinks = true;
  // false: no fsync of the file or of its directory (the rename stays
  // atomic against a process crash) — for files rebuilt on open from a log
  // that was synced (current.jsonl and transcript.jsonl from messages.jsonl).
  bool durable = true;
};
Status ReplaceFile(Env& env, const std::string& path,
                   const std::function<Status(const ByteSink&)>& write,
                   const ReplaceOptions& options = {});

// ReplaceFile with a whole (small) content.
Status ReplaceFileContent(Env& env, const std::string& path, std::string_view content,
                          const ReplaceOptions& options = {});

// Calls `fn(line, offset)` for every complete line of `path` (without the
// '\n'; bytes after the last '\n' are ignored), reading through a fixed
// buffer so memory is O(longest line). `fn` returning false stops the scan.
// A missing file has no lines. `from` (a line start) skips the bytes before
// it: an append-only file's new lines only.
Status ForEachLine(Env& env, const std::string& path,
                   const std::function<bool(std::string_view line, uint64_t offset)>& fn,
                   uint64_t from = 0);

// Copies bytes [from, to) of `path` into `sink` through a fixed buffer.
Status CopyRange(Env& env, const std::string& path, uint64_t from, uint64_t to,
                 const ByteSink& sink);

// The size of `path`; 0 when it is missing.
Result<uint64_t> FileSize(Env& env, const std::string& path);

}  // namespace maestro
