#include "store/sqlite/checkpointer.h"

#include <spdlog/spdlog.h>

namespace maestro::sqlite {

Checkpointer::Checkpointer(std::string path, int lock_wait_ms, int signal_pages, int inline_pages)
    : path_(std::move(path)),
      lock_wait_ms_(lock_wait_ms),
      signal_pages_(signal_pages),
      inline_pages_(inline_pages) {
  thread_ = std::thread([this] { Loop(); });
}

Checkpointer::~Checkpointer() {
  if (writer_ != nullptr) sqlite3_wal_hook(writer_->handle(), nullptr, nullptr);
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  thread_.join();
}

void Checkpointer::Attach(SqliteConn& writer) {
  writer_ = &writer;
  sqlite3_wal_hook(writer.handle(), &Checkpointer::OnCommit, this);
}

int Checkpointer::OnCommit(void* self, sqlite3* db, const char* schema, int wal_pages) {
  auto* c = static_cast<Checkpointer*>(self);
  if (wal_pages >= c->inline_pages_) {
    // Backpressure: the thread has fallen behind. A busy result (the thread
    // is checkpointing right now) is fine; that checkpoint does the work.
    sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
  } else if (wal_pages >= c->signal_pages_) {
    MutexLock lock(&c->mu_);
    if (!c->wanted_) {
      c->wanted_ = true;
      c->cv_.Signal();
    }
  }
  return SQLITE_OK;
}

void Checkpointer::Loop() {
  std::unique_ptr<SqliteConn> conn;  // opened at the first checkpoint
  MutexLock lock(&mu_);
  for (;;) {
    cv_.Wait(&mu_, [&]() REQUIRES(mu_) { return wanted_ || stop_; });
    if (stop_) return;
    wanted_ = false;
    lock.Unlock();
    if (!conn) {
      auto opened = SqliteConn::Open(path_, lock_wait_ms_);
      if (opened.ok()) {
        conn = std::move(opened).value();
      } else {
        spdlog::warn("store: checkpoint connection: {}", opened.status().ToString());
      }
    }
    if (conn) {
      int rc = sqlite3_wal_checkpoint_v2(conn->handle(), nullptr, SQLITE_CHECKPOINT_PASSIVE,
                                         nullptr, nullptr);
      if (rc != SQLITE_OK && rc != SQLITE_BUSY) {
        spdlog::warn("store: checkpoint failed: {}", sqlite3_errstr(rc));
      }
    }
    lock.Lock();
  }
}

}  // namespace maestro::sqlite
