// Checkpointer: copies the WAL's pages back into the database file on a
// thread of its own, so that the writer's commits do not wait for it.
//
// With SQLite's own auto-checkpoint the connection whose commit crossed the
// threshold runs the checkpoint inside that commit: the engine's leader then
// holds every queued write for the copy and its two fsyncs (measured with
// queue_bench: ~28 checkpoints per 10,000 jobs, ~5% of the CPU and the
// fsyncs' wall time on the write path). Here the writer's WAL hook only
// signals; a PASSIVE checkpoint on a second connection runs beside the
// writer (WAL allows one checkpointer next to one writer). If the WAL grows
// past `inline_pages` anyway (the thread cannot keep up, or a reader pins
// old frames), the writer checkpoints itself as before: the WAL stays
// bounded.
//
// Thread safety: the hook runs on the writer's thread; the rest is internal.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "core/mutex.h"
#include "store/sqlite/db.h"

namespace maestro::sqlite {

class Checkpointer {
 public:
  Checkpointer(std::string path, int lock_wait_ms, int signal_pages, int inline_pages);
  // Detaches from the writer and joins the thread. The writer passed to
  // Attach must still be open.
  ~Checkpointer();
  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;

  // Replaces `writer`'s auto-checkpoint with this one.
  void Attach(SqliteConn& writer);

 private:
  static int OnCommit(void* self, sqlite3* db, const char* schema, int wal_pages);
  void Loop();

  const std::string path_;
  const int lock_wait_ms_;
  const int signal_pages_;
  const int inline_pages_;
  SqliteConn* writer_ = nullptr;
  Mutex mu_;
  CondVar cv_;
  bool wanted_ GUARDED_BY(mu_) = false;
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace maestro::sqlite
