// TreeRoot: the one safe way for the host to touch a tree an agent writes
// (a workspace): every read, listing, write, rename and removal is resolved
// by the kernel *beneath* a directory descriptor opened once, so nothing the
// agent does between two calls — a directory swapped for a symlink, a
// planted symlink anywhere in the path, `..`, a magic link under /proc —
// can make the host read or write outside the tree.
//
// How: openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
// RESOLVE_NO_MAGICLINKS from the root's descriptor; where the kernel lacks
// openat2 (ENOSYS, before Linux 5.6), a component-by-component walk of
// O_PATH | O_NOFOLLOW | O_DIRECTORY opens from that descriptor, which refuses
// a symlink in every component the same way. Listings read the opened
// directory's descriptor (never opendir on a path); writes create the last
// component with O_NOFOLLOW | O_CREAT in the parent's descriptor; renames and
// removals are renameat / unlinkat between parent descriptors. The check and
// the use are one kernel operation, so there is no window to race.
//
// Paths (`relative`): '/'-separated, relative to the root; "" and "." name
// the root. An absolute path or a `..` component is kInvalidArgument (field
// "path"). A symlink met in any component is kInvalidArgument (field
// "path"): the host never follows a link an agent made. A missing component
// is kNotFound; a file where a directory is expected, or a directory (or
// FIFO, device) where a file is, is kInvalidArgument (field "type"); an
// existing entry where an exclusive create wanted none is kConflict. Names
// are bytes: any but NUL and '/', up to 255 bytes (longer is
// kInvalidArgument). Callers that want to follow a symlink inside the tree
// read it (ReadLink) and resolve its target themselves, then use the
// symlink-free result (workspace/workspace_path.h ResolveInTree). The root itself is opened once by
// its trusted host path (the operator's own symlinks above it are followed there, never below).
//
// Thread safety: a TreeRoot is immutable after Open; any thread may call
// its methods at once (each call opens its own descriptors).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/status.h"

namespace maestro {

// One entry of TreeRoot::List: lstat of the entry through the directory's
// descriptor (a symlink is reported as kSymlink, its size the target's
// length, never followed).
struct TreeEntry {
  std::string name;
  FileInfo info;
};

class TreeRoot {
 public:
  // Opens the directory `root` (trusted host path). kNotFound when missing,
  // kInvalidArgument when it is not a directory.
  static Result<TreeRoot> Open(const std::string& root);

  TreeRoot(TreeRoot&&) noexcept;
  TreeRoot& operator=(TreeRoot&&) noexcept;
  ~TreeRoot();

  // The host path Open was given.
  const std::string& path() const { return path_; }

  // lstat of `relative`: the last component is not followed (a symlink is
  // reported as kSymlink); earlier components never are.
  Result<FileInfo> Stat(const std::string& relative) const;
  // The entries of the directory `relative` (without "." and ".."), in no
  // particular order, read through its descriptor.
  Result<std::vector<TreeEntry>> List(const std::string& relative) const;
  // The target of the symlink `relative` (its bytes, unresolved).
  Result<std::string> ReadLink(const std::string& relative) const;

  // Opens the regular file `relative` for reading; anything but a regular
  // file is kInvalidArgument (field "type") and a FIFO never blocks.
  Result<std::unique_ptr<ReadableFile>> OpenRead(const std::string& relative) const;
  // Creates (or, unless `exclusive`, truncates) the regular file `relative`
  // with `mode`; its directory must exist. A symlink or non-file there is
  // refused (kInvalidArgument); with `exclusive` an existing entry is
  // kConflict.
  Result<std::unique_ptr<WritableFile>> OpenWrite(const std::string& relative, unsigned mode = 0644,
                                                  bool exclusive = false) const;
  // mkdir -p of `relative` beneath the root, never through a symlink.
  Status MakeDirs(const std::string& relative, unsigned mode = 0755) const;
  // renameat(2) of `from` to `to` (both beneath the root; replaces `to`).
  Status Rename(const std::string& from, const std::string& to) const;
  // Removes the file, symlink or empty directory `relative`; missing is ok.
  Status Remove(const std::string& relative) const;
  // fsync of the directory `relative`: makes a create / rename in it durable.
  Status SyncDir(const std::string& relative) const;

  // Test hook: true makes every TreeRoot in the process resolve by the
  // fallback walk (as on a kernel without openat2), false returns to
  // openat2. Not for production code.
  static void ForceWalkForTesting(bool walk);

 private:
  TreeRoot(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;  // O_PATH | O_DIRECTORY descriptor of the root
  std::string path_;
};

// Reads at most `max` bytes of the regular file `relative` under `root`;
// `*size` (if set) gets the whole file's size.
Result<std::string> ReadTreeFile(const TreeRoot& root, const std::string& relative, size_t max,
                                 uint64_t* size = nullptr);

}  // namespace maestro
