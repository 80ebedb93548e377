#include "core/tree_root.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <string_view>
#include <utility>

#include "core/posix_file.h"

namespace maestro {
namespace {

// Set once openat2 answered ENOSYS (an old kernel), or by the test hook.
std::atomic<bool> g_walk{false};

// Closes a descriptor at scope exit.
class OwnedFd {
 public:
  explicit OwnedFd(int fd = -1) : fd_(fd) {}
  OwnedFd(OwnedFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  OwnedFd& operator=(OwnedFd&& o) noexcept {
    if (this != &o) {
      Reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  ~OwnedFd() { Reset(); }
  int get() const { return fd_; }
  int Release() { return std::exchange(fd_, -1); }

 private:
  void Reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int fd_;
};

TimeMs StatMtimeMs(const struct stat& st) {
  return static_cast<TimeMs>(st.st_mtim.tv_sec) * 1000 +
         static_cast<TimeMs>(st.st_mtim.tv_nsec / 1000000);
}

FileInfo InfoFromStat(const struct stat& st) {
  FileInfo info;
  info.type = S_ISREG(st.st_mode)   ? DirEntry::Type::kFile
              : S_ISDIR(st.st_mode) ? DirEntry::Type::kDir
              : S_ISLNK(st.st_mode) ? DirEntry::Type::kSymlink
                                    : DirEntry::Type::kOther;
  info.size = static_cast<uint64_t>(st.st_size);
  info.modified_ms = StatMtimeMs(st);
  return info;
}

// A relative path split into its components ("" and "." dropped).
struct PathComponents {
  std::vector<std::string> parts;
  std::string Joined(size_t n) const {
    std::string out;
    for (size_t i = 0; i < n; ++i) {
      if (i > 0) out += '/';
      out += parts[i];
    }
    return out.empty() ? "." : out;
  }
};

Result<PathComponents> SplitRelative(const std::string& relative) {
  if (relative.find('\0') != std::string::npos) {
    return InvalidArgument("path contains a NUL byte", "path");
  }
  if (!relative.empty() && relative.front() == '/') {
    return InvalidArgument("absolute path '" + relative + "' refused", "path");
  }
  PathComponents c;
  size_t start = 0;
  while (start <= relative.size()) {
    size_t end = relative.find('/', start);
    if (end == std::string::npos) end = relative.size();
    std::string part = relative.substr(start, end - start);
    if (part == "..") return InvalidArgument("path '" + relative + "' refused: '..'", "path");
    if (!part.empty() && part != ".") c.parts.push_back(std::move(part));
    start = end + 1;
  }
  return c;
}

// The Status for an errno met while resolving or using `shown`.
Status FromErrno(int err, const char* what, const std::string& shown) {
  const std::string msg = fmt::format("{} '{}': {}", what, shown, std::strerror(err));
  switch (err) {
    case ENOENT:
      return NotFound(msg);
    case ELOOP:
    case EXDEV:
      return InvalidArgument(fmt::format("{} '{}' refused: a symlink in the path", what, shown),
                             "path");
    case ENOTDIR:
    case EISDIR:
    case ENXIO:
      return InvalidArgument(msg, "type");
    case EEXIST:
    case ENOTEMPTY:
      return Conflict(msg);
    case ENAMETOOLONG:
    case EACCES:
    case EPERM:
    case EINVAL:
      return InvalidArgument(msg, "path");
    default:
      return Internal(msg);
  }
}

// openat2 beneath `dirfd`, never through a symlink or a magic link.
int OpenAt2(int dirfd, const std::string& path, int flags, unsigned mode) {
  struct open_how how {};
  how.flags = static_cast<uint64_t>(flags);
  how.mode = (flags & O_CREAT) ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  for (int attempt = 0;; ++attempt) {
    long fd = ::syscall(SYS_openat2, dirfd, path.c_str(), &how, sizeof(how));
    if (fd >= 0) return static_cast<int>(fd);
    // EAGAIN: the kernel saw a concurrent rename during resolution.
    if ((errno == EINTR || errno == EAGAIN) && attempt < 16) continue;
    return -1;
  }
}

// Why `name` in `dirfd` could not be opened as a directory: ELOOP for a
// symlink (O_NOFOLLOW | O_DIRECTORY says ENOTDIR for both).
int WhyNotDir(int dirfd, const std::string& name, int err) {
  if (err != ENOTDIR) return err;
  struct stat st {};
  if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
    return ELOOP;
  }
  return err;
}

// The fallback walk: the first `n` components opened one by one as
// directories (O_PATH | O_NOFOLLOW) from `root_fd`. Returns -1 with errno.
int WalkDirs(int root_fd, const PathComponents& c, size_t n) {
  OwnedFd cur(::fcntl(root_fd, F_DUPFD_CLOEXEC, 0));
  if (cur.get() < 0) return -1;
  for (size_t i = 0; i < n; ++i) {
    int next =
        ::openat(cur.get(), c.parts[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      errno = WhyNotDir(cur.get(), c.parts[i], errno);
      return -1;
    }
    cur = OwnedFd(next);
  }
  return cur.Release();
}

// Opens the whole path `c` beneath `root_fd` with `flags` (O_NOFOLLOW and
// O_CLOEXEC added). Returns -1 with errno.
int OpenBeneath(int root_fd, const PathComponents& c, int flags, unsigned mode = 0) {
  flags |= O_NOFOLLOW | O_CLOEXEC;
  if (!g_walk.load(std::memory_order_relaxed)) {
    const std::string path = c.Joined(c.parts.size());
    int fd = OpenAt2(root_fd, path, flags, mode);
    if (fd >= 0) return fd;
    if (errno == ENOTDIR && (flags & O_DIRECTORY)) {
      // O_DIRECTORY | O_NOFOLLOW says ENOTDIR for a symlink as the last
      // component too: tell the two apart, a symlink is a refusal.
      OwnedFd last(OpenAt2(root_fd, path, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0));
      struct stat st {};
      errno =
          last.get() >= 0 && ::fstat(last.get(), &st) == 0 && S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
      return -1;
    }
    if (errno != ENOSYS) return -1;
    g_walk.store(true, std::memory_order_relaxed);
  }
  if (c.parts.empty()) return ::openat(root_fd, ".", flags & ~O_NOFOLLOW, mode);
  OwnedFd dir(WalkDirs(root_fd, c, c.parts.size() - 1));
  if (dir.get() < 0) return -1;
  const std::string& last = c.parts.back();
  int fd = ::openat(dir.get(), last.c_str(), flags, mode);
  if (fd < 0 && (flags & O_DIRECTORY)) errno = WhyNotDir(dir.get(), last, errno);
  return fd;
}

// The directory holding the last component of `c` (O_PATH), and that
// component's name. kInvalidArgument for the root itself.
Result<std::pair<OwnedFd, std::string>> OpenParent(int root_fd, const PathComponents& c,
                                                   const std::string& shown, const char* what) {
  if (c.parts.empty()) return InvalidArgument(fmt::format("{} of the root refused", what), "path");
  PathComponents parent;
  parent.parts.assign(c.parts.begin(), c.parts.end() - 1);
  OwnedFd dir(OpenBeneath(root_fd, parent, O_PATH | O_DIRECTORY));
  if (dir.get() < 0) return FromErrno(errno, what, shown);
  return std::make_pair(std::move(dir), c.parts.back());
}

}  // namespace

void TreeRoot::ForceWalkForTesting(bool walk) { g_walk.store(walk); }

Result<TreeRoot> TreeRoot::Open(const std::string& root) {
  int fd = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return NotFound(fmt::format("no directory {}", root));
    if (err == ENOTDIR) return InvalidArgument(fmt::format("{} is not a directory", root), "path");
    return FromErrno(err, "open", root);
  }
  return TreeRoot(fd, root);
}

TreeRoot::TreeRoot(TreeRoot&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), path_(std::move(o.path_)) {}

TreeRoot& TreeRoot::operator=(TreeRoot&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
    path_ = std::move(o.path_);
  }
  return *this;
}

TreeRoot::~TreeRoot() {
  if (fd_ >= 0) ::close(fd_);
}

Result<FileInfo> TreeRoot::Stat(const std::string& relative) const {
  MAESTRO_ASSIGN_OR_RETURN(PathComponents c, SplitRelative(relative));
  // O_PATH | O_NOFOLLOW opens a symlink as the last component itself.
  OwnedFd fd(OpenBeneath(fd_, c, O_PATH));
  if (fd.get() < 0) return FromErrno(errno, "stat", relative);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return FromErrno(errno, "stat", relative);
  return InfoFromStat(st);
}

Result<std::vector<TreeEntry>> TreeRoot::List(const std::string& relative) const {
  MAESTRO_ASSIGN_OR_RETURN(PathComponents c, SplitRelative(relative));
  OwnedFd fd(OpenBeneath(fd_, c, O_RDONLY | O_DIRECTORY));
  if (fd.get() < 0) return FromErrno(errno, "list", relative);
  DIR* d = ::fdopendir(fd.get());
  if (d == nullptr) return FromErrno(errno, "list", relative);
  fd.Release();  // owned by `d` now
  std::vector<TreeEntry> out;
  while (struct dirent* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st {};
    if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone
    out.push_back(TreeEntry{std::string(name), InfoFromStat(st)});
  }
  ::closedir(d);
  return out;
}

Result<std::string> TreeRoot::ReadLink(const std::string& relative) const {
  MAESTRO_ASSIGN_OR_RETURN(PathComponents c, SplitRelative(relative));
  OwnedFd fd(OpenBeneath(fd_, c, O_PATH));
  if (fd.get() < 0) return FromErrno(errno, "readlink", relative);
  std::string target(PATH_MAX, '\0');
  ssize_t n = ::readlinkat(fd.get(), "", target.data(), target.size());
  if (n < 0) {
    if (errno == EINVAL || errno == ENOENT) {
      return InvalidArgument(fmt::format("'{}' is not a symlink", relative), "type");
    }
    return FromErrno(errno, "readlink", relative);
  }
  target.resize(static_cast<size_t>(n));
  return target;
}

Result<std::unique_ptr<ReadableFile>> TreeRoot::OpenRead(const std::string& relative) const {
  MAESTRO_ASSIGN_OR_RETURN(PathComponents c, SplitRelative(relative));
  // O_NONBLOCK: a FIFO must not hang the open; the type check refuses it.
  OwnedFd fd(OpenBeneath(fd_, c, O_RDONLY | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) return FromErrno(errno, "open", relative);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return InvalidArgument(fmt::format("'{}' is not a regular file", relative), "type");
  }
  return NewPosixReadableFile(fd.Release(), path_ + "/" + c.Joined(c.parts.size()));
}

Result<std::unique_ptr<WritableFile>> TreeRoot::OpenWrite(const std::string& relative,
                                                          unsigned mode, bool exclusive) const {
  MAESTRO_ASSIGN_OR_RETURN(PathComponents c, SplitRelative(relative));
  MAESTRO_ASSIGN_OR_RETURN(auto parent, OpenParent(fd_, c, relative, "write"));
  const int dir = parent.first.get();
  const char* name = parent.second.c_str();
  const int base = O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
  // O_CREAT | O_EXCL never follows a symlink and never opens what exists.
  OwnedFd fd(::openat(dir, name, base | O_CREAT | O_EXCL, mode));
  if (fd.get() < 0 && errno == EEXIST && !exclusive) {
    // Replace an existing regular file only: opened without O_TRUNC, checked
    // on the descriptor, then cut (a FIFO or device is never truncated).
    fd = OwnedFd(::openat(dir, name, base));
    if (fd.get() >= 0) {
      struct stat st {};
      if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return InvalidArgument(fmt::format("'{}' is not a regular file", relative), "type");
      }
      if (::ftruncate(fd.get(), 0) != 0) return FromErrno(errno, "truncate", relative);
    }
  }
  if (fd.get() < 0) return FromErrno(errno, "write", relative);
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags >= 0) ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  return NewPosixWritableFile(fd.Release(), path_ + "/" + c.Joined(c.parts.size()));
}

Status TreeRoot::MakeDirs(const std::string& relative, unsigned mode) const {
  MAESTRO_ASSIGN_OR_RETURN(PathComponents c, SplitRelative(relative));
  // One component at a time from the root: mkdirat never follows a symlink,
  // and each directory is opened O_NOFOLLOW before the next is made in it.
  OwnedFd cur(::fcntl(fd_, F_DUPFD_CLOEXEC, 0));
  if (cur.get() < 0) return FromErrno(errno, "mkdir", relative);
  for (const std::string& part : c.parts) {
    if (::mkdirat(cur.get(), part.c_str(), static_cast<mode_t>(mode)) != 0 && errno != EEXIST) {
      return FromErrno(errno, "mkdir", relative);
    }
    int next = ::openat(cur.get(), part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) return FromErrno(WhyNotDir(cur.get(), part, errno), "mkdir", relative);
    cur = OwnedFd(next);
  }
  return Status::Ok();
}

Status TreeRoot::Rename(const std::string& from, const std::string& to) const {
  MAESTRO_ASSIGN_OR_RETURN(PathComponents cf, SplitRelative(from));
  MAESTRO_ASSIGN_OR_RETURN(PathComponents ct, SplitRelative(to));
  MAESTRO_ASSIGN_OR_RETURN(auto pf, OpenParent(fd_, cf, from, "rename"));
  MAESTRO_ASSIGN_OR_RETURN(auto pt, OpenParent(fd_, ct, to, "rename"));
  // renameat acts on the last components themselves (a symlink is moved,
  // never followed).
  if (::renameat(pf.first.get(), pf.second.c_str(), pt.first.get(), pt.second.c_str()) != 0) {
    return FromErrno(errno, "rename", from + " -> " + to);
  }
  return Status::Ok();
}

Status TreeRoot::Remove(const std::string& relative) const {
  MAESTRO_ASSIGN_OR_RETURN(PathComponents c, SplitRelative(relative));
  auto parent = OpenParent(fd_, c, relative, "remove");
  if (!parent.ok()) {
    return parent.status().code() == StatusCode::kNotFound ? Status::Ok() : parent.status();
  }
  const int dir = parent->first.get();
  const char* name = parent->second.c_str();
  if (::unlinkat(dir, name, 0) == 0) return Status::Ok();
  if (errno == EISDIR && ::unlinkat(dir, name, AT_REMOVEDIR) == 0) return Status::Ok();
  if (errno == ENOENT) return Status::Ok();
  return FromErrno(errno, "remove", relative);
}

Status TreeRoot::SyncDir(const std::string& relative) const {
  MAESTRO_ASSIGN_OR_RETURN(PathComponents c, SplitRelative(relative));
  OwnedFd fd(OpenBeneath(fd_, c, O_RDONLY | O_DIRECTORY));
  if (fd.get() < 0) return FromErrno(errno, "open dir", relative);
  if (::fsync(fd.get()) != 0) return FromErrno(errno, "fsync dir", relative);
  return Status::Ok();
}

Result<std::string> ReadTreeFile(const TreeRoot& root, const std::string& relative, size_t max,
                                 uint64_t* size) {
  MAESTRO_ASSIGN_OR_RETURN(std::unique_ptr<ReadableFile> f, root.OpenRead(relative));
  MAESTRO_ASSIGN_OR_RETURN(uint64_t whole, f->Size());
  if (size != nullptr) *size = whole;
  std::string out(static_cast<size_t>(std::min<uint64_t>(whole, max)), '\0');
  size_t got = 0;
  while (got < out.size()) {
    MAESTRO_ASSIGN_OR_RETURN(size_t n, f->ReadAt(got, out.data() + got, out.size() - got));
    if (n == 0) break;  // the file shrank meanwhile
    got += n;
  }
  out.resize(got);
  return out;
}

}  // namespace maestro
