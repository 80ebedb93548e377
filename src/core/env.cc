#include "core/env.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "core/posix_file.h"

namespace maestro {
namespace {

Status Errno(const char* what, const std::string& path, int err = errno) {
  std::string msg = fmt::format("{} {}: {}", what, path, std::strerror(err));
  if (err == ENOENT) return NotFound(msg);
  return Internal(msg);
}

Status FsError(const char* what, const std::string& path, const std::error_code& ec) {
  return Internal(fmt::format("{} {}: {}", what, path, ec.message()));
}

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) ::close(fd_);
  }

  Status Append(std::string_view data) override {
    if (fd_ < 0) return Internal("write to a closed file " + path_);
    while (!data.empty()) {
      ssize_t n = ::write(fd_, data.data(), data.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        return Errno("write", path_);
      }
      data.remove_prefix(static_cast<size_t>(n));
    }
    return Status::Ok();
  }

  Status Sync() override {
    if (fd_ < 0) return Internal("sync of a closed file " + path_);
    if (::fdatasync(fd_) != 0) return Errno("fdatasync", path_);
    return Status::Ok();
  }

  Status Close() override {
    if (fd_ < 0) return Status::Ok();
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return Errno("close", path_);
    return Status::Ok();
  }

  const std::string& path() const override { return path_; }

 private:
  int fd_;
  std::string path_;
};

class PosixReadableFile final : public ReadableFile {
 public:
  PosixReadableFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~PosixReadableFile() override { ::close(fd_); }

  Result<size_t> ReadAt(uint64_t offset, char* buf, size_t n) override {
    for (;;) {
      ssize_t got = ::pread(fd_, buf, n, static_cast<off_t>(offset));
      if (got >= 0) return static_cast<size_t>(got);
      if (errno != EINTR) return Errno("pread", path_);
    }
  }

  Result<uint64_t> Size() override {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) return Errno("fstat", path_);
    return static_cast<uint64_t>(st.st_size);
  }

  const std::string& path() const override { return path_; }

 private:
  int fd_;
  std::string path_;
};

Result<std::unique_ptr<WritableFile>> OpenWritable(const std::string& path, int flags,
                                                   unsigned mode) {
  int fd = ::open(path.c_str(), flags | O_WRONLY | O_CREAT | O_CLOEXEC, mode);
  if (fd < 0) return Errno("open", path);
  return std::unique_ptr<WritableFile>(new PosixWritableFile(fd, path));
}

}  // namespace

std::unique_ptr<ReadableFile> NewPosixReadableFile(int fd, std::string path) {
  return std::make_unique<PosixReadableFile>(fd, std::move(path));
}

std::unique_ptr<WritableFile> NewPosixWritableFile(int fd, std::string path) {
  return std::make_unique<PosixWritableFile>(fd, std::move(path));
}

Env* Env::Default() {
  static PosixEnv env;
  return &env;
}

Result<std::unique_ptr<WritableFile>> PosixEnv::NewAppendableFile(const std::string& path) {
  return OpenWritable(path, O_APPEND, 0644);
}

Result<std::unique_ptr<WritableFile>> PosixEnv::NewWritableFile(const std::string& path,
                                                                unsigned mode,
                                                                bool follow_symlinks) {
  return OpenWritable(path, O_TRUNC | (follow_symlinks ? 0 : O_NOFOLLOW), mode);
}

Result<std::unique_ptr<ReadableFile>> PosixEnv::NewReadableFile(const std::string& path,
                                                                bool follow_symlinks) {
  if (follow_symlinks) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Errno("open", path);
    return std::unique_ptr<ReadableFile>(new PosixReadableFile(fd, path));
  }
  // O_NONBLOCK: opening a FIFO must not hang; the type check refuses it next.
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return Errno("open", path, ENOENT);
    return InvalidArgument(fmt::format("open {}: {}", path, std::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgument(path + " is not a regular file", "type");
  }
  return std::unique_ptr<ReadableFile>(new PosixReadableFile(fd, path));
}

Status PosixEnv::TruncateFile(const std::string& path, uint64_t size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Errno("open", path);
  Status st;
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    st = Errno("ftruncate", path);
  } else if (::fsync(fd) != 0) {
    st = Errno("fsync", path);
  }
  ::close(fd);
  return st;
}

Status PosixEnv::RenameFile(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) return Errno("rename", from + " -> " + to);
  return Status::Ok();
}

Status PosixEnv::RemoveFile(const std::string& path) {
  if (::remove(path.c_str()) != 0 && errno != ENOENT) return Errno("remove", path);
  return Status::Ok();
}

Status PosixEnv::RemoveAll(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);  // does not follow symlinks
  if (ec) return FsError("remove", path, ec);
  return Status::Ok();
}

Status PosixEnv::CreateDirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return FsError("mkdir", path, ec);
  return Status::Ok();
}

Result<std::string> PosixEnv::CreateTempDir(const std::string& parent, const std::string& prefix) {
  std::string tmpl = parent + "/" + prefix + "XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) return Errno("mkdtemp", tmpl);
  return tmpl;
}

Status PosixEnv::SyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("open dir", dir);
  Status st;
  if (::fsync(fd) != 0) st = Errno("fsync dir", dir);
  ::close(fd);
  return st;
}

Status PosixEnv::SetPermissions(const std::string& path, unsigned mode) {
  if (::chmod(path.c_str(), static_cast<mode_t>(mode)) != 0) return Errno("chmod", path);
  return Status::Ok();
}

Status PosixEnv::CreateSymlink(const std::string& target, const std::string& link) {
  if (::symlink(target.c_str(), link.c_str()) != 0) return Errno("symlink", link);
  return Status::Ok();
}

bool PosixEnv::FileExists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

Result<FileInfo> PosixEnv::GetFileInfo(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Errno("stat", path);
  FileInfo info;
  info.type = S_ISREG(st.st_mode)   ? DirEntry::Type::kFile
              : S_ISDIR(st.st_mode) ? DirEntry::Type::kDir
                                    : DirEntry::Type::kOther;
  info.size = static_cast<uint64_t>(st.st_size);
  info.modified_ms = static_cast<TimeMs>(st.st_mtim.tv_sec) * 1000 +
                     static_cast<TimeMs>(st.st_mtim.tv_nsec / 1000000);
  return info;
}

Result<std::vector<DirEntry>> PosixEnv::ListDir(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return Errno("opendir", dir);
  std::vector<DirEntry> out;
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    DirEntry entry;
    entry.name = std::move(name);
    unsigned char t = e->d_type;
    if (t == DT_UNKNOWN) {  // some filesystems do not fill d_type
      struct stat st {};
      if (::lstat((dir + "/" + entry.name).c_str(), &st) == 0) {
        t = S_ISDIR(st.st_mode)   ? DT_DIR
            : S_ISLNK(st.st_mode) ? DT_LNK
            : S_ISREG(st.st_mode) ? DT_REG
                                  : DT_UNKNOWN;
      }
    }
    entry.type = t == DT_REG   ? DirEntry::Type::kFile
                 : t == DT_DIR ? DirEntry::Type::kDir
                 : t == DT_LNK ? DirEntry::Type::kSymlink
                               : DirEntry::Type::kOther;
    out.push_back(std::move(entry));
  }
  ::closedir(d);
  return out;
}

Result<ProcessResult> PosixEnv::RunProcess(const ProcessSpec& spec) {
  return RunPosixProcess(spec);
}

Result<int> PosixEnv::SpawnChild(const ChildSpec& spec) { return SpawnPosixChild(spec); }

const Clock& PosixEnv::WallClock() { return *SystemClock::Default(); }

int64_t PosixEnv::MonotonicMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Result<std::string> ReadFileToString(Env& env, const std::string& path) {
  MAESTRO_ASSIGN_OR_RETURN(std::unique_ptr<ReadableFile> f, env.NewReadableFile(path));
  std::string out;
  char buf[16 * 1024];
  for (;;) {
    MAESTRO_ASSIGN_OR_RETURN(size_t n, f->ReadAt(out.size(), buf, sizeof(buf)));
    if (n == 0) break;
    out.append(buf, n);
  }
  return out;
}

Status WriteStringToFile(Env& env, const std::string& path, std::string_view content,
                         unsigned mode) {
  MAESTRO_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> f, env.NewWritableFile(path, mode));
  MAESTRO_RETURN_IF_ERROR(f->Append(content));
  return f->Close();
}

}  // namespace maestro
