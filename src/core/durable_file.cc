#include "core/durable_file.h"

#include <cstring>
#include <filesystem>
#include <memory>

namespace maestro {
namespace {

constexpr size_t kBufSize = 64 * 1024;

std::string ParentDir(const std::string& path) {
  std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

}  // namespace

Result<AppendFile> AppendFile::Open(Env& env, const std::string& path) {
  AppendFile f;
  f.path_ = path;
  f.env_ = &env;
  if (!env.FileExists(path)) return f;  // created by the first Append
  MAESTRO_ASSIGN_OR_RETURN(f.file_, env.NewAppendableFile(path));
  return f;
}

Status AppendFile::Append(std::string_view data, bool sync) {
  if (env_ == nullptr) return Internal("append to a closed file " + path_);
  if (!failed_.ok()) {
    return Status(failed_.code(), "an earlier append failed, reopen " + path_ +
                                      " to repair it: " + failed_.message());
  }
  if (!file_) {
    auto created = env_->NewAppendableFile(path_);
    if (!created.ok()) return created.status();  // nothing written: a retry may succeed
    file_ = std::move(created).value();
    dir_unsynced_ = true;
  }
  Status st = file_->Append(data);
  if (st.ok() && sync) st = file_->Sync();
  // Without this, fdatasync makes the data durable but not the new name.
  if (st.ok() && sync && dir_unsynced_) {
    st = env_->SyncDir(ParentDir(path_));
    dir_unsynced_ = !st.ok();
  }
  if (!st.ok()) failed_ = st;
  return st;
}

Result<uint64_t> FileSize(Env& env, const std::string& path) {
  auto file = env.NewReadableFile(path);
  if (!file.ok()) {
    if (file.status().code() == StatusCode::kNotFound) return uint64_t{0};
    return file.status();
  }
  return (*file)->Size();
}

Result<uint64_t> CutTornTail(Env& env, const std::string& path) {
  auto opened = env.NewReadableFile(path);
  if (!opened.ok()) {
    if (opened.status().code() == StatusCode::kNotFound) return uint64_t{0};
    return opened.status();
  }
  ReadableFile& file = **opened;
  MAESTRO_ASSIGN_OR_RETURN(uint64_t size, file.Size());
  // Walk back from the end to the last '\n'.
  char buf[4096];
  uint64_t end = size;
  uint64_t keep = 0;
  while (end > 0) {
    uint64_t start = end > sizeof(buf) ? end - sizeof(buf) : 0;
    size_t len = static_cast<size_t>(end - start);
    MAESTRO_ASSIGN_OR_RETURN(size_t got, file.ReadAt(start, buf, len));
    if (got != len) return Internal("short read of " + path + " (file shrank?)");
    bool found = false;
    for (size_t i = len; i > 0; --i) {
      if (buf[i - 1] == '\n') {
        keep = start + i;
        found = true;
        break;
      }
    }
    if (found) break;
    end = start;
  }
  if (keep == size) return uint64_t{0};
  MAESTRO_RETURN_IF_ERROR(env.TruncateFile(path, keep));
  return size - keep;
}

Status ReplaceFile(Env& env, const std::string& path,
                   const std::function<Status(const ByteSink&)>& write,
                   const ReplaceOptions& options) {
  const std::string tmp = path + options.temp_suffix;
  MAESTRO_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file,
                           env.NewWritableFile(tmp, 0644, options.follow_symlinks));
  // Small writes are gathered so a rewrite of many lines costs few syscalls.
  std::string pending;
  pending.reserve(kBufSize);
  ByteSink sink = [&](std::string_view data) -> Status {
    if (pending.size() + data.size() > kBufSize) {
      MAESTRO_RETURN_IF_ERROR(file->Append(pending));
      pending.clear();
      if (data.size() > kBufSize) return file->Append(data);
    }
    pending.append(data);
    return Status::Ok();
  };
  Status st = write(sink);
  if (st.ok()) st = file->Append(pending);
  if (st.ok() && options.durable) st = file->Sync();
  Status closed = file->Close();
  if (st.ok()) st = closed;
  if (st.ok()) st = env.RenameFile(tmp, path);
  if (!st.ok()) {
    (void)env.RemoveFile(tmp);  // best effort: the error that matters is `st`
    return st;
  }
  return options.durable ? env.SyncDir(ParentDir(path)) : Status::Ok();
}

Status ReplaceFileContent(Env& env, const std::string& path, std::string_view content,
                          const ReplaceOptions& options) {
  return ReplaceFile(
      env, path, [&](const ByteSink& sink) { return sink(content); }, options);
}

Status ForEachLine(Env& env, const std::string& path,
                   const std::function<bool(std::string_view, uint64_t)>& fn, uint64_t from) {
  auto opened = env.NewReadableFile(path);
  if (!opened.ok()) {
    if (opened.status().code() == StatusCode::kNotFound) return Status::Ok();
    return opened.status();
  }
  ReadableFile& file = **opened;
  std::unique_ptr<char[]> buf(new char[kBufSize]);
  std::string partial;         // a line that spans buffer reads
  uint64_t line_start = from;  // file offset of the current line
  uint64_t pos = from;         // file offset of buf[0]
  for (;;) {
    MAESTRO_ASSIGN_OR_RETURN(size_t len, file.ReadAt(pos, buf.get(), kBufSize));
    if (len == 0) break;
    size_t i = 0;
    while (i < len) {
      const void* nl = std::memchr(buf.get() + i, '\n', len - i);
      if (!nl) {
        partial.append(buf.get() + i, len - i);
        break;
      }
      size_t j = static_cast<size_t>(static_cast<const char*>(nl) - buf.get());
      bool go;
      if (partial.empty()) {
        go = fn(std::string_view(buf.get() + i, j - i), line_start);
      } else {
        partial.append(buf.get() + i, j - i);
        go = fn(partial, line_start);
        partial.clear();
      }
      if (!go) return Status::Ok();
      i = j + 1;
      line_start = pos + i;
    }
    pos += len;
  }
  return Status::Ok();  // `partial` is a torn line: ignored
}

Status CopyRange(Env& env, const std::string& path, uint64_t from, uint64_t to,
                 const ByteSink& sink) {
  if (to <= from) return Status::Ok();
  MAESTRO_ASSIGN_OR_RETURN(std::unique_ptr<ReadableFile> file, env.NewReadableFile(path));
  std::unique_ptr<char[]> buf(new char[kBufSize]);
  uint64_t off = from;
  while (off < to) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(to - off, kBufSize));
    MAESTRO_ASSIGN_OR_RETURN(size_t n, file->ReadAt(off, buf.get(), want));
    if (n == 0) return Internal("read " + path + ": file shrank");
    MAESTRO_RETURN_IF_ERROR(sink(std::string_view(buf.get(), n)));
    off += n;
  }
  return Status::Ok();
}

}  // namespace maestro
