// context_storage config, startup reconciliation and the janitor.
#include "context/context_startup.h"

#include <filesystem>
#include <fstream>

#include "context/context_dirs.h"
#include "support/store_fixture.h"

namespace maestro::context {
namespace {

using maestro::testing::StoreTest;

TEST(ContextStartupConfig, SectionIsValidatedWithItsPosition) {
  maestro::testing::TempDir dir;
  std::string path = dir.File("maestro.yaml");
  std::ofstream(path) << "llm:\n  context_length: 8192\n"
                         "context_storage:\n  cleanup_days: 7\n  keep_recent_messages: 9\n";
  auto cfg = LoadConfig(path, {});
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  auto cc = ContextConfigFromConfig(*cfg);
  ASSERT_TRUE(cc.ok()) << cc.status().ToString();
  EXPECT_EQ(cc->cleanup_days, 7);
  EXPECT_EQ(cc->keep_recent_messages, 9);
  EXPECT_EQ(cc->context_length, 8192);

  std::ofstream(path) << "context_storage:\n  cleanup_dayz: 7\n";
  auto bad_cfg = LoadConfig(path, {});
  ASSERT_TRUE(bad_cfg.ok());
  auto bad = ContextConfigFromConfig(*bad_cfg);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(path + ":1:1: context_storage:"), std::string::npos)
      << bad.status().message();
  EXPECT_NE(bad.status().message().find("cleanup_days"), std::string::npos);
}

TEST_F(StoreTest, StartupReconcileMovesMisplacedDirectories) {
  auto c = NewTaskWith("ok");  // queued → its directory belongs in paused
  ContextDirs dirs(dir_.path());
  ASSERT_TRUE(dirs.Init().ok());
  ASSERT_TRUE(dirs.Ensure(c.task.id, Placement::kRunning).ok());  // as if a crash left it here
  ASSERT_TRUE(ReconcileContextsAtStart(dir_.path(), *store_).ok());
  EXPECT_EQ(dirs.Find(c.task.id), Placement::kPaused);
}

TEST_F(StoreTest, JanitorRemovesOldCompletedDirectoriesOnly) {
  auto done = NewTaskWith("ok");
  Job j = Claim();
  ASSERT_TRUE(store_->FinishJob(LeaseOf(j), JobOutcome::Succeeded("x")).ok());
  auto open = NewTaskWith("ok");
  ContextDirs dirs(dir_.path());
  ASSERT_TRUE(dirs.Init().ok());
  ASSERT_TRUE(dirs.Ensure(done.task.id, Placement::kCompleted).ok());
  ASSERT_TRUE(dirs.Ensure(open.task.id, Placement::kPaused).ok());
  ContextJanitor keep(dir_.path(), *store_, 2, 1000, &clock_);
  EXPECT_EQ(*keep.RunOnce(), 0) << "completed just now";
  clock_.Advance(3LL * 24 * 3600 * 1000);
  EXPECT_EQ(*keep.RunOnce(), 1);
  EXPECT_FALSE(dirs.Find(done.task.id).has_value());
  EXPECT_EQ(dirs.Find(open.task.id), Placement::kPaused);
}

}  // namespace
}  // namespace maestro::context
