// The database half of the fault-injection suite: SQLite does its own I/O,
// so the crash is injected below it. A forked child registers a VFS shim as
// the default VFS — it delegates to the real one and counts every xWrite and
// xSync — opens the store through SqliteStore::Open (migrations included)
// and creates tasks, reporting each task id over a pipe after CreateTask
// returned. At the k-th write the shim SIGKILLs the child. The parent then
// opens the database through the normal open path and checks that every
// acknowledged task is there (WAL + synchronous=NORMAL promise every commit
// across a process crash) and that PRAGMA integrity_check says ok — for k
// across the whole run (sampled evenly when the run is long, to stay fast).
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "store/sqlite/sqlite_store.h"
#include "support/temp_dir.h"

namespace maestro {
namespace {

// ---- the shim VFS (lives only in the child; plain globals are fine there)

sqlite3_vfs* g_real = nullptr;
int64_t g_ops = 0;      // xWrite + xSync calls so far
int64_t g_kill_at = 0;  // 0 = never

struct ShimFile {
  sqlite3_file base;   // must be first: SQLite sees this
  sqlite3_file* real;  // the real VFS's file, allocated right after
};

sqlite3_file* Real(sqlite3_file* f) { return reinterpret_cast<ShimFile*>(f)->real; }

void CountOp() {
  if (++g_ops == g_kill_at) ::kill(::getpid(), SIGKILL);
}

int ShimClose(sqlite3_file* f) {
  int rc = Real(f)->pMethods ? Real(f)->pMethods->xClose(Real(f)) : SQLITE_OK;
  return rc;
}
int ShimRead(sqlite3_file* f, void* p, int n, sqlite3_int64 off) {
  return Real(f)->pMethods->xRead(Real(f), p, n, off);
}
int ShimWrite(sqlite3_file* f, const void* p, int n, sqlite3_int64 off) {
  CountOp();
  return Real(f)->pMethods->xWrite(Real(f), p, n, off);
}
int ShimTruncate(sqlite3_file* f, sqlite3_int64 size) {
  return Real(f)->pMethods->xTruncate(Real(f), size);
}
int ShimSync(sqlite3_file* f, int flags) {
  CountOp();
  return Real(f)->pMethods->xSync(Real(f), flags);
}
int ShimFileSize(sqlite3_file* f, sqlite3_int64* size) {
  return Real(f)->pMethods->xFileSize(Real(f), size);
}
int ShimLock(sqlite3_file* f, int l) { return Real(f)->pMethods->xLock(Real(f), l); }
int ShimUnlock(sqlite3_file* f, int l) { return Real(f)->pMethods->xUnlock(Real(f), l); }
int ShimCheckReserved(sqlite3_file* f, int* out) {
  return Real(f)->pMethods->xCheckReservedLock(Real(f), out);
}
int ShimFileControl(sqlite3_file* f, int op, void* arg) {
  return Real(f)->pMethods->xFileControl(Real(f), op, arg);
}
int ShimSectorSize(sqlite3_file* f) { return Real(f)->pMethods->xSectorSize(Real(f)); }
int ShimDeviceCharacteristics(sqlite3_file* f) {
  return Real(f)->pMethods->xDeviceCharacteristics(Real(f));
}
int ShimShmMap(sqlite3_file* f, int region, int size, int extend, void volatile** p) {
  return Real(f)->pMethods->xShmMap(Real(f), region, size, extend, p);
}
int ShimShmLock(sqlite3_file* f, int offset, int n, int flags) {
  return Real(f)->pMethods->xShmLock(Real(f), offset, n, flags);
}
void ShimShmBarrier(sqlite3_file* f) { Real(f)->pMethods->xShmBarrier(Real(f)); }
int ShimShmUnmap(sqlite3_file* f, int del) { return Real(f)->pMethods->xShmUnmap(Real(f), del); }
int ShimFetch(sqlite3_file* f, sqlite3_int64 off, int n, void** p) {
  return Real(f)->pMethods->xFetch(Real(f), off, n, p);
}
int ShimUnfetch(sqlite3_file* f, sqlite3_int64 off, void* p) {
  return Real(f)->pMethods->xUnfetch(Real(f), off, p);
}

const sqlite3_io_methods kShimMethods = {3,
                                         ShimClose,
                                         ShimRead,
                                         ShimWrite,
                                         ShimTruncate,
                                         ShimSync,
                                         ShimFileSize,
                                         ShimLock,
                                         ShimUnlock,
                                         ShimCheckReserved,
                                         ShimFileControl,
                                         ShimSectorSize,
                                         ShimDeviceCharacteristics,
                                         ShimShmMap,
                                         ShimShmLock,
                                         ShimShmBarrier,
                                         ShimShmUnmap,
                                         ShimFetch,
                                         ShimUnfetch};

int ShimOpen(sqlite3_vfs*, const char* name, sqlite3_file* f, int flags, int* out_flags) {
  auto* shim = reinterpret_cast<ShimFile*>(f);
  shim->real = reinterpret_cast<sqlite3_file*>(shim + 1);
  int rc = g_real->xOpen(g_real, name, shim->real, flags, out_flags);
  // SQLite calls xClose only when pMethods is set, even after a failed open.
  shim->base.pMethods = shim->real->pMethods ? &kShimMethods : nullptr;
  return rc;
}

sqlite3_vfs g_shim;

void RegisterShimAsDefault() {
  g_real = sqlite3_vfs_find(nullptr);
  g_shim = *g_real;  // every other method delegates as is
  g_shim.zName = "crash-shim";
  g_shim.szOsFile = static_cast<int>(sizeof(ShimFile)) + g_real->szOsFile;
  g_shim.xOpen = ShimOpen;
  g_shim.pNext = nullptr;
  sqlite3_vfs_register(&g_shim, /*makeDflt=*/1);
}

// ---- the run

constexpr int kTasks = 8;

// The child: open the store, create kTasks tasks, report each id after its
// commit returned, and the op count at the end. Never returns.
[[noreturn]] void RunChild(const std::string& db, int fd, int64_t kill_at) {
  g_kill_at = kill_at;
  RegisterShimAsDefault();
  auto write_line = [&](const std::string& s) {
    std::string line = s + "\n";
    if (::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) _exit(3);
  };
  {
    auto store = SqliteStore::Open(db, StoreOptions{});
    if (!store.ok()) _exit(2);
    for (int i = 0; i < kTasks; ++i) {
      NewTask t;
      t.instruction = "task " + std::to_string(i);
      t.piece = "ok";
      auto c = (*store)->CreateTask(t);
      if (!c.ok()) _exit(2);
      write_line("task " + c->task.id);
    }
  }
  write_line("ops " + std::to_string(g_ops));
  _exit(0);
}

struct ChildRun {
  std::vector<std::string> acked;  // task ids
  int64_t ops = -1;                // when the child ran to the end
  bool killed = false;
};

ChildRun RunChildUntilKilled(const std::string& db, int64_t kill_at) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    RunChild(db, fds[1], kill_at);
  }
  ::close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof(buf))) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ChildRun r;
  r.killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  if (!r.killed) {
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  size_t pos = 0;
  for (size_t nl; (nl = out.find('\n', pos)) != std::string::npos; pos = nl + 1) {
    std::string line = out.substr(pos, nl - pos);
    if (line.rfind("task ", 0) == 0) r.acked.push_back(line.substr(5));
    if (line.rfind("ops ", 0) == 0) r.ops = std::stoll(line.substr(4));
  }
  return r;
}

std::string IntegrityCheck(const std::string& db) {
  sqlite3* h = nullptr;
  std::string result = "open failed";
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
      result = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
  return result;
}

TEST(FaultInjectionSqliteTest, EveryAcknowledgedCommitSurvivesAKillAtAnyWrite) {
  int64_t total = 0;
  {
    testing::TempDir dir;
    ChildRun full = RunChildUntilKilled(dir.File("maestro.db"), 0);
    ASSERT_FALSE(full.killed);
    ASSERT_EQ(full.acked.size(), static_cast<size_t>(kTasks));
    total = full.ops;
  }
  ASSERT_GT(total, kTasks);
  // Every write index when the run is short; else an even sample of ~60.
  const int64_t step = std::max<int64_t>(1, total / 60);
  int killed_runs = 0;
  for (int64_t k = 1; k <= total; k += step) {
    SCOPED_TRACE(::testing::Message() << "SIGKILL at write " << k << " of " << total);
    testing::TempDir dir;
    const std::string db = dir.File("maestro.db");
    ChildRun run = RunChildUntilKilled(db, k);
    killed_runs += run.killed ? 1 : 0;
    auto store = SqliteStore::Open(db, StoreOptions{});
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    for (const std::string& id : run.acked) {
      auto t = (*store)->GetTask(id);
      EXPECT_TRUE(t.ok()) << "acknowledged task " << id << " lost: " << t.status().ToString();
    }
    store->reset();
    EXPECT_EQ(IntegrityCheck(db), "ok");
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(killed_runs, 0);
}

}  // namespace
}  // namespace maestro
