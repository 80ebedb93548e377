#include "context/durable_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

namespace maestro::context {
namespace {

constexpr size_t kBufSize = 64 * 1024;

Status Errno(const char* what, const std::string& path) {
  return Internal(fmt::format("{} {}: {}", what, path, std::strerror(errno)));
}

// Closes an fd on scope exit.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("write", path);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

}  // namespace

AppendFile::~AppendFile() {
  if (fd_ >= 0) ::close(fd_);
}
AppendFile::AppendFile(AppendFile&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)) {
  o.fd_ = -1;
}
AppendFile& AppendFile::operator=(AppendFile&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    path_ = std::move(o.path_);
    o.fd_ = -1;
  }
  return *this;
}

Result<AppendFile> AppendFile::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("open", path);
  AppendFile f;
  f.fd_ = fd;
  f.path_ = path;
  return f;
}

Status AppendFile::Append(std::string_view data, bool sync) {
  if (fd_ < 0) return Internal("append to a closed file " + path_);
  MAESTRO_RETURN_IF_ERROR(WriteAll(fd_, data, path_));
  if (sync && ::fdatasync(fd_) != 0) return Errno("fdatasync", path_);
  return Status::Ok();
}

Result<uint64_t> FileSize(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return uint64_t{0};
    return Errno("stat", path);
  }
  return static_cast<uint64_t>(st.st_size);
}

Result<uint64_t> CutTornTail(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return uint64_t{0};
    return Errno("open", path);
  }
  FdCloser closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Errno("fstat", path);
  uint64_t size = static_cast<uint64_t>(st.st_size);
  // Walk back from the end to the last '\n'.
  char buf[4096];
  uint64_t end = size;
  uint64_t keep = 0;
  while (end > 0) {
    uint64_t start = end > sizeof(buf) ? end - sizeof(buf) : 0;
    size_t len = static_cast<size_t>(end - start);
    ssize_t got = ::pread(fd, buf, len, static_cast<off_t>(start));
    if (got != static_cast<ssize_t>(len)) return Errno("pread", path);
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
  if (::ftruncate(fd, static_cast<off_t>(keep)) != 0) return Errno("ftruncate", path);
  if (::fsync(fd) != 0) return Errno("fsync", path);
  return size - keep;
}

Status SyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("open dir", dir);
  FdCloser closer{fd};
  if (::fsync(fd) != 0) return Errno("fsync dir", dir);
  return Status::Ok();
}

Status ReplaceFile(const std::string& path, const std::function<Status(const ByteSink&)>& write) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("open", tmp);
  Status st;
  {
    FdCloser closer{fd};
    // Small writes are gathered so a rewrite of many lines costs few syscalls.
    std::string pending;
    pending.reserve(kBufSize);
    ByteSink sink = [&](std::string_view data) -> Status {
      if (pending.size() + data.size() > kBufSize) {
        MAESTRO_RETURN_IF_ERROR(WriteAll(fd, pending, tmp));
        pending.clear();
        if (data.size() > kBufSize) return WriteAll(fd, data, tmp);
      }
      pending.append(data);
      return Status::Ok();
    };
    st = write(sink);
    if (st.ok()) st = WriteAll(fd, pending, tmp);
    if (st.ok() && ::fsync(fd) != 0) st = Errno("fsync", tmp);
  }
  if (st.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) st = Errno("rename", tmp);
  if (!st.ok()) {
    ::unlink(tmp.c_str());
    return st;
  }
  return SyncDir(std::filesystem::path(path).parent_path().string());
}

Status ReplaceFileContent(const std::string& path, std::string_view content) {
  return ReplaceFile(path, [&](const ByteSink& sink) { return sink(content); });
}

Result<std::string> ReadSmallFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return NotFound("no file " + path);
    return Errno("open", path);
  }
  FdCloser closer{fd};
  std::string out;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("read", path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

Status ForEachLine(const std::string& path,
                   const std::function<bool(std::string_view, uint64_t)>& fn) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::Ok();
    return Errno("open", path);
  }
  FdCloser closer{fd};
  std::unique_ptr<char[]> buf(new char[kBufSize]);
  std::string partial;      // a line that spans buffer reads
  uint64_t line_start = 0;  // file offset of the current line
  uint64_t pos = 0;         // file offset of buf[0]
  for (;;) {
    ssize_t n = ::read(fd, buf.get(), kBufSize);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("read", path);
    }
    if (n == 0) break;
    size_t i = 0, len = static_cast<size_t>(n);
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

Status CopyRange(const std::string& path, uint64_t from, uint64_t to, const ByteSink& sink) {
  if (to <= from) return Status::Ok();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno("open", path);
  FdCloser closer{fd};
  std::unique_ptr<char[]> buf(new char[kBufSize]);
  uint64_t off = from;
  while (off < to) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(to - off, kBufSize));
    ssize_t n = ::pread(fd, buf.get(), want, static_cast<off_t>(off));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Errno("pread (file shrank?)", path);
    MAESTRO_RETURN_IF_ERROR(sink(std::string_view(buf.get(), static_cast<size_t>(n))));
    off += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

}  // namespace maestro::context
