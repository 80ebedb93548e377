// The PosixEnv's file objects over an already open descriptor, shared by
// core/env.cc (files opened by path) and core/tree_root.cc (files opened
// beneath a workspace's directory descriptor), so both hand out the same
// kinds of ReadableFile / WritableFile.
//
// Internal to src/core/: other modules get files from an Env or a TreeRoot.
//
// Thread safety: as core/env.h (a file is owned by one thread at a time).
#pragma once

#include <memory>
#include <string>

#include "core/env.h"

namespace maestro {

// Takes ownership of `fd` (closed by the file's destructor); `path` is only
// for messages.
std::unique_ptr<ReadableFile> NewPosixReadableFile(int fd, std::string path);
std::unique_ptr<WritableFile> NewPosixWritableFile(int fd, std::string path);

}  // namespace maestro
