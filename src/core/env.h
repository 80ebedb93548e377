// Env: the one seam between maestro and the operating system.
//
// Where it sits: every module that touches files, starts processes or reads
// the clock does it through an Env handed to it in its deps/options struct
// (leveldb's Env, CONVENTIONS.md "inject what makes tests
// non-deterministic"). Production uses PosixEnv (Env::Default()); tests use
// FaultInjectionEnv (tests/support) to fail the Nth write, fill the disk,
// drop what was never fsynced at a simulated crash, or delay an fsync — the
// faults that lose data and that no test could reach while modules called
// open(2) and ofstream themselves. A CI check (scripts/check_os_seam.sh)
// keeps open/ofstream/popen/fork/exec and std::filesystem writes inside
// src/core/.
//
// The file primitives are deliberately small (append, write, read at an
// offset, rename, fsync file and directory, remove, list); the crash-safety
// recipes built from them (atomic replace, torn-tail repair, line scans) are
// in core/durable_file.h so that a fault injected here reaches every one of
// them.
//
// Thread safety: PosixEnv is stateless and may be used from any thread. A
// WritableFile / ReadableFile is owned by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/process.h"
#include "core/status.h"

namespace maestro {

// An open file written from its end (append or a fresh truncated file).
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  // Writes all of `data` (looping on short writes). For an appendable file
  // one Append of one record is one write(2) on O_APPEND: a crash can leave
  // only a torn last record, never an interleaving.
  virtual Status Append(std::string_view data) = 0;
  // Makes what was appended durable (fdatasync).
  virtual Status Sync() = 0;
  // Closes the file; later calls fail. The destructor closes silently.
  virtual Status Close() = 0;
  virtual const std::string& path() const = 0;
};

// An open file read at explicit offsets (pread), so one handle serves a
// sequential scan and random access alike.
class ReadableFile {
 public:
  virtual ~ReadableFile() = default;
  // Reads up to `n` bytes at `offset` into `buf`; returns how many were read
  // (0 at the end of the file).
  virtual Result<size_t> ReadAt(uint64_t offset, char* buf, size_t n) = 0;
  virtual Result<uint64_t> Size() = 0;
  virtual const std::string& path() const = 0;
};

struct DirEntry {
  enum class Type { kFile, kDir, kSymlink, kOther };
  std::string name;  // the entry's name inside the directory (no path)
  Type type = Type::kOther;
};

// What stat(2) says of a path (symlinks followed).
struct FileInfo {
  DirEntry::Type type = DirEntry::Type::kOther;
  uint64_t size = 0;
  TimeMs modified_ms = 0;  // mtime
};

class Env {
 public:
  virtual ~Env() = default;

  // The process-wide PosixEnv.
  static Env* Default();

  // ---- files. A missing file is kNotFound wherever that is an answer.
  // Opens (creating, 0644) `path` for appending.
  virtual Result<std::unique_ptr<WritableFile>> NewAppendableFile(const std::string& path) = 0;
  // Creates or truncates `path` (0644, or `mode`). Files an agent names
  // (workspace paths) are opened with `follow_symlinks` false: a symlink as
  // the last component is refused (ELOOP) instead of written through.
  virtual Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path,
                                                                unsigned mode = 0644,
                                                                bool follow_symlinks = true) = 0;
  // With `follow_symlinks` false a symlink as the last component is refused
  // (kInvalidArgument) and so is anything but a regular file, without
  // blocking on a FIFO (kInvalidArgument with field "type").
  virtual Result<std::unique_ptr<ReadableFile>> NewReadableFile(const std::string& path,
                                                                bool follow_symlinks = true) = 0;
  // Cuts `path` to `size` bytes and fsyncs it.
  virtual Status TruncateFile(const std::string& path, uint64_t size) = 0;
  // rename(2): atomic replace of `to` on one filesystem.
  virtual Status RenameFile(const std::string& from, const std::string& to) = 0;
  // Removes a file or an empty directory; a missing one is not an error.
  virtual Status RemoveFile(const std::string& path) = 0;
  // Removes a tree (never follows symlinks); a missing one is not an error.
  virtual Status RemoveAll(const std::string& path) = 0;
  // mkdir -p.
  virtual Status CreateDirs(const std::string& path) = 0;
  // A new directory `<parent>/<prefix>XXXXXX` (mkdtemp, mode 0700); returns
  // its path.
  virtual Result<std::string> CreateTempDir(const std::string& parent,
                                            const std::string& prefix) = 0;
  // fsync of a directory: makes a create / rename / unlink in it durable.
  virtual Status SyncDir(const std::string& dir) = 0;
  virtual Status SetPermissions(const std::string& path, unsigned mode) = 0;
  virtual Status CreateSymlink(const std::string& target, const std::string& link) = 0;
  virtual bool FileExists(const std::string& path) = 0;
  // kNotFound when `path` does not exist.
  virtual Result<FileInfo> GetFileInfo(const std::string& path) = 0;
  // The entries of `dir` (without "." and ".."), in no particular order.
  virtual Result<std::vector<DirEntry>> ListDir(const std::string& dir) = 0;

  // ---- processes (core/process.h: own process group, deadline, cancel,
  // bounded output).
  virtual Result<ProcessResult> RunProcess(const ProcessSpec& spec) = 0;
  // A long-lived child; returns its pid.
  virtual Result<int> SpawnChild(const ChildSpec& spec) = 0;

  // ---- clocks.
  // Wall time, the unit stored in the database.
  virtual const Clock& WallClock() = 0;
  // Monotonic milliseconds (arbitrary origin) for durations and deadlines.
  virtual int64_t MonotonicMs() = 0;
};

// The real operating system.
class PosixEnv final : public Env {
 public:
  Result<std::unique_ptr<WritableFile>> NewAppendableFile(const std::string& path) override;
  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path, unsigned mode,
                                                        bool follow_symlinks) override;
  Result<std::unique_ptr<ReadableFile>> NewReadableFile(const std::string& path,
                                                        bool follow_symlinks) override;
  Status TruncateFile(const std::string& path, uint64_t size) override;
  Status RenameFile(const std::string& from, const std::string& to) override;
  Status RemoveFile(const std::string& path) override;
  Status RemoveAll(const std::string& path) override;
  Status CreateDirs(const std::string& path) override;
  Result<std::string> CreateTempDir(const std::string& parent, const std::string& prefix) override;
  Status SyncDir(const std::string& dir) override;
  Status SetPermissions(const std::string& path, unsigned mode) override;
  Status CreateSymlink(const std::string& target, const std::string& link) override;
  bool FileExists(const std::string& path) override;
  Result<FileInfo> GetFileInfo(const std::string& path) override;
  Result<std::vector<DirEntry>> ListDir(const std::string& dir) override;
  Result<ProcessResult> RunProcess(const ProcessSpec& spec) override;
  Result<int> SpawnChild(const ChildSpec& spec) override;
  const Clock& WallClock() override;
  int64_t MonotonicMs() override;
};

// A whole (small) file; kNotFound when it is missing.
Result<std::string> ReadFileToString(Env& env, const std::string& path);
// Creates or truncates `path` with `content` (not atomic, not synced: for
// files a crash may lose, e.g. a snapshot rewritten every job; the durable
// recipe is core/durable_file.h ReplaceFileContent).
Status WriteStringToFile(Env& env, const std::string& path, std::string_view content,
                         unsigned mode = 0644);

}  // namespace maestro
