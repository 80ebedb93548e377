// BackupDatabase's page steps against a writer that never pauses: each
// commit between two steps restarts the copy, the copy still finishes (after
// kMaxBackupRestarts restarts the rest goes in one snapshot), and the file it
// wrote holds every task committed before it started. The command-line half
// (real serve, restore's refusals) is tests/integration/backup_restore_test.cc.
#include "store/sqlite/sqlite_backup.h"

#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <thread>

#include "store/sqlite/sqlite_store.h"
#include "support/temp_dir.h"

namespace maestro::sqlite {
namespace {

TEST(SqliteBackupTest, OnePageStepsRestartUnderCommitsAndStillCopyEveryEarlierTask) {
  testing::TempDir dir;
  const std::string path = dir.File("maestro.db");
  auto store = SqliteStore::Open(path, StoreOptions{});
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  std::vector<std::string> before;  // ~800 pages of tasks
  for (int i = 0; i < 400; ++i) {
    NewTask t;
    t.instruction = std::string(6'000, 'x') + std::to_string(i);
    t.piece = "chat";
    auto c = (*store)->CreateTask(t);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    before.push_back(c->task.id);
  }
  std::atomic<bool> stop{false};
  std::atomic<int> during{0};
  std::thread writer([&] {
    while (!stop) {
      NewTask t;
      t.instruction = "written while the backup copies";
      t.piece = "chat";
      if ((*store)->CreateTask(t).ok()) ++during;
    }
  });
  BackupOptions options;
  options.pages_per_step = 1;
  auto report = BackupDatabase(*Env::Default(), path, dir.File("backup.db"), options);
  stop = true;
  writer.join();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_GT(report->restarts, 0) << "the writer committed between one-page steps";
  EXPECT_GT(during.load(), 0);
  EXPECT_GE(report->tasks, static_cast<int64_t>(before.size()));
  EXPECT_FALSE(Env::Default()->FileExists(dir.File("backup.db.tmp")));

  auto copy = SqliteStore::Open(dir.File("backup.db"), StoreOptions{});
  ASSERT_TRUE(copy.ok()) << copy.status().ToString();
  for (const auto& id : before) EXPECT_TRUE((*copy)->GetTask(id).ok()) << id;
  std::cout << "[backup] " << report->restarts << " restarts, " << during.load()
            << " tasks committed during the copy, " << report->tasks << " in it\n";
}

TEST(SqliteBackupTest, ABackupRestoresOverAnIdleDatabaseAndReplacesItsTasks) {
  testing::TempDir dir;
  const std::string path = dir.File("maestro.db");
  std::string kept;
  {
    auto store = SqliteStore::Open(path, StoreOptions{});
    ASSERT_TRUE(store.ok());
    NewTask t;
    t.instruction = "kept";
    t.piece = "chat";
    kept = (*store)->CreateTask(t)->task.id;
  }
  auto backup = BackupDatabase(*Env::Default(), path, dir.File("b.db"), {});
  ASSERT_TRUE(backup.ok()) << backup.status().ToString();
  std::string later;
  {
    auto store = SqliteStore::Open(path, StoreOptions{});
    NewTask t;
    t.instruction = "after the backup";
    t.piece = "chat";
    later = (*store)->CreateTask(t)->task.id;
    // Open: the restore is refused and nothing changes.
    auto busy = RestoreDatabase(*Env::Default(), dir.File("b.db"), path, {.force = true});
    EXPECT_EQ(busy.status().code(), StatusCode::kConflict) << busy.status().ToString();
    EXPECT_TRUE((*store)->GetTask(later).ok());
  }
  auto unforced = RestoreDatabase(*Env::Default(), dir.File("b.db"), path, {});
  EXPECT_EQ(unforced.status().code(), StatusCode::kInvalidArgument);
  auto restored = RestoreDatabase(*Env::Default(), dir.File("b.db"), path, {.force = true});
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  EXPECT_EQ(restored->replaced_tasks, 2);
  EXPECT_EQ(restored->installed.tasks, 1);
  auto store = SqliteStore::Open(path, StoreOptions{});
  ASSERT_TRUE(store.ok());
  EXPECT_TRUE((*store)->GetTask(kept).ok());
  EXPECT_EQ((*store)->GetTask(later).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace maestro::sqlite
